package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
)

// DependencyCheckInterval is how often the gateway checks the services it
// calls while every one answers; while one does not, it checks every
// fifth of that, so that its return shows within a second.
const DependencyCheckInterval = 5 * time.Second

// checkTimeout bounds each service's health check.
const checkTimeout = 2 * time.Second

// checkPrincipal is who the gateway says it is when it checks a service:
// the check then also proves that the service verifies its signatures.
var checkPrincipal = principal.Principal{Kind: principal.KindService, Subject: "gateway"}

// Serving is a dependency's state when the gateway can use it.
const Serving = "SERVING"

// notChecked is a dependency's state before its first check.
const notChecked = "not checked yet"

// dependencies is the gateway's last view of the services it calls: what
// /healthz shows and atrium.gateway.dependency.up measures. It is not
// readiness: a gateway missing one service still serves every route of
// the others, and answers the missing one's routes 503 with Retry-After.
type dependencies struct {
	mu    sync.Mutex
	state map[string]string // service name -> Serving or the cause
}

// Dependencies checks every service now, all at once, each for up to
// checkTimeout: its state is Serving, or why the gateway cannot use it
// (unreachable, refusing the gateway's principal because the two were
// given different internal secrets, or NOT_SERVING for a reason other
// than its own shutdown, such as its database). err joins the causes.
// The check goes to one replica of each service; a replica that is down
// is left out of the rotation by the connection itself (platform/rpc).
// The result becomes the gateway's view (/healthz, the metric), and each
// change of a service's state is logged.
func (g *Gateway) Dependencies(ctx context.Context) (map[string]string, error) {
	state, err := g.checkDependencies(ctx)
	if ctx.Err() != nil {
		return state, err
	}
	g.deps.mu.Lock()
	defer g.deps.mu.Unlock()
	prev := g.deps.state
	g.deps.state = state
	for name, s := range state {
		switch was := prev[name]; {
		case s == was:
		case s != Serving:
			g.cfg.Logger.Error("a service is not usable: its routes answer 503", "service", name, "cause", s)
		case was != notChecked:
			g.cfg.Logger.Info("a service is usable again", "service", name, "was", was)
		}
	}
	return maps.Clone(state), err
}

func (g *Gateway) checkDependencies(ctx context.Context) (map[string]string, error) {
	ctx = g.signer.OutgoingContext(ctx, checkPrincipal)
	problems := make([]error, len(g.conns))
	var wg sync.WaitGroup
	for i, c := range g.conns {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			problems[i] = rpc.Upstream{Name: c.name, Conn: c.conn}.Check(cctx, "gateway", true)
		})
	}
	wg.Wait()
	state := map[string]string{}
	for i, c := range g.conns {
		state[c.name] = Serving
		if problems[i] != nil {
			state[c.name] = problems[i].Error()
		}
	}
	return state, errors.Join(problems...)
}

// watchDependencies checks the services at once, then every interval
// (every fifth of it while one is not usable) until ctx ends, and logs
// each change of a service's state.
func (g *Gateway) watchDependencies(ctx context.Context, interval time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, err := g.Dependencies(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			t.Reset(interval / 5)
		} else {
			t.Reset(interval)
		}
	}
}

// dependencyState is the last view of the services, and NATS's.
func (g *Gateway) dependencyState() map[string]string {
	g.deps.mu.Lock()
	state := maps.Clone(g.deps.state)
	g.deps.mu.Unlock()
	if g.nats != nil {
		state["nats"] = g.nats.Status().String()
	}
	return state
}

// observeDependencies registers atrium.gateway.dependency.up: 1 for each
// service the gateway can use and for a connected NATS, 0 otherwise.
func (g *Gateway) observeDependencies(mp metric.MeterProvider) error {
	m := mp.Meter("github.com/atrium-hq/atrium/gateway")
	up, err := m.Int64ObservableGauge("atrium.gateway.dependency.up",
		metric.WithDescription("1 while the gateway can use the service (or NATS), 0 while its routes answer 503"))
	if err != nil {
		return fmt.Errorf("dependency metric: %w", err)
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for name, s := range g.dependencyState() {
			v := int64(0)
			if s == Serving || (name == "nats" && s == "CONNECTED") {
				v = 1
			}
			o.ObserveInt64(up, v, metric.WithAttributes(attribute.String("service", name)))
		}
		return nil
	}, up)
	if err != nil {
		return fmt.Errorf("dependency metric: %w", err)
	}
	g.depsMetric = reg
	return nil
}
