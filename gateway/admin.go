package gateway

import (
	"context"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/gateway/openapi"
)

// withDoc serves the listener's OpenAPI document at /openapi.json, without
// authentication: it describes the routes, not anyone's data.
func (g *Gateway) withDoc(doc openapi.Doc, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openapi.json" {
			next.ServeHTTP(w, r)
			return
		}
		nameRequest(r.Context(), "GET /openapi.json", g.metrics.named(r.Method, "/openapi.json"))
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: "method " + r.Method + " is not allowed on /openapi.json; allowed: GET"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc.JSON)
	})
}

// withProbes adds /healthz (the process is up), /readyz (every service
// answers its health check), /metrics and /debug/pprof/ to the admin
// listener. The probes are unauthenticated so that orchestrators can call
// them, and so are the metrics, so that Prometheus can scrape them: they
// are counts, durations and states by route, RPC, service and action,
// never a tenant's id or data. The profiles need the admin token.
func (g *Gateway) withProbes(next http.Handler) http.Handler {
	metrics := g.cfg.Telemetry.MetricsHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/debug/pprof/") {
			nameRequest(r.Context(), r.Method+" /debug/pprof/", g.metrics.named(r.Method, "/debug/pprof/"))
			g.pprof(w, r)
			return
		}
		probe := r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || (r.URL.Path == "/metrics" && metrics != nil)
		if !probe {
			next.ServeHTTP(w, r)
			return
		}
		nameRequest(r.Context(), "GET "+r.URL.Path, g.metrics.named(r.Method, r.URL.Path))
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: "method " + r.Method + " is not allowed on " + r.URL.Path + "; allowed: GET"})
			return
		}
		switch r.URL.Path {
		case "/healthz":
			rest.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
			return
		case "/metrics":
			metrics.ServeHTTP(w, r)
			return
		}
		g.readyz(w, r)
	})
}

// pprof serves Go's runtime profiles, behind the admin token: operators
// profile a process under real load without restarting it.
func (g *Gateway) pprof(w http.ResponseWriter, r *http.Request) {
	if _, err := g.admin.Authenticate(r.Header.Get("Authorization")); err != nil {
		rest.WriteError(r.Context(), g.cfg.Logger, w, r, err)
		return
	}
	switch name := strings.TrimPrefix(r.URL.Path, "/debug/pprof/"); name {
	case "profile":
		pprof.Profile(w, r)
	case "trace":
		pprof.Trace(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "cmdline":
		pprof.Cmdline(w, r)
	case "":
		pprof.Index(w, r)
	default:
		// allocs, heap, goroutine, ...: with ?seconds=N, a delta over N.
		pprof.Handler(name).ServeHTTP(w, r)
	}
}

func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	var down []string
	for _, c := range g.conns {
		resp, err := healthpb.NewHealthClient(c.conn).Check(ctx, &healthpb.HealthCheckRequest{})
		st := resp.GetStatus().String()
		if err != nil {
			st = "UNREACHABLE"
		}
		checks[c.name] = st
		if st != healthpb.HealthCheckResponse_SERVING.String() {
			down = append(down, c.name+" "+st)
		}
	}
	if g.nats != nil {
		checks["nats"] = g.nats.Status().String()
	}
	if len(down) > 0 {
		rest.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{
			"error": "not ready: " + strings.Join(down, ", "), "checks": checks,
		})
		return
	}
	rest.WriteJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": checks})
}
