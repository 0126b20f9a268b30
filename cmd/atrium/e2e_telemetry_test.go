package main

// Telemetry end to end, on PostgreSQL and the local NATS: one trace from
// the gateway's HTTP span through gRPC into the database and the NATS
// publish, and the metrics an operator scrapes.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/atrium-hq/atrium/platform/natstest"
)

// startTracedStack runs atrium serve on PostgreSQL and the local NATS,
// every span going to the returned recorder.
func startTracedStack(t *testing.T, extra ...string) (*stack, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	s := startStackWith(t, func(c *serveConfig) { c.spanProcessor = rec },
		append([]string{"--database-url=" + migratedDatabase(t), "--nats-url=" + natstest.URL(t)}, extra...)...)
	return s, rec
}

// traceOf waits for the ended HTTP server span named route, the only one,
// then for every span of its trace that match asks for, and returns the
// trace's spans.
func traceOf(t *testing.T, rec *tracetest.SpanRecorder, route string, match ...func([]sdktrace.ReadOnlySpan) bool) (sdktrace.ReadOnlySpan, []sdktrace.ReadOnlySpan) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var root sdktrace.ReadOnlySpan
		n := 0
		for _, s := range rec.Ended() {
			if s.Name() == route && s.SpanKind() == trace.SpanKindServer {
				root, n = s, n+1
			}
		}
		if n > 1 {
			t.Fatalf("%d server spans named %q, want one", n, route)
		}
		if root != nil {
			var spans []sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.SpanContext().TraceID() == root.SpanContext().TraceID() {
					spans = append(spans, s)
				}
			}
			done := true
			for _, m := range match {
				done = done && m(spans)
			}
			if done {
				return root, spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no complete trace for %s after 10s; spans:\n%s", route, describe(rec.Ended()))
		}
		time.Sleep(20 * time.Millisecond) // why sleep: polls the span recorder, which spans reach as they end
	}
}

func describe(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.SpanContext().TraceID().String()[:8] + " " + s.SpanContext().SpanID().String() + " <- " +
			s.Parent().SpanID().String() + " " + s.SpanKind().String() + " " + s.Name() + "\n")
	}
	return b.String()
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// find returns the first span of spans that is of kind and whose name
// starts with prefix (and, for database spans, is PostgreSQL's).
func find(spans []sdktrace.ReadOnlySpan, kind trace.SpanKind, prefix string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.SpanKind() == kind && strings.HasPrefix(s.Name(), prefix) {
			return s
		}
	}
	return nil
}

func has(kind trace.SpanKind, prefix string) func([]sdktrace.ReadOnlySpan) bool {
	return func(spans []sdktrace.ReadOnlySpan) bool { return find(spans, kind, prefix) != nil }
}

// under reports whether s descends from ancestor within spans.
func under(spans []sdktrace.ReadOnlySpan, s, ancestor sdktrace.ReadOnlySpan) bool {
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, sp := range spans {
		byID[sp.SpanContext().SpanID()] = sp
	}
	for cur := s; cur != nil; cur = byID[cur.Parent().SpanID()] {
		if cur.Parent().SpanID() == ancestor.SpanContext().SpanID() {
			return true
		}
	}
	return false
}

// dbSpanUnder returns a PostgreSQL client span descending from server.
func dbSpanUnder(spans []sdktrace.ReadOnlySpan, server sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindClient && attr(s, "db.system.name") == "postgresql" && under(spans, s, server) {
			return s
		}
	}
	return nil
}

