package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/atrium-hq/atrium/platform/natstest"
	wjs "github.com/atrium-hq/atrium/services/webhooks/internal/adapters/jetstream"
)

// handled records what the consumer handed over, and fails each id in
// failOnce the first time.
type handled struct {
	mu       sync.Mutex
	seen     map[string]int
	subjects map[string]string
	failOnce map[string]bool
	arrived  chan string
}

func newHandled(failOnce ...string) *handled {
	h := &handled{seen: map[string]int{}, subjects: map[string]string{}, failOnce: map[string]bool{}, arrived: make(chan string, 100)}
	for _, id := range failOnce {
		h.failOnce[id] = true
	}
	return h
}

func (h *handled) handle(_ context.Context, id, subject string, _ []byte, at time.Time) error {
	h.mu.Lock()
	h.seen[id]++
	h.subjects[id] = subject
	fail := h.failOnce[id]
	delete(h.failOnce, id)
	h.mu.Unlock()
	if at.IsZero() {
		return errors.New("no stream time")
	}
	if fail {
		return errors.New("the database is down")
	}
	h.arrived <- id
	return nil
}

// waitFor waits until every id has been handled successfully.
func (h *handled) waitFor(t *testing.T, ids ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	deadline := time.After(10 * time.Second)
	for len(want) > 0 {
		select {
		case id := <-h.arrived:
			delete(want, id)
		case <-deadline:
			t.Fatalf("not handled within 10 s: %v", want)
		}
	}
}

type fixture struct {
	t       *testing.T
	js      jetstream.JetStream
	stream  string
	subject string
}

func newFixture(t *testing.T) *fixture {
	nc, err := nats.Connect(natstest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	name := "WHTEST_" + uuid.NewString()[:8]
	f := &fixture{t: t, js: js, stream: name, subject: "atrium.whtest." + name}
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), name) })
	return f
}

func (f *fixture) createStream() {
	f.t.Helper()
	_, err := f.js.CreateStream(f.t.Context(), jetstream.StreamConfig{Name: f.stream, Subjects: []string{f.subject + ".>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) publish(id string) {
	f.t.Helper()
	if _, err := f.js.Publish(f.t.Context(), f.subject+".crm.deal.created", []byte(`{}`), jetstream.WithMsgID(id)); err != nil {
		f.t.Fatal(err)
	}
}

// run starts a consumer and returns its stop.
func (f *fixture) run(h *handled) func() {
	ctx, cancel := context.WithCancel(f.t.Context())
	c := &wjs.Consumer{JS: f.js, Streams: []string{f.stream}, Durable: "atrium-webhooks", Handle: h.handle, RetryDelay: 50 * time.Millisecond, Concurrency: 4}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("Run = %v", err)
		}
	}
}

// consumerReady waits until the durable consumer exists (the consumer
// creates it once the stream does).
func (f *fixture) consumerReady() {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := f.js.Consumer(f.t.Context(), f.stream, "atrium-webhooks"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatal("the durable consumer was not created within 10 s")
		}
		time.Sleep(20 * time.Millisecond) // why sleep: polls the server for the consumer the goroutine creates
	}
}

// TestEveryEventHandledAndAcked: events are handed over with their id and
// subject; one whose handling fails is delivered again; none twice once
// handled.
func TestEveryEventHandledAndAcked(t *testing.T) {
	f := newFixture(t)
	f.createStream()
	h := newHandled("e2")
	stop := f.run(h)
	defer stop()
	f.consumerReady()
	for i := range 3 {
		f.publish(fmt.Sprint("e", i+1))
	}
	h.waitFor(t, "e1", "e2", "e3")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen["e1"] != 1 || h.seen["e2"] != 2 || h.seen["e3"] != 1 {
		t.Fatalf("handled %v; want e1 and e3 once, e2 twice (failed once)", h.seen)
	}
	if h.subjects["e1"] != f.subject+".crm.deal.created" {
		t.Fatalf("subject %q", h.subjects["e1"])
	}
}

