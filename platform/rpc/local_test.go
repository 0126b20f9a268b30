package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/telemetry"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// items is a collections service whose GetItem does what the item id says,
// so that one test can run every case over the network and in process.
type items struct {
	collectionsv1.UnimplementedCollectionsServiceServer

	mu    sync.Mutex
	calls map[string]int
	// waiting receives a value when a call for the "wait" item starts,
	// canceled the error of its context once that ends.
	waiting  chan struct{}
	canceled chan error
}

// seen is what GetItem reports about its call, as the rendered JSON.
type seen struct {
	Subject  string   `json:"subject"`
	Site     string   `json:"site"`
	Custom   []string `json:"custom"`
	Gateway  []string `json:"gateway_value"`
	Method   string   `json:"method"`
	Deadline bool     `json:"deadline"`
	Left     float64  `json:"left_s"`
	Traced   bool     `json:"traced"`
}

func (s *items) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[id]++
	return s.calls[id]
}

func (s *items) GetItem(ctx context.Context, req *collectionsv1.GetItemRequest) (*collectionsv1.GetItemResponse, error) {
	n := s.count(req.ItemId)
	switch req.ItemId {
	case "panic":
		panic("the handler fell over")
	case "invalid":
		return nil, apperr.Invalid("item_id must be a UUID; got %q", req.ItemId)
	case "header-then-error":
		_ = grpc.SetHeader(ctx, metadata.Pairs("etag", `"7"`))
		return nil, apperr.NotFound("item %q not found", req.ItemId)
	case "unavailable-once":
		if n == 1 {
			return nil, apperr.Unavailable(nil, "the database is unreachable right now")
		}
	case "unavailable":
		return nil, apperr.Unavailable(nil, "the database is unreachable right now")
	case "wait":
		s.waiting <- struct{}{}
		<-ctx.Done()
		s.canceled <- ctx.Err()
		return nil, ctx.Err()
	case "bad-header":
		if err := grpc.SetHeader(ctx, metadata.Pairs("etag", "caf\u00e9")); err != nil {
			return nil, err
		}
	}
	p, _ := principal.FromContext(ctx)
	md, _ := metadata.FromIncomingContext(ctx)
	method, _ := grpc.Method(ctx)
	d, ok := ctx.Deadline()
	out := seen{Subject: p.Subject, Site: principal.SiteID(ctx), Custom: md.Get("x-custom"), Gateway: md.Get("x-gateway-value"),
		Method: method, Deadline: ok, Left: time.Until(d).Round(time.Second).Seconds(), Traced: trace.SpanContextFromContext(ctx).IsValid()}
	_ = grpc.SetHeader(ctx, metadata.Pairs("etag", `"3"`))
	_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "end"))
	b, _ := json.Marshal(out)
	return &collectionsv1.GetItemResponse{RenderedJson: b}, nil
}

func (s *items) CreateItem(ctx context.Context, req *collectionsv1.CreateItemRequest) (*collectionsv1.CreateItemResponse, error) {
	s.count("create")
	return nil, apperr.Unavailable(nil, "the database is unreachable right now")
}

// stack is one service, reachable over the network and in process.
type stack struct {
	srv      *rpc.Server
	svc      *items
	network  rpc.Conn
	local    rpc.Conn
	signer   *principal.Signer
	spans    *tracetest.SpanRecorder
	tel      *telemetry.Telemetry
	received []string // what the client interceptor saw, per call
	mu       sync.Mutex
}

