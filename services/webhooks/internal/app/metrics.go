package app

import (
	"context"
	"strconv"

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
