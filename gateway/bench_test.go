package gateway

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/telemetry"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// writerCRM knows apiKey, with the write scope.
type writerCRM struct {
	crmv1.UnimplementedAPIKeyServiceServer
}

func (writerCRM) VerifyAPIKey(_ context.Context, req *crmv1.VerifyAPIKeyRequest) (*crmv1.VerifyAPIKeyResponse, error) {
	if d := sha256.Sum256([]byte(apiKey)); string(req.SecretSha256) == string(d[:]) {
		return &crmv1.VerifyAPIKeyResponse{Key: &crmv1.APIKey{
			Id: "key-1", Scopes: []string{"read", "write"}, AgencyId: wrapperspb.String("agency-1"), CreatedAt: timestamppb.Now(),
		}}, nil
	}
	return nil, status.Error(codes.NotFound, "unknown API key")
}

// acceptingActions answers every RunAction as an asynchronous submission
// does: its balance, then the 202's headers, and the rendered body.
type acceptingActions struct {
	actionsv1.UnimplementedActionsServiceServer
}

func (acceptingActions) RunAction(ctx context.Context, _ *actionsv1.RunActionRequest) (*actionsv1.RunActionResponse, error) {
	_ = grpc.SetHeader(ctx, metadata.Pairs("atrium-ai-credits-remaining", "1999999995", "atrium-data-credits-remaining", "0"))
	url := "/api/v1/runs/0190a0c0-0000-7000-8000-000000000001"
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-http-code", "202", "location", url, "retry-after", "1", "preference-applied", "respond-async"))
	body := `{"action":"generate_blog","client_id":"0190a0c0-0000-7000-8000-000000000002","status":"pending","status_code":202,` +
		`"data":{"run_id":"0190a0c0-0000-7000-8000-000000000001","state":"queued","url":"` + url + `"}}`
	if render.Requested(ctx) {
		return &actionsv1.RunActionResponse{RenderedJson: []byte(body)}, nil
	}
	return &actionsv1.RunActionResponse{}, nil
}

// BenchmarkAsyncSubmission is the gateway's side of an asynchronous
// submission as `atrium serve` runs it: POST /api/v1/data with Prefer:
// respond-async through the middleware, the key (cached), grpc-gateway
// and the in-process call to a service answering 202 as the actions
// service does, with the telemetry serve sets up (no exporter) and a
// JSON access log. The HTTP connection itself is left out
// (httptest.ResponseRecorder).
func BenchmarkAsyncSubmission(b *testing.B) {
	tel, err := telemetry.Setup(b.Context(), telemetry.Config{ServiceName: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	signer, _ := principal.NewSigner(secret)
	local := rpc.NewLocal()
	listen := func(register func(*rpc.Server)) string {
		srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, tel)
		if err != nil {
			b.Fatal(err)
		}
		register(srv)
		go func() { _ = srv.Serve() }()
		b.Cleanup(srv.Stop)
		local.Add(srv)
		return srv.Addr()
	}
	crm := listen(func(s *rpc.Server) { crmv1.RegisterAPIKeyServiceServer(s, writerCRM{}) })
	actions := listen(func(s *rpc.Server) { actionsv1.RegisterActionsServiceServer(s, acceptingActions{}) })
	other := "127.0.0.1:1" // never called
	cfg := Config{
		HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", AdminToken: "admin-token-0123456789", InternalSecret: secret,
		Upstreams: map[string]string{"crm": crm, "actions": actions, "collections": other, "data": other, "webhooks": other},
		Logger:    slog.New(slog.NewJSONHandler(discard{}, nil)), Telemetry: tel, Local: local,
	}
	gw, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(gw.close)
	h := gw.public.srv.Handler
	const body = `{"action":"generate_blog","client_id":"0190a0c0-0000-7000-8000-000000000002","keyword":"slow bread 1"}`
	submit := func() *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, "/api/v1/data", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+apiKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Prefer", "respond-async")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if w := submit(); w.Code != http.StatusAccepted {
		b.Fatalf("the submission answered %d: %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		submit()
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
