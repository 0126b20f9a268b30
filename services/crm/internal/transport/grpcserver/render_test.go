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

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
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

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("rendered body is not JSON: %v\n%s", err, b)
	}
	return v
}

var texts = []string{"", "Green Leaf Cafe", "Bakery & Co <b>", "quote \" backslash \\", "tab\tline\nend", "日本 🙂", "\u2028"}

func randomTime(r *rand.Rand) time.Time {
	return time.Unix(1_700_000_000+r.Int64N(100_000_000), 0).Add(time.Duration(r.Int64N(1e6)) * time.Microsecond * time.Duration(r.IntN(2))).UTC()
}

// TestRenderedMatchesTyped: the JSON a service renders is the JSON the
// typed response would give through the gateway, for every field and the
// values that are easy to get wrong (escapes, fractions, null, empty).
func TestRenderedMatchesTyped(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 30 {
		var ps []app.Prospect
		var ds []app.Deal
		for i := range n % 7 {
			ps = append(ps, app.Prospect{
				ID: fmt.Sprintf("019a4b2c-3d4e-7f60-8a9b-%012d", i), BusinessName: texts[r.IntN(len(texts))],
				WebsiteURL: "https://x.example/" + texts[r.IntN(len(texts))], Domain: "x.example", Industry: texts[r.IntN(len(texts))],
				HealthScore: float64(r.IntN(10001)) / 100, LeadScore: r.Float64() * 100, PipelineStage: app.PipelineStages[r.IntN(len(app.PipelineStages))],
				CreatedAt: randomTime(r), UpdatedAt: randomTime(r),
			})
			d := app.Deal{
				ID: fmt.Sprintf("019a4b2c-3d4e-7f60-8a9b-%012d", i), Title: texts[r.IntN(len(texts))], Stage: app.DealStages[r.IntN(len(app.DealStages))],
				Value: float64(r.IntN(1e8)) / 100, Currency: "EUR", ExpectedCloseDate: "2027-01-31", CreatedAt: randomTime(r), UpdatedAt: randomTime(r),
			}
			if r.IntN(2) == 0 {
				at := randomTime(r)
				d.ClosedAt = &at
			}
			ds = append(ds, d)
		}
		typedP := &crmv1.ListProspectsResponse{Data: make([]*crmv1.Prospect, len(ps))}
		for i, p := range ps {
			typedP.Data[i] = prospectPB(p)
		}
		if got, want := decode(t, renderProspects(ps)), gatewayJSON(t, typedP); !reflect.DeepEqual(got, want) {
			t.Fatalf("prospects:\nrendered %v\ntyped    %v", got, want)
		}
		typedD := &crmv1.ListDealsResponse{Data: make([]*crmv1.Deal, len(ds))}
		for i, d := range ds {
			typedD.Data[i] = dealPB(d)
		}
		if got, want := decode(t, renderDeals(ds)), gatewayJSON(t, typedD); !reflect.DeepEqual(got, want) {
			t.Fatalf("deals:\nrendered %v\ntyped    %v", got, want)
		}
	}
}

// TestRenderedTimestampsAreProtojsons: decoded values hide formatting, so
// compare the timestamp strings themselves.
func TestRenderedTimestampsAreProtojsons(t *testing.T) {
	at := time.Date(2026, 11, 1, 9, 30, 0, 120_000_000, time.UTC)
	b := renderProspects([]app.Prospect{{CreatedAt: at, UpdatedAt: at.Add(time.Microsecond)}})
	var v struct {
		Data []struct {
			CreatedAt string `json:"created_at"`
			UpdatedAt string `json:"updated_at"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.Data[0].CreatedAt != "2026-11-01T09:30:00.120Z" || v.Data[0].UpdatedAt != "2026-11-01T09:30:00.120001Z" {
		t.Fatalf("timestamps = %+v", v.Data[0])
	}
}
