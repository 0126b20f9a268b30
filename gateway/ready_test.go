package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// fakeService is a service double on a real gRPC server with the real
// interceptors, signing with its own secret, that can be stopped and
// started again on the same address.
type fakeService struct {
	addr     string
	secret   []byte
	register func(*rpc.Server)
	srv      *rpc.Server
}

func startFakeService(t *testing.T, secret []byte, register func(*rpc.Server)) *fakeService {
	t.Helper()
	f := &fakeService{addr: "127.0.0.1:0", secret: secret, register: register}
	f.start(t)
	t.Cleanup(f.stop)
	return f
}

func (f *fakeService) start(t *testing.T) {
	t.Helper()
	signer, err := principal.NewSigner(f.secret)
	if err != nil {
		t.Fatal(err)
	}
	if f.srv, err = rpc.Listen(f.addr, slog.New(slog.DiscardHandler), signer, nil); err != nil {
		t.Fatal(err)
	}
	if f.register != nil {
		f.register(f.srv)
	}
	f.addr = f.srv.Addr()
	go func() { _ = f.srv.Serve() }()
}

func (f *fakeService) stop() { f.srv.Stop() }

// startFour starts a double of each service, all with secret but those
// named in others, which get another secret.
func startFour(t *testing.T, others ...string) (map[string]*fakeService, map[string]string) {
	t.Helper()
	fakes, addrs := map[string]*fakeService{}, map[string]string{}
	for _, name := range UpstreamNames() {
		s := secret
		for _, o := range others {
			if o == name {
				s = []byte("another-secret-0123456789abcdef-xyz")
			}
		}
		fakes[name] = startFakeService(t, s, nil)
		addrs[name] = fakes[name].addr
	}
	return fakes, addrs
}

func readyz(t *testing.T, r *running) reply {
	t.Helper()
	return send(t, "GET", "http://"+r.gw.AdminAddr()+"/readyz", "")
}

// quickChecks makes the gateway check its services every 50 ms, so that a
// test sees a change at once rather than within DependencyCheckInterval.
func quickChecks(c *Config) { c.dependencyInterval = 50 * time.Millisecond }

// eventuallyDependency polls /healthz until the service's state
// satisfies ok, and returns it.
func eventuallyDependency(t *testing.T, r *running, service string, ok func(string) bool) string {
	t.Helper()
	var state any
	for range 200 {
		got := send(t, "GET", "http://"+r.gw.AdminAddr()+"/healthz", "")
		if got.code != http.StatusOK {
			t.Fatalf("/healthz = %d %v, want 200 whatever the services do", got.code, got.body)
		}
		deps, _ := got.body["dependencies"].(map[string]any)
		state = deps[service]
		if s, _ := state.(string); ok(s) {
			return s
		}
		time.Sleep(50 * time.Millisecond) // why sleep: polls /healthz, which has no push form
	}
	t.Fatalf("/healthz shows the %s service as %v after 10s", service, state)
	return ""
}

func serving(s string) bool { return s == Serving }

// wantReady fails unless /readyz is 200.
func wantReady(t *testing.T, r *running, why string) {
	t.Helper()
	if got := readyz(t, r); got.code != http.StatusOK || got.body["status"] != "ready" {
		t.Fatalf("/readyz %s = %d %v, want 200 ready", why, got.code, got.body)
	}
}

func TestHealthzShowsEveryServiceServing(t *testing.T) {
	_, addrs := startFour(t)
	r := startGatewayTo(t, addrs, quickChecks)
	for _, name := range UpstreamNames() {
		eventuallyDependency(t, r, name, serving)
	}
	got := readyz(t, r)
	want := map[string]any{"status": "ready", "checks": map[string]any{
		"collections": "SERVING", "crm": "SERVING", "data": "SERVING", "actions": "SERVING", "webhooks": "SERVING", "audit": "SERVING"}}
	if got.code != http.StatusOK || !reflect.DeepEqual(got.body, want) {
		t.Fatalf("/readyz = %d %v, want 200 %v", got.code, got.body, want)
	}
}

