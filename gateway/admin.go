package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/pprof"
	"strings"

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

// withProbes adds /healthz (the process is up, with the state of each
// service it calls), /readyz (the gateway can serve: see Ready), /metrics and /debug/pprof/ to the admin
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
		if !isProbe(r.URL.Path) && !(r.URL.Path == "/metrics" && metrics != nil) {
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
			// Always 200 while the process runs: a liveness probe must not
			// restart a gateway because a service it calls is away. The
			// detail is for operators (and the dependency metric).
			rest.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "dependencies": g.dependencyState()})
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

func isProbe(path string) bool { return path == "/healthz" || path == "/readyz" }

// Ready reports whether the gateway should be sent traffic: nil while it
// can serve (its listeners are up and it is not draining), otherwise why
// not. The services it calls are not part of it: a gateway missing one
// still serves every route of the others and answers the missing one's
// routes 503 with Retry-After, and every gateway misses the same service
// at the same time, so taking them out of rotation would turn one
// service's outage into the whole API's. checks is the last view of the
// services and NATS (see Dependencies), also shown by /healthz.
func (g *Gateway) Ready(context.Context) (checks map[string]string, err error) {
	if g.draining.Load() {
		return nil, errors.New("shutting down")
	}
	return g.dependencyState(), nil
}

func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	checks, err := g.Ready(r.Context())
	if err != nil {
		rest.WriteJSON(w, http.StatusServiceUnavailable, rest.Body{Error: err.Error()})
		return
	}
	rest.WriteJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": checks})
}
