package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func events(t *testing.T, subject string, n int) []outbox.Event {
	var out []outbox.Event
	for i := range n {
		e, err := outbox.New(subject, map[string]int{"n": i}, time.Now().UTC().Truncate(time.Microsecond))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// failingPublisher fails every publish after the first ok ones, until healed.
type failingPublisher struct {
	mu     sync.Mutex
	ok     int
	healed bool
	got    []string
}

func (p *failingPublisher) Publish(_ context.Context, e outbox.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.healed && len(p.got) >= p.ok {
		return errors.New("nats: timeout")
	}
	p.got = append(p.got, e.ID)
	return nil
}

func TestRelayKeepsWhatItCouldNotPublish(t *testing.T) {
	src := &outbox.Memory{}
	evs := events(t, "atrium.test.x", 5)
	src.Append(evs...)
	pub := &failingPublisher{ok: 2}
	relay := outbox.NewRelay(src, pub, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	relay.Drain(t.Context())
	if n := len(src.Pending()); n != 3 {
		t.Fatalf("after a failure at the third event, %d pending, want 3", n)
	}
	pub.mu.Lock()
	pub.healed = true
	pub.mu.Unlock()
	relay.Drain(t.Context())
	if n := len(src.Pending()); n != 0 {
		t.Fatalf("after recovery, %d pending", n)
	}
	for i, e := range evs {
		if pub.got[i] != e.ID {
			t.Fatalf("published out of order: %v", pub.got)
		}
	}
}

// TestRelayLogsInTheEventsTrace: the relay's lines about an event, the
// debug line of its publish and the warning of a failed one, carry the
// trace id of the request that enqueued it, so that searching the logs for
// a request's trace finds what became of its events.
func TestRelayLogsInTheEventsTrace(t *testing.T) {
	logs := &lockedBuffer{}
	logger, err := telemetry.NewLogger(logs, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	traceID := trace.TraceID{0xab, 0xcd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	ctx := trace.ContextWithSpanContext(t.Context(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled,
	}))
	src := &outbox.Memory{}
	evs := events(t, "atrium.test.logged", 2)
	src.Append(outbox.WithTrace(ctx, evs[0]), outbox.WithTrace(ctx, evs[1]))
	pub := &failingPublisher{ok: 1}
	// Spans not sampled, as without an exporter: the ids still flow.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	relay := outbox.NewRelay(src, pub, time.Hour, logger, outbox.WithTelemetry(outbox.RelayTelemetry{
		TracerProvider: tp, MeterProvider: noop.NewMeterProvider(), Service: "test", Stream: "TEST",
	}))
	runCtx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- relay.Run(runCtx) }()
	for !strings.Contains(logs.String(), "publish failed") {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	var published, failed int
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		switch {
		case strings.Contains(rec["msg"].(string), "published event"):
			published++
		case strings.Contains(rec["msg"].(string), "publish failed"):
			failed++
		default:
			continue
		}
		if rec["trace_id"] != traceID.String() {
			t.Errorf("relay line %s: trace_id %v, want the enqueuing request's %s", rec["msg"], rec["trace_id"], traceID)
		}
	}
	if published != 1 || failed != 1 {
		t.Fatalf("%d published and %d failed lines, want one of each:\n%s", published, failed, logs.String())
	}
}

// lockedBuffer is a log sink the relay writes to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPostgresClaimsAreDisjoint runs claims from several relays at once on
// one outbox table: every event is published exactly once.
func TestPostgresClaimsAreDisjoint(t *testing.T) {
	onlyOutbox := pgdb.Migrations{Schema: "relay", Sources: []pgdb.Source{{Name: "outbox", FS: outbox.Migrations}}}
	url := pgtest.NewDatabase(t, "outbox", func(ctx context.Context, url string) error {
		return pgdb.ApplyURL(ctx, url, onlyOutbox)
	})
	pool, err := pgdb.Open(t.Context(), url, "relay")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	const n = 300
	for _, e := range events(t, "atrium.test.pg", n) {
		tx, err := pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := outbox.Insert(t.Context(), tx, e); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	src := outbox.NewPostgres(pool)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for {
				claimed := 0
				err := src.Claim(context.Background(), 25, func(_ context.Context, es []outbox.Event) int {
					claimed = len(es)
					mu.Lock()
					for _, e := range es {
						seen[e.ID]++
					}
					mu.Unlock()
					time.Sleep(time.Millisecond)
					return len(es)
				})
				if err != nil {
					t.Error(err)
					return
				}
				if claimed == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("published %d distinct events, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("event %s published %d times", id, c)
		}
	}
	var left int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM outbox").Scan(&left); err != nil || left != 0 {
		t.Fatalf("outbox still holds %d rows (%v)", left, err)
	}
}

// A relay that has backed off while NATS was down publishes as soon as it
// is woken (the runner wakes it on reconnect), not when its backoff ends.
func TestWakeCutsTheBackoffShort(t *testing.T) {
	src := &outbox.Memory{}
	pub := &failingPublisher{}
	relay := outbox.NewRelay(src, pub, 250*time.Millisecond, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	src.Append(events(t, "atrium.test.x", 1)...)
	// Failures at 0, 0.25, 0.75, 1.75 and 3.75 s: the next try is not before 7.75 s.
	time.Sleep(4 * time.Second)
	pub.mu.Lock()
	pub.healed = true
	pub.mu.Unlock()
	woken := time.Now()
	relay.Wake()
	for len(src.Pending()) > 0 {
		if time.Since(woken) > 3*time.Second {
			t.Fatalf("event still pending %s after Wake; the relay waited out its backoff", time.Since(woken))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMemoryCommitsDoNotWaitForPublishing: while a claim publishes (NATS
// may take its time), a commit appends its events at once; they wait for
// the next claim, and the claim removes only what it published.
func TestMemoryCommitsDoNotWaitForPublishing(t *testing.T) {
	src := &outbox.Memory{}
	first := events(t, "atrium.test.x", 2)
	src.Append(first...)
	publishing, release := make(chan struct{}), make(chan struct{})
	claimed := make(chan error, 1)
	go func() {
		claimed <- src.Claim(t.Context(), 10, func(_ context.Context, es []outbox.Event) int {
			close(publishing)
			<-release
			return len(es)
		})
	}()
	<-publishing
	later := events(t, "atrium.test.x", 1)
	appended := make(chan struct{})
	go func() { src.Append(later...); close(appended) }()
	select {
	case <-appended:
	case <-time.After(5 * time.Second):
		t.Fatal("Append waited for the claim's publishing")
	}
	close(release)
	if err := <-claimed; err != nil {
		t.Fatal(err)
	}
	if got := src.Pending(); len(got) != 1 || got[0].ID != later[0].ID {
		t.Fatalf("pending after the claim = %v, want only the event appended during it", got)
	}
}
