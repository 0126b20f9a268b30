package gateway

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/atrium-hq/atrium/gateway/internal/oidc"
)

// httpMetrics records http.server.request.duration, the OpenTelemetry
// convention's histogram of server requests, by method, route (the
// template, never the concrete path) and status code: its count is the
// request rate, its 5xx share the error rate, its buckets the latency.
//
// The gateway records it itself rather than through otelhttp, whose
// metrics build a new attribute set on every request and label it with
// the client's Host header (an unbounded label). Here each route's sets
// are built once per status code it has answered and kept; recording
// allocates nothing.
type httpMetrics struct {
	duration metric.Float64Histogram
	// fixed are the routes outside the route table (/openapi.json, the
	// probes, /metrics, /debug/pprof/), by route then method; unmatched
	// are the requests no route matched, by method. Both are complete
	// before the first request and only read afterwards.
	fixed     map[string]map[string]*routeStats
	unmatched map[string]*routeStats
}

// routeStats are one route's attribute sets, one per status code. The
// list is copied on write, so readers take no lock.
type routeStats struct {
	h     metric.Float64Histogram
	base  []attribute.KeyValue
	mu    sync.Mutex
	codes atomic.Pointer[[]codeSet]
}

type codeSet struct {
	code int
	opts []metric.RecordOption
}

// methods are the request methods the conventions name; any other is
// _OTHER, so that a client cannot invent label values.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace}

// fixedRoutes are the routes served beside the route table, with the
// methods they are asked with.
var fixedRoutes = map[string][]string{
	"/openapi.json": methods, "/mcp": methods, StudioPath: methods, oidc.StartPath: methods, oidc.CallbackPath: methods, "/healthz": methods, "/readyz": methods, "/metrics": methods, "/debug/pprof/": methods,
}

func newHTTPMetrics(mp metric.MeterProvider) *httpMetrics {
	m := mp.Meter("github.com/atrium-hq/atrium/gateway")
	// The error is only for an invalid name; the instrument is then a no-op.
	h, _ := m.Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests, by method, route and status code."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	hm := &httpMetrics{duration: h, fixed: map[string]map[string]*routeStats{}, unmatched: map[string]*routeStats{}}
	for route, ms := range fixedRoutes {
		hm.fixed[route] = map[string]*routeStats{}
		for _, method := range ms {
			hm.fixed[route][method] = hm.route(method, route)
		}
	}
	for _, method := range append(methods, "_OTHER") {
		hm.unmatched[method] = hm.route(method, "")
	}
	return hm
}

// route returns the stats of method on the route template (empty: no
// route matched).
func (m *httpMetrics) route(method, template string) *routeStats {
	base := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(method), semconv.URLScheme("http")}
	if template != "" {
		base = append(base, semconv.HTTPRoute(template))
	}
	return &routeStats{h: m.duration, base: base}
}

// named returns the stats of a fixed route; nil if it is not one.
func (m *httpMetrics) named(method, route string) *routeStats {
	return m.fixed[route][method]
}

// record records one request. stats is its route's, nil when no route
// matched.
func (m *httpMetrics) record(ctx context.Context, stats *routeStats, method string, code int, took time.Duration) {
	if stats == nil {
		if stats = m.unmatched[method]; stats == nil {
			stats = m.unmatched["_OTHER"]
		}
	}
	stats.h.Record(ctx, took.Seconds(), stats.options(code)...)
}

// options returns the record options of status code, building them the
// first time the route answers it.
func (s *routeStats) options(code int) []metric.RecordOption {
	if p := s.codes.Load(); p != nil {
		for _, c := range *p {
			if c.code == code {
				return c.opts
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur []codeSet
	if p := s.codes.Load(); p != nil {
		cur = *p
		for _, c := range cur {
			if c.code == code {
				return c.opts
			}
		}
	}
	attrs := append(append([]attribute.KeyValue(nil), s.base...), semconv.HTTPResponseStatusCode(code))
	if code >= 500 {
		attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(code)))
	}
	opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	next := append(append([]codeSet(nil), cur...), codeSet{code: code, opts: opts})
	s.codes.Store(&next)
	return opts
}
