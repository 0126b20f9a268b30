package service

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

var secret = []byte("service-test-secret-0123456789abcdef")

// The gRPC port is reachable by anything on the network the service runs
// in. These tests call it directly, as such a caller would, and check that
// no call gets past the principal rules.

type clients struct {
	addr   string
	crm    crmv1.CRMServiceClient
	admin  crmv1.CRMAdminServiceClient
	keys   crmv1.APIKeyServiceClient
	signer *principal.Signer
}

func start(t *testing.T) clients {
	t.Helper()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	collections := l.Addr().String() // nothing answers there
	l.Close()
	return startWith(t, collections, slog.New(slog.DiscardHandler))
}

// startWith starts the CRM service calling the collections service at
// collections and logging to logger.
func startWith(t *testing.T, collections string, logger *slog.Logger) clients {
	t.Helper()
	svc, err := New(t.Context(), Config{
		Config: runner.Config{
			GRPCAddr: "127.0.0.1:0", Backing: runner.Backing{NATSURL: natstest.URL(t)}, InternalSecret: secret,
			Logger: logger,
		},
		CollectionsAddr: collections,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	})
	conn, err := rpc.Dial(svc.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	signer, _ := principal.NewSigner(secret)
	return clients{svc.Addr(), crmv1.NewCRMServiceClient(conn), crmv1.NewCRMAdminServiceClient(conn), crmv1.NewAPIKeyServiceClient(conn), signer}
}

func (c clients) as(ctx context.Context, p principal.Principal) context.Context {
	return c.signer.OutgoingContext(ctx, p)
}

var admin = principal.Principal{Kind: principal.KindAdmin, Subject: "admin"}

func keyOf(agencyID string, scopes ...principal.Scope) principal.Principal {
	return principal.Principal{Kind: principal.KindKey, Subject: "k", AgencyID: agencyID, Scopes: scopes}
}

func wantCode(t *testing.T, err error, code codes.Code, words ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("error = %v, want %s", err, code)
	}
	for _, w := range words {
		if !strings.Contains(status.Convert(err).Message(), w) {
			t.Fatalf("message %q does not mention %q", status.Convert(err).Message(), w)
		}
	}
}

func TestPrincipalRulesAtTheGRPCPort(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	a, err := c.admin.CreateAgency(c.as(ctx, admin), &crmv1.CreateAgencyRequest{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.admin.CreateAgency(c.as(ctx, admin), &crmv1.CreateAgencyRequest{Name: "B"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.admin.CreateProspect(c.as(ctx, admin), &crmv1.CreateProspectRequest{
		AgencyId: a.Agency.Id, BusinessName: "Alpha", WebsiteUrl: "https://alpha.example",
	})
	if err != nil {
		t.Fatal(err)
	}

	// No principal, or one signed with another secret: unauthenticated.
	_, err = c.crm.ListProspects(ctx, &crmv1.ListProspectsRequest{})
	wantCode(t, err, codes.Unauthenticated, "gateway")
	forger, _ := principal.NewSigner([]byte("not-the-deployment-secret-0123456789"))
	_, err = c.crm.ListProspects(forger.OutgoingContext(ctx, keyOf(a.Agency.Id, principal.ScopeRead)), &crmv1.ListProspectsRequest{})
	wantCode(t, err, codes.Unauthenticated)

	// A tenant's key reads only its agency.
	got, err := c.crm.ListProspects(c.as(ctx, keyOf(a.Agency.Id, principal.ScopeRead)), &crmv1.ListProspectsRequest{})
	if err != nil || len(got.Data) != 1 {
		t.Fatalf("agency A: %v %v", got, err)
	}
	got, err = c.crm.ListProspects(c.as(ctx, keyOf(b.Agency.Id, principal.ScopeRead)), &crmv1.ListProspectsRequest{})
	if err != nil || len(got.Data) != 0 {
		t.Fatalf("agency B sees %v (%v)", got, err)
	}

	// Scope, binding and kind.
	_, err = c.crm.ListDeals(c.as(ctx, keyOf(a.Agency.Id, principal.ScopeWrite)), &crmv1.ListDealsRequest{})
	wantCode(t, err, codes.PermissionDenied, "read scope")
	_, err = c.crm.ListDeals(c.as(ctx, keyOf("", principal.ScopeRead)), &crmv1.ListDealsRequest{})
	wantCode(t, err, codes.PermissionDenied, "agency")
	_, err = c.admin.CreateAgency(c.as(ctx, keyOf(a.Agency.Id, principal.ScopeRead, principal.ScopeWrite)), &crmv1.CreateAgencyRequest{Name: "X"})
	wantCode(t, err, codes.PermissionDenied, "administrators")
	_, err = c.keys.VerifyAPIKey(c.as(ctx, admin), &crmv1.VerifyAPIKeyRequest{SecretSha256: make([]byte, 32)})
	wantCode(t, err, codes.PermissionDenied, "internal")
	_, err = c.crm.ListProspects(c.as(ctx, admin), &crmv1.ListProspectsRequest{})
	wantCode(t, err, codes.PermissionDenied, "API key")
}

func TestSiteCheckOutageIsUnavailable(t *testing.T) {
	c := start(t)
	_, err := c.admin.CreateKey(c.as(t.Context(), admin), &crmv1.CreateKeyRequest{
		Name: "k", Scopes: []string{"read"}, SiteId: "01a201ca-0000-7000-8000-000000000000",
	})
	wantCode(t, err, codes.Unavailable, "collections service")
}
