package telemetry

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/grpclog"
)

// TestLogLinesCarryTraceIDsOnce: a record made with a traced context has
// trace_id and span_id, each once, also when the caller adds its own.
func TestLogLinesCarryTraceIDsOnce(t *testing.T) {
	var out strings.Builder
	logger, err := NewLogger(&out, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5}, TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	logger.With("service", "crm").ErrorContext(ctx, "request failed", "code", "Internal")
	line := out.String()
	if n := strings.Count(line, `"trace_id"`); n != 1 {
		t.Fatalf("trace_id appears %d times: %s", n, line)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["trace_id"] != sc.TraceID().String() || rec["span_id"] != sc.SpanID().String() || rec["service"] != "crm" {
		t.Fatalf("record = %v", rec)
	}
	out.Reset()
	logger.Info("no trace")
	if strings.Contains(out.String(), "trace_id") {
		t.Fatalf("an untraced record has a trace id: %s", out.String())
	}
	if _, err := NewLogger(&out, "xml", "info"); err == nil {
		t.Fatal("format xml accepted")
	}
	if _, err := NewLogger(&out, "json", "loud"); err == nil {
		t.Fatal("level loud accepted")
	}
}

// TestSetupFollowsTheOTELVariables: without an OTLP endpoint nothing is
// sampled (but spans have ids); a test's span processor samples
// everything; an endpoint turns sampling on; OTEL_SERVICE_NAME names the
// process in its metrics; an unknown protocol is refused by name; and the
// Prometheus handler always serves the process's metrics.
func TestSetupFollowsTheOTELVariables(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"} {
		t.Setenv(k, "")
	}
	setup := func(cfg Config) *Telemetry {
		t.Helper()
		tel, err := Setup(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = tel.Shutdown(ctx)
		})
		return tel
	}
	span := func(tel *Telemetry) trace.SpanContext {
		_, s := tel.TracerProvider().Tracer("test").Start(t.Context(), "op")
		return s.SpanContext()
	}

	quiet := setup(Config{ServiceName: "atrium-crm", Version: "1.2.3"})
	if sc := span(quiet); !sc.IsValid() || sc.IsSampled() {
		t.Fatalf("without an endpoint: span %v, want valid ids and not sampled", sc)
	}
	counter, _ := quiet.MeterProvider().Meter("test").Int64Counter("atrium.test.things")
	counter.Add(t.Context(), 3)
	rec := httptest.NewRecorder()
	quiet.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{"atrium_test_things_total 3", `service_name="atrium-crm"`, `service_version="1.2.3"`, "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}

	recorder := tracetest.NewSpanRecorder()
	if sc := span(setup(Config{ServiceName: "x", SpanProcessor: recorder})); !sc.IsSampled() || len(recorder.Started()) != 1 {
		t.Fatalf("with a span processor: span %v, %d recorded", sc, len(recorder.Started()))
	}

	t.Setenv("OTEL_SERVICE_NAME", "crm-eu-1")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:1")
	exporting := setup(Config{ServiceName: "atrium-crm"})
	if sc := span(exporting); !sc.IsSampled() {
		t.Fatalf("with an endpoint: span %v, want sampled", sc)
	}
	rec = httptest.NewRecorder()
	exporting.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `service_name="crm-eu-1"`) {
		t.Errorf("OTEL_SERVICE_NAME did not name the process: %s", rec.Body.String())
	}

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")
	if _, err := Setup(t.Context(), Config{ServiceName: "x"}); err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Fatalf("an unknown protocol: %v, want an error naming OTEL_EXPORTER_OTLP_PROTOCOL", err)
	}
}

// TestGRPCLogsAreStructured: gRPC's and grpc-gateway's log lines (grpclog)
// go through the structured logger, a caller's text escaped inside one line.
func TestGRPCLogsAreStructured(t *testing.T) {
	var out strings.Builder
	logger, err := NewLogger(&out, "text", "info")
	if err != nil {
		t.Fatal(err)
	}
	InstallGRPCLogger(logger)
	grpclog.Errorf("Failed to parse Content-Type %s: %v", "text/x\nlevel=ERROR msg=forged", "mime: invalid media parameter")
	grpclog.Info("connection state changed") // chatter: debug, dropped at info
	line := out.String()
	if strings.Count(line, "\n") != 1 || !strings.Contains(line, "component=grpc") || !strings.Contains(line, `text/x\nlevel=ERROR`) {
		t.Fatalf("grpclog output = %q, want one escaped structured line", line)
	}
}
