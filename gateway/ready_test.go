package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
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

func eventuallyReady(t *testing.T, r *running, want int) reply {
	t.Helper()
	var got reply
	for range 200 {
		if got = readyz(t, r); got.code == want {
			return got
		}
		time.Sleep(100 * time.Millisecond) // why sleep: polls /readyz, which has no push form
	}
	t.Fatalf("/readyz = %d %v after 20s, want %d", got.code, got.body, want)
	return got
}

func TestReadyWhenEveryServiceCanBeUsed(t *testing.T) {
	_, addrs := startFour(t)
	r := startGatewayTo(t, addrs, nil)
	got := readyz(t, r)
	want := map[string]any{"status": "ready", "checks": map[string]any{
		"collections": "SERVING", "crm": "SERVING", "data": "SERVING", "actions": "SERVING", "webhooks": "SERVING"}}
	if got.code != http.StatusOK || !reflect.DeepEqual(got.body, want) {
		t.Fatalf("/readyz = %d %v, want 200 %v", got.code, got.body, want)
	}
}

// A gateway and a service given different internal secrets cannot work
// together: every call the gateway makes would be refused. The gateway is
// then not ready, and says why.
func TestNotReadyWhenASecretDiffers(t *testing.T) {
	_, addrs := startFour(t, "crm")
	r := startGatewayTo(t, addrs, nil)
	wantErrorReply(t, readyz(t, r), http.StatusServiceUnavailable,
		"principal signing secret differs between the gateway and the crm service", "--internal-secret")
}

// A service the gateway cannot reach makes it not ready, naming the
// service and its address; it is ready again once the service is back.
func TestNotReadyWhileAServiceIsDownAndReadyAgainWhenItReturns(t *testing.T) {
	fakes, addrs := startFour(t)
	r := startGatewayTo(t, addrs, nil)
	eventuallyReady(t, r, http.StatusOK)

	fakes["data"].stop()
	got := eventuallyReady(t, r, http.StatusServiceUnavailable)
	wantErrorReply(t, got, http.StatusServiceUnavailable, "the data service at "+addrs["data"])
	for _, other := range []string{"crm", "collections", "actions"} {
		if strings.Contains(got.body["error"].(string), other) {
			t.Fatalf("/readyz blames the %s service too: %v", other, got.body)
		}
	}

	fakes["data"].start(t)
	eventuallyReady(t, r, http.StatusOK)
}

// A service reporting NOT_SERVING makes the gateway not ready with the
// service's own cause, except when the cause is its shutdown: it still
// serves then, and the connection moves to another replica once it closes.
func TestNotReadyWithTheCauseAServiceGives(t *testing.T) {
	fakes, addrs := startFour(t)
	r := startGatewayTo(t, addrs, nil)
	fakes["collections"].srv.SetHealth("the PostgreSQL database does not answer: connection refused")
	wantErrorReply(t, readyz(t, r), http.StatusServiceUnavailable,
		"the collections service is NOT_SERVING: the PostgreSQL database does not answer: connection refused")

	fakes["collections"].srv.SetHealth(rpc.CauseShuttingDown)
	if got := readyz(t, r); got.code != http.StatusOK {
		t.Fatalf("/readyz with a draining service = %d %v, want 200", got.code, got.body)
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