// TestWaitsForTheStreamAndResumesWhereItStopped: a consumer started before
// any service has published waits for the stream; what is published while
// it is stopped is handled when it starts again; what was published before
// the consumer first existed is not (DeliverNew).
func TestWaitsForTheStreamAndResumesWhereItStopped(t *testing.T) {
	f := newFixture(t)
	h := newHandled()
	stop := f.run(h)
	f.createStream()
	f.consumerReady()
	f.publish("a1")
	h.waitFor(t, "a1")
	stop()
	f.publish("a2")
	stop = f.run(h)
	defer stop()
	h.waitFor(t, "a2")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen["a1"] != 1 || h.seen["a2"] != 1 {
		t.Fatalf("handled %v; want each once", h.seen)
	}
}

// TestEventThatCreatedTheStreamIsHandled: a service creates its stream
// when it first publishes; that first event, stored before the consumer
// could exist, is handled all the same.
func TestEventThatCreatedTheStreamIsHandled(t *testing.T) {
	f := newFixture(t)
	h := newHandled()
	stop := f.run(h)
	defer stop()
	f.createStream()
	f.publish("first")
	h.waitFor(t, "first")
}

// TestOlderEventsAreNotReplayedToANewConsumer: a consumer created now
// starts with what arrives from its start on.
func TestOlderEventsAreNotReplayedToANewConsumer(t *testing.T) {
	f := newFixture(t)
	f.createStream()
	f.publish("old")
	h := newHandled()
	stop := f.run(h)
	defer stop()
	f.consumerReady()
	f.publish("new")
	h.waitFor(t, "new")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen["old"] != 0 {
		t.Fatal("an event published before the consumer existed was handed over")
	}
}

// TestHandlingContinuesTheWritesTrace: the handler runs in a span of the
// trace whose context the relay put in the message's headers.
func TestHandlingContinuesTheWritesTrace(t *testing.T) {
	f := newFixture(t)
	f.createStream()
	spans := tracetest.NewSpanRecorder()
	traced := make(chan trace.SpanContext, 1)
	c := &wjs.Consumer{JS: f.js, Streams: []string{f.stream}, Durable: "atrium-webhooks", RetryDelay: 50 * time.Millisecond,
		Tracer: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
		Handle: func(ctx context.Context, _, _ string, _ []byte, _ time.Time) error {
			traced <- trace.SpanContextFromContext(ctx)
			return nil
		}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	f.consumerReady()
	msg := nats.NewMsg(f.subject + ".crm.deal.created")
	msg.Data = []byte(`{}`)
	msg.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if _, err := f.js.PublishMsg(t.Context(), msg, jetstream.WithMsgID("t1")); err != nil {
		t.Fatal(err)
	}
	select {
	case sc := <-traced:
		if sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() == "00f067aa0ba902b7" {
			t.Fatalf("handled in span %s/%s; want a new span of the message's trace", sc.TraceID(), sc.SpanID())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not handled within 10 s")
	}
}

// TestEventsHandledConcurrently: up to Concurrency events of a stream are
// handled at once (the handler here returns only once three are in hand
// together), and none after the stop.
func TestEventsHandledConcurrently(t *testing.T) {
	f := newFixture(t)
	f.createStream()
	var (
		mu       sync.Mutex
		inHand   int
		together = make(chan struct{})
		handled  = make(chan string, 10)
	)
	c := &wjs.Consumer{JS: f.js, Streams: []string{f.stream}, Durable: "atrium-webhooks", RetryDelay: 50 * time.Millisecond, Concurrency: 3,
		Handle: func(ctx context.Context, id, _ string, _ []byte, _ time.Time) error {
			mu.Lock()
			inHand++
			if inHand == 3 {
				close(together)
			}
			mu.Unlock()
			select {
			case <-together:
			case <-ctx.Done():
				return ctx.Err()
			}
			handled <- id
			return nil
		}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	f.consumerReady()
	for i := range 3 {
		f.publish(fmt.Sprint("c", i))
	}
	for range 3 {
		select {
		case <-handled:
		case <-time.After(10 * time.Second):
			t.Fatal("three events were not in hand at once within 10 s")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
