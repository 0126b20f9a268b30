package service

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/rpc"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// TestRenderedListsOverGRPC: asked to render, the CRM answers with the JSON
// body the typed response would give through the gateway, whether the client
// uses gRPC's own codec or the gateway's copy-free one; not asked, it
// answers typed.
func TestRenderedListsOverGRPC(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	a, err := c.admin.CreateAgency(c.as(ctx, admin), &crmv1.CreateAgencyRequest{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		_, err := c.admin.CreateProspect(c.as(ctx, admin), &crmv1.CreateProspectRequest{
			AgencyId: a.Agency.Id, BusinessName: fmt.Sprintf("Prospect \"%d\" <&>", i), WebsiteUrl: fmt.Sprintf("https://p%d.example/é", i),
			HealthScore: new(float64(i) + 0.25),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	key := c.as(ctx, keyOf(a.Agency.Id, principal.ScopeRead))
	typed, err := c.crm.ListProspects(key, &crmv1.ListProspectsRequest{})
	if err != nil || len(typed.Data) != 30 || len(typed.RenderedJson) != 0 {
		t.Fatalf("typed call: %d rows, %d rendered bytes, %v", len(typed.GetData()), len(typed.GetRenderedJson()), err)
	}
	want := gatewayJSON(t, typed)

	asked := metadata.NewOutgoingContext(key, metadata.Join(mdOf(key), render.Request()))
	plain, err := c.crm.ListProspects(asked, &crmv1.ListProspectsRequest{})
	if err != nil || len(plain.Data) != 0 {
		t.Fatalf("rendered call: %d typed rows (want none), %v", len(plain.GetData()), err)
	}
	if got := decodeJSON(t, plain.RenderedJson); !reflect.DeepEqual(got, want) {
		t.Fatalf("rendered body differs from the typed response:\n%v\n%v", got, want)
	}

	conn, err := rpc.Dial(c.addr, grpc.WithChainUnaryInterceptor(render.UnaryClientInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	relCtx, rel := render.WithReleaser(asked)
	aliased, err := crmv1.NewCRMServiceClient(conn).ListProspects(relCtx, &crmv1.ListProspectsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeJSON(t, aliased.RenderedJson); !reflect.DeepEqual(got, want) {
		t.Fatalf("copy-free client: rendered body differs from the typed response")
	}
	rel.Release()
}

func mdOf(ctx context.Context) metadata.MD {
	md, _ := metadata.FromOutgoingContext(ctx)
	return md
}

func gatewayJSON(t *testing.T, m *crmv1.ListProspectsResponse) any {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	v := decodeJSON(t, b).(map[string]any)
	delete(v, "rendered_json")
	return v
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}
