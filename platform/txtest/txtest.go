// Package txtest is the transaction and outbox contract every store core
// meets: platform/memdb and platform/pgdb each run it once, so a service's
// own contract suite only has its domain cases left to check.
//
// The suite drives a core through a tiny key-value store built on it (the
// Backend), because a transaction contract is only observable through the
// writes it makes.
package txtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/store"
)

// Backend is a key-value store on the core under test.
type Backend interface {
	// InTx runs fn in one transaction of the core.
	InTx(ctx context.Context, fn func(Writer) error) error
	// Get reads a committed value, or store.ErrNotFound.
	Get(ctx context.Context, key string) (string, error)
	// Outbox is the core's outbox.
	Outbox() outbox.Source
}

// Writer is the transaction the suite writes through.
type Writer interface {
	// Get reads a value as the transaction sees it, locking it for the rest
	// of the transaction.
	Get(ctx context.Context, key string) (string, error)
	Put(ctx context.Context, key, value string) error
	Enqueue(ctx context.Context, e outbox.Event) error
}

// RunAll runs the contract. newBackend returns a fresh, empty backend whose
// core calls onCommit after each committed transaction that enqueued events.
func RunAll(t *testing.T, newBackend func(t *testing.T, onCommit func()) Backend) {
	tests := []struct {
		name string
		fn   func(*testing.T, func(*testing.T, func()) Backend)
	}{
		{"CommitKeepsWritesAndEventsInOrder", testCommit},
		{"RollbackLeavesNoTrace", testRollback},
		{"PanicRollsBackAndReleases", testPanic},
		{"WakesRelayOnlyAfterCommitWithEvents", testOnCommit},
		{"CanceledContextRunsNothing", testCanceled},
		{"ConcurrentReadModifyWriteIsSerialised", testConcurrent},
		{"PartialPublishKeepsTheRest", testPartialPublish},
		{"RelayToJetStream", testRelayToJetStream},
		{"TraceContextRoundTrip", testTraceContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newBackend)
		})
	}
}

var at = time.Date(2026, 11, 1, 9, 30, 0, 123456000, time.UTC)

