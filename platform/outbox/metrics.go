package outbox

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// messagingSystem is messaging.system for NATS, which the conventions do
// not list.
const messagingSystem = "nats"

const scope = "github.com/atrium-hq/atrium/platform/outbox"

// relayMetrics are the relay's tracer and instruments, with their
// attribute sets built once. Metrics are by service, not by subject:
// subjects can hold tenants' ids.
type relayMetrics struct {
	tracer   trace.Tracer
	spanName string
	duration metric.Float64Histogram
	sent     metric.Int64Counter
	delay    metric.Float64Histogram
	// ok is the set of a successful publish, failed those of a failure by
	// error type.
	ok     metric.MeasurementOption
	failed map[string]metric.MeasurementOption
}

// durationBuckets are the OpenTelemetry conventions' advice for
// durations in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// errorTypes are the error.type values of failed publishes.
var errorTypes = []string{"not_connected", "timeout", semconv.ErrorTypeOther.Value.AsString()}

func newRelayMetrics(t RelayTelemetry) *relayMetrics {
	m := t.MeterProvider.Meter(scope)
	// Instrument errors only come from invalid names, fixed here; the
	// instrument returned with one is a no-op.
	duration, _ := m.Float64Histogram("messaging.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to publish one event to JetStream, until its acknowledgement."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	sent, _ := m.Int64Counter("messaging.client.sent.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Events published to JetStream, failed attempts included (error.type set)."))
	delay, _ := m.Float64Histogram("atrium.outbox.delivery.delay", metric.WithUnit("s"),
		metric.WithDescription("Time from an event's creation, in the transaction that enqueued it, to its acknowledgement by JetStream."),
		metric.WithExplicitBucketBoundaries(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))
	set := func(extra ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append([]attribute.KeyValue{
			semconv.MessagingSystemKey.String(messagingSystem),
			semconv.MessagingOperationTypeSend,
			semconv.MessagingOperationName("publish"),
			attribute.String("atrium.service", t.Service),
		}, extra...)...))
	}
	rm := &relayMetrics{tracer: t.TracerProvider.Tracer(scope), spanName: "publish", duration: duration, sent: sent, delay: delay,
		ok: set(), failed: map[string]metric.MeasurementOption{}}
	if t.Stream != "" {
		rm.spanName = "publish " + t.Stream
	}
	for _, et := range errorTypes {
		rm.failed[et] = set(semconv.ErrorTypeKey.String(et))
	}
	return rm
}

func (m *relayMetrics) record(ctx context.Context, e Event, took time.Duration, err error) {
	o := m.ok
	if err != nil {
		o = m.failed[errorType(err)]
	}
	m.duration.Record(ctx, took.Seconds(), o)
	m.sent.Add(ctx, 1, o)
	if err == nil && !e.CreatedAt.IsZero() {
		m.delay.Record(ctx, time.Since(e.CreatedAt).Seconds(), o)
	}
}

// errorType names a publish failure for error.type, from a short fixed list.
func errorType(err error) string {
	switch {
	case errors.Is(err, ErrNotConnected):
		return "not_connected"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	default:
		return semconv.ErrorTypeOther.Value.AsString()
	}
}

// ObserveBacklog reports src's backlog as metrics of mp, read when they are
// collected, with atrium.service set to service:
//
//	atrium.outbox.pending   events waiting to be published
//	atrium.outbox.lag       age in seconds of the oldest of them (0 when none)
//
// A lag that keeps growing means the relay cannot publish (NATS down or
// refusing); a pending count that keeps growing with a small lag means it
// publishes more slowly than events arrive. Unregister the returned
// registration when the source closes.
func ObserveBacklog(src Source, service string, mp metric.MeterProvider) (metric.Registration, error) {
	m := mp.Meter(scope)
	pending, err1 := m.Int64ObservableUpDownCounter("atrium.outbox.pending", metric.WithUnit("{event}"),
		metric.WithDescription("Events in the outbox, committed and not yet acknowledged by JetStream."))
	lag, err2 := m.Float64ObservableGauge("atrium.outbox.lag", metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest event in the outbox; 0 when it is empty."))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	attrs := metric.WithAttributeSet(attribute.NewSet(attribute.String("atrium.service", service)))
	return m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		b, err := src.Backlog(ctx)
		if err != nil {
			return err
		}
		age := 0.0
		if b.Events > 0 && !b.Oldest.IsZero() {
			age = max(time.Since(b.Oldest).Seconds(), 0)
		}
		o.ObserveInt64(pending, int64(b.Events), attrs)
		o.ObserveFloat64(lag, age, attrs)
		return nil
	}, pending, lag)
}
