package grpcserver

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/atrium-hq/atrium/platform/events"
	auditv1 "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
)

// gatewayJSON is what the gateway prints for a typed message: the options
// of gateway/internal/rest's marshaler.
func gatewayJSON(t *testing.T, m proto.Message) any {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "rendered_json") // the gateway never prints it
	return v
}

var texts = []string{"", "webhook.updated", "quote \" backslash \\", "tab\tline\nend", "日本 🙂", "\u2028", "curl/8.5.0 <b>&"}

// TestRenderedMatchesTyped: the JSON the service renders is the JSON the
// typed responses give through the gateway, for every field, absent ones
// and the values that are easy to get wrong (escapes, fractions of a
// second, no fields).
func TestRenderedMatchesTyped(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pick := func() string { return texts[r.IntN(len(texts))] }
	for n := range 30 {
		var evs []app.Event
		for i := range n % 6 {
			var fields []string
			for range r.IntN(3) {
				fields = append(fields, pick())
			}
			evs = append(evs, app.Event{ID: fmt.Sprintf("019a4b2c-3d4e-7f60-8a9b-%012d", i), AuditEvent: events.AuditEvent{
				Service: pick(), Action: pick(), Method: pick(), ResourceType: pick(), ResourceID: pick(), Fields: fields,
				AgencyID: pick(), SiteID: pick(), ActorKind: pick(), ActorID: pick(), MemberID: pick(), SessionID: pick(),
				ClientAddress: pick(), UserAgent: pick(), TraceID: pick(),
				At: time.Unix(1_700_000_000+r.Int64N(1e8), r.Int64N(1e6)*1000*int64(r.IntN(2))).UTC(),
			}})
		}
		next := ""
		if n%2 == 1 {
			next = "eyJxIjoiYSIsInAiOiJiIn0"
		}
		typed := &auditv1.ListAuditEventsResponse{AuditEvents: eventsPB(evs)}
		admin := &auditv1.AuditAdminServiceListAuditEventsResponse{AuditEvents: eventsPB(evs)}
		if next != "" {
			typed.NextCursor, admin.NextCursor = &next, &next
		}
		var got any
		if err := json.Unmarshal(renderEvents(evs, next), &got); err != nil {
			t.Fatalf("rendered body is not JSON: %v", err)
		}
		for _, m := range []proto.Message{typed, admin} {
			if want := gatewayJSON(t, m); !reflect.DeepEqual(got, want) {
				t.Fatalf("rendered %v\ntyped    %v", got, want)
			}
		}
	}
}
