package principal

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/known/emptypb" // the test rule's method types

	"github.com/atrium-hq/atrium/platform/apperr"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

// publishedReads is what a published_only key may call: the reads of a
// site's published content. A change here is a change of what every web
// page that embeds such a key exposes, so it is spelled out.
var publishedReads = []string{
	"atrium.collections.v1.AssetsService/GetAsset",
	"atrium.collections.v1.CollectionsService/GetItem",
	"atrium.collections.v1.CollectionsService/ListCollections",
	"atrium.collections.v1.CollectionsService/ListItems",
}

// TestPublishedOnlyReachesThePublishedReads reads every RPC of every
// Atrium service from the descriptors, as the gateway and the services do,
// and judges a published-only key against each: it passes the marked
// collections reads and nothing else (not the asset list, the webhooks,
// their deliveries, the event stream, nor any write).
func TestPublishedOnlyReachesThePublishedReads(t *testing.T) {
	page := Principal{Kind: KindKey, Subject: "page", SiteID: "s", AgencyID: "a", Scopes: []Scope{ScopeRead}, PublishedOnly: true}
	var allowed []string
	tenantRPCs := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "atrium.") {
			return true
		}
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				full := "/" + string(sd.FullName()) + "/" + string(md.Name())
				a, ok := AccessOf(full)
				if !ok {
					t.Errorf("%s declares no access rule", full)
					continue
				}
				if a.Caller == accessv1.Caller_CALLER_TENANT {
					tenantRPCs++
				}
				err := Authorize(page, a)
				switch {
				case err == nil && a.Caller != accessv1.Caller_CALLER_ANYONE:
					allowed = append(allowed, a.Name)
				case err != nil && a.Caller == accessv1.Caller_CALLER_TENANT:
					if !strings.Contains(err.Error(), "published_only") || !strings.Contains(err.Error(), a.Name) {
						t.Errorf("%s: refusal %q does not name published_only and the RPC", full, err)
					}
				}
			}
		}
		return true
	})
	if tenantRPCs < 30 {
		t.Fatalf("only %d tenant RPCs found: are the services' protos linked into this test?", tenantRPCs)
	}
	slices.Sort(allowed)
	if !slices.Equal(allowed, publishedReads) {
		t.Fatalf("a published_only key may call %v, want exactly %v", allowed, publishedReads)
	}
}

// TestOpenToPublishedOnlyIsOnlyForSiteReads: a rule that opens a write, or
// another tenant's interface, to published_only keys is a mistake in the
// proto, and MethodAccess treats it as no rule at all (nobody may call it;
// the gateway refuses to start).
func TestOpenToPublishedOnlyIsOnlyForSiteReads(t *testing.T) {
	for _, c := range []struct {
		rule *accessv1.Access
		ok   bool
	}{
		{&accessv1.Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: accessv1.Scope_SCOPE_READ, Binding: accessv1.Binding_BINDING_SITE, Resource: accessv1.Resource_RESOURCE_CONTENT, OpenToPublishedOnly: true}, true},
		{&accessv1.Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: accessv1.Scope_SCOPE_WRITE, Binding: accessv1.Binding_BINDING_SITE, Resource: accessv1.Resource_RESOURCE_CONTENT, OpenToPublishedOnly: true}, false},
		{&accessv1.Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: accessv1.Scope_SCOPE_READ, Binding: accessv1.Binding_BINDING_AGENCY, Resource: accessv1.Resource_RESOURCE_CONTENT, OpenToPublishedOnly: true}, false},
		{&accessv1.Access{Caller: accessv1.Caller_CALLER_ADMIN, OpenToPublishedOnly: true}, false},
	} {
		a, ok := MethodAccess(methodWith(t, c.rule))
		if ok != c.ok {
			t.Errorf("rule %v: accepted %v, want %v", c.rule, ok, c.ok)
		}
		if ok && (!a.OpenToPublishedOnly || a.Name != "test.v1.TestService/Call") {
			t.Errorf("rule %v read as %+v", c.rule, a)
		}
	}
}

