package rpc_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/rpc"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

const listProspects = "/atrium.crm.v1.CRMService/ListProspects"

// dialReplicas starts n fake replicas and dials them as one list.
func dialReplicas(t *testing.T, n int) ([]*fakeServer, crmv1.CRMServiceClient) {
	t.Helper()
	var fakes []*fakeServer
	var addrs []string
	for range n {
		f := listenFake(t, 0)
		fakes = append(fakes, f)
		addrs = append(addrs, f.addr)
	}
	conn, err := rpc.Dial(strings.Join(addrs, ", "))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return fakes, crmv1.NewCRMServiceClient(conn)
}

func TestCallsAreSpreadOverEveryReplicaOfAList(t *testing.T) {
	fakes, client := dialReplicas(t, 2)
	// Round-robin starts once both replicas are connected; before that the
	// first calls may all go to the first one up. 40 calls leave room.
	for range 40 {
		if _, err := client.ListProspects(t.Context(), &crmv1.ListProspectsRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range fakes {
		if f.callsOf(listProspects) < 5 {
			t.Errorf("replica %d got %d of 40 calls: calls are not spread over the replicas", i, f.callsOf(listProspects))
		}
	}
}

func TestCallsFailOverWhenAReplicaStops(t *testing.T) {
	fakes, client := dialReplicas(t, 2)
	for range 10 {
		if _, err := client.ListProspects(t.Context(), &crmv1.ListProspectsRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	fakes[0].srv.Stop() // as a SIGKILL: connections cut, nothing drained
	before := fakes[1].callsOf(listProspects)
	for i := range 20 {
		if _, err := client.ListProspects(t.Context(), &crmv1.ListProspectsRequest{}); err != nil {
			t.Fatalf("call %d after one replica of two stopped: %v; the other should take it", i, err)
		}
	}
	if got := fakes[1].callsOf(listProspects) - before; got != 20 {
		t.Errorf("the replica left took %d of the 20 calls, want all", got)
	}
}

func TestAReplicaNotServingGetsNoCalls(t *testing.T) {
	fakes, client := dialReplicas(t, 2)
	fakes[0].health.SetServingStatus(rpc.ReplicaHealthService, healthpb.HealthCheckResponse_NOT_SERVING)
	// The health stream tells the client asynchronously: calls made before
	// it hears may still reach the first replica. Wait until a call lands
	// on the second twice in a row with nothing on the first in between.
	for range 200 {
		before := fakes[0].callsOf(listProspects)
		for range 4 {
			if _, err := client.ListProspects(t.Context(), &crmv1.ListProspectsRequest{}); err != nil {
				t.Fatal(err)
			}
		}
		if fakes[0].callsOf(listProspects) == before {
			break
		}
	}
	before := fakes[0].callsOf(listProspects)
	for range 20 {
		if _, err := client.ListProspects(t.Context(), &crmv1.ListProspectsRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := fakes[0].callsOf(listProspects) - before; got != 0 {
		t.Errorf("a replica reporting %s NOT_SERVING got %d of 20 calls, want none", rpc.ReplicaHealthService, got)
	}
}

func TestEveryReplicaGoneIsUnavailable(t *testing.T) {
	fakes, client := dialReplicas(t, 2)
	for _, f := range fakes {
		f.srv.Stop()
	}
	_, err := client.ListProspects(t.Context(), &crmv1.ListProspectsRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("every replica stopped: want UNAVAILABLE (the gateway's 503), got %v", err)
	}
}

func TestAddressForms(t *testing.T) {
	for _, tc := range []struct{ addr, target, err string }{
		{addr: "crm:9091", target: "crm:9091"},
		{addr: "dns:///atrium-crm-headless:9091", target: "dns:///atrium-crm-headless:9091"},
		{addr: "10.0.0.1:9091,10.0.0.2:9091", target: "atrium-list:///10.0.0.1:9091,10.0.0.2:9091"},
		{addr: "", err: "empty service address"},
		{addr: "10.0.0.1:9091,10.0.0.2", err: `"10.0.0.2" is not host:port`},
		{addr: "10.0.0.1:9091,,10.0.0.2:9091", err: `"" is not host:port`},
	} {
		target, _, err := rpc.Target(tc.addr)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Target(%q): err = %v, want one saying %s", tc.addr, err, tc.err)
		case tc.err == "" && (err != nil || target != tc.target):
			t.Errorf("Target(%q) = %q, %v; want %q", tc.addr, target, err, tc.target)
		}
	}
}

// A readiness check of a list names the list as the operator wrote it.
func TestCheckOfAListNamesItsReplicas(t *testing.T) {
	a, b := listenFake(t, 0), listenFake(t, 0)
	a.srv.Stop()
	b.srv.Stop()
	conn, err := rpc.Dial(a.addr + "," + b.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = rpc.Upstream{Name: "crm", Conn: conn}.Check(t.Context(), "gateway", true)
	if want := "the crm service at " + a.addr + "," + b.addr + " is unreachable"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Check = %v, want it to say %q", err, want)
	}
}
