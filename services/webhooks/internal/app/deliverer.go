package app

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/webhooks/internal/retry"
	"github.com/atrium-hq/atrium/services/webhooks/internal/signing"
)

// Deliverer sends due deliveries: it claims a batch, makes one attempt of
// each concurrently (so that a slow endpoint holds only its own
// deliveries), records each attempt and schedules the next.
type Deliverer struct {
	Store Store
	// Sender sends the attempts; webhookhttp.New makes the one a
	// deployment uses (no redirects, the guard on every connection).
	Sender Sender
	// Schedule is the retry schedule (retry.Default unless configured).
	Schedule retry.Schedule
	// Timeout bounds one attempt (--webhook-timeout, 15 s by default).
	Timeout time.Duration
	// DisableAfter disables an endpoint that has failed continuously this
	// long (--webhook-disable-after, 5 days by default).
	DisableAfter time.Duration
	// Batch is how many attempts run at once (the workers).
	Batch int
	// PerEndpoint is how many of them one endpoint may hold (0: no bound),
	// so that a slow or dead endpoint's backlog leaves the other workers
	// to everyone else.
	PerEndpoint int
	Now         func() time.Time
	Logger      *slog.Logger
	// Meters, if set, records the attempts (metrics.go).
	Meters metric.MeterProvider
	// Tracer, if set, traces each attempt with a span linked to the trace
	// of the write that caused the event.
	Tracer trace.TracerProvider
	// Retention is how long finished deliveries stay in the log (0: for
	// ever); Run prunes older ones every PruneEvery.
	Retention time.Duration

	wakeOnce    sync.Once
	wake        chan struct{}
	records     recorder
	metricsOnce sync.Once
	metrics     *attemptMetrics
}

// Sender sends an attempt to an endpoint; the adapter is HTTP
// (internal/adapters/webhookhttp), the deliverer's only outbound call.
type Sender interface {
	// Post sends body to url with header, following no redirect, and
	// returns the endpoint's answer, its body cut at MaxResponseBody. An
	// error is no answer: an *UnrequestableError when the URL cannot be
	// requested at all.
	Post(ctx context.Context, url string, header http.Header, body []byte) (Answer, error)
}

// Answer is what an endpoint answered an attempt.
type Answer struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// UnrequestableError is a URL no request can be made to.
type UnrequestableError struct{ Err error }

func (e *UnrequestableError) Error() string { return e.Err.Error() }
func (e *UnrequestableError) Unwrap() error { return e.Err }

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return stamp(d.Now())
	}
	return stamp(time.Now())
}

// lease is how long a claim holds a delivery: its attempt, and the time to
// record it.
func (d *Deliverer) lease() time.Duration { return d.Timeout + 30*time.Second }

// RunOnce claims due deliveries and attempts each once; it returns how
// many it attempted.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	due, err := d.Store.Claim(ctx, d.now(), max(d.Batch, 1), Bound{PerEndpoint: d.PerEndpoint}, d.lease())
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, del := range due {
		wg.Go(func() {
			if err := d.attempt(ctx, del, false); err != nil && d.Logger != nil {
				d.Logger.ErrorContext(ctx, "webhook attempt not recorded", "delivery", del.ID, "err", err)
			}
		})
	}
	wg.Wait()
	d.records.wait()
	return len(due), nil
}

// cutShort is the error of an attempt the deliverer's stop interrupted.
const cutShort = "cut short: the deliverer was stopping; sent again at once by another"

// attemptNow reads del's endpoint and makes an explicit attempt of it (a
// test, or a retry its owner asked for).
func (d *Deliverer) attemptNow(ctx context.Context, del Delivery) error {
	ep, err := d.Store.Endpoint(ctx, del.Tenant, del.EndpointID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since: its deliveries went with it
	}
	if err != nil {
		return err
	}
	return d.attempt(ctx, Due{Delivery: del, Endpoint: ep}, true)
}

