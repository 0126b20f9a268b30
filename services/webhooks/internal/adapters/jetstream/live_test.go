package jetstream_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/jetstream"
)

// TestLiveSeesStreamPublishes: a plain subscription gets each event a
// JetStream publish stores, with its id, from the moment Subscribe
// returns; a message without an id (not an event) is not handed on, and
// none comes after stop.
func TestLiveSeesStreamPublishes(t *testing.T) {
	f := newFixture(t)
	f.createStream()
	live := &jetstream.Live{NC: f.js.Conn(), Subjects: []string{f.subject + ".>"}}
	got := make(chan string, 10)
	stop, err := live.Subscribe(func(id, subject string, payload []byte, at time.Time) {
		got <- id + " " + subject
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.js.Conn().PublishMsg(&nats.Msg{Subject: f.subject + ".crm.deal.created", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	f.publish("ev-1")
	select {
	case g := <-got:
		if want := "ev-1 " + f.subject + ".crm.deal.created"; g != want {
			t.Fatalf("got %q, want %q", g, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event 10 s after it was stored")
	}
	stop()
	f.publish("ev-2")
	// The publish was acknowledged by the stream; a flush makes sure the
	// server has sent this connection all it would.
	if err := f.js.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-got:
		t.Fatalf("got %q after stop or without an id", g)
	default:
	}
}
