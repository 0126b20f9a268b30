package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/atrium-hq/atrium/platform/telemetry"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// TestSpansAreNamedByRoute: the HTTP server span of a request is named by
// the route it matched, with http.route set, whatever the concrete path.
func TestSpansAreNamedByRoute(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tel := newTelemetry(t, rec)
	f := &fakeCRM{list: func(context.Context) (*crmv1.ListProspectsResponse, error) {
		return &crmv1.ListProspectsResponse{}, nil
	}}
	r := startGateway(t, startFakeCRM(t, f), func(c *Config) { c.Telemetry = tel })
	if code, _ := get(t, "http://"+r.gw.HTTPAddr()+"/api/v1/prospects?limit=5"); code != 200 {
		t.Fatalf("status %d", code)
	}
	get(t, "http://"+r.gw.HTTPAddr()+"/api/v1/nothing")
	names := map[string]string{}
	for _, s := range rec.Ended() {
		route := ""
		for _, a := range s.Attributes() {
			if a.Key == "http.route" {
				route = a.Value.AsString()
			}
		}
		names[s.Name()] = route
	}
	if route, ok := names["GET /api/v1/prospects"]; !ok || route != "/api/v1/prospects" {
		t.Fatalf("spans %v: want one named GET /api/v1/prospects with http.route /api/v1/prospects", names)
	}
	for name := range names {
		if strings.Contains(name, "nothing") {
			t.Fatalf("an unmatched path became a span name: %q (names must not grow with paths)", name)
		}
	}
}

// newTelemetry is a process's telemetry as telemetry.Setup makes it, its
// spans going to rec (nil: none sampled, as without an exporter).
func newTelemetry(t *testing.T, rec sdktrace.SpanProcessor) *telemetry.Telemetry {
	t.Helper()
	tel, err := telemetry.Setup(t.Context(), telemetry.Config{ServiceName: "atrium-gateway", Version: "test", SpanProcessor: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return tel
}

// TestRequestMetricsAreByRoute: the admin listener's /metrics counts
// requests by route template and status, never by concrete path, and
// unmatched requests without a route; it needs no token.
func TestRequestMetricsAreByRoute(t *testing.T) {
	f := &fakeCRM{list: func(context.Context) (*crmv1.ListProspectsResponse, error) {
		return &crmv1.ListProspectsResponse{}, nil
	}}
	r := startGateway(t, startFakeCRM(t, f), func(c *Config) { c.Telemetry = newTelemetry(t, nil) })
	base := "http://" + r.gw.HTTPAddr()
	for range 3 {
		get(t, base+"/api/v1/prospects?limit=5")
	}
	get(t, base+"/api/v1/prospects?limit=abc")
	get(t, base+"/api/v1/nothing-here-zebra")
	resp, err := http.Get("http://" + r.gw.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	body := string(raw)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/api/v1/prospects",url_scheme="http"} 3`,
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="400",http_route="/api/v1/prospects",url_scheme="http"} 1`,
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="404",url_scheme="http"} 1`,
		`atrium_gateway_key_cache_lookups_total{result="hit"} 3`,
		`atrium_gateway_key_cache_lookups_total{result="miss"} 1`,
		`rpc_client_call_duration_seconds_count{`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "zebra") || strings.Contains(body, "limit=") {
		t.Error("/metrics names a concrete path or query")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}

// TestOneAccessLogLinePerRequest: every request, answered or refused, logs
// one info line with its method, route, status, duration, size and trace id.
func TestOneAccessLogLinePerRequest(t *testing.T) {
	var logs syncBuffer
	logger, err := telemetry.NewLogger(&logs, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCRM{list: func(context.Context) (*crmv1.ListProspectsResponse, error) {
		return &crmv1.ListProspectsResponse{}, nil
	}}
	// As in production without an exporter: spans not recorded, ids made.
	tel := newTelemetry(t, nil)
	r := startGateway(t, startFakeCRM(t, f), func(c *Config) { c.Logger, c.Telemetry = logger, tel })
	base := "http://" + r.gw.HTTPAddr()
	get(t, base+"/api/v1/prospects")
	get(t, base+"/api/v1/prospects?limit=abc")
	resp, err := http.Get(base + "/api/v1/deals") // no key
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get(t, base+"/api/v1/nope")

	type line struct {
		Msg, Method, Route, TraceID string
		Status, Bytes               int
		Duration                    *float64 `json:"duration_ms"`
	}
	var got []line
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		if raw["msg"] != "request" {
			continue
		}
		if raw["level"] != "INFO" || raw["trace_id"] == nil {
			t.Fatalf("access log line %v: want level INFO and a trace_id", raw)
		}
		var l line
		_ = json.Unmarshal(sc.Bytes(), &l)
		got = append(got, l)
	}
	want := []struct {
		route  string
		status int
	}{{"GET /api/v1/prospects", 200}, {"GET /api/v1/prospects", 400}, {"GET /api/v1/deals", 401}, {"unmatched", 404}}
	if len(got) != len(want) {
		t.Fatalf("%d access log lines for 4 requests:\n%s", len(got), logs.String())
	}
	for i, w := range want {
		if got[i].Route != w.route || got[i].Status != w.status || got[i].Method != "GET" || got[i].Bytes == 0 || got[i].Duration == nil {
			t.Errorf("line %d = %+v, want route %s status %d with bytes and duration", i, got[i], w.route, w.status)
		}
	}
}

// TestProtocolErrorsAre4xxJSON: what net/http answers before any handler
// runs is a 4xx with a JSON body too.
func TestProtocolErrorsAre4xxJSON(t *testing.T) {
	r := startGateway(t, closedAddr(t), nil)
	for _, tc := range []struct {
		raw    string
		status int
		words  string
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", 417, "Expect"},
		{"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400, "*"},
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "Transfer-Encoding"},
		{"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400, "Transfer-Encoding"},
		{"GET / HTTP/3.0\r\nHost: x\r\n\r\n", 400, "HTTP version"},
		{"GET /x/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed"},
	} {
		c, err := net.Dial("tcp", r.gw.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(tc.raw))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.raw, err)
		}
		var body struct{ Error string }
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		c.Close()
		if err != nil || resp.StatusCode != tc.status || !strings.Contains(body.Error, tc.words) ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%q: %d %q (%v), want %d JSON mentioning %q", tc.raw, resp.StatusCode, body.Error, err, tc.status, tc.words)
		}
	}
}

// syncBuffer is a log sink several goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