func newStack(t testing.TB) *stack {
	t.Helper()
	st := &stack{svc: &items{calls: map[string]int{}, waiting: make(chan struct{}, 2), canceled: make(chan error, 2)}, spans: tracetest.NewSpanRecorder()}
	tel, err := telemetry.Setup(t.Context(), telemetry.Config{ServiceName: "test", SpanProcessor: st.spans})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	st.tel = tel
	if st.signer, err = principal.NewSigner([]byte(strings.Repeat("s", 32))); err != nil {
		t.Fatal(err)
	}
	if st.srv, err = rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), st.signer, tel); err != nil {
		t.Fatal(err)
	}
	collectionsv1.RegisterCollectionsServiceServer(st.srv, st.svc)
	st.srv.SetHealth("")
	go func() { _ = st.srv.Serve() }()
	t.Cleanup(st.srv.Stop)
	// A client interceptor of the caller's own, as the gateway adds one.
	mine := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		st.mu.Lock()
		st.received = append(st.received, method)
		st.mu.Unlock()
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	if st.network, err = (*rpc.Local)(nil).Dial(st.srv.Addr(), tel, mine); err != nil {
		t.Fatal(err)
	}
	local := rpc.NewLocal()
	local.Add(st.srv)
	if st.local, err = local.Dial(st.srv.Addr(), tel, mine); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.network.Close(); _ = st.local.Close() })
	if _, ok := st.network.(*grpc.ClientConn); !ok {
		t.Fatalf("a Local without the server dialled %T, want a *grpc.ClientConn", st.network)
	}
	if _, ok := st.local.(*grpc.ClientConn); ok {
		t.Fatal("a Local holding the server dialled over the network")
	}
	return st
}

// reader is a key of the site with the read scope, as the gateway signs it.
func (st *stack) as(ctx context.Context, p principal.Principal) context.Context {
	return metadata.AppendToOutgoingContext(ctx, principal.MetadataKey, st.signer.Token(p))
}

var reader = principal.Principal{Kind: principal.KindKey, Subject: "key-1", Scopes: []principal.Scope{principal.ScopeRead}, SiteID: "site-1"}

// outcome is what a caller observes of a call.
type outcome struct {
	Code    codes.Code
	Message string
	Reason  string
	Body    seen
	Header  metadata.MD
	Trailer metadata.MD
}

func call(ctx context.Context, conn rpc.Conn, id string) outcome {
	var header, trailer metadata.MD
	resp, err := collectionsv1.NewCollectionsServiceClient(conn).GetItem(ctx, &collectionsv1.GetItemRequest{CollectionSlug: "posts", ItemId: id},
		grpc.Header(&header), grpc.Trailer(&trailer))
	st := status.Convert(err)
	o := outcome{Code: st.Code(), Message: st.Message(), Reason: apperr.ReasonOf(st), Header: header, Trailer: trailer}
	if err == nil {
		_ = json.Unmarshal(resp.RenderedJson, &o.Body)
	}
	return o
}