// attempt makes one attempt of a delivery to its endpoint and records it.
// When ctx ends during the attempt (the service is stopping), the attempt
// is recorded as cut short and the delivery is due again at once, for
// another replica (or this one, restarted) to send. An explicit attempt (a
// test, a retry the owner asked for) is sent even to a disabled endpoint,
// to check a fix before enabling it again; a scheduled one is not.
func (d *Deliverer) attempt(ctx context.Context, due Due, explicit bool) error {
	del, ep := due.Delivery, due.Endpoint
	if !ep.Enabled && !explicit {
		return d.record(ctx, AttemptRecord{ID: del.ID, Attempt: Attempt{At: d.now(), Error: "not sent: the webhook is disabled"}, Status: Failed}, false)
	}
	n := len(del.Attempts) + 1
	ctx, span := d.startSpan(ctx, del, n)
	defer span.End()
	a, outcome, wait := d.send(ctx, ep, del)
	// What is left is bookkeeping, which a stop must not cut.
	stopping := ctx.Err() != nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if stopping && outcome != retry.Succeeded && a.StatusCode == 0 {
		a.Error = cutShort
		endSpan(span, a, outcome)
		// A stop cut it short: it is due again at once, recorded or not (its
		// lease ends either way).
		_ = d.record(ctx, AttemptRecord{ID: del.ID, Attempt: a, Status: Pending, Next: d.now()}, explicit)
		return nil
	}
	endSpan(span, a, outcome)
	d.metricsOnce.Do(func() { d.metrics = newAttemptMetrics(d.Meters) })
	d.metrics.record(ctx, a, outcome)
	// The attempt ended, and the schedule's wait runs, from when its
	// answer (or time-out) came: counted from its start, the retry of an
	// attempt that waited out the time-out would be due already, ahead of
	// the first attempts of healthy endpoints due for less time.
	ended := a.At.Add(a.Duration)
	heldUntil := d.holdUntil(a, wait, ended)
	status, next := Failed, time.Time{}
	switch outcome {
	case retry.Succeeded:
		status = Succeeded
	case retry.Failed:
		if at, ok := d.Schedule.After(n, ended, wait); ok {
			status, next = Pending, stamp(maxTime(at, heldUntil))
		}
	}
	if err := d.record(ctx, AttemptRecord{ID: del.ID, Attempt: a, Status: status, Next: next}, explicit); err != nil {
		return err
	}
	if !heldUntil.IsZero() {
		if _, err := d.Store.Hold(ctx, ep.ID, d.now(), stamp(heldUntil)); err != nil {
			return err
		}
	}
	return d.noteHealth(ctx, ep, outcome, a.At)
}

// holdUntil is when an endpoint that did not answer (for the attempt's
// whole time-out, or refusing the connection), or that asked to be left
// alone (Retry-After on 429 or 503), may be attempted again: the attempt's
// time-out, or the wait it asked for, from when the attempt ended; zero
// for an endpoint that answered and asked for nothing. Until then the
// store holds it back on every deliverer (DeliveryStore.Hold): its other
// deliveries, due or coming due, would only take its workers for another
// time-out each, or wait, due, for them and make every claim step over
// them.
func (d *Deliverer) holdUntil(a Attempt, retryAfter time.Duration, ended time.Time) time.Time {
	hold := retryAfter
	if a.StatusCode == 0 {
		hold = max(hold, d.Timeout)
	}
	if hold <= 0 {
		return time.Time{}
	}
	return ended.Add(hold)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// record records an attempt: an explicit one before returning (its caller
// reads the delivery back), a scheduled one in the background (recorder).
func (d *Deliverer) record(ctx context.Context, r AttemptRecord, explicit bool) error {
	if explicit {
		return d.records.now(ctx, d.Store, r)
	}
	d.records.later(ctx, d.Store, r, func(err error) {
		if d.Logger != nil {
			d.Logger.ErrorContext(ctx, "webhooks: attempts not recorded; they are made again once their deliveries' leases end", "err", err)
		}
	})
	return nil
}

// startSpan starts the span of attempt n of del: a trace of its own (an
// attempt may come days after the write), linked to the write's.
func (d *Deliverer) startSpan(ctx context.Context, del Delivery, n int) (context.Context, trace.Span) {
	tp := d.Tracer
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("webhook.id", del.EndpointID),
			attribute.String("webhook.delivery_id", del.ID),
			attribute.String("webhook.event_id", del.EventID),
			attribute.String("webhook.event_type", del.EventType),
			attribute.Int("webhook.attempt", n),
		),
	}
	if sc := writeSpan(del); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return tp.Tracer("github.com/atrium-hq/atrium/services/webhooks").Start(ctx, "webhook attempt "+del.EventType, opts...)
}

