package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

// The keys of the long-request tests: two of agency-1, one of agency-2.
var capKeys = map[string]struct{ id, agency string }{
	"atr_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC": {"key-a1", "agency-1"},
	"atr_DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD": {"key-a2", "agency-1"},
	"atr_EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE": {"key-b1", "agency-2"},
}

const (
	keyA1 = "atr_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
	keyA2 = "atr_DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"
	keyB1 = "atr_EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE"
)

// capsServices are a CRM and a webhooks service on real gRPC servers:
// the CRM knows capKeys and holds each ListProspects until release; the
// event streams send their first heartbeat and stay open, idle.
type capsServices struct {
	crmv1.UnimplementedCRMServiceServer
	crmv1.UnimplementedAPIKeyServiceServer
	webhooksv1.UnimplementedWebhooksServiceServer
	listing chan struct{} // a ListProspects arrived
	release chan struct{}
}

func (f *capsServices) VerifyAPIKey(_ context.Context, req *crmv1.VerifyAPIKeyRequest) (*crmv1.VerifyAPIKeyResponse, error) {
	for secret, k := range capKeys {
		if d := sha256.Sum256([]byte(secret)); string(req.SecretSha256) == string(d[:]) {
			return &crmv1.VerifyAPIKeyResponse{Key: &crmv1.APIKey{
				Id: k.id, Scopes: []string{"read"}, AgencyId: wrapperspb.String(k.agency), CreatedAt: timestamppb.Now(),
			}}, nil
		}
	}
	return nil, status.Error(codes.NotFound, "unknown API key")
}

func (f *capsServices) ListProspects(ctx context.Context, _ *crmv1.ListProspectsRequest) (*crmv1.ListProspectsResponse, error) {
	f.listing <- struct{}{}
	select {
	case <-f.release:
	case <-ctx.Done():
	}
	return &crmv1.ListProspectsResponse{}, nil
}

func (f *capsServices) ListenEvents(_ *webhooksv1.ListenEventsRequest, s grpc.ServerStreamingServer[webhooksv1.ListenEventsResponse]) error {
	if err := s.Send(&webhooksv1.ListenEventsResponse{Kind: &webhooksv1.ListenEventsResponse_Heartbeat{Heartbeat: timestamppb.Now()}}); err != nil {
		return err
	}
	<-s.Context().Done()
	return nil
}

func startCapsServices(t *testing.T, f *capsServices) string {
	t.Helper()
	signer, _ := principal.NewSigner(secret)
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	crmv1.RegisterCRMServiceServer(srv, f)
	crmv1.RegisterAPIKeyServiceServer(srv, f)
	webhooksv1.RegisterWebhooksServiceServer(srv, f)
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	return srv.Addr()
}