// A gateway and a service given different internal secrets cannot work
// together: every call to that service would be refused. /healthz says
// why; the gateway stays ready for the routes of the other services.
func TestHealthzNamesASecretThatDiffers(t *testing.T) {
	_, addrs := startFour(t, "crm")
	r := startGatewayTo(t, addrs, quickChecks)
	got := eventuallyDependency(t, r, "crm", func(s string) bool { return s != notChecked })
	for _, want := range []string{"principal signing secret differs between the gateway and the crm service", "--internal-secret"} {
		if !strings.Contains(got, want) {
			t.Fatalf("/healthz shows crm as %q, want it to say %q", got, want)
		}
	}
	wantReady(t, r, "with the crm service refusing the gateway's principal")
}

// A service the gateway cannot reach shows in /healthz, naming its
// address, and in atrium_gateway_dependency_up; the gateway stays ready,
// since it still serves every other service's routes (and answers the
// missing one's 503). The service shows SERVING again once it is back.
func TestReadyWhileAServiceIsDownWhichHealthzAndTheMetricShow(t *testing.T) {
	fakes, addrs := startFour(t)
	r := startGatewayTo(t, addrs, func(c *Config) {
		quickChecks(c)
		c.Telemetry = newTelemetry(t, nil)
	})
	eventuallyDependency(t, r, "data", serving)
	wantMetric(t, r, `atrium_gateway_dependency_up{service="data"} 1`)

	fakes["data"].stop()
	got := eventuallyDependency(t, r, "data", func(s string) bool { return s != Serving })
	if !strings.Contains(got, "the data service at "+addrs["data"]) {
		t.Fatalf("/healthz shows data as %q, want it to name the service and its address", got)
	}
	for _, other := range []string{"crm", "collections", "actions", "webhooks", "audit"} {
		eventuallyDependency(t, r, other, serving)
	}
	wantReady(t, r, "with the data service down")
	wantMetric(t, r, `atrium_gateway_dependency_up{service="data"} 0`)
	wantMetric(t, r, `atrium_gateway_dependency_up{service="crm"} 1`)

	fakes["data"].start(t)
	eventuallyDependency(t, r, "data", serving)
}

// wantMetric fails unless the admin listener's /metrics has a line
// starting with line (labels beyond the service's follow the name in
// the exposition, so the check ignores the other labels' text).
func wantMetric(t *testing.T, r *running, line string) {
	t.Helper()
	resp, err := http.Get("http://" + r.gw.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	name, rest, _ := strings.Cut(line, "{")
	labels, value, _ := strings.Cut(rest, "} ")
	for l := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(l, name+"{") && strings.Contains(l, labels) && strings.HasSuffix(l, "} "+value) {
			return
		}
	}
	t.Fatalf("/metrics lacks %s:\n%s", line, body)
}

// A service reporting NOT_SERVING shows with its own cause, except when
// the cause is its shutdown: it still serves then, and the connection
// moves to another replica once it closes.
func TestHealthzShowsTheCauseAServiceGives(t *testing.T) {
	fakes, addrs := startFour(t)
	r := startGatewayTo(t, addrs, quickChecks)
	fakes["collections"].srv.SetHealth("the PostgreSQL database does not answer: connection refused")
	eventuallyDependency(t, r, "collections", func(s string) bool {
		return s == "the collections service is NOT_SERVING: the PostgreSQL database does not answer: connection refused"
	})
	wantReady(t, r, "with the collections service NOT_SERVING")

	fakes["collections"].srv.SetHealth(rpc.CauseShuttingDown)
	eventuallyDependency(t, r, "collections", serving)
}

