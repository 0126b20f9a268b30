package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/gateway/openapi"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
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

// withProbes adds /healthz (the process is up), /readyz (the gateway can
// use every service: see Ready), /metrics and /debug/pprof/ to the admin
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

func isProbe(path string) bool { return path == "/healthz" || path == "/readyz" }

// readyTimeout bounds each upstream's health check within /readyz.
const readyTimeout = 2 * time.Second

// readyzPrincipal is who the gateway says it is when it checks a service:
// the check then also proves that the service verifies its signatures.
var readyzPrincipal = principal.Principal{Kind: principal.KindService, Subject: "gateway"}

// Ready reports whether the gateway should be sent traffic: nil, or an
// error that names every reason it should not. It should not while it
// drains, nor while it cannot use one of the services: unreachable,
// refusing the gateway's principal (the two were given different internal
// secrets: every request would fail), or reporting NOT_SERVING for a
// reason other than its own shutdown (a service whose database is down).
// checks holds each service's health status and the NATS connection's
// state, which is shown but not required: without it, revocations take
// effect within the key cache TTL instead of at once.
func (g *Gateway) Ready(ctx context.Context) (checks map[string]string, err error) {
	if g.draining.Load() {
		return nil, errors.New("shutting down")
	}
	ctx = g.signer.OutgoingContext(ctx, readyzPrincipal)
	problems := make([]error, len(g.conns))
	var wg sync.WaitGroup
	for i, c := range g.conns {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, readyTimeout)
			defer cancel()
			problems[i] = rpc.Upstream{Name: c.name, Conn: c.conn}.Check(cctx, "gateway", true)
		})
	}
	wg.Wait()
	checks = map[string]string{}
	for i, c := range g.conns {
		checks[c.name] = "SERVING"
		if problems[i] != nil {
			checks[c.name] = problems[i].Error()
		}
	}
	if g.nats != nil {
		checks["nats"] = g.nats.Status().String()
	}
	if err := errors.Join(problems...); err != nil {
		return checks, fmt.Errorf("not ready: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return checks, nil
}

func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	checks, err := g.Ready(r.Context())
	if err != nil {
		rest.WriteJSON(w, http.StatusServiceUnavailable, rest.Body{Error: err.Error()})
		return
	}
	rest.WriteJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": checks})
}