// writeSpan is the span context of the write that caused del's event.
func writeSpan(del Delivery) trace.SpanContext {
	carrier := propagation.MapCarrier{"traceparent": del.TraceParent, "tracestate": del.TraceState}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
}

func endSpan(span trace.Span, a Attempt, outcome retry.Outcome) {
	if a.StatusCode > 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", a.StatusCode))
	}
	if outcome != retry.Succeeded {
		msg := a.Error
		if msg == "" {
			msg = "answered " + strconv.Itoa(a.StatusCode)
		}
		span.SetStatus(codes.Error, msg)
	}
}

// send makes the request of one attempt.
func (d *Deliverer) send(ctx context.Context, ep Endpoint, del Delivery) (Attempt, retry.Outcome, time.Duration) {
	at := d.now()
	a := Attempt{At: at}
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set("User-Agent", "Atrium-Webhooks/1")
	signing.SetHeaders(header, del.EventID, at, del.Body, ep.Secrets(at)...)
	start := time.Now()
	resp, err := d.Sender.Post(ctx, ep.URL, header, del.Body)
	a.Duration = time.Since(start)
	var unrequestable *UnrequestableError
	if errors.As(err, &unrequestable) {
		a.Error = "the webhook's URL cannot be requested: " + err.Error()
		return a, retry.Failed, 0
	}
	if err != nil {
		a.Error = attemptError(err, d.Timeout)
		return a, retry.Failed, 0
	}
	a.StatusCode, a.ResponseBody = resp.StatusCode, strings.ToValidUTF8(string(resp.Body), string(utf8.RuneError))
	outcome, wait := retry.Classify(resp.StatusCode, resp.Header, at)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		a.Error = "redirects are not followed: register the URL it points to (" + resp.Header.Get("Location") + ")"
	}
	return a, outcome, wait
}

// noteHealth keeps the endpoint's failure run: a success ends it, and the
// endpoint's hold if one is under way; a 410,
// or failures for longer than DisableAfter, disable the endpoint and
// announce it (webhook.disabled, to the tenant's other endpoints and on
// NATS). Most attempts change nothing here, and write nothing.
func (d *Deliverer) noteHealth(ctx context.Context, ep Endpoint, outcome retry.Outcome, at time.Time) error {
	switch {
	case outcome == retry.Succeeded && ep.FailingSince.IsZero():
		return nil
	case outcome == retry.Failed && !ep.FailingSince.IsZero() && (d.DisableAfter <= 0 || at.Sub(ep.FailingSince) < d.DisableAfter):
		return nil // the run goes on
	}
	if outcome == retry.Succeeded {
		// It answers again: a hold under way (held for a time-out, or a
		// long Retry-After) ends, whichever attempt succeeded (one in
		// flight during the hold, a retry its owner asked for).
		if _, err := d.Store.Release(ctx, ep.ID, d.now()); err != nil {
			return err
		}
	}
	return d.Store.InTx(ctx, func(tx EndpointTx) error {
		e, err := tx.Endpoint(ctx, ep.Tenant, ep.ID)
		if err != nil {
			return nil // deleted meanwhile
		}
		wasEnabled := e.Enabled
		switch outcome {
		case retry.Succeeded:
			e.FailingSince = time.Time{}
		case retry.Gone:
			e.Enabled, e.DisabledReason = false, "the endpoint answered 410 Gone"
		default:
			if e.FailingSince.IsZero() {
				e.FailingSince = at
			} else if d.DisableAfter > 0 && at.Sub(e.FailingSince) >= d.DisableAfter {
				e.Enabled, e.DisabledReason = false, "every attempt failed for "+d.DisableAfter.String()
			}
		}
		if err := tx.UpdateEndpoint(ctx, e); err != nil {
			return err
		}
		if wasEnabled && !e.Enabled {
			return outbox.Add(ctx, tx, events.WebhookDisabled, events.WebhookDisabledEvent{
				WebhookID: e.ID, Owner: e.Tenant.Kind, TenantID: e.Tenant.ID, URL: e.URL, Reason: e.DisabledReason, DisabledAt: at,
			}, at)
		}
		return nil
	})
}