// TestDependencyCheckIntervalIsTheDocumentedOne holds the default to
// docs/operations.md.
func TestDependencyCheckIntervalIsTheDocumentedOne(t *testing.T) {
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	if DependencyCheckInterval != 5*time.Second || !strings.Contains(string(doc), "checks every service every 5 s") {
		t.Fatalf("DependencyCheckInterval is %s; docs/operations.md must say the gateway \"checks every service every 5 s\" and the two must agree", DependencyCheckInterval)
	}
}

// A service that refuses the gateway's principal is a fault of the
// deployment, not of the caller's credentials: 500 with a reference, not a
// 401 blaming the caller.
func TestServiceRefusingTheGatewaysPrincipalIs500(t *testing.T) {
	_, addrs := startFour(t)
	crm := startFakeService(t, []byte("another-secret-0123456789abcdef-xyz"), func(s *rpc.Server) {
		crmv1.RegisterCRMAdminServiceServer(s, crmv1.UnimplementedCRMAdminServiceServer{})
	})
	addrs["crm"] = crm.addr
	r := startGatewayTo(t, addrs, nil)
	wantErrorReply(t, send(t, "GET", "http://"+r.gw.AdminAddr()+"/admin/v1/keys", "admin-token-0123456789"),
		http.StatusInternalServerError, "internal error", "reference")
}

// On SIGTERM the gateway first reports not ready while still serving, and
// asks each HTTP/1.1 client to close its connection after the response;
// then it stops accepting and Run returns nil.
func TestDrainReportsNotReadyAndRetiresKeepAliveConnections(t *testing.T) {
	_, addrs := startFour(t)
	crm := startFakeService(t, secret, func(s *rpc.Server) {
		f := &fakeCRM{list: emptyList}
		crmv1.RegisterCRMServiceServer(s, f)
		crmv1.RegisterAPIKeyServiceServer(s, f)
	})
	addrs["crm"] = crm.addr
	const drainDelay = time.Minute
	gw := newGatewayTo(t, addrs, func(c *Config) { c.DrainDelay = drainDelay })
	// The drain delay lasts until the test has seen the drain.
	drainBegan, release := make(chan time.Duration, 1), make(chan struct{})
	endDrain := sync.OnceFunc(func() { close(release) })
	gw.waitDrain = func(d time.Duration) {
		drainBegan <- d
		<-release
	}
	r := runGateway(t, gw)
	t.Cleanup(endDrain) // before runGateway's cleanup waits for Run
	prospects := "http://" + r.gw.HTTPAddr() + "/api/v1/prospects"
	client := &http.Client{Timeout: 20 * time.Second} // keep-alive
	// do answers the status and whether the response closes its connection.
	do := func() (int, bool) {
		req, _ := http.NewRequest("GET", prospects, nil)
		req.Header.Set("Authorization", "Bearer "+apiKey)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Close
	}
	if code, closes := do(); code != http.StatusOK || closes {
		t.Fatalf("before the drain: %d, close %v; want 200 on a kept-alive connection", code, closes)
	}

	r.cancel() // SIGTERM
	select {
	case d := <-drainBegan:
		if d != drainDelay {
			t.Fatalf("drain delay %s, want the configured %s", d, drainDelay)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no drain delay began within 10s of the stop")
	}
	got := readyz(t, r)
	if want := map[string]any{"error": "shutting down"}; !reflect.DeepEqual(got.body, want) {
		t.Fatalf("/readyz while draining = %v, want %v", got.body, want)
	}
	if code, closes := do(); code != http.StatusOK || !closes {
		t.Fatalf("during the drain: %d, close %v; want 200 with Connection: close", code, closes)
	}
	endDrain()

	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still running 30s after the drain began")
	}
	_, err := net.Dial("tcp", r.gw.HTTPAddr())
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Fatalf("dial after the stop: %v, want refused", err)
	}
	if _, err := r.gw.Ready(context.Background()); err == nil || err.Error() != "shutting down" {
		t.Fatalf("Ready after the stop = %v", err)
	}
}
