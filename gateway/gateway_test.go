package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

const (
	apiKey = "atr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	// otherAPIKey is key-2, of another agency.
	otherAPIKey = "atr_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

// fakeCRM is a CRM service double on a real gRPC server with the real
// interceptors: it knows two keys and answers ListProspects as told.
type fakeCRM struct {
	crmv1.UnimplementedCRMServiceServer
	crmv1.UnimplementedAPIKeyServiceServer
	list     func(ctx context.Context) (*crmv1.ListProspectsResponse, error)
	verifies atomic.Int32
}

func (f *fakeCRM) VerifyAPIKey(ctx context.Context, req *crmv1.VerifyAPIKeyRequest) (*crmv1.VerifyAPIKeyResponse, error) {
	f.verifies.Add(1)
	for i, key := range []string{apiKey, otherAPIKey} {
		if d := sha256.Sum256([]byte(key)); string(req.SecretSha256) == string(d[:]) {
			n := strconv.Itoa(i + 1)
			return &crmv1.VerifyAPIKeyResponse{Key: &crmv1.APIKey{
				Id: "key-" + n, Scopes: []string{"read"}, AgencyId: wrapperspb.String("agency-" + n), CreatedAt: timestamppb.Now(),
			}}, nil
		}
	}
	return nil, status.Error(codes.NotFound, "unknown API key")
}

func (f *fakeCRM) ListProspects(ctx context.Context, _ *crmv1.ListProspectsRequest) (*crmv1.ListProspectsResponse, error) {
	return f.list(ctx)
}

func startFakeCRM(t *testing.T, f *fakeCRM) string {
	t.Helper()
	signer, _ := principal.NewSigner(secret)
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	crmv1.RegisterCRMServiceServer(srv, f)
	crmv1.RegisterAPIKeyServiceServer(srv, f)
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	return srv.Addr()
}

// closedAddr is an address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

type running struct {
	gw     *Gateway
	cancel context.CancelFunc
	done   chan error
}

func startGateway(t *testing.T, crmAddr string, tweak func(*Config)) *running {
	t.Helper()
	other := closedAddr(t)
	return startGatewayTo(t, map[string]string{"crm": crmAddr, "collections": other, "data": other, "actions": other, "webhooks": other, "audit": other}, tweak)
}

// startGatewayTo starts a gateway in front of the services at upstreams.
func startGatewayTo(t *testing.T, upstreams map[string]string, tweak func(*Config)) *running {
	t.Helper()
	return runGateway(t, newGatewayTo(t, upstreams, tweak))
}

// newGatewayTo is a gateway in front of the services at upstreams, not yet
// running.
func newGatewayTo(t *testing.T, upstreams map[string]string, tweak func(*Config)) *Gateway {
	t.Helper()
	cfg := Config{
		HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", AdminToken: "admin-token-0123456789", InternalSecret: secret,
		Upstreams: upstreams,
		Logger:    slog.New(slog.DiscardHandler),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	gw, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return gw
}

// runGateway runs gw until the test ends.
func runGateway(t *testing.T, gw *Gateway) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{gw: gw, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- gw.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	})
	return r
}

func get(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	code, body, err := tryGet(url)
	if err != nil {
		t.Fatal(err)
	}
	return code, body
}

// tryGet is get for a goroutine other than the test's, which must not
// call t.Fatal.
func tryGet(url string) (int, map[string]any, error) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var body map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		return 0, nil, fmt.Errorf("body is not JSON: %s", b)
	}
	return resp.StatusCode, body, nil
}