func event(t *testing.T, subject string, n int) outbox.Event {
	t.Helper()
	e, err := outbox.New(subject, map[string]int{"n": n}, at)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// pending reads the outbox without publishing anything.
func pending(t *testing.T, b Backend) []outbox.Event {
	t.Helper()
	var out []outbox.Event
	err := b.Outbox().Claim(t.Context(), 10_000, func(_ context.Context, es []outbox.Event) int {
		out = es
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ids(es []outbox.Event) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func wantValue(t *testing.T, b Backend, key, want string) {
	t.Helper()
	got, err := b.Get(t.Context(), key)
	if want == "" {
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s = %q, %v; want it absent", key, got, err)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("%s = %q, %v; want %q", key, got, err, want)
	}
}

func testCommit(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	b := newBackend(t, nil)
	var want []outbox.Event
	for i := range 3 {
		err := b.InTx(t.Context(), func(w Writer) error {
			if err := w.Put(t.Context(), fmt.Sprint("k", i), fmt.Sprint("v", i)); err != nil {
				return err
			}
			e := event(t, fmt.Sprint("atrium.test.", i), i)
			want = append(want, e)
			return w.Enqueue(t.Context(), e)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wantValue(t, b, "k1", "v1")
	got := pending(t, b)
	if strings.Join(ids(got), ",") != strings.Join(ids(want), ",") {
		t.Fatalf("outbox = %v, want %v in commit order", ids(got), ids(want))
	}
	e := got[1]
	if e.Subject != "atrium.test.1" || string(e.Payload) != `{"n":1}` || !e.CreatedAt.Equal(at) {
		t.Fatalf("event round trip = %+v", e)
	}
}

var errAbort = errors.New("abort")

func testRollback(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	var wakes atomic.Int32
	b := newBackend(t, func() { wakes.Add(1) })
	if err := b.InTx(t.Context(), func(w Writer) error { return w.Put(t.Context(), "kept", "1") }); err != nil {
		t.Fatal(err)
	}
	err := b.InTx(t.Context(), func(w Writer) error {
		if err := w.Put(t.Context(), "kept", "2"); err != nil {
			return err
		}
		if err := w.Put(t.Context(), "new", "x"); err != nil {
			return err
		}
		if err := w.Enqueue(t.Context(), event(t, "atrium.test.rollback", 1)); err != nil {
			return err
		}
		return errAbort
	})
	if !errors.Is(err, errAbort) {
		t.Fatalf("InTx = %v, want the closure's error", err)
	}
	wantValue(t, b, "kept", "1")
	wantValue(t, b, "new", "")
	if evs := pending(t, b); len(evs) != 0 {
		t.Fatalf("rolled-back events are in the outbox: %v", ids(evs))
	}
	if n := wakes.Load(); n != 0 {
		t.Fatalf("relay woken %d times for a rolled-back transaction", n)
	}
}

func testPanic(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	b := newBackend(t, nil)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the caller")
			}
		}()
		_ = b.InTx(t.Context(), func(w Writer) error {
			if err := w.Put(t.Context(), "gone", "x"); err != nil {
				return err
			}
			if err := w.Enqueue(t.Context(), event(t, "atrium.test.panic", 1)); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	wantValue(t, b, "gone", "")
	if evs := pending(t, b); len(evs) != 0 {
		t.Fatalf("events of a panicked transaction are in the outbox: %v", ids(evs))
	}
	// The store still works: the panic released what it held.
	if err := b.InTx(t.Context(), func(w Writer) error { return w.Put(t.Context(), "after", "y") }); err != nil {
		t.Fatal(err)
	}
	wantValue(t, b, "after", "y")
}

func testOnCommit(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	var (
		b       Backend
		wakes   atomic.Int32
		visible atomic.Bool
	)
	b = newBackend(t, func() {
		wakes.Add(1)
		// The hook runs after commit: the writes are visible to others.
		v, err := b.Get(context.Background(), "woken")
		visible.Store(err == nil && v == "yes")
	})
	if err := b.InTx(t.Context(), func(w Writer) error { return w.Put(t.Context(), "quiet", "1") }); err != nil {
		t.Fatal(err)
	}
	if n := wakes.Load(); n != 0 {
		t.Fatalf("relay woken %d times for a transaction without events", n)
	}
	err := b.InTx(t.Context(), func(w Writer) error {
		if err := w.Put(t.Context(), "woken", "yes"); err != nil {
			return err
		}
		if err := w.Enqueue(t.Context(), event(t, "atrium.test.a", 1)); err != nil {
			return err
		}
		return w.Enqueue(t.Context(), event(t, "atrium.test.b", 2))
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := wakes.Load(); n != 1 {
		t.Fatalf("relay woken %d times for one committed transaction, want 1", n)
	}
	if !visible.Load() {
		t.Fatal("the commit hook ran before the writes were visible")
	}
}

func testCanceled(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	b := newBackend(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	err := b.InTx(ctx, func(w Writer) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("InTx on a canceled context = %v (ran %v), want context.Canceled without running", err, ran)
	}
}

func testConcurrent(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	b := newBackend(t, nil)
	if err := b.InTx(t.Context(), func(w Writer) error { return w.Put(t.Context(), "n", "0") }); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			errs <- b.InTx(t.Context(), func(w Writer) error {
				v, err := w.Get(t.Context(), "n")
				if err != nil {
					return err
				}
				cur, err := strconv.Atoi(v)
				if err != nil {
					return err
				}
				return w.Put(t.Context(), "n", strconv.Itoa(cur+1))
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	wantValue(t, b, "n", strconv.Itoa(n))
}

func testPartialPublish(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	b := newBackend(t, nil)
	var want []string
	err := b.InTx(t.Context(), func(w Writer) error {
		for i := range 5 {
			e := event(t, "atrium.test.partial", i)
			want = append(want, e.ID)
			if err := w.Enqueue(t.Context(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Publishing the first two removes exactly those.
	err = b.Outbox().Claim(t.Context(), 10, func(_ context.Context, es []outbox.Event) int { return 2 })
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids(pending(t, b)), ","); got != strings.Join(want[2:], ",") {
		t.Fatalf("after publishing two of five, outbox = %s, want %v", got, want[2:])
	}
}

// testRelayToJetStream commits events, relays the core's outbox to a real
// JetStream stream and reads them back: in order, each exactly once, and the
// outbox empty afterwards. A republished duplicate is dropped by the stream.
func testRelayToJetStream(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	nc, err := nats.Connect(natstest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	name := "TEST_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	subject := "atrium.test." + name + ".happened"
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), name) })

	var relay *outbox.Relay
	b := newBackend(t, func() { relay.Wake() })
	pub := outbox.NewJetStream(js, jetstream.StreamConfig{Name: name, Subjects: []string{"atrium.test." + name + ".>"}, Storage: jetstream.MemoryStorage})
	// A long interval: only the commit hook can make delivery prompt.
	relay = outbox.NewRelay(b.Outbox(), pub, time.Hour, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	}()

	var want []outbox.Event
	for i := range 3 {
		err := b.InTx(t.Context(), func(w Writer) error {
			for j := range 40 {
				e := event(t, subject, i*40+j)
				want = append(want, e)
				if err := w.Enqueue(t.Context(), e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Wait for the stream, not the outbox: a PostgreSQL claim in progress
	// hides its rows from other readers (SKIP LOCKED). The publisher creates
	// the stream before its first publish.
	stored := func() uint64 {
		stream, err := js.Stream(t.Context(), name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := stream.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	deadline := time.Now().Add(10 * time.Second)
	for stored() < uint64(len(want)) {
		if time.Now().After(deadline) {
			t.Fatalf("stream holds %d of %d events after 10s", stored(), len(want))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A duplicate of an event already relayed is dropped by the stream.
	if err := pub.Publish(t.Context(), want[3]); err != nil {
		t.Fatal(err)
	}
	if n := stored(); n != uint64(len(want)) {
		t.Fatalf("stream holds %d messages, want %d (duplicates must be dropped)", n, len(want))
	}
	for len(pending(t, b)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d relayed events still in the outbox", len(pending(t, b)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cons, err := js.OrderedConsumer(t.Context(), name, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(len(want), jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range batch.Messages() {
		got = append(got, m.Headers().Get(nats.MsgIdHdr))
	}
	if strings.Join(got, ",") != strings.Join(ids(want), ",") {
		t.Fatalf("stream order %v, want commit order %v", got, ids(want))
	}
}

// testTraceContext: an event enqueued in a traced transaction keeps that
// trace through the outbox; the relay publishes it in a producer span
// that is a child of the enqueuing span, and the JetStream message carries
// the publish span's context in its traceparent header, so that a consumer
// continues the same trace. An event enqueued outside a trace carries none.
func testTraceContext(t *testing.T, newBackend func(*testing.T, func()) Backend) {
	b := newBackend(t, nil)
	name := "TEST_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	subject := "atrium.test." + name
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
		TraceState: func() trace.TraceState { ts, _ := trace.ParseTraceState("atrium=t61rcWkgMzE"); return ts }(),
	})
	traced := trace.ContextWithSpanContext(t.Context(), parent)
	var withTrace, without outbox.Event
	err := b.InTx(traced, func(w Writer) error {
		withTrace = event(t, subject+".traced", 1)
		return w.Enqueue(traced, withTrace)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.InTx(t.Context(), func(w Writer) error {
		without = event(t, subject+".untraced", 2)
		return w.Enqueue(t.Context(), without)
	}); err != nil {
		t.Fatal(err)
	}
	got := pending(t, b)
	wantParent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if len(got) != 2 || got[0].TraceParent != wantParent || got[0].TraceState != "atrium=t61rcWkgMzE" {
		t.Fatalf("traced event's trace context = %q %q, want %q and its tracestate", got[0].TraceParent, got[0].TraceState, wantParent)
	}
	if got[1].TraceParent != "" || got[1].TraceState != "" {
		t.Fatalf("an event enqueued outside a trace carries %q %q", got[1].TraceParent, got[1].TraceState)
	}

	nc, err := nats.Connect(natstest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), name) })
	pub := outbox.NewJetStream(js, jetstream.StreamConfig{Name: name, Subjects: []string{subject + ".>"}, Storage: jetstream.MemoryStorage})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	relay := outbox.NewRelay(b.Outbox(), pub, time.Hour, slog.New(slog.DiscardHandler), outbox.WithTelemetry(outbox.RelayTelemetry{
		TracerProvider: tp, MeterProvider: noop.NewMeterProvider(), Service: "test", Stream: name,
	}))
	relay.Drain(t.Context())
	if n := len(pending(t, b)); n != 0 {
		t.Fatalf("%d events left after a drain", n)
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d publish spans, want 2", len(spans))
	}
	publish := spans[0]
	if publish.Name() != "publish "+name || attrValue(publish, "messaging.destination.name") != subject+".traced" || publish.SpanKind() != trace.SpanKindProducer ||
		publish.SpanContext().TraceID() != parent.TraceID() || publish.Parent().SpanID() != parent.SpanID() {
		t.Fatalf("publish span %q (destination %s) kind %v trace %s parent %s; want a producer span named by the stream, child of %s in trace %s",
			publish.Name(), attrValue(publish, "messaging.destination.name"), publish.SpanKind(), publish.SpanContext().TraceID(), publish.Parent().SpanID(), parent.SpanID(), parent.TraceID())
	}
	if spans[1].SpanContext().TraceID() == parent.TraceID() || spans[1].Parent().IsValid() {
		t.Fatal("the untraced event's publish joined another trace")
	}

	cons, err := js.OrderedConsumer(t.Context(), name, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var headers []nats.Header
	for m := range batch.Messages() {
		headers = append(headers, m.Headers())
	}
	if len(headers) != 2 {
		t.Fatalf("read %d messages, want 2", len(headers))
	}
	wantHeader := "00-" + parent.TraceID().String() + "-" + publish.SpanContext().SpanID().String() + "-01"
	if h := headers[0].Get("traceparent"); h != wantHeader || headers[0].Get("tracestate") != "atrium=t61rcWkgMzE" {
		t.Fatalf("message traceparent %q tracestate %q, want %q (the publish span) and the tracestate", h, headers[0].Get("tracestate"), wantHeader)
	}
	// What a consumer does: extract, and find the publish span as parent.
	ctx := propagation.TraceContext{}.Extract(context.Background(), outbox.HeaderCarrier(headers[0]))
	if sc := trace.SpanContextFromContext(ctx); sc.TraceID() != parent.TraceID() || sc.SpanID() != publish.SpanContext().SpanID() {
		t.Fatalf("a consumer extracts %s/%s, want the publish span", sc.TraceID(), sc.SpanID())
	}
}

func attrValue(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}
