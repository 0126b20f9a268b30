// Package telemetry sets up tracing, metrics and logging the same way in
// every Atrium process, so that one request is one trace across the gateway
// and the services, every log line of it carries that trace's id, and every
// process can be scraped by Prometheus.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Propagator carries the trace across process boundaries: W3C trace
// context (traceparent, tracestate) and baggage, in HTTP headers, gRPC
// metadata and NATS message headers alike.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Config says how Setup builds a process's telemetry. Everything else comes
// from the standard OTEL_* variables.
type Config struct {
	// ServiceName and Version describe the process (service.name,
	// service.version); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override them.
	ServiceName, Version string
	// SpanProcessor, when set, receives every span besides any OTLP
	// exporter, and spans are sampled even when no exporter is configured.
	// Tests record spans with it.
	SpanProcessor sdktrace.SpanProcessor
}

// Telemetry is where a process's spans and metrics go: its tracer and
// meter providers, and the Prometheus scrape handler of its metrics. A nil
// *Telemetry stands for OpenTelemetry's global providers, so a component
// built without one (in a unit test) reports nowhere.
type Telemetry struct {
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	metrics http.Handler
}

// Setup builds a process's telemetry. Spans are exported over OTLP when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set,
// metrics when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set, over gRPC unless
// OTEL_EXPORTER_OTLP_PROTOCOL (or its per-signal variant) says
// http/protobuf; the exporters read the other OTEL_EXPORTER_OTLP_* options
// themselves. With no trace exporter, spans are not sampled, so they cost
// almost nothing, but they still carry trace ids, which appear in logs and
// error references. Metrics are always kept for the Prometheus handler.
//
// Setup does not touch OpenTelemetry's globals; InstallGlobal does.
// Shutdown flushes and stops both providers.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(cfg.Version)),
		// Last, so that the operator's variables win.
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	t := &Telemetry{}
	topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	sampled := cfg.SpanProcessor != nil
	if cfg.SpanProcessor != nil {
		topts = append(topts, sdktrace.WithSpanProcessor(cfg.SpanProcessor))
	}
	if exporting("TRACES") {
		exp, err := traceExporter(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		topts = append(topts, sdktrace.WithBatcher(exp))
		sampled = true
	}
	if !sampled {
		// Nothing would receive the spans: record none. Otherwise sampling
		// follows OTEL_TRACES_SAMPLER (default: parent-based, always).
		topts = append(topts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	t.tp = sdktrace.NewTracerProvider(topts...)

	// A registry of its own: two processes' worth of telemetry in one test
	// binary never share one, and nothing registers into it behind our back.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	prom, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(),
		// Classic Prometheus names: http_server_request_duration_seconds.
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
	if err != nil {
		_ = t.tp.Shutdown(ctx)
		return nil, fmt.Errorf("the Prometheus exporter: %w", err)
	}
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(prom)}
	if exporting("METRICS") {
		exp, err := metricExporter(ctx)
		if err != nil {
			_ = t.tp.Shutdown(ctx)
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		// The interval follows OTEL_METRIC_EXPORT_INTERVAL (default 60s).
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	t.mp = sdkmetric.NewMeterProvider(mopts...)
	t.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return t, nil
}

// exporting reports whether the OTLP exporter of signal (TRACES, METRICS)
// has an endpoint and is not turned off.
func exporting(signal string) bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || os.Getenv("OTEL_"+signal+"_EXPORTER") == "none" {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
}

// protocol is the OTLP protocol of signal: grpc (the default, as before
// the variable was read) or http/protobuf.
func protocol(signal string) string {
	if p := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"); p != "" {
		return p
	}
	if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" {
		return p
	}
	return "grpc"
}

func traceExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	switch p := protocol("TRACES"); p {
	case "grpc":
		return otlptracegrpc.New(ctx)
	case "http/protobuf":
		return otlptracehttp.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL must be grpc or http/protobuf; got %q", p)
	}
}

func metricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	switch p := protocol("METRICS"); p {
	case "grpc":
		return otlpmetricgrpc.New(ctx)
	case "http/protobuf":
		return otlpmetrichttp.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL must be grpc or http/protobuf; got %q", p)
	}
}

// TracerProvider makes the process's spans.
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if t == nil {
		return otel.GetTracerProvider()
	}
	return t.tp
}

// MeterProvider makes the process's instruments.
func (t *Telemetry) MeterProvider() metric.MeterProvider {
	if t == nil {
		return otel.GetMeterProvider()
	}
	return t.mp
}

// MetricsHandler serves every metric of the process in the Prometheus text
// format (GET /metrics); nil for a nil *Telemetry.
func (t *Telemetry) MetricsHandler() http.Handler {
	if t == nil {
		return nil
	}
	return t.metrics
}

// InstallGlobal makes t OpenTelemetry's global tracer and meter provider,
// and Propagator its global propagator, for any library that reports
// through the globals. The binaries call it; tests, which may run several
// processes' worth of telemetry at once, do not.
func (t *Telemetry) InstallGlobal() {
	otel.SetTextMapPropagator(Propagator)
	otel.SetTracerProvider(t.tp)
	otel.SetMeterProvider(t.mp)
}

// Shutdown exports what is buffered and stops both providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}

// NewLogger returns a logger writing format ("json" or "text") to w at
// level ("debug", "info", "warn" or "error"). Every record made with a
// traced context carries trace_id and span_id, once.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level must be debug, info, warn or error; got %q", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch format {
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, fmt.Errorf("log format must be text or json; got %q", format)
	}
	return slog.New(traceHandler{h}), nil
}

// traceHandler adds the trace and span ids of the record's context.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(as)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
