package app

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/atrium-hq/atrium/services/webhooks/internal/retry"
)

// attemptMetrics are the deliverer's measurements of its attempts:
//
//	atrium.webhooks.attempts{outcome, status_class}   attempts made
//	atrium.webhooks.attempt.duration{outcome}         seconds from sending to the answer (or giving up)
//
// outcome is succeeded, failed or gone; status_class is 2xx to 5xx, or
// none when no answer came. Endpoints are not an attribute: they are
// tenants' and unbounded; the delivery log is where one endpoint's
// attempts are read.
type attemptMetrics struct {
	attempts metric.Int64Counter
	duration metric.Float64Histogram
}

func newAttemptMetrics(mp metric.MeterProvider) *attemptMetrics {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter("github.com/atrium-hq/atrium/services/webhooks")
	attempts, _ := m.Int64Counter("atrium.webhooks.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Webhook delivery attempts, by outcome and the answer's status class."))
	duration, _ := m.Float64Histogram("atrium.webhooks.attempt.duration", metric.WithUnit("s"),
		metric.WithDescription("Time from sending a webhook attempt to its answer, or to giving up."))
	return &attemptMetrics{attempts: attempts, duration: duration}
}

var outcomeNames = map[retry.Outcome]string{retry.Succeeded: "succeeded", retry.Failed: "failed", retry.Gone: "gone"}

func (m *attemptMetrics) record(ctx context.Context, a Attempt, o retry.Outcome) {
	class := "none"
	if a.StatusCode > 0 {
		class = strconv.Itoa(a.StatusCode/100) + "xx"
	}
	outcome := attribute.String("outcome", outcomeNames[o])
	m.attempts.Add(ctx, 1, metric.WithAttributes(outcome, attribute.String("status_class", class)))
	m.duration.Record(ctx, a.Duration.Seconds(), metric.WithAttributes(outcome))
}

// ObserveBacklog reports what the deliverers have still to send, read from
// the store at each collection:
//
//	atrium.webhooks.backlog{state}          pending deliveries: due (waiting for a worker) or scheduled (a retry to come)
//	atrium.webhooks.oldest_pending.age      seconds since the oldest pending delivery was created
//	atrium.webhooks.oldest_due.wait         seconds the longest-waiting due delivery is past its time
//
// Every replica reports the whole store's backlog (the deliveries are
// shared): aggregate with max, not sum. oldest_due.wait is the lag to
// watch: it stays near zero while the deliverers keep up, whatever the
// endpoints do.
func ObserveBacklog(s DeliveryStore, mp metric.MeterProvider, now func() time.Time) (metric.Registration, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter("github.com/atrium-hq/atrium/services/webhooks")
	backlog, err := m.Int64ObservableGauge("atrium.webhooks.backlog", metric.WithUnit("{delivery}"),
		metric.WithDescription("Pending webhook deliveries: due (waiting for a worker) or scheduled (a retry to come)."))
	if err != nil {
		return nil, err
	}
	age, err := m.Float64ObservableGauge("atrium.webhooks.oldest_pending.age", metric.WithUnit("s"),
		metric.WithDescription("Seconds since the oldest pending webhook delivery was created."))
	if err != nil {
		return nil, err
	}
	wait, err := m.Float64ObservableGauge("atrium.webhooks.oldest_due.wait", metric.WithUnit("s"),
		metric.WithDescription("Seconds the longest-waiting due webhook delivery is past its attempt time."))
	if err != nil {
		return nil, err
	}
	due, scheduled := metric.WithAttributes(attribute.String("state", "due")), metric.WithAttributes(attribute.String("state", "scheduled"))
	return m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		at := now()
		b, err := s.Backlog(ctx, at)
		if err != nil {
			return err
		}
		o.ObserveInt64(backlog, int64(b.Due), due)
		o.ObserveInt64(backlog, int64(b.Pending-b.Due), scheduled)
		var a, w float64
		if !b.OldestPending.IsZero() {
			a = at.Sub(b.OldestPending).Seconds()
		}
		if !b.OldestDue.IsZero() {
			w = max(at.Sub(b.OldestDue).Seconds(), 0)
		}
		o.ObserveFloat64(age, a)
		o.ObserveFloat64(wait, w)
		return nil
	}, backlog, age, wait)
}
