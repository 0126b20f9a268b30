package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/nats-io/nats.go"
)

// Events over NATS, and how a stack starts on an empty database.

func testEventsReachNATS(t *testing.T, s *stack) {
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("atrium.crm.agency.created")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	id := s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Evented"})["id"].(string)
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("no agency.created event for %s: %v", id, err)
		}
		var ev struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(msg.Data, &ev) == nil && ev.ID == id {
			return
		}
	}
}

// TestServeMigratesOnlyWhenAsked starts on an empty database: without
// --migrate the start stops with advice, with it the schemas are created and
// the stack works; `atrium migrate` then has nothing left to do.
func TestServeMigratesOnlyWhenAsked(t *testing.T) {
	url := pgtest.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	natsURL := natstest.URL(t)
	cfg, err := parseServe([]string{"--http-addr=127.0.0.1:0", "--admin-addr=127.0.0.1:0",
		"--collections-grpc-addr=127.0.0.1:0", "--crm-grpc-addr=127.0.0.1:0", "--data-grpc-addr=127.0.0.1:0",
		"--actions-grpc-addr=127.0.0.1:0", "--webhooks-grpc-addr=127.0.0.1:0", "--database-url=" + url, "--nats-url=" + natsURL,
		"--webhook-consumer=" + testConsumer(t, natsURL), "--data-dir=" + t.TempDir()},
		func(string) (string, bool) { return "", false }, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = serve(t.Context(), *cfg, slog.New(slog.DiscardHandler), io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "atrium migrate") || !strings.Contains(err.Error(), "--migrate") {
		t.Fatalf("serve on an unmigrated database = %v, want advice to run atrium migrate or pass --migrate", err)
	}

	s := startStack(t, "--database-url="+url, "--nats-url="+natsURL, "--migrate")
	tn := s.newTenant(t)
	s.newProspect(t, tn, "Migrated Co")
	if n := len(s.list(t, "/api/v1/prospects", tn.read)); n != 1 {
		t.Fatalf("prospects = %d", n)
	}
	var out strings.Builder
	if err := migrate(t.Context(), []string{"--database-url", url}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "schema crm") || !strings.Contains(out.String(), "applied now: none") {
		t.Fatalf("atrium migrate after --migrate printed:\n%s", out.String())
	}
}
