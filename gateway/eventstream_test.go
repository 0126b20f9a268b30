package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

// fakeStreams is a webhooks service double whose first stream ends as a
// service connection reaching its age does (Unavailable, after its
// heartbeat), and whose second sends an event and stays open.
type fakeStreams struct {
	webhooksv1.UnimplementedWebhooksServiceServer
	calls atomic.Int32
}

func (f *fakeStreams) ListenEvents(req *webhooksv1.ListenEventsRequest, s grpc.ServerStreamingServer[webhooksv1.ListenEventsResponse]) error {
	if len(req.Events) > 0 && req.Events[0] == "nope.*" {
		return apperr.Invalid(`events[0] "nope.*" matches no event type this key receives; allowed: item.created`)
	}
	n := f.calls.Add(1)
	beat := &webhooksv1.ListenEventsResponse{Kind: &webhooksv1.ListenEventsResponse_Heartbeat{Heartbeat: timestamppb.Now()}}
	if err := s.Send(beat); err != nil {
		return err
	}
	if n == 1 {
		return apperr.Unavailable(nil, "connection max age")
	}
	ev := &webhooksv1.ListenEventsResponse{Kind: &webhooksv1.ListenEventsResponse_Event{Event: &webhooksv1.WebhookEvent{
		Id: "ev-1", Type: "deal.created", Timestamp: timestamppb.Now()}}}
	if err := s.Send(ev); err != nil {
		return err
	}
	<-s.Context().Done()
	return nil
}

// TestEventStream: the gateway's answer to the event stream: a refused
// filter is the usual {"error"} 400; a stream is NDJSON lines; a service
// connection that ends is replaced without a break; the gateway's
// shutdown ends the stream with an error line rather than waiting on it.
func TestEventStream(t *testing.T) {
	signer, _ := principal.NewSigner(secret)
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	webhooksv1.RegisterWebhooksServiceServer(srv, &fakeStreams{})
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	crm := startFakeCRM(t, &fakeCRM{})
	other := closedAddr(t)
	r := startGatewayTo(t, map[string]string{"crm": crm, "collections": other, "data": other, "actions": other, "webhooks": srv.Addr(), "audit": other}, nil)
	base := "http://" + r.gw.HTTPAddr() + "/api/v1/event-stream"

	code, body := get(t, base+"?events=nope.*")
	if code != http.StatusBadRequest || !strings.Contains(body["error"].(string), "allowed: item.created") || len(body) != 1 {
		t.Fatalf("a bad filter answered %d %v, want 400 {\"error\": message}", code, body)
	}
	// The comma form is split into names before the service's server
	// counts them against the list's maximum.
	names := make([]string, 65)
	for i := range names {
		names[i] = fmt.Sprintf("item.e%d", i)
	}
	code, body = get(t, base+"?events="+strings.Join(names, ","))
	if code != http.StatusBadRequest || body["error"] != "events has 65 items; at most 64 are allowed" {
		t.Fatalf("65 comma-separated names answered %d %v, want 400 naming events, 65 and 64", code, body)
	}
	code, body = get(t, base+"?events=nope.*,"+strings.Join(names[:63], ","))
	if code != http.StatusBadRequest || !strings.Contains(body["error"].(string), "allowed: item.created") {
		t.Fatalf("64 names answered %d %v, want the service's own judgement of them", code, body)
	}
	code, body = get(t, base+"?event=item.*")
	if code != http.StatusBadRequest || !strings.Contains(body["error"].(string), `unknown query parameter "event"`) {
		t.Fatalf("an unknown parameter answered %d %v, want 400", code, body)
	}
	// Not UTF-8 once decoded: a 400 naming the parameter, not a 500.
	code, body = get(t, base+"?events=item.%FF")
	if msg, _ := body["error"].(string); code != http.StatusBadRequest || !strings.Contains(msg, "query parameter events (once percent-decoded) must be text in UTF-8") {
		t.Fatalf("events that are not UTF-8 answered %d %v, want 400", code, body)
	}

	req, _ := http.NewRequestWithContext(t.Context(), "GET", base, nil)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("the stream answered %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the stream ended: %v", lines.Err())
		}
		var l map[string]any
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", lines.Text(), err)
		}
		return l
	}
	result := func(l map[string]any) map[string]any { m, _ := l["result"].(map[string]any); return m }
	// The first stream's heartbeat, the second's (the first one ended),
	// then the event: no error line between.
	for i, want := range []string{"heartbeat", "heartbeat", "event"} {
		if l := next(); result(l)[want] == nil {
			t.Fatalf("line %d = %v, want a %s", i+1, l, want)
		}
	}
	// The gateway stops: the stream's last line says to reconnect.
	r.cancel()
	if l := next(); l["error"] == nil || len(l) != 1 {
		t.Fatalf("the last line = %v, want {\"error\": message}", l)
	}
	if lines.Scan() {
		t.Fatalf("a line after the error: %q", lines.Text())
	}
}