// TestOneTracePerRequest: a data read and an action are each one trace,
// from the gateway's HTTP server span through the gRPC client and server
// spans into PostgreSQL statements, and, for the action, into the NATS
// publish of its completion event, whose JetStream message carries the
// trace on to consumers.
func TestOneTracePerRequest(t *testing.T) {
	s, rec := startTracedStack(t)
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.loadRows(t, client, "keywords", map[string]any{"keyword": "sourdough bread", "position": 3, "status": "active"})

	t.Run("DataRead", func(t *testing.T) {
		wantStatus(t, s.read(t, tn.read, params("resource", "keywords", "client_id", client)), http.StatusOK)
		root, spans := traceOf(t, rec, "GET /api/v1/data",
			has(trace.SpanKindServer, "atrium.data.v1.DataService/"), has(trace.SpanKindServer, "atrium.crm.v1.ClientAccessService/"))
		if root.Parent().IsValid() || attr(root, "http.route") != "/api/v1/data" {
			t.Fatalf("HTTP span %q: parent %v, http.route %q; want the trace's root named by route", root.Name(), root.Parent().SpanID(), attr(root, "http.route"))
		}
		gwClient := find(spans, trace.SpanKindClient, "atrium.data.v1.DataService/")
		server := find(spans, trace.SpanKindServer, "atrium.data.v1.DataService/")
		if gwClient == nil || !under(spans, gwClient, root) || !under(spans, server, gwClient) {
			t.Fatalf("want gateway HTTP span > gRPC client span > data service's gRPC server span:\n%s", describe(spans))
		}
		db := dbSpanUnder(spans, server)
		if db == nil || !strings.Contains(attr(db, "db.query.text"), "$") {
			t.Fatalf("no parameterised PostgreSQL span under the data service's span:\n%s", describe(spans))
		}
		// The data service asks the CRM which clients the agency reaches:
		// that hop, and the CRM's query, are in the same trace.
		crm := find(spans, trace.SpanKindServer, "atrium.crm.v1.ClientAccessService/")
		if !under(spans, crm, server) || dbSpanUnder(spans, crm) == nil {
			t.Fatalf("the CRM's span and query are not under the data service's span:\n%s", describe(spans))
		}
	})

	t.Run("Action", func(t *testing.T) {
		s.grant(t, tn.agency, 10, 0)
		before := time.Now()
		r := s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "rye"})
		wantStatus(t, r, http.StatusOK)
		const subject = "atrium.actions.completed.generate_blog"
		publishOf := func(spans []sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
			for _, s := range spans {
				if s.SpanKind() == trace.SpanKindProducer && attr(s, "messaging.destination.name") == subject {
					return s
				}
			}
			return nil
		}
		root, spans := traceOf(t, rec, "POST /api/v1/data", has(trace.SpanKindServer, "atrium.actions.v1.ActionsService/"),
			func(spans []sdktrace.ReadOnlySpan) bool { return publishOf(spans) != nil })
		server := find(spans, trace.SpanKindServer, "atrium.actions.v1.ActionsService/")
		if !under(spans, server, root) || dbSpanUnder(spans, server) == nil {
			t.Fatalf("want gateway HTTP span > actions service's gRPC server span > PostgreSQL spans:\n%s", describe(spans))
		}
		publish := publishOf(spans)
		if !under(spans, publish, server) || attr(publish, "messaging.system") != "nats" || publish.Name() != "publish ATRIUM_ACTIONS" {
			t.Fatalf("the completion event's publish span is not a NATS producer span under the action's:\n%s", describe(spans))
		}

		// The message as JetStream stored it carries the publish span.
		nc, err := nats.Connect(s.natsURL)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		cons, err := js.OrderedConsumer(t.Context(), "ATRIUM_ACTIONS", jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &before,
		})
		if err != nil {
			t.Fatal(err)
		}
		runID := attr(publish, "messaging.message.id")
		want := "00-" + root.SpanContext().TraceID().String() + "-" + publish.SpanContext().SpanID().String() + "-01"
		for {
			msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
			if err != nil {
				t.Fatalf("the completion event of run %s is not in ATRIUM_ACTIONS: %v", runID, err)
			}
			if msg.Headers().Get(nats.MsgIdHdr) != runID {
				continue
			}
			if got := msg.Headers().Get("traceparent"); got != want {
				t.Fatalf("the stored message's traceparent = %q, want %q (the publish span of the request's trace)", got, want)
			}
			var ev map[string]any
			if err := json.Unmarshal(msg.Data(), &ev); err != nil || ev["client_id"] != client {
				t.Fatalf("completion event %s: %v", msg.Data(), err)
			}
			return
		}
	})
}

// scrape fetches a Prometheus text exposition.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s = %d %s (%v)", url, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	return string(b)
}

// sample returns the value of the series of metric name whose labels
// include every one of labels (`key="value"`), or -1 if there is none.
func sample(text, name string, labels ...string) float64 {
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		series, value := line[:sp], line[sp+1:]
		metric, lbls, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && (strings.Contains(lbls, ","+l+",") || strings.HasPrefix(lbls, l+",") ||
				strings.HasSuffix(lbls, ","+l+"}") || lbls == l+"}")
		}
		if ok {
			v, _ := strconv.ParseFloat(value, 64)
			return v
		}
	}
	return -1
}

