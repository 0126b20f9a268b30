package main

// Asynchronous runs against a slow text provider of our own: an
// OpenAI-compatible chat-completions server that answers only when the
// test lets it, long after a client would have stopped waiting.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/natstest"
)

// slowModel is an OpenAI-compatible chat-completions server whose answers
// wait for release (or for the caller to give up).
type slowModel struct {
	*httptest.Server
	mu       sync.Mutex
	asked    int           // requests received
	answered int           // requests answered
	arrived  chan struct{} // a request came in
	release  chan struct{}
	once     sync.Once
}

func newSlowModel(t *testing.T) *slowModel {
	m := &slowModel{arrived: make(chan struct{}, 100), release: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		m.mu.Lock()
		m.asked++
		m.mu.Unlock()
		m.arrived <- struct{}{}
		select {
		case <-m.release:
		case <-r.Context().Done():
			return
		}
		content := `{"title": "Slow Bread", "meta_description": "Bread that takes its time.", "content": "<h2>Wait</h2><p>Good bread takes time.</p>"}`
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "model": "slow",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}}})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		m.mu.Lock()
		m.answered++
		m.mu.Unlock()
	}))
	t.Cleanup(m.Close)
	t.Cleanup(m.free) // before Close, which waits for the handlers
	return m
}

func (m *slowModel) free() { m.once.Do(func() { close(m.release) }) }

func (m *slowModel) flags() []string {
	return []string{"--llm-base-url=" + m.URL + "/v1", "--llm-model=slow", "--provider-timeout=5m", "--action-timeout=10m"}
}

// TestAsyncRunsSlowModelAndRestart: on PostgreSQL, asynchronous runs whose
// model answers after any client would have given up are accepted at once
// (a wait runs out into a 202); Atrium is stopped while two of them are
// running and one is queued, and started again on the same database; once
// the model answers, every run succeeds, each charged once and each
// record written once.
func TestAsyncRunsSlowModelAndRestart(t *testing.T) {
	model := newSlowModel(t)
	db, natsURL := migratedDatabase(t), natstest.URL(t)
	flags := append(model.flags(), "--database-url="+db, "--nats-url="+natsURL, "--action-workers=2")
	first := startStack(t, flags...)
	tn := first.newTenant(t)
	client := first.newClient(t, tn, true)
	first.grant(t, tn.agency, 10, 0)
	var ids []string
	for _, kw := range []string{"rye", "spelt", "einkorn"} {
		r := first.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": kw}, "Prefer", "respond-async, wait=1")
		ids = append(ids, wantAccepted(t, r, "generate_blog", client))
	}
	<-model.arrived
	<-model.arrived // both workers wait on the model; the third run is queued
	states := map[string]int{}
	for _, id := range ids {
		states[first.getRun(t, tn.read, id, 0)["state"].(string)]++
	}
	if states["running"] != 2 || states["queued"] != 1 {
		t.Fatalf("states before the restart = %v, want 2 running and 1 queued", states)
	}
	if err := first.stop(); err != nil {
		t.Fatalf("stopping the first stack: %v", err)
	}

	second := startStack(t, flags...)
	// Each run is running or queued again, its credits still reserved.
	for _, id := range ids {
		if st := second.getRun(t, tn.read, id, 0)["state"]; st != "running" && st != "queued" {
			t.Fatalf("run %s after the restart is %v", id, st)
		}
	}
	if ai, _ := second.credits(t, tn.agency); ai != 4 {
		t.Fatalf("AI credits after the restart = %v, want 4 (three runs reserved)", ai)
	}
	model.free()
	var records []string
	for _, id := range ids {
		run := second.finished(t, tn.read, id)
		if run["state"] != "success" {
			t.Fatalf("run %s = %v", id, run)
		}
		records = append(records, run["data"].(map[string]any)["id"].(string))
	}
	if ai, _ := second.credits(t, tn.agency); ai != 4 {
		t.Fatalf("AI credits after the runs = %v, want 4 (each charged once)", ai)
	}
	eventually(t, 10*time.Second, func() bool {
		r := second.read(t, tn.read, params("resource", "blogs", "client_id", client))
		rows, _ := r.json["data"].([]any)
		runs := second.read(t, tn.read, params("resource", "action_runs", "client_id", client))
		runRows, _ := runs.json["data"].([]any)
		return len(rows) == 3 && len(runRows) == 3
	})
	r := second.read(t, tn.read, params("resource", "blogs", "client_id", client))
	for _, row := range r.json["data"].([]any) {
		id := row.(map[string]any)["id"].(string)
		if !strings.Contains(strings.Join(records, " "), id) {
			t.Fatalf("blog %s is none of the runs' records %v", id, records)
		}
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if model.answered != 3 {
		t.Fatalf("the model answered %d requests, want 3 (one per run; the first stack's were cut)", model.answered)
	}
}

// TestAsyncRunTimeout: a queued run that outlives --action-timeout ends in
// error 504 and is not charged.
func TestAsyncRunTimeout(t *testing.T) {
	model := newSlowModel(t)
	s := startStack(t, "--llm-base-url="+model.URL+"/v1", "--llm-model=slow", "--provider-timeout=1m", "--action-timeout=300ms")
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 2, 0)
	id := wantAccepted(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "rye"}, "Prefer", "respond-async"), "generate_blog", client)
	run := s.finished(t, tn.read, id)
	if run["state"] != "error" || run["status_code"] != float64(504) || !strings.Contains(run["data"].(map[string]any)["error"].(string), "did not finish within 300ms") {
		t.Fatalf("run past the action timeout = %v", run)
	}
	if ai, _ := s.credits(t, tn.agency); ai != 2 {
		t.Fatalf("AI credits after a timed-out run = %v, want 2 (not charged)", ai)
	}
}