// openStream opens an event stream with key and returns its answer; a
// 200's body stays open until the test ends.
func openStream(t *testing.T, base, key string) reply {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/api/v1/event-stream", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		t.Cleanup(func() { resp.Body.Close() })
		return reply{code: resp.StatusCode, header: resp.Header}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{code: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(b, &r.body); err != nil {
		t.Fatalf("a refused stream's body is not JSON: %s", b)
	}
	return r
}

// TestLongRequestsHaveTheirOwnBudgetAndCaps: event streams and Prefer:
// wait requests take no --max-in-flight slot (ordinary requests still fit
// while they are open), a key may hold --max-streams-per-key of them and
// a tenant's keys together --max-streams-per-tenant (429 with
// Retry-After, naming the cap), and the listener --max-long-requests
// (503); the refusals and the open requests show in /metrics.
func TestLongRequestsHaveTheirOwnBudgetAndCaps(t *testing.T) {
	f := &capsServices{listing: make(chan struct{}, 10), release: make(chan struct{})}
	free := sync.OnceFunc(func() { close(f.release) })
	t.Cleanup(free) // a failing test's held requests end at once
	addr := startCapsServices(t, f)
	other := closedAddr(t)
	r := startGatewayTo(t, map[string]string{"crm": addr, "webhooks": addr, "collections": other, "data": other, "actions": other, "audit": other}, func(c *Config) {
		c.MaxInFlight, c.MaxLongRequests, c.MaxStreamsPerKey, c.MaxStreamsPerTenant = 1, 4, 2, 3
		c.Telemetry = newTelemetry(t, nil)
	})
	base := "http://" + r.gw.HTTPAddr()
	prospects := base + "/api/v1/prospects"

	// One ordinary request holds the only ordinary slot.
	held := make(chan reply, 2)
	go func() { held <- send(t, "GET", prospects, keyB1) }()
	<-f.listing
	wantErrorReply(t, send(t, "GET", prospects, keyB1), http.StatusServiceUnavailable, "limit of 1 requests in flight")

	// Streams do not need it: a key's two open, its third is refused.
	for range 2 {
		if got := openStream(t, base, keyA1); got.code != http.StatusOK {
			t.Fatalf("a key's stream within its cap: %d %v", got.code, got.body)
		}
	}
	over := openStream(t, base, keyA1)
	wantErrorReply(t, over, http.StatusTooManyRequests, "this API key may hold at most 2", "max-streams-per-key", "retry after 5 seconds")
	if ra := over.header.Get("Retry-After"); ra != "5" {
		t.Fatalf("Retry-After = %q, want 5", ra)
	}
	// Another key of the same agency: one more fits the agency's 3.
	if got := openStream(t, base, keyA2); got.code != http.StatusOK {
		t.Fatalf("another key of the agency within the tenant's cap: %d %v", got.code, got.body)
	}
	wantErrorReply(t, openStream(t, base, keyA2), http.StatusTooManyRequests, "at most 3", "max-streams-per-tenant")

	// A Prefer: wait takes the long budget's fourth and last slot, not
	// the ordinary one (which is still held).
	go func() {
		req, _ := http.NewRequest("GET", prospects, nil)
		req.Header.Set("Authorization", "Bearer "+keyB1)
		req.Header.Set("Prefer", "respond-async, WAIT=5")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			held <- reply{}
			return
		}
		resp.Body.Close()
		held <- reply{code: resp.StatusCode}
	}()
	<-f.listing
	// The listener's long budget is full: another tenant's stream is 503.
	wantErrorReply(t, openStream(t, base, keyB1), http.StatusServiceUnavailable, "limit of 4 long requests")

	metrics := scrape(t, r)
	for _, want := range []string{
		`atrium_gateway_long_requests{kind="stream"} 3`,
		`atrium_gateway_long_requests{kind="wait"} 1`,
		`atrium_gateway_long_requests_refused_total{kind="stream",limit="key"} 1`,
		`atrium_gateway_long_requests_refused_total{kind="stream",limit="tenant"} 1`,
		`atrium_gateway_long_requests_refused_total{kind="stream",limit="listener"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", metrics)
	}

	free()
	for range 2 {
		if got := <-held; got.code != http.StatusOK {
			t.Fatalf("a held request: %d %v, want 200", got.code, got.body)
		}
	}
}

func scrape(t *testing.T, r *running) string {
	t.Helper()
	resp, err := http.Get("http://" + r.gw.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// The caps count per key and per tenant, refuse without counting, and
// forget a key or a tenant once its last long request ends.
func TestStreamCaps(t *testing.T) {
	c := newStreamCaps(2, 3)
	for i, step := range []struct{ key, tenant, want string }{
		{"k1", "t1", ""}, {"k1", "t1", ""}, {"k1", "t1", capKey},
		{"k2", "t1", ""}, {"k2", "t1", capTenant}, {"k3", "t2", ""},
		// A key bound to no tenant has only its own cap.
		{"k4", "", ""}, {"k4", "", ""}, {"k4", "", capKey},
	} {
		if got := c.acquire(step.key, step.tenant); got != step.want {
			t.Fatalf("step %d: acquire(%s, %s) = %q, want %q", i, step.key, step.tenant, got, step.want)
		}
	}
	c.release("k1", "t1")
	if got := c.acquire("k2", "t1"); got != "" {
		t.Fatalf("after a release, the tenant's key: %q, want room", got)
	}
	for _, kt := range [][2]string{{"k1", "t1"}, {"k2", "t1"}, {"k2", "t1"}, {"k3", "t2"}, {"k4", ""}, {"k4", ""}} {
		c.release(kt[0], kt[1])
	}
	if len(c.keys) != 0 || len(c.tenants) != 0 {
		t.Fatalf("after every release the caps still hold %v and %v", c.keys, c.tenants)
	}
}

// Which requests are long, from their request line and headers alone.
func TestLongKindOf(t *testing.T) {
	l := &listener{files: true, objects: true, routes: routeTable{streamed: map[string]longKind{
		"GET /api/v1/event-stream": kindStream, "POST /api/public/v1/assets": kindUpload,
	}}}
	for _, tc := range []struct {
		method, path, prefer string
		want                 longKind
	}{
		{"GET", "/api/v1/event-stream", "", kindStream},
		{"OPTIONS", "/api/v1/event-stream", "", ordinary},
		{"POST", "/api/public/v1/assets", "", kindUpload},
		{"GET", "/api/public/v1/assets", "", ordinary},
		{"GET", "/files/0123456789abcdef0123456789abcdef.png/a.png", "", kindDownload},
		{"GET", "/media/0123456789abcdef0123456789abcdef.png", "", kindDownload},
		{"POST", "/api/v1/data", "wait=10", kindWait},
		{"GET", "/api/v1/runs/r1", `respond-async; foo=bar, Wait = 5`, kindWait},
		{"GET", "/api/v1/runs/r1", "wait;x=1", kindWait},
		{"POST", "/api/v1/data", "respond-async", ordinary},
		{"POST", "/api/v1/data", "waiting=5, return=minimal", ordinary},
		{"GET", "/api/v1/prospects", "", ordinary},
	} {
		r, _ := http.NewRequest(tc.method, "http://x"+tc.path, nil)
		if tc.prefer != "" {
			r.Header.Set("Prefer", tc.prefer)
		}
		if got := l.longKindOf(r); got != tc.want {
			t.Errorf("%s %s (Prefer: %q) is %q, want %q", tc.method, tc.path, tc.prefer, got, tc.want)
		}
	}
	// Without an object store /media/ goes to the actions service, under
	// the request deadline: an ordinary request.
	l.objects = false
	r, _ := http.NewRequest("GET", "http://x/media/0123456789abcdef0123456789abcdef.png", nil)
	if got := l.longKindOf(r); got != ordinary {
		t.Errorf("/media/ without an object store is %q, want ordinary", got)
	}
	// A Studio page's event stream (a run followed live) is a stream; the
	// same path without Accept: text/event-stream, or a page, is not.
	for _, tc := range []struct {
		method, path, accept string
		want                 longKind
	}{
		{"GET", "/studio/a/ag1/runs/r1/events", "text/event-stream", kindStream},
		{"GET", "/studio/a/ag1/runs/r1/events", "text/html", ordinary},
		{"POST", "/studio/a/ag1/runs/r1/events", "text/event-stream", ordinary},
		{"GET", "/studio/a/ag1/runs/r1", "text/event-stream", ordinary},
	} {
		r, _ := http.NewRequest(tc.method, "http://x"+tc.path, nil)
		r.Header.Set("Accept", tc.accept)
		if got := l.longKindOf(r); got != tc.want {
			t.Errorf("%s %s (Accept: %s) is %q, want %q", tc.method, tc.path, tc.accept, got, tc.want)
		}
	}
}

// The long-request settings default to what docs/configuration.md says,
// and a negative one is refused naming its flag.
func TestLongRequestSettings(t *testing.T) {
	c := DefaultConfig()
	if c.MaxLongRequests != 1000 || c.MaxStreamsPerKey != 16 || c.MaxStreamsPerTenant != 64 || c.MinTransferRate != 32768 {
		t.Fatalf("defaults: --max-long-requests %d, --max-streams-per-key %d, --max-streams-per-tenant %d, --min-transfer-rate %d; want 1000, 16, 64, 32768",
			c.MaxLongRequests, c.MaxStreamsPerKey, c.MaxStreamsPerTenant, c.MinTransferRate)
	}
	base := Config{HTTPAddr: "127.0.0.1:8080", AdminAddr: "127.0.0.1:8081", AdminToken: "admin-token-0123456789",
		InternalSecret: secret, Upstreams: map[string]string{"crm": "a", "collections": "b", "data": "c", "actions": "d", "webhooks": "e", "audit": "f"},
		Logger: slog.New(slog.DiscardHandler)}
	for flag, mut := range map[string]func(*Config){
		"--max-long-requests":      func(c *Config) { c.MaxLongRequests = -1 },
		"--max-streams-per-key":    func(c *Config) { c.MaxStreamsPerKey = -1 },
		"--max-streams-per-tenant": func(c *Config) { c.MaxStreamsPerTenant = -1 },
		"--min-transfer-rate":      func(c *Config) { c.MinTransferRate = -1 },
	} {
		c := base
		mut(&c)
		c.setDefaults()
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("a negative %s: Validate() = %v, want an error naming it", flag, err)
		}
	}
}
