package runner

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// TestMetricsListener: a service with --metrics-addr serves its metrics,
// its liveness and its readiness there without credentials; readiness
// follows the gRPC health status and says which service is not ready.
func TestMetricsListener(t *testing.T) {
	tel, err := telemetry.Setup(t.Context(), telemetry.Config{ServiceName: "atrium-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	rt, err := Open(t.Context(), Spec{Name: "probe", Stream: "ATRIUM_PROBE_TEST", Subjects: "atrium.probetest.>"}, Config{
		GRPCAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", Backing: Backing{NATSURL: natstest.URL(t)},
		InternalSecret: []byte(strings.Repeat("s", 32)), Logger: slog.New(slog.DiscardHandler), Telemetry: tel,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	}()
	base := "http://" + rt.MetricsAddr()

	get := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		// Open bound the listener: connections wait in its backlog until
		// Run serves them.
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	conn, err := rpc.Dial(rt.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	awaitHealth(t, conn, healthpb.HealthCheckResponse_SERVING)
	if code, body := get("GET", "/readyz"); code != http.StatusOK {
		t.Fatalf("GET /readyz once serving = %d %s, want 200", code, body)
	}
	if code, body := get("GET", "/metrics"); code != 200 || !strings.Contains(body, `atrium_outbox_pending{atrium_service="probe"} 0`) {
		t.Fatalf("GET /metrics = %d, want the outbox backlog:\n%s", code, body)
	}
	if code, body := get("GET", "/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Fatalf("GET /healthz = %d %s", code, body)
	}
	rt.report("the database is unreachable")
	code, body := get("GET", "/readyz")
	var e struct{ Error string }
	if code != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, "probe service") {
		t.Fatalf("GET /readyz while NOT_SERVING = %d %s, want 503 naming the service", code, body)
	}
	if code, body := get("POST", "/metrics"); code != http.StatusMethodNotAllowed || !strings.Contains(body, "GET") {
		t.Fatalf("POST /metrics = %d %s", code, body)
	}
	if code, _ := get("GET", "/nothing"); code != http.StatusNotFound {
		t.Fatalf("GET /nothing = %d", code)
	}
}
