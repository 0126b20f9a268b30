package principal

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	// The access rule of the method the test calls.
	_ "github.com/atrium-hq/atrium/proto/atrium/data/v1"
)

type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (f fakeStream) Context() context.Context { return f.ctx }

// Streaming calls (the bulk loads) get the same identity check and access
// rule as unary ones: without them a stream would be an open door.
func TestStreamsAreAdmittedLikeUnaryCalls(t *testing.T) {
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	const method = "/atrium.data.v1.DataAdminService/LoadRows" // CALLER_ADMIN
	icpt := s.StreamServerInterceptor()
	call := func(ctx context.Context) (Principal, error) {
		var seen Principal
		err := icpt(nil, fakeStream{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: method}, func(_ any, ss grpc.ServerStream) error {
			seen, _ = FromContext(ss.Context())
			return nil
		})
		return seen, err
	}
	with := func(p Principal) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs(MetadataKey, s.Sign(p)))
	}
	if _, err := call(context.Background()); err == nil || !strings.Contains(err.Error(), "missing caller identity") {
		t.Fatalf("no principal: %v", err)
	}
	tenant := Principal{Kind: KindKey, Subject: "k1", Scopes: []Scope{ScopeRead, ScopeWrite}, AgencyID: "a1"}
	if _, err := call(with(tenant)); err == nil {
		t.Fatal("an API key principal opened an admin stream")
	}
	svc := Principal{Kind: KindService, Subject: "load-rows"}
	if p, err := call(with(svc)); err != nil || p.Subject != "load-rows" {
		t.Fatalf("a service principal: %+v, %v; want it admitted and in the stream's context", p, err)
	}
	if err := icpt(nil, fakeStream{ctx: context.Background()},
		&grpc.StreamServerInfo{FullMethod: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"},
		func(any, grpc.ServerStream) error { return nil }); err != nil {
		t.Fatalf("reflection is infrastructure: %v", err)
	}
}
