package rpc_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

var writer = principal.Principal{Kind: principal.KindKey, Subject: "key-3", Scopes: []principal.Scope{principal.ScopeWrite}, SiteID: "site-1"}

// TestRequestsOverTheirMaximaAreRefused: a request whose list or map holds
// more than its field's max_items is InvalidArgument naming the field, the
// count and the maximum, over the network and in process alike, and the
// service never sees it; one at the maximum reaches the service.
func TestRequestsOverTheirMaximaAreRefused(t *testing.T) {
	st := newStack(t)
	data := func(n int) *structpb.Struct {
		s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
		for i := range n {
			s.Fields[fmt.Sprintf("f%d", i)] = structpb.NewNumberValue(float64(i))
		}
		return s
	}
	for name, conn := range map[string]rpc.Conn{"network": st.network, "in process": st.local} {
		t.Run(name, func(t *testing.T) {
			client := collectionsv1.NewCollectionsServiceClient(conn)
			ctx := st.as(t.Context(), writer)
			before := st.svc.seen("create")
			_, err := client.CreateItem(ctx, &collectionsv1.CreateItemRequest{CollectionSlug: "posts", Data: data(201)})
			if s := status.Convert(err); s.Code() != codes.InvalidArgument || s.Message() != "data has 201 keys; at most 200 are allowed" {
				t.Fatalf("201 keys: %s %q; want InvalidArgument naming data, 201 and 200", s.Code(), s.Message())
			}
			if got := st.svc.seen("create"); got != before {
				t.Fatalf("the service saw %d calls of the refused request", got-before)
			}
			// At the maximum, the request reaches the service (whose fake
			// answers Unavailable).
			_, err = client.CreateItem(ctx, &collectionsv1.CreateItemRequest{CollectionSlug: "posts", Data: data(200)})
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("200 keys: %v; want the service's own answer", err)
			}
		})
	}
}

// seen is how many calls the service has had for id.
func (s *items) seen(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

// events is a webhooks service whose event stream says which filter it got.
type events struct {
	webhooksv1.UnimplementedWebhooksServiceServer
}

func (events) ListenEvents(req *webhooksv1.ListenEventsRequest, stream grpc.ServerStreamingServer[webhooksv1.ListenEventsResponse]) error {
	return stream.Send(&webhooksv1.ListenEventsResponse{Kind: &webhooksv1.ListenEventsResponse_Event{
		Event: &webhooksv1.WebhookEvent{Type: strings.Join(req.Events, ",")}}})
}

// TestStreamRequestsOverTheirMaximaAreRefused: the same holds for the
// messages a stream receives (the event stream's filter).
func TestStreamRequestsOverTheirMaximaAreRefused(t *testing.T) {
	st := newStack(t)
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), st.signer, st.tel)
	if err != nil {
		t.Fatal(err)
	}
	webhooksv1.RegisterWebhooksServiceServer(srv, events{})
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	conn, err := (*rpc.Local)(nil).Dial(srv.Addr(), st.tel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	client := webhooksv1.NewWebhooksServiceClient(conn)
	listen := func(n int) (*webhooksv1.ListenEventsResponse, error) {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("item.e%d", i)
		}
		stream, err := client.ListenEvents(st.as(t.Context(), reader), &webhooksv1.ListenEventsRequest{Events: names})
		if err != nil {
			return nil, err
		}
		return stream.Recv()
	}
	_, err = listen(65)
	if s := status.Convert(err); s.Code() != codes.InvalidArgument || s.Message() != "events has 65 items; at most 64 are allowed" {
		t.Fatalf("65 events: %s %q; want InvalidArgument naming events, 65 and 64", s.Code(), s.Message())
	}
	resp, err := listen(64)
	if err != nil || strings.Count(resp.GetEvent().GetType(), ",") != 63 {
		t.Fatalf("64 events: %v, %v; want the stream to start with the 64 filters", resp, err)
	}
}
