package runner

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/rpc"
)

// healthInterval is how often a serving service checks what it depends
// on: a readiness probe sees a failure within it. A service that is not
// serving checks every recheckInterval, so that it is back as soon as what
// it waits for is (another service starting after it, say).
const (
	healthInterval  = 5 * time.Second
	recheckInterval = time.Second
)

// healthTimeout bounds each check.
const healthTimeout = 2 * time.Second

// health is the state the runtime reports to probes.
type health struct {
	mu       sync.Mutex
	cause    string // "" when serving
	draining bool
}

// watchHealth checks the service's dependencies at once and then
// periodically until ctx ends, and reports the result.
func (r *Runtime) watchHealth(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cause := r.checkHealth(ctx)
		if ctx.Err() != nil {
			return
		}
		r.report(cause)
		if cause == "" {
			t.Reset(healthInterval)
		} else {
			t.Reset(recheckInterval)
		}
	}
}

// checkHealth returns why the service cannot serve, or "". The database
// must answer, and each upstream service must answer and accept the
// service's principal. NATS is not checked: the outbox keeps events while
// it is away and the relay publishes them on its return, so the service
// still serves every call correctly.
func (r *Runtime) checkHealth(ctx context.Context) string {
	var (
		mu       sync.Mutex
		problems = make([]string, 1+len(r.upstreams))
		wg       sync.WaitGroup
	)
	if r.Pool != nil {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, healthTimeout)
			defer cancel()
			if err := r.Pool.Ping(cctx); err != nil {
				mu.Lock()
				problems[0] = "the PostgreSQL database does not answer: " + err.Error()
				mu.Unlock()
			}
		})
	}
	for i, u := range r.upstreams {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, healthTimeout)
			defer cancel()
			if err := u.Check(cctx, r.name+" service", false); err != nil {
				mu.Lock()
				problems[i+1] = err.Error()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	var out []string
	for _, p := range problems {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// report publishes cause to probes and logs each change. Once draining,
// the service reports that whatever the checks say.
func (r *Runtime) report(cause string) {
	h := &r.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining || cause == h.cause {
		return
	}
	prev := h.cause
	h.cause = cause
	r.GRPC.SetHealth(cause)
	switch {
	case cause != "":
		r.logger.Error("reporting NOT_SERVING", "cause", cause)
	case prev != rpc.CauseStarting:
		r.logger.Info("reporting SERVING again", "was", prev)
	}
}

// NotServing returns why the service reports NOT_SERVING, or "" while it
// reports SERVING: what an HTTP readiness endpoint beside the gRPC health
// service answers.
func (r *Runtime) NotServing() string {
	r.health.mu.Lock()
	defer r.health.mu.Unlock()
	return r.health.cause
}

// drain reports NOT_SERVING for good: the service is stopping.
func (r *Runtime) drain() {
	h := &r.health
	h.mu.Lock()
	defer h.mu.Unlock()
	h.draining, h.cause = true, rpc.CauseShuttingDown
	r.GRPC.SetHealth(rpc.CauseShuttingDown)
}
