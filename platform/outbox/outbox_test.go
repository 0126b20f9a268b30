package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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
	synctest.Test(t, func(t *testing.T) {
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
		// The relay has published the first event, failed on the second
		// and is waiting out its backoff.
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
		checkRelayLines(t, logs.String(), traceID)
	})
}

// checkRelayLines checks that the relay logged one published and one
// failed line, both in the trace traceID.
func checkRelayLines(t *testing.T, logs string, traceID trace.TraceID) {
	t.Helper()
	var published, failed int
	for line := range strings.SplitSeq(strings.TrimSpace(logs), "\n") {
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
		t.Fatalf("%d published and %d failed lines, want one of each:\n%s", published, failed, logs)
	}
}

// A commit on the memory store appends its events under the store's lock:
// it must not wait for a publish in progress, which can take JetStream's
// whole request timeout when NATS has just gone away.
func TestMemoryAppendsWhileAClaimPublishes(t *testing.T) {
	src := &outbox.Memory{}
	evs := events(t, "atrium.test.x", 3)
	src.Append(evs[0])
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
	appended := make(chan struct{})
	go func() {
		src.Append(evs[1], evs[2])
		close(appended)
	}()
	select {
	case <-appended:
	case <-time.After(10 * time.Second):
		t.Fatal("Append waited for the publish in progress")
	}
	close(release)
	if err := <-claimed; err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range src.Pending() {
		left = append(left, e.ID)
	}
	if want := []string{evs[1].ID, evs[2].ID}; !slices.Equal(left, want) {
		t.Fatalf("pending after the claim = %v, want the two appended during it, %v", left, want)
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
					time.Sleep(time.Millisecond) // why sleep: holds the claimed rows locked, so that the four relays' claims overlap
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
	synctest.Test(t, func(t *testing.T) {
		src := &outbox.Memory{}
		pub := &failingPublisher{}
		relay := outbox.NewRelay(src, pub, 250*time.Millisecond, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- relay.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run after cancel: %v", err)
			}
		}()
		src.Append(events(t, "atrium.test.x", 1)...)
		// Failures at 0, 0.25, 0.75, 1.75 and 3.75 s: the next try is not before 7.75 s.
		time.Sleep(4 * time.Second) // why sleep: fake time in the synctest bubble
		synctest.Wait()
		pub.mu.Lock()
		pub.healed = true
		pub.mu.Unlock()
		woken := time.Now()
		relay.Wake()
		synctest.Wait()
		if n := len(src.Pending()); n != 0 {
			t.Fatalf("%d events still pending after Wake; the relay is waiting out its backoff", n)
		}
		if d := time.Since(woken); d != 0 {
			t.Fatalf("published %s after Wake, want at once", d)
		}
	})
}

// While publishing fails, a relay at the interval services run it with
// retries after 0.5 s, then after twice the last wait, up to 30 s, as
// docs/architecture.md and docs/events.md say.
func TestRelayBacksOffAsDocumented(t *testing.T) {
	var gaps []time.Duration
	synctest.Test(t, func(t *testing.T) {
		src := &outbox.Memory{}
		src.Append(events(t, "atrium.test.x", 1)...)
		pub := &attemptClock{}
		relay := outbox.NewRelay(src, pub, outbox.DefaultInterval, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- relay.Run(ctx) }()
		time.Sleep(3 * time.Minute) // why sleep: fake time in the synctest bubble
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
		for i := 1; i < len(pub.at); i++ {
			gaps = append(gaps, pub.at[i].Sub(pub.at[i-1]))
		}
	})
	s := time.Second
	want := []time.Duration{s / 2, s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s, 30 * s, 30 * s}
	if !slices.Equal(gaps[:min(len(gaps), len(want))], want) {
		t.Fatalf("waits between failed publishes = %v, want %v then 30s each", gaps, want)
	}
	if outbox.MaxBackoff != 30*s || outbox.DefaultInterval != s/2 {
		t.Fatalf("MaxBackoff %s, DefaultInterval %s: the documented figures are 30 s and 500 ms", outbox.MaxBackoff, outbox.DefaultInterval)
	}
	for doc, says := range map[string][]string{
		"../../docs/architecture.md": {"polls every 500 ms", "doubling to 30 s"},
		"../../docs/events.md":       {"with backoff up to 30 s"},
	} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		for _, phrase := range says {
			if !strings.Contains(text, phrase) {
				t.Errorf("%s does not say %q", doc, phrase)
			}
		}
	}
}

// attemptClock fails every publish and notes when each was tried.
type attemptClock struct{ at []time.Time }

func (p *attemptClock) Publish(context.Context, outbox.Event) error {
	p.at = append(p.at, time.Now())
	return errors.New("nats: connection closed")
}