// TestMetricsAnOperatorScrapes: after a few requests, the gateway's admin
// /metrics (the whole process in atrium serve, no token) has requests by
// route, gRPC calls by RPC, the pools, the outbox backlog and lag, the key
// cache's hits and the credits generate_blog spent; the --metrics-addr
// listener serves the same with its probes.
func TestMetricsAnOperatorScrapes(t *testing.T) {
	s, _ := startTracedStack(t, "--metrics-addr=127.0.0.1:0")
	cms := s.newCMS(t)
	tn := cms.tenant
	// Its event's subject holds the site's id; the metrics must not.
	cms.createItem(t, "authors", map[string]any{"data": map[string]any{"name": "Ana"}})
	client := s.newClient(t, tn, true)
	s.loadRows(t, client, "keywords", map[string]any{"keyword": "sourdough bread", "position": 3, "status": "active"})
	for range 3 {
		wantStatus(t, s.read(t, tn.read, params("resource", "keywords", "client_id", client)), http.StatusOK)
	}
	wantStatus(t, s.read(t, tn.read, params("resource", "keywords")), http.StatusBadRequest)
	s.grant(t, tn.agency, 10, 0)
	wantStatus(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "rye"}), http.StatusOK)

	checks := []struct {
		what   string
		name   string
		labels []string
		min    float64
	}{
		{"reads by route", "http_server_request_duration_seconds_count", []string{`http_request_method="GET"`, `http_route="/api/v1/data"`, `http_response_status_code="200"`}, 3},
		{"refused reads by route", "http_server_request_duration_seconds_count", []string{`http_route="/api/v1/data"`, `http_response_status_code="400"`}, 1},
		{"actions by route", "http_server_request_duration_seconds_count", []string{`http_request_method="POST"`, `http_route="/api/v1/data"`, `http_response_status_code="200"`}, 1},
		{"gRPC server calls by RPC", "rpc_server_call_duration_seconds_count", []string{`rpc_method="atrium.data.v1.DataService/ReadDataset"`, `rpc_response_status_code="OK"`}, 3},
		{"the data pool's connections", "db_client_connection_count", []string{`db_client_connection_pool_name="data"`, `db_client_connection_state="idle"`}, 0},
		{"the data pool's maximum", "db_client_connection_max", []string{`db_client_connection_pool_name="data"`}, 1},
		{"the data pool's acquisitions", "atrium_db_pool_acquires_total", []string{`db_client_connection_pool_name="data"`}, 3},
		{"the actions outbox backlog", "atrium_outbox_pending", []string{`atrium_service="actions"`}, 0},
		{"the actions outbox lag", "atrium_outbox_lag_seconds", []string{`atrium_service="actions"`}, 0},
		{"events the collections service published", "messaging_client_sent_messages_total", []string{`atrium_service="collections"`}, 4},
		{"events the actions service published", "messaging_client_sent_messages_total", []string{`atrium_service="actions"`}, 2},
		{"their publish latency", "messaging_client_operation_duration_seconds_count", []string{`atrium_service="actions"`}, 2},
		{"key cache hits", "atrium_gateway_key_cache_lookups_total", []string{`result="hit"`}, 2},
		{"key cache misses", "atrium_gateway_key_cache_lookups_total", []string{`result="miss"`}, 1},
		{"AI credits generate_blog spent", "atrium_actions_credits_spent_total", []string{`action="generate_blog"`, `kind="ai"`}, 2},
		{"generate_blog runs", "atrium_actions_runs_total", []string{`action="generate_blog"`, `status="success"`}, 1},
		{"the depth of the asynchronous runs' queue", "atrium_actions_queue_depth", nil, 0},
	}
	// Events leave after their commit: scrape until the relays are done.
	var text string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) { // why sleep: scrapes /metrics, which has no push form
		text = scrape(t, s.admin+"/metrics")
		var missing []string
		for _, c := range checks {
			if v := sample(text, c.name, c.labels...); v < c.min {
				missing = append(missing, fmt.Sprintf("%s: %s%v = %v, want at least %v", c.what, c.name, c.labels, v, c.min))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s:\n%s\n/metrics:\n%s", strings.Join(missing, "\n"), text)
		}
	}
	if v := sample(text, "atrium_actions_credits_spent_total", `action="generate_blog"`, `kind="ai"`); v != 2 {
		t.Errorf("generate_blog spent %v AI credits by the metrics, want 2 (its cost, once)", v)
	}
	if strings.Contains(text, tn.agency) || strings.Contains(text, client) || strings.Contains(text, tn.site) {
		t.Error("/metrics names a tenant")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", text)
	}

	// The operations listener of --metrics-addr: the same metrics, and
	// the probes, without credentials.
	if s.metrics == "" {
		t.Fatal("--metrics-addr started no listener")
	}
	if v := sample(scrape(t, s.metrics+"/metrics"), "atrium_actions_runs_total", `action="generate_blog"`, `status="success"`); v != 1 {
		t.Errorf("the --metrics-addr listener's generate_blog runs = %v, want 1", v)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		r := call(t, "GET", s.metrics+p, "", nil)
		wantStatus(t, r, http.StatusOK)
	}
	r := call(t, "POST", s.metrics+"/metrics", "", nil)
	wantError(t, r, http.StatusMethodNotAllowed, "GET")
}
