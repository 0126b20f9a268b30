package telemetry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