// Wake makes a running Run look for due deliveries now (the fan-out calls
// it after adding some), instead of at its next poll.
func (d *Deliverer) Wake() {
	d.wakeOnce.Do(d.initWake)
	select {
	case d.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

func (d *Deliverer) initWake() { d.wake = make(chan struct{}, 1) }

// PruneEvery is how often Run removes the deliveries past Retention.
const PruneEvery = time.Hour

// claimGap is how long the loop waits, after an attempt ends, for more to
// end before claiming for the free workers: claims go in batches rather
// than one per attempt, each costing a query.
const claimGap = 5 * time.Millisecond

// Run delivers until ctx ends. Batch workers attempt deliveries; whenever
// some are free it claims as many due deliveries (at most PerEndpoint of
// one endpoint), so that an attempt waiting on a slow endpoint holds only
// its worker. It claims at once when Wake is called (new deliveries),
// when attempts end (once an eighth of the workers are free, or claimGap
// after the first of them), and at least every poll (retries come due by
// the clock). When ctx ends, attempts in flight are cut and recorded as
// such, due again at once: another deliverer (or this one, restarted)
// sends them with the same webhook-id. Every PruneEvery it removes the
// finished deliveries older than Retention.
func (d *Deliverer) Run(ctx context.Context, poll time.Duration) error {
	d.wakeOnce.Do(d.initWake)
	if d.Retention > 0 {
		go d.prune(ctx)
	}
	workers := max(d.Batch, 1)
	refill := max(workers/8, 1)
	free := make(chan struct{}, workers)
	for range workers {
		free <- struct{}{}
	}
	ended := make(chan struct{}, 1)
	// held counts the deliveries each endpoint has in this deliverer's
	// workers, for the bound.
	var (
		heldMu sync.Mutex
		held   = map[string]int{}
	)
	bound := func() Bound {
		heldMu.Lock()
		defer heldMu.Unlock()
		return Bound{PerEndpoint: d.PerEndpoint, Held: maps.Clone(held)}
	}
	var wg sync.WaitGroup
	// Last, the records of the attempts that ended are written.
	defer d.records.wait()
	defer wg.Wait()
	for {
		n := len(free)
		again := false // claim again at once
		if n > 0 {
			due, err := d.Store.Claim(ctx, d.now(), n, bound(), d.lease())
			if ctx.Err() != nil {
				return nil
			}
			if err != nil && d.Logger != nil {
				d.Logger.WarnContext(ctx, "webhooks: claiming deliveries failed", "err", err)
			}
			heldMu.Lock()
			for _, del := range due {
				held[del.EndpointID]++
			}
			heldMu.Unlock()
			for _, del := range due {
				<-free
				wg.Go(func() {
					defer func() {
						heldMu.Lock()
						if held[del.EndpointID]--; held[del.EndpointID] <= 0 {
							delete(held, del.EndpointID)
						}
						heldMu.Unlock()
						free <- struct{}{}
						select {
						case ended <- struct{}{}:
						default:
						}
					}()
					if err := d.attempt(ctx, del, false); err != nil && ctx.Err() == nil && d.Logger != nil {
						d.Logger.ErrorContext(ctx, "webhook attempt not recorded", "delivery", del.ID, "err", err)
					}
				})
			}
			// Every free worker got one: more may be due.
			again = len(due) > 0 && len(due) == n
			// A claim that filled an endpoint's bound may have come back
			// short because that endpoint's backlog, due first, filled the
			// window of candidates the store reads (PostgreSQL's does):
			// the next claim leaves it out and reaches the others' due
			// deliveries, which would otherwise wait for the next wake-up
			// or poll.
			if !again && d.PerEndpoint > 0 {
				b := bound()
				again = slices.ContainsFunc(due, func(del Due) bool { return b.Allows(del.EndpointID) == 0 })
			}
		}
		if again {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		case <-ended:
			if len(free) < refill {
				select {
				case <-ctx.Done():
					return nil
				case <-d.wake:
				case <-time.After(claimGap):
				}
			}
		case <-time.After(poll):
		}
	}
}

// prune removes the finished deliveries past the retention, now and every
// PruneEvery until ctx ends.
func (d *Deliverer) prune(ctx context.Context) {
	for {
		n, err := d.Store.Prune(ctx, d.now().Add(-d.Retention))
		if err != nil && ctx.Err() == nil && d.Logger != nil {
			d.Logger.WarnContext(ctx, "webhooks: pruning the delivery log failed", "err", err)
		} else if n > 0 && d.Logger != nil {
			d.Logger.InfoContext(ctx, "webhooks: pruned the delivery log", "deliveries", n, "retention", d.Retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(PruneEvery):
		}
	}
}