func TestFaultsAreNotLeaked(t *testing.T) {
	f := &fakeCRM{list: func(context.Context) (*crmv1.ListProspectsResponse, error) {
		return nil, status.Error(codes.Internal, "pgx: dial tcp 10.1.2.3:5432: password authentication failed for user atrium")
	}}
	r := startGateway(t, startFakeCRM(t, f), nil)
	code, body := get(t, "http://"+r.gw.HTTPAddr()+"/api/v1/prospects")
	msg, _ := body["error"].(string)
	if code != http.StatusInternalServerError || len(body) != 1 {
		t.Fatalf("got %d %v, want 500 with only an error", code, body)
	}
	if strings.Contains(msg, "10.1.2.3") || strings.Contains(msg, "password") || !strings.Contains(msg, "internal error") {
		t.Fatalf("500 message leaks or is unhelpful: %q", msg)
	}
	if !strings.Contains(msg, "reference ") {
		t.Fatalf("500 message %q carries no trace reference", msg)
	}
}

func TestUnreachableServiceIs503WithoutAddresses(t *testing.T) {
	down := closedAddr(t)
	r := startGateway(t, down, nil)
	code, body := get(t, "http://"+r.gw.HTTPAddr()+"/api/v1/prospects")
	msg, _ := body["error"].(string)
	if code != http.StatusServiceUnavailable || strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "retry") {
		t.Fatalf("got %d %q, want 503 asking to retry, without addresses", code, msg)
	}
}

func TestServiceSeesOnlyTheSignedPrincipal(t *testing.T) {
	var seen metadata.MD
	var who principal.Principal
	f := &fakeCRM{list: func(ctx context.Context) (*crmv1.ListProspectsResponse, error) {
		seen, _ = metadata.FromIncomingContext(ctx)
		who, _ = principal.FromContext(ctx)
		return &crmv1.ListProspectsResponse{}, nil
	}}
	r := startGateway(t, startFakeCRM(t, f), nil)
	req, _ := http.NewRequest("GET", "http://"+r.gw.HTTPAddr()+"/api/v1/prospects", nil)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Grpc-Metadata-X-Atrium-Principal", "forged")
	req.Header.Set("grpc-metadata-x-tenant", "agency-2")
	req.Header.Set("X-Custom", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if who.Kind != principal.KindKey || who.AgencyID != "agency-1" || who.Subject != "key-1" {
		t.Fatalf("service saw principal %+v", who)
	}
	if len(seen.Get(principal.MetadataKey)) != 1 {
		t.Fatalf("principal metadata values = %v, want exactly the gateway's", seen.Get(principal.MetadataKey))
	}
	for _, k := range []string{"authorization", "x-tenant", "x-custom", "grpc-metadata-x-tenant"} {
		if v := seen.Get(k); len(v) > 0 {
			t.Fatalf("client header reached the service as metadata %s=%v", k, v)
		}
	}
}

func TestShutdownDrainsInFlightRequests(t *testing.T) {
	started, finish := make(chan struct{}), make(chan struct{})
	f := &fakeCRM{list: func(context.Context) (*crmv1.ListProspectsResponse, error) {
		close(started)
		<-finish
		return &crmv1.ListProspectsResponse{Data: []*crmv1.Prospect{{Id: "p1"}}}, nil
	}}
	r := startGateway(t, startFakeCRM(t, f), nil)
	url := "http://" + r.gw.HTTPAddr() + "/api/v1/prospects"
	type result struct {
		code int
		body map[string]any
		err  error
	}
	res := make(chan result, 1)
	go func() {
		code, body, err := tryGet(url)
		res <- result{code, body, err}
	}()
	<-started
	r.cancel() // SIGTERM arrives while the request is in flight
	// The request finishes only once the shutdown is under way: the
	// listener refuses new connections.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) { // why sleep: polls the listener, whose close is the only sign that the shutdown began
		c, err := net.Dial("tcp", r.gw.HTTPAddr())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the gateway still accepts connections 10s after it was asked to stop")
		}
	}
	close(finish)
	got := <-res
	if got.err != nil || got.code != 200 || len(got.body["data"].([]any)) != 1 {
		t.Fatalf("in-flight request got %d %v (%v), want it to complete", got.code, got.body, got.err)
	}
	if err := <-r.done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	r.done <- nil // for the cleanup
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Fatal("gateway still accepts requests after shutdown")
	}
}

