package runner

import (
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/atrium-hq/atrium/platform/natstest"
)

// recorder is a Listener that reports what it was told.
type recorder struct {
	msgs  chan string
	state chan bool
}

func (r *recorder) Handle(subject string, _ []byte) bool { r.msgs <- subject; return true }
func (r *recorder) Listening()                           { r.state <- true }
func (r *recorder) Deaf()                                { r.state <- false }

// A listener hears what is published on its subjects, and is told when
// the connection is lost, so that a cache built on the messages stops
// trusting itself (linkcache).
func TestListenHearsMessagesAndIsToldWhenItCannot(t *testing.T) {
	url := natstest.URL(t)
	rt, err := Open(t.Context(), testSpec(t), Config{GRPCAddr: "127.0.0.1:0", Backing: Backing{NATSURL: url},
		InternalSecret: testSecret, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	r := &recorder{msgs: make(chan string, 10), state: make(chan bool, 10)}
	if err := rt.Listen(r, "test.listen.>"); err != nil {
		t.Fatal(err)
	}
	want := func(what string, ch <-chan bool, v bool) {
		t.Helper()
		select {
		case got := <-ch:
			if got != v {
				t.Fatalf("%s: told listening=%v, want %v", what, got, v)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the listener was not told", what)
		}
	}
	want("after Listen", r.state, true)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("test.listen.one", nil); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	select {
	case s := <-r.msgs:
		if s != "test.listen.one" {
			t.Fatalf("heard %s", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not hear the message")
	}
	// The connection lost (closed here: the same handler runs as when the
	// server goes away).
	rt.nats.Close()
	want("after the connection was lost", r.state, false)
}
