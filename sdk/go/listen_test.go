package atrium

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestListenReadsTheStream: the lines of the event stream become a
// heartbeat, an event with the body a delivery carries, and the error
// line the error that ends it; a refused stream is an *Error.
func TestListenReadsTheStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/event-stream" || r.Header.Get("Authorization") != "Bearer atr_test" {
			t.Errorf("got %s %s", r.URL, r.Header.Get("Authorization"))
		}
		if r.URL.Query().Get("events") == "nope.*" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error": "events[0] \"nope.*\" matches no event type this key receives; allowed: item.created"}`))
			return
		}
		if got := r.URL.Query().Get("events"); got != "item.*,deal.created" {
			t.Errorf("events = %q", got)
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write([]byte(`{"result":{"heartbeat":"2026-11-26T17:00:00Z"}}` + "\n" +
			`{"result":{"event":{"id":"ev-1","type":"item.created","timestamp":"2026-11-26T17:00:01.5Z","data":{"id":"i1","version":1}}}}` + "\n" +
			`{"error":"the service is shutting down"}` + "\n"))
	}))
	defer srv.Close()
	c := New(srv.URL, "atr_test")
	var got []StreamedEvent
	var last error
	for ev, err := range c.Webhooks.Listen(context.Background(), []string{"item.*", "deal.created"}) {
		if err != nil {
			last = err
			break
		}
		got = append(got, ev)
	}
	if len(got) != 2 || got[0].Heartbeat.IsZero() || got[1].ID != "ev-1" || got[1].Type != "item.created" || got[1].Data["id"] != "i1" {
		t.Fatalf("got %+v", got)
	}
	var body map[string]any
	if err := json.Unmarshal(got[1].Raw, &body); err != nil || body["type"] != "item.created" || body["timestamp"] != "2026-11-26T17:00:01.5Z" || len(body) != 3 {
		t.Fatalf("Raw = %s (%v), want the delivery body", got[1].Raw, err)
	}
	if last == nil || !strings.Contains(last.Error(), "shutting down") {
		t.Fatalf("the error line gave %v", last)
	}
	for _, err := range c.Webhooks.Listen(context.Background(), []string{"nope.*"}) {
		var ae *Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(ae.Message, "allowed: item.created") {
			t.Fatalf("a refused stream gave %v", err)
		}
	}
}
