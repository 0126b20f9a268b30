package service

import (
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// healthOf asks the service at conn for the health of name, and the cause
// it gives when it is not serving.
func healthOf(t *testing.T, conn *grpc.ClientConn, name string) (healthpb.HealthCheckResponse_ServingStatus, string, error) {
	t.Helper()
	var header metadata.MD
	resp, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{Service: name}, grpc.Header(&header))
	cause := ""
	if v := header.Get(rpc.HealthCauseKey); len(v) > 0 {
		cause = v[0]
	}
	return resp.GetStatus(), cause, err
}

// waitHealth waits, boundedly, for the service's first check of what it
// depends on, and returns what it then reports.
func waitHealth(t *testing.T, conn *grpc.ClientConn) (healthpb.HealthCheckResponse_ServingStatus, string) {
	t.Helper()
	for range 200 {
		st, cause, err := healthOf(t, conn, "")
		if err != nil {
			t.Fatal(err)
		}
		if cause != rpc.CauseStarting {
			return st, cause
		}
		time.Sleep(25 * time.Millisecond) // why sleep: polls the cause, which only Check reports (Watch sends status changes alone)
	}
	t.Fatal("the service still reports that it is starting after 5s")
	return 0, ""
}

// fakeCollections is a gRPC server that answers health checks, signing
// with secret: the collections service as the CRM's readiness sees it.
func fakeCollections(t *testing.T, secret []byte) string {
	t.Helper()
	signer, err := principal.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	return srv.Addr()
}

// TestHealthByServiceName: probes may ask for the process ("") or for one
// service by its full name; a name the server does not serve is NOT_FOUND,
// not an internal error.
func TestHealthByServiceName(t *testing.T) {
	c := startWith(t, fakeCollections(t, secret), slog.New(slog.DiscardHandler))
	conn, err := rpc.Dial(c.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if st, cause := waitHealth(t, conn); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %s (%s), want SERVING", st, cause)
	}
	for _, name := range []string{"", "atrium.crm.v1.CRMService", "atrium.crm.v1.CRMAdminService", "atrium.crm.v1.APIKeyService"} {
		st, _, err := healthOf(t, conn, name)
		if err != nil || st != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health of %q = %v, %v; want SERVING", name, st, err)
		}
	}
	_, _, err = healthOf(t, conn, "atrium.nope.v1.Nothing")
	wantCode(t, err, codes.NotFound)
}

// TestHealthNamesWhyCollectionsCannotBeUsed: the CRM calls the collections
// service; while it cannot (nothing answers, or the two were given
// different internal secrets, so every call would be refused), it reports
// NOT_SERVING, says why in the health response and logs it.
func TestHealthNamesWhyCollectionsCannotBeUsed(t *testing.T) {
	for name, tc := range map[string]struct {
		collections func(t *testing.T) string
		want        []string
	}{
		"unreachable": {func(t *testing.T) string {
			l, _ := net.Listen("tcp", "127.0.0.1:0")
			defer l.Close()
			return l.Addr().String()
		}, []string{"collections service", "unreachable"}},
		"another secret": {func(t *testing.T) string {
			return fakeCollections(t, []byte("another-secret-0123456789abcdef-xyz"))
		}, []string{"principal signing secret differs between the crm service and the collections service", "--internal-secret"}},
	} {
		t.Run(name, func(t *testing.T) {
			var logs strings.Builder
			var mu sync.Mutex
			logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
			c := startWith(t, tc.collections(t), logger)
			conn, err := rpc.Dial(c.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			st, cause := waitHealth(t, conn)
			if st != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Fatalf("health = %s, want NOT_SERVING", st)
			}
			mu.Lock()
			logged := logs.String()
			mu.Unlock()
			for _, w := range tc.want {
				if !strings.Contains(cause, w) {
					t.Fatalf("cause %q does not say %q", cause, w)
				}
				if !strings.Contains(logged, w) {
					t.Fatalf("the logs do not say %q:\n%s", w, logged)
				}
			}
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