// TestInProcessCallsBehaveAsOverTheNetwork runs the same calls over the
// network and in process and requires the caller and the handler to see
// the same thing: the interceptor chain (principal verification, the access
// rule, error mapping, panic recovery), the metadata both ways, headers and
// trailers on success and on error, the deadline, the metadata gRPC
// refuses, an unknown method.
func TestInProcessCallsBehaveAsOverTheNetwork(t *testing.T) {
	st := newStack(t)
	writerOfOtherSite := principal.Principal{Kind: principal.KindKey, Subject: "key-2", Scopes: []principal.Scope{principal.ScopeWrite}, SiteID: "site-2"}
	cases := []struct {
		name string
		ctx  func(context.Context) context.Context
		id   string
		want func(t *testing.T, o outcome)
	}{
		{"ok", func(ctx context.Context) context.Context {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			t.Cleanup(cancel)
			return metadata.AppendToOutgoingContext(st.as(ctx, reader), "x-custom", "one", "x-custom", "two")
		}, "ok", func(t *testing.T, o outcome) {
			if o.Code != codes.OK || o.Body.Subject != "key-1" || o.Body.Site != "site-1" || strings.Join(o.Body.Custom, ",") != "one,two" ||
				o.Body.Method != "/atrium.collections.v1.CollectionsService/GetItem" || !o.Body.Deadline || o.Body.Left != 20 || !o.Body.Traced {
				t.Errorf("handler saw %+v (%s %s); want the verified principal, both metadata values, the method, the 20s deadline and a trace", o.Body, o.Code, o.Message)
			}
			if got := o.Header.Get("etag"); len(got) != 1 || got[0] != `"3"` {
				t.Errorf("header etag = %v, want \"3\"", got)
			}
			if got := o.Trailer.Get("x-trailer"); len(got) != 1 || got[0] != "end" {
				t.Errorf("trailer x-trailer = %v, want end", got)
			}
		}},
		{"no principal", func(ctx context.Context) context.Context { return ctx }, "ok", func(t *testing.T, o outcome) {
			if o.Code != codes.Unauthenticated || !strings.Contains(o.Message, "missing caller identity") {
				t.Errorf("got %s %q; want Unauthenticated from the principal verification", o.Code, o.Message)
			}
		}},
		{"forged principal", func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(ctx, principal.MetadataKey, "forged")
		}, "ok", func(t *testing.T, o outcome) {
			if o.Code != codes.Unauthenticated {
				t.Errorf("got %s %q; want Unauthenticated", o.Code, o.Message)
			}
		}},
		{"scope the rule does not grant", func(ctx context.Context) context.Context { return st.as(ctx, writerOfOtherSite) }, "ok", func(t *testing.T, o outcome) {
			if o.Code != codes.PermissionDenied {
				t.Errorf("got %s %q; want PermissionDenied from the access rule", o.Code, o.Message)
			}
		}},
		{"panic", func(ctx context.Context) context.Context { return st.as(ctx, reader) }, "panic", func(t *testing.T, o outcome) {
			if o.Code != codes.Internal || strings.Contains(o.Message, "fell over") {
				t.Errorf("got %s %q; want Internal without the panic's text", o.Code, o.Message)
			}
		}},
		{"domain error", func(ctx context.Context) context.Context { return st.as(ctx, reader) }, "invalid", func(t *testing.T, o outcome) {
			if o.Code != codes.InvalidArgument || o.Message != `item_id must be a UUID; got "invalid"` {
				t.Errorf("got %s %q; want the mapped InvalidArgument", o.Code, o.Message)
			}
		}},
		{"header then error", func(ctx context.Context) context.Context { return st.as(ctx, reader) }, "header-then-error", func(t *testing.T, o outcome) {
			if o.Code != codes.NotFound {
				t.Errorf("got %s %q; want NotFound", o.Code, o.Message)
			}
		}},
		{"metadata gRPC refuses", func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(st.as(ctx, reader), "idempotency-key", "r\u00e9sum\u00e9")
		}, "ok", func(t *testing.T, o outcome) {
			if o.Code != codes.Internal || !strings.Contains(o.Message, "non-printable") {
				t.Errorf("got %s %q; want gRPC's Internal for a non-ASCII value", o.Code, o.Message)
			}
		}},
		{"header gRPC does not check", func(ctx context.Context) context.Context { return st.as(ctx, reader) }, "bad-header", func(t *testing.T, o outcome) {
			if o.Code != codes.OK || len(o.Header.Get("etag")) != 2 {
				t.Errorf("got %s %q, header %v; want OK with both values", o.Code, o.Message, o.Header)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			network := call(tc.ctx(t.Context()), st.network, tc.id)
			local := call(tc.ctx(t.Context()), st.local, tc.id)
			tc.want(t, network)
			tc.want(t, local)
			if a, b := js(network), js(local); a != b {
				t.Errorf("over the network:\n%s\nin process:\n%s", a, b)
			}
		})
	}
	t.Run("unknown method", func(t *testing.T) {
		for name, conn := range map[string]rpc.Conn{"network": st.network, "local": st.local} {
			err := conn.Invoke(st.as(t.Context(), reader), "/atrium.collections.v1.CollectionsService/Nope", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
			if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "unknown method Nope") {
				t.Errorf("%s: %v; want Unimplemented naming the method", name, err)
			}
			err = conn.Invoke(t.Context(), "/atrium.nothing.v1.Nothing/Call", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
			if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "unknown service atrium.nothing.v1.Nothing") {
				t.Errorf("%s: %v; want Unimplemented naming the service", name, err)
			}
		}
	})
	t.Run("client interceptors", func(t *testing.T) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.received) < 2*len(cases) {
			t.Errorf("the caller's interceptor saw %d calls; want every call of both transports (%d)", len(st.received), 2*len(cases))
		}
	})
}

