package outbox_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/atrium-hq/atrium/platform/natstest"
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

// TestRelayToJetStream relays a memory outbox to a real JetStream stream and
// reads the events back in order, each exactly once.
func TestRelayToJetStream(t *testing.T) {
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

	src := &outbox.Memory{}
	want := events(t, subject, 250)
	src.Append(want...)
	// A duplicate of an event already relayed is dropped by the stream.
	src.Append(want[3])

	pub := outbox.NewJetStream(js, jetstream.StreamConfig{Name: name, Subjects: []string{"atrium.test." + name + ".>"}, Storage: jetstream.MemoryStorage})
	relay := outbox.NewRelay(src, pub, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(10 * time.Second)
	for len(src.Pending()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d events still pending", len(src.Pending()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	stream, err := js.Stream(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(len(want)) {
		t.Fatalf("stream holds %d messages, want %d (duplicates must be dropped)", info.State.Msgs, len(want))
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
	if len(got) != len(want) {
		t.Fatalf("fetched %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i].ID {
			t.Fatalf("message %d is %s, want %s (order lost)", i, got[i], want[i].ID)
		}
	}
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
	url := pgtest.NewDatabase(t, "outbox", func(ctx context.Context, url string) error {
		pool, err := pgdb.Open(ctx, url, "public")
		if err != nil {
			return err
		}
		defer pool.Close()
		_, err = pool.Exec(ctx, `CREATE TABLE outbox (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			id uuid NOT NULL UNIQUE, subject text NOT NULL, payload bytea NOT NULL, created_at timestamptz NOT NULL)`)
		return err
	})
	pool, err := pgdb.Open(t.Context(), url, "public")
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
