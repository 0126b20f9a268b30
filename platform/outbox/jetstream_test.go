package outbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/outbox"
)

// TestPublisherCreatesTheSharedStream: a service's events for a stream it
// does not own (the audit trail's) are stored even when no one has created
// that stream yet, and a stream its owner configured keeps that
// configuration.
func TestPublisherCreatesTheSharedStream(t *testing.T) {
	nc, err := nats.Connect(natstest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	own, shared := "TEST_OWN_"+id, "TEST_SHARED_"+id
	for _, s := range []string{own, shared} {
		t.Cleanup(func() { _ = js.DeleteStream(context.Background(), s) })
	}
	cfg := func(name string, age time.Duration) jetstream.StreamConfig {
		return jetstream.StreamConfig{Name: name, Subjects: []string{"atrium.test." + name + ".>"}, Storage: jetstream.MemoryStorage, MaxAge: age}
	}
	pub := outbox.NewJetStream(js, cfg(own, time.Hour)).AlsoEnsure(cfg(shared, time.Hour))
	e := outbox.Event{ID: uuid.NewString(), Subject: "atrium.test." + shared + ".recorded", Payload: []byte(`{}`)}
	if err := pub.Publish(t.Context(), e); err != nil {
		t.Fatalf("publish to a shared stream no one created: %v", err)
	}
	s, err := js.Stream(t.Context(), shared)
	if err != nil {
		t.Fatalf("the shared stream was not created: %v", err)
	}
	if info, err := s.Info(t.Context()); err != nil || info.State.Msgs != 1 {
		t.Fatalf("the shared stream holds %v messages (%v), want the one published", info.State.Msgs, err)
	}

	// Its owner sets another configuration; a publisher's start leaves it.
	if _, err := js.UpdateStream(t.Context(), cfg(shared, 2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := outbox.NewJetStream(js, cfg(own, time.Hour)).AlsoEnsure(cfg(shared, time.Hour)).Ensure(t.Context()); err != nil {
		t.Fatalf("ensure beside an existing shared stream: %v", err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.MaxAge != 2*time.Hour {
		t.Fatalf("the shared stream's max age is %s after a publisher started, want its owner's 2h", info.Config.MaxAge)
	}
}
