package app

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// A run goes through four steps, each in its own file: admit (here: the
// request is checked and nothing is reserved yet), reserve (reserve.go:
// the run is recorded as pending and its cost taken, or an earlier run is
// replayed), execute (here: the handler does the work, outside any
// transaction) and finish (outcome.go: the outcome, the refund and the
// completion event in one transaction; then the records, records.go).
// Recovery (recovery.go) ends what a stopped process left between them.

// Run runs the action body asks for, for a client of the agency. The run
// is recorded and its cost reserved before any provider is called; it is
// spent if the run succeeds and released if it fails, in the transaction
// that records the outcome and enqueues the completion event. The records
// are written to the data service after that commit (and again by
// recovery, should this process stop first).
func (a *Actions) Run(ctx context.Context, agencyID string, body map[string]any, idempotencyKey string) (Outcome, error) {
	req, client, err := a.admit(ctx, agencyID, body, idempotencyKey)
	if err != nil {
		return Outcome{}, err
	}
	run := a.newRun(agencyID, client, req.Action, body, idempotencyKey)
	replay, bal, err := a.reserve(ctx, run, req.Action, requestFields(body))
	if err != nil {
		return Outcome{Balance: bal}, err
	}
	if replay != nil {
		return Outcome{Run: *replay, Balance: bal, Replayed: true}, nil
	}
	// From here until its outcome is recorded, this process renews the
	// run's lease (leases.go); finish lets it go.
	a.hold(run)
	// The work goes on if the caller goes away: its cost is reserved and
	// its outcome will be recorded either way.
	work := context.WithoutCancel(ctx)
	// The meter adds up what the providers charge for this run's calls,
	// failed ones included: the agency reconciles its credits with it.
	meter := new(provider.Meter)
	res, runErr := a.execute(provider.WithMeter(work, meter), req, client, run)
	run.ProviderCost, run.Cached = usage(meter.Usage())
	return a.finish(work, run, req.Action, res, runErr)
}

// admit checks a request in the order a caller fixes it: the body against
// the action's declaration (and a value only a provider can judge, such as
// a location, against that provider), the Idempotency-Key header, then the
// client's link to the agency, asked of the CRM now. It reserves and
// writes nothing.
func (a *Actions) admit(ctx context.Context, agencyID string, body map[string]any, idempotencyKey string) (catalog.Request, action.Client, error) {
	req, err := catalog.ParseRequest(body, a.guard)
	if err != nil {
		return catalog.Request{}, action.Client{}, err
	}
	if err := catalog.CheckKnown(ctx, req, a.providers); err != nil {
		return catalog.Request{}, action.Client{}, err
	}
	if idempotencyKey != "" {
		if err := checkIdempotencyKey(idempotencyKey); err != nil {
			return catalog.Request{}, action.Client{}, err
		}
	}
	client, err := a.linkedClient(ctx, agencyID, req.ClientID)
	if err != nil {
		return catalog.Request{}, action.Client{}, err
	}
	return req, client, nil
}

// newRun is an admitted request as a pending run, started now, with its
// lease and, when the caller sent one, its Idempotency-Key and the hash of
// its body.
func (a *Actions) newRun(agencyID string, client action.Client, act *action.Action, body map[string]any, idempotencyKey string) Run {
	now := a.clock.Now()
	run := Run{
		ID: store.NewID(), AgencyID: agencyID, ClientID: client.ID, Action: act.Name,
		Status: StatusPending, Cost: act.Cost, CreatedAt: now, StartedAt: now, LeaseUntil: now.Add(a.cfg.Lease),
	}
	if idempotencyKey != "" {
		run.IdempotencyKey, run.RequestHash = idempotencyKey, requestHash(body)
	}
	return run
}

// execute runs the handler under the action timeout; a panic is a failed
// run, not a crashed process.
func (a *Actions) execute(ctx context.Context, req catalog.Request, client action.Client, run Run) (res action.Result, err error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ActionTimeout)
	defer cancel()
	began := a.clock.Now()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("action %s panicked: %v\n%s", req.Action.Name, r, debug.Stack())
		}
		if err == nil {
			a.timings.observe(req.Action.Name, a.clock.Now().Sub(began))
		}
	}()
	return req.Action.Run(ctx, &action.Exec{RunID: run.ID, AgencyID: run.AgencyID, Client: client, Input: req.Input, Now: run.StartedAt, P: a.providers,
		Records: a.records, Datasets: a.records, Runs: clientRuns{a.store}, Branding: a.branding, Logos: a.logos, Shares: a.shares})
}

// usage is what a run records of its providers' usage: what they charged,
// and whether its data came from the cache (an answer was taken from it and
// nothing was paid for).
func usage(u provider.Usage) (cost provider.USD, cached bool) {
	return u.Cost, u.Cached > 0 && u.Cost == 0
}
