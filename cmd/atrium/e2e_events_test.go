package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	// The main package has a type of that name (e2e_dataforseo_test.go).
	eventdefs "github.com/atrium-hq/atrium/platform/events"
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

// checkPublishedEvents subscribes to every subject of s's own NATS server
// and, once t and its subtests are done, checks every event published
// meanwhile against its platform/events definition, strictly: a subject
// no definition matches, a payload with a field its definition lacks, a
// required field missing or mistyped fails t. The end-to-end suite writes
// through every interface, so a publisher that drifts from the contract
// the webhooks service and the docs rely on fails here. It logs the
// definitions the suite never published.
func checkPublishedEvents(t *testing.T, s *stack) {
	t.Helper()
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []*nats.Msg
	)
	if _, err := nc.Subscribe("atrium.>", func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, m)
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// Registered after the stack's own clean-up, so it runs before it,
	// while the server is up.
	t.Cleanup(func() {
		if err := nc.Flush(); err != nil { // every message published so far has arrived
			t.Error(err)
		}
		nc.Close()
		mu.Lock()
		defer mu.Unlock()
		published := map[string]int{}
		failures := 0
		for _, m := range seen {
			d, ok := eventdefs.Find(m.Subject)
			if ok {
				published[d.Pattern()]++
			}
			if err := eventdefs.Check(m.Subject, m.Data); err != nil {
				if failures++; failures <= 10 {
					t.Errorf("a published event does not match its definition: %v\n%s", err, m.Data)
				}
			}
		}
		if failures > 10 {
			t.Errorf("... %d events in all did not match their definitions", failures)
		}
		var never []string
		for _, d := range eventdefs.Definitions() {
			if published[d.Pattern()] == 0 {
				never = append(never, d.Pattern())
			}
		}
		t.Logf("%d events checked against their definitions; never published here: %s", len(seen), strings.Join(never, ", "))
	})
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
		"--webhook-consumer=" + testConsumer(t, natsURL), "--audit-grpc-addr=127.0.0.1:0",
		"--audit-consumer=" + testAuditConsumer(t, natsURL), "--data-dir=" + t.TempDir()},
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