func TestConfigValidation(t *testing.T) {
	base := Config{HTTPAddr: "127.0.0.1:8080", AdminAddr: "127.0.0.1:8081", AdminToken: "admin-token-0123456789",
		InternalSecret: secret, Upstreams: map[string]string{"crm": "a", "collections": "b", "data": "c", "actions": "d", "webhooks": "e", "audit": "f"}, Logger: slog.Default()}
	for name, tc := range map[string]struct {
		mut  func(*Config)
		want string
	}{
		"same listener":         {func(c *Config) { c.AdminAddr = c.HTTPAddr }, "must not share"},
		"short token":           {func(c *Config) { c.AdminToken = "short" }, "admin token"},
		"short secret":          {func(c *Config) { c.InternalSecret = []byte("x") }, "internal secret"},
		"no upstream":           {func(c *Config) { delete(c.Upstreams, "data") }, "--data-addr"},
		"long cache TTL":        {func(c *Config) { c.KeyCacheTTL = time.Hour }, "TTL"},
		"oidc without issuer":   {func(c *Config) { c.OIDCClientID = "atrium" }, "need --oidc-issuer"},
		"oidc issuer not a URL": {func(c *Config) { c.OIDCIssuer, c.OIDCClientID = "id.example.com", "atrium" }, "--oidc-issuer must be"},
		"oidc without client":   {func(c *Config) { c.OIDCIssuer = "https://id.example.com/" }, "--oidc-client-id"},
		"oidc redirect elsewhere": {func(c *Config) {
			c.OIDCIssuer, c.OIDCClientID, c.OIDCRedirectURL = "https://id.example.com/", "atrium", "https://atrium.example.com/callback"
		}, "/api/v1/sessions/oidc/callback"},
	} {
		t.Run(name, func(t *testing.T) {
			c := base
			c.Upstreams = maps.Clone(base.Upstreams)
			tc.mut(&c)
			c.setDefaults()
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	c := base
	c.setDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	c.OIDCIssuer, c.OIDCClientID, c.OIDCRedirectURL = "https://id.example.com/", "atrium", "https://atrium.example.com/api/v1/sessions/oidc/callback"
	if err := c.Validate(); err != nil {
		t.Fatalf("valid single sign-on config: %v", err)
	}
}

// TestEveryAnswerCarriesItsReference: every answer, a success or an
// error, has the request's reference in Atrium-Trace-Id, and a 500 quotes
// the same one, so that a client (and the SDK's errors) can hand it to an
// operator.
func TestEveryAnswerCarriesItsReference(t *testing.T) {
	fail := false
	f := &fakeCRM{list: func(context.Context) (*crmv1.ListProspectsResponse, error) {
		if fail {
			return nil, status.Error(codes.Internal, "boom")
		}
		return &crmv1.ListProspectsResponse{}, nil
	}}
	r := startGateway(t, startFakeCRM(t, f), nil)
	fetch := func() (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+r.gw.HTTPAddr()+"/api/v1/prospects", nil)
		req.Header.Set("Authorization", "Bearer "+apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	okStatus, okHeader, _ := fetch()
	first := okHeader.Get("Atrium-Trace-Id")
	if okStatus != http.StatusOK || len(first) != 32 {
		t.Fatalf("a 200 carries Atrium-Trace-Id %q, want a 32-hex reference", first)
	}
	fail = true
	badStatus, badHeader, body := fetch()
	ref := badHeader.Get("Atrium-Trace-Id")
	if badStatus != http.StatusInternalServerError || len(ref) != 32 || ref == first || !strings.Contains(body, "reference "+ref) {
		t.Fatalf("a 500 with Atrium-Trace-Id %q answered %s; want its body to quote the header's reference, a new one", ref, body)
	}
}
