package app

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
)

// runMetrics count what the actions do and cost, for operators:
//
//	atrium.actions.runs{action, status=success|error}        finished runs
//	atrium.actions.credits.spent{action, kind=ai|data}       credits successful runs spent
//	atrium.actions.provider.cost{action}                     US dollars the providers charged (failed runs too)
//
// Neither names an agency or a client: spending per tenant is in the
// action_runs table, not in metrics. The attribute sets of every action of
// the catalog are built once.
type runMetrics struct {
	meter       metric.Meter
	runs, spent metric.Int64Counter
	cost        metric.Float64Counter
	byAction    map[string]*actionSets
	// busy counts this process's workers executing a run; stateSkipped
	// the action_runs rows of a queued or started run not written because
	// the record writers were behind (noteState).
	busy         metric.Int64UpDownCounter
	stateSkipped metric.Int64Counter
}

type actionSets struct {
	success, failure, ai, data, action []metric.AddOption
}

func newRunMetrics(mp metric.MeterProvider) *runMetrics {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter("github.com/atrium-hq/atrium/services/actions")
	// The errors are only for invalid names; the counters are then no-ops.
	runs, _ := m.Int64Counter("atrium.actions.runs", metric.WithUnit("{run}"),
		metric.WithDescription("Finished action runs, by action and status (success, or error: a provider failed, the run timed out or was interrupted)."))
	spent, _ := m.Int64Counter("atrium.actions.credits.spent", metric.WithUnit("{credit}"),
		metric.WithDescription("Credits spent by successful action runs, by action and kind (ai, data)."))
	cost, _ := m.Float64Counter("atrium.actions.provider.cost", metric.WithUnit("{USD}"),
		metric.WithDescription("What the outside providers (DataForSEO) reported charging for action runs' calls, in US dollars, by action; failed runs included."))
	busy, _ := m.Int64UpDownCounter("atrium.actions.workers.busy", metric.WithUnit("{worker}"),
		metric.WithDescription("This process's action workers executing a queued run; --action-workers is the most."))
	stateSkipped, _ := m.Int64Counter("atrium.actions.run_states.skipped", metric.WithUnit("{row}"),
		metric.WithDescription("action_runs rows of a queued or started run not written because the record writers were behind; the run's final row is always written."))
	rm := &runMetrics{meter: m, runs: runs, spent: spent, cost: cost, byAction: map[string]*actionSets{}, busy: busy, stateSkipped: stateSkipped}
	for _, act := range catalog.All() {
		rm.byAction[act.Name] = newActionSets(act.Name)
	}
	return rm
}

// observeQueue reports the depth of the deployment's queue, read from the
// store at each collection: every replica reports the same figure (take
// the maximum across replicas, not the sum).
func (m *runMetrics) observeQueue(st Store) {
	_, _ = m.meter.Int64ObservableGauge("atrium.actions.queue.depth", metric.WithUnit("{run}"),
		metric.WithDescription("Asynchronous runs queued and not yet started, across every agency and replica of the deployment (read from the store; every replica reports the same value)."),
		metric.WithInt64Callback(func(ctx context.Context, o metric.Int64Observer) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			n, err := st.QueuedTotal(ctx)
			if err != nil {
				return err
			}
			o.Observe(n)
			return nil
		}))
}

func newActionSets(action string) *actionSets {
	set := func(k, v string) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("action", action), attribute.String(k, v)))}
	}
	return &actionSets{success: set("status", StatusSuccess), failure: set("status", StatusError), ai: set("kind", "ai"), data: set("kind", "data"),
		action: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("action", action)))}}
}

// finished counts a run that ended with the status it was recorded with.
func (m *runMetrics) finished(ctx context.Context, run Run) {
	sets, ok := m.byAction[run.Action]
	if !ok {
		// An action no longer in the catalog, ended by recovery.
		sets = newActionSets(run.Action)
	}
	if run.ProviderCost > 0 {
		m.cost.Add(ctx, run.ProviderCost.Float(), sets.action...)
	}
	if run.Status != StatusSuccess {
		m.runs.Add(ctx, 1, sets.failure...)
		return
	}
	m.runs.Add(ctx, 1, sets.success...)
	m.spent.Add(ctx, run.Cost.AI, sets.ai...)
	m.spent.Add(ctx, run.Cost.Data, sets.data...)
}
