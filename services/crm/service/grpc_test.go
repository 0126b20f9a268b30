package service

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// TestHealthByServiceName: probes may ask for the process ("") or for one
// service by its full name; a name the server does not serve is NOT_FOUND,
// not an internal error.
func TestHealthByServiceName(t *testing.T) {
	c := start(t)
	conn, err := rpc.Dial(c.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := healthpb.NewHealthClient(conn)
	for _, name := range []string{"", "atrium.crm.v1.CRMService", "atrium.crm.v1.CRMAdminService", "atrium.crm.v1.APIKeyService"} {
		resp, err := h.Check(t.Context(), &healthpb.HealthCheckRequest{Service: name})
		if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health of %q = %v, %v; want SERVING", name, resp, err)
		}
	}
	_, err = h.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "atrium.nope.v1.Nothing"})
	wantCode(t, err, codes.NotFound)
}

// TestReflectionListsServices: grpcurl and other tools find the services
// without the .proto files.
func TestReflectionListsServices(t *testing.T) {
	c := start(t)
	conn, err := rpc.Dial(c.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"atrium.crm.v1.CRMService", "atrium.crm.v1.CRMAdminService", "atrium.crm.v1.APIKeyService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Fatalf("reflection lists %v, without %s", names, want)
		}
	}
	// The file of a service, with its dependencies, describes the methods.
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{
		FileContainingSymbol: "atrium.crm.v1.CRMService"}}); err != nil {
		t.Fatal(err)
	}
	if resp, err = stream.Recv(); err != nil || len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Fatalf("no descriptor for the CRM service: %v %v", resp, err)
	}
}

// TestServicePrincipals: an internal caller signs a service principal. Acting
// for an agency, it reads that agency's lists within its scopes and nothing
// else; acting for nobody, it may call admin and internal RPCs but no
// tenant's.
func TestServicePrincipals(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	a, err := c.admin.CreateAgency(c.as(ctx, admin), &crmv1.CreateAgencyRequest{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.CreateProspect(c.as(ctx, admin), &crmv1.CreateProspectRequest{AgencyId: a.Agency.Id, BusinessName: "Alpha", WebsiteUrl: "https://alpha.example"}); err != nil {
		t.Fatal(err)
	}
	reporting := principal.Principal{Kind: principal.KindService, Subject: "reporting", AgencyID: a.Agency.Id, Scopes: []principal.Scope{principal.ScopeRead}}
	got, err := c.crm.ListProspects(c.as(ctx, reporting), &crmv1.ListProspectsRequest{})
	if err != nil || len(got.Data) != 1 || got.Data[0].BusinessName != "Alpha" {
		t.Fatalf("service acting for the agency: %v %v", got, err)
	}
	other := reporting
	other.AgencyID = "01a201ca-0000-7000-8000-000000000000"
	if got, err := c.crm.ListProspects(c.as(ctx, other), &crmv1.ListProspectsRequest{}); err != nil || len(got.Data) != 0 {
		t.Fatalf("service acting for another agency sees %v (%v)", got, err)
	}
	_, err = c.admin.CreateAgency(c.as(ctx, reporting), &crmv1.CreateAgencyRequest{Name: "X"})
	wantCode(t, err, codes.PermissionDenied, "administrators")
	_, err = c.keys.VerifyAPIKey(c.as(ctx, reporting), &crmv1.VerifyAPIKeyRequest{SecretSha256: make([]byte, 32)})
	wantCode(t, err, codes.PermissionDenied, "internal")
	noScope := reporting
	noScope.Scopes = nil
	_, err = c.crm.ListProspects(c.as(ctx, noScope), &crmv1.ListProspectsRequest{})
	wantCode(t, err, codes.PermissionDenied, "read scope", "service principal")

	internal := principal.Principal{Kind: principal.KindService, Subject: "ops"}
	_, err = c.crm.ListProspects(c.as(ctx, internal), &crmv1.ListProspectsRequest{})
	wantCode(t, err, codes.PermissionDenied, "API key")
	if _, err := c.admin.CreateAgency(c.as(ctx, internal), &crmv1.CreateAgencyRequest{Name: "By ops"}); err != nil {
		t.Fatalf("service acting for nobody, admin RPC: %v", err)
	}
}
