// Package outbox delivers a service's events to NATS JetStream without losing
// any: a use case enqueues events in the same transaction as the writes they
// describe, and a relay publishes them after commit, removing each only once
// JetStream has acknowledged it. The event id is the JetStream message id, so
// an event published twice (a crash between the ack and the removal) is
// dropped by the stream's duplicate window; consumers must still tolerate
// redelivery.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Event is one message to publish.
type Event struct {
	ID        string
	Subject   string
	Payload   []byte
	CreatedAt time.Time
	// TraceParent and TraceState are the W3C trace context of the
	// operation that enqueued the event (empty when it was not traced):
	// the relay publishes the event as part of that trace. The cores fill
	// them in at Enqueue (see WithTrace).
	TraceParent, TraceState string
}

// traceContext is the W3C trace-context format events carry their trace in.
var traceContext propagation.TraceContext

// WithTrace returns e carrying the trace context of ctx's span, unless e
// already carries one or ctx has no span. A trace that is not sampled is
// kept too: its id still ties the relay's log lines to the request.
func WithTrace(ctx context.Context, e Event) Event {
	if e.TraceParent != "" || !trace.SpanContextFromContext(ctx).IsValid() {
		return e
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(ctx, c)
	e.TraceParent, e.TraceState = c["traceparent"], c["tracestate"]
	return e
}

// traceOf returns ctx carrying e's trace context as its remote parent.
func traceOf(ctx context.Context, e Event) context.Context {
	if e.TraceParent == "" {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": e.TraceParent, "tracestate": e.TraceState})
}

// New returns an event with a fresh id and payload marshalled as JSON.
// Services do not call it: they build their events from their
// platform/events definitions (Of, Add), which make the subject from the
// payload; New and Enqueue are for the transport's own tests.
func New(subject string, payload any, at time.Time) (Event, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("marshal %s event: %w", subject, err)
	}
	return Event{ID: uuid.Must(uuid.NewV7()).String(), Subject: subject, Payload: b, CreatedAt: at}, nil
}

// Enqueuer is a transaction that takes events.
type Enqueuer interface {
	Enqueue(ctx context.Context, e Event) error
}

// Enqueue adds an event with payload marshalled as JSON to tx.
func Enqueue(ctx context.Context, tx Enqueuer, subject string, payload any, at time.Time) error {
	e, err := New(subject, payload, at)
	if err != nil {
		return err
	}
	return tx.Enqueue(ctx, e)
}

// Definition is an event's definition (platform/events' Def): it gives a
// payload its subject and its JSON. Services build every event they
// publish with one, through Of, OfID and Add.
type Definition[P any] interface {
	Marshal(p P) (subject string, payload []byte, err error)
}

// Of returns the event d defines for payload p, with a fresh id.
func Of[P any](d Definition[P], p P, at time.Time) (Event, error) {
	return OfID(uuid.Must(uuid.NewV7()).String(), d, p, at)
}

// OfID is Of with the event's id given, for an event whose id says what
// it is about (a run's completion has the run's id, so that JetStream
// keeps it once however often it is published).
func OfID[P any](id string, d Definition[P], p P, at time.Time) (Event, error) {
	subject, payload, err := d.Marshal(p)
	if err != nil {
		return Event{}, err
	}
	return Event{ID: id, Subject: subject, Payload: payload, CreatedAt: at}, nil
}

// Add adds the event d defines for payload p to tx.
func Add[P any](ctx context.Context, tx Enqueuer, d Definition[P], p P, at time.Time) error {
	e, err := Of(d, p, at)
	if err != nil {
		return err
	}
	return tx.Enqueue(ctx, e)
}

// Source is a store's outbox as the relay sees it.
type Source interface {
	// Claim passes up to max of the oldest unpublished events to publish,
	// which returns how many of them, from the start, it published. Those
	// are removed; the rest stay for the next claim.
	Claim(ctx context.Context, max int, publish func(context.Context, []Event) int) error
	// Backlog reports what is waiting to be published.
	Backlog(ctx context.Context) (Backlog, error)
}

// Backlog is what an outbox holds: how many events, and when the oldest
// of them was created (zero when there is none).
type Backlog struct {
	Events int
	Oldest time.Time
}

// Publisher sends one event and returns once it is durably accepted.
type Publisher interface {
	Publish(ctx context.Context, e Event) error
}

// Relay moves events from a Source to a Publisher.
type Relay struct {
	src      Source
	pub      Publisher
	logger   *slog.Logger
	interval time.Duration
	wake     chan struct{}
	metrics  *relayMetrics
}

// RelayOption changes how NewRelay sets a relay up.
type RelayOption func(*RelayTelemetry)

// RelayTelemetry is where a relay reports and what it is called there.
type RelayTelemetry struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Service is the atrium.service attribute of the relay's metrics (crm).
	Service string
	// Stream names the relay's publish spans: publish ATRIUM_CRM. Subjects
	// would not do: some hold ids (atrium.collections.<site_id>.…), and a
	// span name must not grow with the data.
	Stream string
}