func js(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestInProcessCallRunsTelemetry checks that an in-process call makes the
// same spans (a client span and, under it, the server's) and call metrics
// (both sides, by method and code) as one over the network.
func TestInProcessCallRunsTelemetry(t *testing.T) {
	st := newStack(t)
	ctx, parent := st.tel.TracerProvider().Tracer("test").Start(t.Context(), "request")
	if o := call(st.as(ctx, reader), st.local, "ok"); o.Code != codes.OK {
		t.Fatalf("call: %s %s", o.Code, o.Message)
	}
	if o := call(st.as(ctx, reader), st.local, "invalid"); o.Code != codes.InvalidArgument {
		t.Fatalf("call: %s %s", o.Code, o.Message)
	}
	parent.End()
	var client, server int
	for _, s := range st.spans.Ended() {
		if s.Name() != "atrium.collections.v1.CollectionsService/GetItem" {
			continue
		}
		switch s.SpanKind() {
		case trace.SpanKindClient:
			client++
			if s.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("client span's parent %s, want the caller's span", s.Parent().SpanID())
			}
		case trace.SpanKindServer:
			server++
			if s.SpanContext().TraceID() != parent.SpanContext().TraceID() || !s.Parent().IsRemote() {
				t.Errorf("server span not in the caller's trace as a remote child: %+v", s.Parent())
			}
		}
	}
	if client != 2 || server != 2 {
		t.Errorf("spans: %d client, %d server; want 2 of each", client, server)
	}
	rec := httptest.NewRecorder()
	st.tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`rpc_server_call_duration_seconds_count{rpc_method="atrium.collections.v1.CollectionsService/GetItem",rpc_response_status_code="OK"`,
		`rpc_server_call_duration_seconds_count{rpc_method="atrium.collections.v1.CollectionsService/GetItem",rpc_response_status_code="INVALID_ARGUMENT"`,
		`rpc_client_call_duration_seconds_count{error_type="INVALID_ARGUMENT",rpc_method="atrium.collections.v1.CollectionsService/GetItem"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestInProcessRetriesAsOverTheNetwork: a read answered UNAVAILABLE is
// tried again, a write is not, on both transports.
func TestInProcessRetriesAsOverTheNetwork(t *testing.T) {
	for _, transport := range []string{"network", "local"} {
		t.Run(transport, func(t *testing.T) {
			st := newStack(t)
			conn := st.network
			if transport == "local" {
				conn = st.local
			}
			if o := call(st.as(t.Context(), reader), conn, "unavailable-once"); o.Code != codes.OK {
				t.Fatalf("read failing once: %s %s; want it retried", o.Code, o.Message)
			}
			if n := st.svc.callsOf("unavailable-once"); n != 2 {
				t.Errorf("read failing once was called %d times, want 2", n)
			}
			if o := call(st.as(t.Context(), reader), conn, "unavailable"); o.Code != codes.Unavailable {
				t.Fatalf("read failing always: %s %s", o.Code, o.Message)
			}
			if n := st.svc.callsOf("unavailable"); n != rpc.MaxAttempts {
				t.Errorf("read failing always was called %d times, want %d", n, rpc.MaxAttempts)
			}
			writer := principal.Principal{Kind: principal.KindKey, Subject: "key-1", Scopes: []principal.Scope{principal.ScopeWrite}, SiteID: "site-1"}
			_, err := collectionsv1.NewCollectionsServiceClient(conn).CreateItem(st.as(t.Context(), writer), &collectionsv1.CreateItemRequest{CollectionSlug: "posts"})
			if status.Code(err) != codes.Unavailable || st.svc.callsOf("create") != 1 {
				t.Errorf("write: %v after %d calls; want Unavailable after one", err, st.svc.callsOf("create"))
			}
		})
	}
}

// TestInProcessCancellationAndShutdown: the caller's cancellation reaches
// the handler; a shutdown lets the call in flight finish and refuses new
// ones.
func TestInProcessCancellationAndShutdown(t *testing.T) {
	st := newStack(t)
	ctx, cancel := context.WithCancel(st.as(t.Context(), reader))
	done := make(chan outcome)
	go func() { done <- call(ctx, st.local, "wait") }()
	<-st.svc.waiting
	cancel()
	if err := <-st.svc.canceled; !errors.Is(err, context.Canceled) {
		t.Errorf("handler's context ended with %v, want context.Canceled", err)
	}
	if o := <-done; o.Code != codes.Canceled {
		t.Errorf("canceled call: %s %q, want Canceled", o.Code, o.Message)
	}

	// A call in flight when the shutdown starts finishes; later ones are
	// refused as over the network.
	ctx, cancel = context.WithCancel(st.as(t.Context(), reader))
	defer cancel()
	go func() { done <- call(ctx, st.local, "wait") }()
	<-st.svc.waiting
	stopped := make(chan struct{})
	sctx, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	go func() { st.srv.Shutdown(sctx); close(stopped) }()
	for {
		o := call(st.as(t.Context(), reader), st.local, "ok")
		if o.Code == codes.Unavailable {
			break
		}
		time.Sleep(time.Millisecond) // why sleep: polls until the shutdown, which has no signal of its own, refuses new calls
	}
	select {
	case <-stopped:
		t.Fatal("Shutdown returned with a call in flight")
	default:
	}
	cancel()
	<-done
	<-stopped
}

func (s *items) callsOf(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

// BenchmarkInProcessCall is a call as the gateway makes one in `atrium
// serve`: a signed principal in the metadata, the handler setting a header
// and a trailer, the caller asking for both (grpc-gateway always does).
func BenchmarkInProcessCall(b *testing.B) {
	st := newStack(b)
	ctx := st.as(b.Context(), reader)
	if o := call(ctx, st.local, "1"); o.Code != codes.OK {
		b.Fatalf("the call answered %v: %s", o.Code, o.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		var header, trailer metadata.MD
		if _, err := collectionsv1.NewCollectionsServiceClient(st.local).GetItem(ctx, &collectionsv1.GetItemRequest{CollectionSlug: "posts", ItemId: "1"},
			grpc.Header(&header), grpc.Trailer(&trailer)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCallsSignedByTheirCredentials: a connection from DialAs signs every
// call with its credentials, in process as over the network, so that a
// service calling another needs no principal in its context; with none
// the same call is refused.
func TestCallsSignedByTheirCredentials(t *testing.T) {
	st := newStack(t)
	local := rpc.NewLocal()
	local.Add(st.srv)
	creds := st.signer.Credentials(reader)
	for _, l := range []struct {
		name  string
		local *rpc.Local
	}{{"network", nil}, {"in process", local}} {
		t.Run(l.name, func(t *testing.T) {
			conn, err := l.local.DialAs(st.srv.Addr(), st.tel, creds)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, inProcess := conn.(*grpc.ClientConn); inProcess == (l.local != nil) {
				t.Fatalf("DialAs made a %T", conn)
			}
			o := call(metadata.AppendToOutgoingContext(t.Context(), "x-custom", "one"), conn, "ok")
			if o.Code != codes.OK || o.Body.Subject != "key-1" || o.Body.Site != "site-1" || strings.Join(o.Body.Custom, ",") != "one" {
				t.Errorf("handler saw %+v (%s %s); want the credentials' principal and the caller's metadata", o.Body, o.Code, o.Message)
			}
		})
	}
	if o := call(t.Context(), st.local, "ok"); o.Code != codes.Unauthenticated {
		t.Errorf("without credentials: %s %q; want Unauthenticated", o.Code, o.Message)
	}
}
