package outbox_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
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