// WithTelemetry makes the relay's publish spans and metrics with t's
// providers instead of OpenTelemetry's global ones.
func WithTelemetry(t RelayTelemetry) RelayOption {
	return func(o *RelayTelemetry) { *o = t }
}

// DefaultInterval is how often a service's relay polls its outbox when
// nothing wakes it, and how long it first waits after a failed publish.
const DefaultInterval = 500 * time.Millisecond

// MaxBackoff is the longest a relay waits between retries while publishing
// fails: the wait doubles from the relay's interval up to it.
const MaxBackoff = 30 * time.Second

// NewRelay returns a relay that polls src every interval and whenever Wake is
// called. After a failed publish it retries after interval, then after twice
// the last wait, up to MaxBackoff, unless woken first.
func NewRelay(src Source, pub Publisher, interval time.Duration, logger *slog.Logger, opts ...RelayOption) *Relay {
	o := RelayTelemetry{TracerProvider: otel.GetTracerProvider(), MeterProvider: otel.GetMeterProvider()}
	for _, opt := range opts {
		opt(&o)
	}
	return &Relay{src: src, pub: pub, logger: logger, interval: interval, wake: make(chan struct{}, 1),
		metrics: newRelayMetrics(o)}
}

// Wake asks the relay to look for events now. It never blocks.
func (r *Relay) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

const batchSize = 100

// coalesce is the shortest time between two claims while commits keep
// waking the relay: the events committed meanwhile go out in one claim (a
// transaction on PostgreSQL) instead of one claim each, which under a
// steady stream of writes cost as much as the writes' own statements. An
// event committed after a quiet spell is claimed at once; under load an
// event waits at most this much longer.
const coalesce = 2 * time.Millisecond

// Run relays until ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	backoff := r.interval
	for {
		started := time.Now()
		n, failed, err := r.drain(ctx)
		if ctx.Err() != nil {
			return nil
		}
		wait := r.interval
		if err != nil {
			// Logged in the failed event's trace, so that the request
			// whose event is stuck finds this line.
			r.logger.WarnContext(failed, "outbox relay: publish failed; retrying", "error", err, "published", n, "retry_in", backoff)
			wait = backoff
			backoff = min(backoff*2, MaxBackoff)
		} else {
			backoff = r.interval
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.wake:
			if rest := coalesce - time.Since(started); err == nil && n > 0 && rest > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(rest):
				}
			}
		case <-time.After(wait):
		}
	}
}

// Drain publishes what is pending once, until ctx ends. Shutdown calls it
// after the last request has finished, so the events of that request leave
// before the process does.
func (r *Relay) Drain(ctx context.Context) {
	if _, failed, err := r.drain(ctx); err != nil && ctx.Err() == nil {
		r.logger.WarnContext(failed, "outbox relay: final drain failed; events stay in the outbox", "error", err)
	}
}

// drain publishes batches until the outbox is empty or a publish fails.
// On failure it also returns the context of the event that failed, which
// carries that event's trace.
func (r *Relay) drain(ctx context.Context) (int, context.Context, error) {
	total := 0
	for {
		var pubErr error
		failed := ctx
		claimed := 0
		err := r.src.Claim(ctx, batchSize, func(ctx context.Context, events []Event) int {
			claimed = len(events)
			for i, e := range events {
				ectx, err := r.publish(ctx, e)
				if err != nil {
					pubErr = fmt.Errorf("event %s (%s): %w", e.ID, e.Subject, err)
					failed = ectx
					return i
				}
			}
			return len(events)
		})
		if err == nil {
			err = pubErr
		}
		if err != nil {
			return total, failed, err
		}
		total += claimed
		if claimed < batchSize {
			return total, ctx, nil
		}
	}
}

// publish sends one event in a producer span that continues the trace of
// the transaction that enqueued it; the publisher passes the span's
// context on in the message's headers.
func (r *Relay) publish(ctx context.Context, e Event) (context.Context, error) {
	m := r.metrics
	ctx, span := m.tracer.Start(traceOf(ctx, e), m.spanName,
		trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
			semconv.MessagingSystemKey.String(messagingSystem),
			semconv.MessagingOperationTypeSend,
			semconv.MessagingOperationName("publish"),
			semconv.MessagingDestinationName(e.Subject),
			semconv.MessagingMessageID(e.ID),
			semconv.MessagingMessageBodySize(len(e.Payload)),
		))
	defer span.End()
	start := time.Now()
	err := r.pub.Publish(ctx, e)
	m.record(ctx, e, time.Since(start), err)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
		return ctx, err
	}
	r.logger.DebugContext(ctx, "outbox relay: published event", "event", e.ID, "subject", e.Subject)
	return ctx, nil
}