// methodWith builds a method descriptor carrying rule, as protoc would.
func methodWith(t *testing.T, rule *accessv1.Access) protoreflect.MethodDescriptor {
	t.Helper()
	opts := &descriptorpb.MethodOptions{}
	proto.SetExtension(opts, accessv1.E_Access, rule)
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name:       proto.String("test/v1/test.proto"),
		Package:    proto.String("test.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/empty.proto"},
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("TestService"),
			Method: []*descriptorpb.MethodDescriptorProto{{
				Name: proto.String("Call"), InputType: proto.String(".google.protobuf.Empty"),
				OutputType: proto.String(".google.protobuf.Empty"), Options: opts,
			}},
		}},
	}, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Services().Get(0).Methods().Get(0)
}

// TestServiceRefusesPublishedOnlyOverGRPC: the rule does not rest on the
// gateway. A gRPC server with the interceptors every service runs refuses
// a published-only principal sent straight to it, on a webhooks read (a
// hook URL may carry its own secret), and admits it to the items, where
// the handler sees it is published-only and hides drafts.
func TestServiceRefusesPublishedOnlyOverGRPC(t *testing.T) {
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(
		apperr.UnaryServerInterceptor(slog.New(slog.DiscardHandler), Infrastructure),
		s.UnaryServerInterceptor(),
	))
	items := &itemsServer{seen: make(chan Principal, 1)}
	collectionsv1.RegisterCollectionsServiceServer(srv, items)
	webhooksv1.RegisterWebhooksServiceServer(srv, hooksServer{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	page := Principal{Kind: KindKey, Subject: "page", SiteID: "s", Scopes: []Scope{ScopeRead}, PublishedOnly: true}
	ctx := metadata.AppendToOutgoingContext(t.Context(), MetadataKey, s.Token(page))
	_, err = webhooksv1.NewWebhooksServiceClient(conn).ListWebhooks(ctx, &webhooksv1.ListWebhooksRequest{})
	if st := status.Convert(err); st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "published_only") ||
		!strings.Contains(st.Message(), "atrium.webhooks.v1.WebhooksService/ListWebhooks") {
		t.Fatalf("ListWebhooks with a published-only principal = %v, want PermissionDenied naming published_only and the RPC", err)
	}
	if _, err := collectionsv1.NewCollectionsServiceClient(conn).ListItems(ctx, &collectionsv1.ListItemsRequest{CollectionSlug: "posts"}); err != nil {
		t.Fatalf("ListItems with a published-only principal: %v", err)
	}
	if p := <-items.seen; !p.PublishedOnly {
		t.Fatalf("the items handler saw %+v, without published_only: it would show drafts", p)
	}
	// An ordinary read key of the same site and subject reads the webhooks
	// (the refusal above is the flag's, not the scope's: and the token
	// signed for one is not the other's).
	reader := page
	reader.PublishedOnly = false
	ctx = metadata.AppendToOutgoingContext(t.Context(), MetadataKey, s.Token(reader))
	_, err = webhooksv1.NewWebhooksServiceClient(conn).ListWebhooks(ctx, &webhooksv1.ListWebhooksRequest{})
	if err != nil {
		t.Fatalf("ListWebhooks with an ordinary read key: %v", err)
	}
}

type itemsServer struct {
	collectionsv1.UnimplementedCollectionsServiceServer
	seen chan Principal
}

func (i *itemsServer) ListItems(ctx context.Context, _ *collectionsv1.ListItemsRequest) (*collectionsv1.ListItemsResponse, error) {
	p, _ := FromContext(ctx)
	i.seen <- p
	return &collectionsv1.ListItemsResponse{}, nil
}

type hooksServer struct {
	webhooksv1.UnimplementedWebhooksServiceServer
}

func (hooksServer) ListWebhooks(context.Context, *webhooksv1.ListWebhooksRequest) (*webhooksv1.ListWebhooksResponse, error) {
	return &webhooksv1.ListWebhooksResponse{}, nil
}
