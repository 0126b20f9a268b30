package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/metric"

	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/webhooks/internal/retry"
	"github.com/atrium-hq/atrium/services/webhooks/internal/signing"
)

// Deliverer sends due deliveries: it claims a batch, makes one attempt of
// each concurrently (so that a slow endpoint holds only its own
// deliveries), records each attempt and schedules the next.
type Deliverer struct {
	Store Store
	// Client sends the attempts; NewClient makes the one a deployment
	// uses (no redirects, the guard on every connection).
	Client *http.Client
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

	wakeOnce    sync.Once
	wake        chan struct{}
	metricsOnce sync.Once
	metrics     *attemptMetrics
}

// NewClient is the HTTP client of attempts: it connects only where guard
// allows (checked on the resolved address of every connection), follows no
// redirect (a 3xx is the attempt's answer, a failure), and keeps
// connections to endpoints alive between attempts.
func NewClient(guard *netguard.Guard) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = guard.DialContext
	t.Proxy = nil // a proxy would connect for us, past the guard
	t.MaxIdleConnsPerHost = 16
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}

// lease is how long a claim holds a delivery: its attempt, and the time to
// record it.
func (d *Deliverer) lease() time.Duration { return d.Timeout + 30*time.Second }

// RunOnce claims due deliveries and attempts each once; it returns how
// many it attempted.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	due, err := d.Store.Claim(ctx, d.now(), max(d.Batch, 1), d.PerEndpoint, d.lease())
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, del := range due {
		wg.Go(func() {
			if err := d.attempt(ctx, del); err != nil && d.Logger != nil {
				d.Logger.ErrorContext(ctx, "webhook attempt not recorded", "delivery", del.ID, "err", err)
			}
		})
	}
	wg.Wait()
	return len(due), nil
}

// attempt makes one attempt of del and records it.
func (d *Deliverer) attempt(ctx context.Context, del Delivery) error {
	ep, err := d.Store.Endpoint(ctx, del.Tenant, del.EndpointID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since: its deliveries went with it
	}
	if err != nil {
		return err
	}
	if !ep.Enabled {
		return d.Store.RecordAttempt(ctx, del.ID, Attempt{At: d.now(), Error: "not sent: the webhook is disabled"}, Failed, time.Time{})
	}
	a, outcome, wait := d.send(ctx, ep, del)
	d.metricsOnce.Do(func() { d.metrics = newAttemptMetrics(d.Meters) })
	d.metrics.record(ctx, a, outcome)
	n := len(del.Attempts) + 1
	status, next := Failed, time.Time{}
	switch outcome {
	case retry.Succeeded:
		status = Succeeded
	case retry.Failed:
		if at, ok := d.Schedule.After(n, a.At, wait); ok {
			status, next = Pending, at
		}
	}
	if err := d.Store.RecordAttempt(ctx, del.ID, a, status, next); err != nil {
		return err
	}
	return d.noteHealth(ctx, ep, outcome, a.At)
}

// send makes the request of one attempt.
func (d *Deliverer) send(ctx context.Context, ep Endpoint, del Delivery) (Attempt, retry.Outcome, time.Duration) {
	at := d.now()
	a := Attempt{At: at}
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(del.Body))
	if err != nil {
		a.Error = "the webhook's URL cannot be requested: " + err.Error()
		return a, retry.Failed, 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Atrium-Webhooks/1")
	signing.SetHeaders(req.Header, del.EventID, at, del.Body, ep.Secrets(at)...)
	start := time.Now()
	resp, err := d.Client.Do(req)
	a.Duration = time.Since(start)
	if err != nil {
		a.Error = attemptError(err, d.Timeout)
		return a, retry.Failed, 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	a.StatusCode, a.ResponseBody = resp.StatusCode, strings.ToValidUTF8(string(body), string(utf8.RuneError))
	outcome, wait := retry.Classify(resp.StatusCode, resp.Header, at)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		a.Error = "redirects are not followed: register the URL it points to (" + resp.Header.Get("Location") + ")"
	}
	return a, outcome, wait
}

// attemptError says why an attempt got no answer, without Go's wrapping.
func attemptError(err error, timeout time.Duration) string {
	if r, ok := netguard.IsRefused(err); ok {
		return r.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within " + timeout.String()
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		err = ue.Unwrap()
	}
	return err.Error()
}

// noteHealth keeps the endpoint's failure run: a success ends it; a 410,
// or failures for longer than DisableAfter, disable the endpoint.
func (d *Deliverer) noteHealth(ctx context.Context, ep Endpoint, outcome retry.Outcome, at time.Time) error {
	if outcome == retry.Succeeded && ep.FailingSince.IsZero() {
		return nil
	}
	return d.Store.InTx(ctx, func(tx EndpointTx) error {
		e, err := tx.Endpoint(ctx, ep.Tenant, ep.ID)
		if err != nil {
			return nil // deleted meanwhile
		}
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
		e.UpdatedAt = at
		return tx.UpdateEndpoint(ctx, e)
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

// Run delivers until ctx ends. Batch workers attempt deliveries; whenever
// some are free it claims as many due deliveries (at most PerEndpoint of
// one endpoint), so that an attempt waiting on a slow endpoint holds only
// its worker. It claims again when an attempt ends, when Wake is called,
// and at least every poll (retries come due by the clock). When ctx ends,
// attempts in flight are cut; their leases run out and another deliverer
// (or this one, restarted) tries them again with the same webhook-id.
func (d *Deliverer) Run(ctx context.Context, poll time.Duration) error {
	d.wakeOnce.Do(d.initWake)
	workers := max(d.Batch, 1)
	free := make(chan struct{}, workers)
	for range workers {
		free <- struct{}{}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		n := len(free)
		claimed := 0
		if n > 0 {
			due, err := d.Store.Claim(ctx, d.now(), n, d.PerEndpoint, d.lease())
			if ctx.Err() != nil {
				return nil
			}
			if err != nil && d.Logger != nil {
				d.Logger.WarnContext(ctx, "webhooks: claiming deliveries failed", "err", err)
			}
			for _, del := range due {
				<-free
				wg.Go(func() {
					defer func() {
						free <- struct{}{}
						d.Wake()
					}()
					if err := d.attempt(ctx, del); err != nil && ctx.Err() == nil && d.Logger != nil {
						d.Logger.ErrorContext(ctx, "webhook attempt not recorded", "delivery", del.ID, "err", err)
					}
				})
			}
			claimed = len(due)
		}
		if claimed > 0 && claimed == n {
			continue // every free worker got one: more may be due
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		case <-time.After(poll):
		}
	}
}
