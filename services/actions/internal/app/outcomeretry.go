package app

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// An outcome that could not be written because the database was
// unavailable (PostgreSQL restarting, a failover, a cut connection). The
// run is pending in the database with its cost reserved, and only this
// process knows how it ended. Left alone, it would hold its credits and
// its Idempotency-Key until its lease ended and then be recorded by
// recovery as "the service stopped", which is not what happened. So this
// process keeps it, renews its lease (it still holds it), and writes it as
// soon as the database answers again, with backoff.
//
// What it writes is an error, its cost released, that says the database
// was unavailable, whatever the run's own outcome was: the synchronous
// caller was answered 503 when the write failed, and a client retries a
// 503 (http-api.md's advice). Had the run been recorded as a success after
// that answer, a client retrying without an Idempotency-Key would be
// charged twice and get two records; recorded as an error, it pays once,
// for the run that answered. The work the providers did is lost (an
// article is generated again), which is the cheaper mistake.

// Backoff of the outcome's writes: the first retry after
// outcomeRetryFirst, doubling up to outcomeRetryMax (a PostgreSQL restart
// takes a few seconds; the lease, renewed meanwhile, is not at stake).
var (
	outcomeRetryFirst = 100 * time.Millisecond
	outcomeRetryMax   = 2 * time.Second
)

// keepOutcome hands run, whose outcome could not be written (cause), to
// a goroutine that writes it as an error once the database answers, and
// returns what the caller is told now: 503, the run to be released.
func (a *Actions) keepOutcome(ctx context.Context, run Run, act *action.Action, cause error) error {
	a.logger.WarnContext(ctx, "the database was unavailable when an action run finished; its outcome is kept and written as an error, nothing charged, once the database answers",
		"run", run.ID, "action", act.Name, "status", run.Status, "error", apperr.Cause(cause))
	failed := run
	failed.Status, failed.StatusCode, failed.Writes = StatusError, 503, nil
	failed.Data = map[string]any{"error": act.Name + ": the database was unavailable when the run finished, so its result could not be recorded; nothing was charged. Run it again"}
	a.kept.Add(1)
	go a.writeKept(context.WithoutCancel(ctx), failed, act)
	return apperr.Unavailable(cause, "%s finished, but the database was unavailable, so its outcome could not be recorded: the run will be recorded as an error with nothing charged as soon as the database answers again. Retry with the same Idempotency-Key for its final answer, or without one to run it again (nothing is charged twice)", act.Name)
}

// writeKept writes a kept outcome until the database takes it (or the run
// turns out to have ended otherwise: recovery or a cancel got there
// first, or the write had committed though its answer was lost), then lets
// the run's lease go. It gives up only with the process: recovery then
// ends the run once its lease is over.
func (a *Actions) writeKept(ctx context.Context, run Run, act *action.Action) {
	defer a.kept.Add(-1)
	defer a.letGo(run.ID)
	pause := outcomeRetryFirst
	for {
		timer := time.NewTimer(pause)
		<-timer.C
		_, err := a.record(ctx, run, act)
		if err == nil {
			// Written, or (record then answers the recorded run) ended
			// otherwise: either way the run is released.
			a.queue.ended()
			return
		}
		if apperr.KindOf(err) != apperr.KindUnavailable {
			a.logger.WarnContext(ctx, "writing a kept action outcome failed; recovery ends the run once its lease is over", "run", run.ID, "error", apperr.Cause(err))
			return
		}
		pause = min(2*pause, outcomeRetryMax)
	}
}
