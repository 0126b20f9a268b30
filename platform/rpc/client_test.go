package rpc_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/atrium-hq/atrium/platform/rpc"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
)

// fakeServer answers every method of every service with an empty message,
// after failing the first failures calls of each method with UNAVAILABLE
// (all of them when failures is negative). It counts the calls and records
// the deadline each arrived with.
type fakeServer struct {
	failures int
	addr     string
	srv      *grpc.Server
	health   *health.Server

	mu        sync.Mutex
	calls     map[string]int
	deadlines []time.Duration // time left on arrival; 0: none
}

func startFake(t *testing.T, failures int) (*fakeServer, *grpc.ClientConn) {
	t.Helper()
	f := listenFake(t, failures)
	conn, err := rpc.Dial(f.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return f, conn
}

// listenFake starts a fakeServer with the health service a replica
// serves (rpc.ReplicaHealthService SERVING), as rpc.Listen's servers do.
func listenFake(t *testing.T, failures int) *fakeServer {
	t.Helper()
	f := &fakeServer{failures: failures, calls: map[string]int{}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = lis.Addr().String()
	f.srv = grpc.NewServer(grpc.UnknownServiceHandler(f.handle))
	f.health = health.NewServer()
	f.health.SetServingStatus(rpc.ReplicaHealthService, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(f.srv, f.health)
	go func() { _ = f.srv.Serve(lis) }()
	t.Cleanup(f.srv.Stop)
	return f
}

func (f *fakeServer) handle(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	var left time.Duration
	if d, ok := stream.Context().Deadline(); ok {
		left = time.Until(d)
	}
	f.mu.Lock()
	f.calls[method]++
	n := f.calls[method]
	f.deadlines = append(f.deadlines, left)
	f.mu.Unlock()
	if err := stream.RecvMsg(&emptypb.Empty{}); err != nil {
		return err
	}
	if f.failures < 0 || n <= f.failures {
		return status.Error(codes.Unavailable, "restarting")
	}
	return stream.SendMsg(&emptypb.Empty{})
}

func (f *fakeServer) callsOf(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func TestUnavailableIsRetriedOnlyForCallsSafeToRepeat(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name    string
		method  string
		call    func(*grpc.ClientConn) error
		retried bool
	}{
		{"a read", "/atrium.crm.v1.ClientAccessService/CheckClientAccess", func(c *grpc.ClientConn) error {
			_, err := crmv1.NewClientAccessServiceClient(c).CheckClientAccess(ctx, &crmv1.CheckClientAccessRequest{AgencyId: "a", ClientId: "c"})
			return err
		}, true},
		{"a read of the public API", "/atrium.data.v1.DataService/ReadDataset", func(c *grpc.ClientConn) error {
			_, err := datav1.NewDataServiceClient(c).ReadDataset(ctx, &datav1.ReadDatasetRequest{Resource: "blogs"})
			return err
		}, true},
		{"a write idempotent by design", "/atrium.data.v1.DataRecordsService/WriteRecords", func(c *grpc.ClientConn) error {
			_, err := datav1.NewDataRecordsServiceClient(c).WriteRecords(ctx, &datav1.WriteRecordsRequest{ClientId: "c"})
			return err
		}, true},
		{"a create", "/atrium.crm.v1.CRMAdminService/CreateAgency", func(c *grpc.ClientConn) error {
			_, err := crmv1.NewCRMAdminServiceClient(c).CreateAgency(ctx, &crmv1.CreateAgencyRequest{Name: "Acme"})
			return err
		}, false},
		{"an action that spends credits", "/atrium.actions.v1.ActionsService/RunAction", func(c *grpc.ClientConn) error {
			_, err := actionsv1.NewActionsServiceClient(c).RunAction(ctx, &actionsv1.RunActionRequest{})
			return err
		}, false},
		{"adding credits", "/atrium.actions.v1.ActionsAdminService/AddCredits", func(c *grpc.ClientConn) error {
			_, err := actionsv1.NewActionsAdminServiceClient(c).AddCredits(ctx, &actionsv1.AddCreditsRequest{AgencyId: "a", Ai: 1})
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, conn := startFake(t, 1)
			err := tc.call(conn)
			if tc.retried {
				if err != nil {
					t.Fatalf("call failed once with UNAVAILABLE, then should have been retried and succeeded; got %v", err)
				}
				if got := f.callsOf(tc.method); got != 2 {
					t.Fatalf("server saw %d calls, want 2 (the failed one and its retry)", got)
				}
				return
			}
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("a write must not be retried: want the UNAVAILABLE error, got %v", err)
			}
			if got := f.callsOf(tc.method); got != 1 {
				t.Fatalf("server saw %d calls of a write, want exactly 1", got)
			}
		})
	}
}

func TestRetriesAreBounded(t *testing.T) {
	f, conn := startFake(t, -1)
	_, err := crmv1.NewCRMServiceClient(conn).ListProspects(t.Context(), &crmv1.ListProspectsRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a read that keeps failing must end with UNAVAILABLE, got %v", err)
	}
	if got := f.callsOf("/atrium.crm.v1.CRMService/ListProspects"); got != rpc.MaxAttempts {
		t.Fatalf("server saw %d attempts, want %d", got, rpc.MaxAttempts)
	}
}

func TestCallWithoutDeadlineGetsTheDefault(t *testing.T) {
	f, conn := startFake(t, 0)
	client := crmv1.NewClientAccessServiceClient(conn)
	if _, err := client.CheckClientAccess(context.Background(), &crmv1.CheckClientAccessRequest{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	if _, err := client.CheckClientAccess(ctx, &crmv1.CheckClientAccessRequest{}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d := f.deadlines[0]; d <= 0 || d > rpc.DefaultCallTimeout {
		t.Errorf("a call without a deadline arrived with %v left, want a deadline of at most %v", d, rpc.DefaultCallTimeout)
	}
	if d := f.deadlines[1]; d <= rpc.DefaultCallTimeout {
		t.Errorf("a call with the caller's one-hour deadline arrived with %v left: the caller's deadline must be kept, not shortened to the default", d)
	}
}

// TestReadsDeclareThemselvesSafeToRetry keeps the proto option honest: an
// RPC named as a read (Get, List, Check, Verify, Read) must declare
// idempotency_level, and any other RPC declaring it must be one of the
// writes known to be idempotent by design.
func TestReadsDeclareThemselvesSafeToRetry(t *testing.T) {
	idempotentWrites := []string{
		// Every row the actions service writes names its id: a retry
		// replaces the same rows with the same values.
		"/atrium.data.v1.DataRecordsService/WriteRecords",
		// It replaces a site's allowed origins with the list it carries
		// (a PUT): applied twice, the site holds the same list.
		"/atrium.collections.v1.CollectionsAdminService/SetSiteOrigins",
		// It replaces a site's locales and default locale with those it
		// carries (a PUT): applied twice, the site holds the same ones.
		"/atrium.collections.v1.CollectionsAdminService/SetSiteLocales",
		// It replaces the agency's branding whole (a PUT).
		"/atrium.actions.v1.ReportsService/PutBranding",
		// A revoked share stays revoked at its first time: revoking again
		// changes nothing.
		"/atrium.actions.v1.ReportsService/RevokeShare",
	}
	retried := rpc.RetriedMethods()
	var reads []string
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "atrium.") {
			return true
		}
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				if md.IsStreamingClient() || md.IsStreamingServer() {
					continue // retries are of unary calls (ListenEvents is a stream)
				}
				name := "/" + string(sd.FullName()) + "/" + string(md.Name())
				isRead := false
				for _, verb := range []string{"Get", "List", "Check", "Verify", "Read"} {
					isRead = isRead || strings.HasPrefix(string(md.Name()), verb)
				}
				switch {
				case isRead:
					reads = append(reads, name)
					if !slices.Contains(retried, name) {
						t.Errorf("%s reads but is not retried: add `option idempotency_level = NO_SIDE_EFFECTS;` to it", name)
					}
				case slices.Contains(retried, name) && !slices.Contains(idempotentWrites, name):
					t.Errorf("%s is retried on UNAVAILABLE but is a write: a retry could apply it twice", name)
				}
			}
		}
		return true
	})
	if len(reads) < 15 {
		t.Fatalf("found only %d read RPCs; are the proto packages linked into this test?", len(reads))
	}
	for _, w := range idempotentWrites {
		if !slices.Contains(retried, w) {
			t.Errorf("%s is idempotent by design but is not retried: it must declare idempotency_level = IDEMPOTENT", w)
		}
	}
}
