package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// outcome turns a handler's result into the run's status, code and data.
func (a *Actions) outcome(run *Run, act *action.Action, res action.Result, runErr error) {
	run.FinishedAt = a.clock.Now()
	var pe *provider.Error
	switch {
	case runErr == nil:
		run.Status, run.StatusCode, run.Data, run.Writes = StatusSuccess, res.StatusCode, res.Data, res.Writes
		if run.StatusCode == 0 {
			run.StatusCode = 200
		}
		return
	case errors.As(runErr, &pe):
		run.StatusCode = pe.StatusCode
		run.Data = map[string]any{"error": pe.Error()}
	case errors.Is(runErr, context.DeadlineExceeded):
		run.StatusCode = 504
		run.Data = map[string]any{"error": fmt.Sprintf("%s did not finish within %s; nothing was charged", act.Name, a.cfg.ActionTimeout)}
	default:
		run.StatusCode = 500
		run.Data = map[string]any{"error": fmt.Sprintf("%s failed inside Atrium; nothing was charged. Quote run %s if it persists", act.Name, run.ID)}
	}
	if run.StatusCode < 400 {
		run.StatusCode = 502
	}
	run.Status, run.Writes = StatusError, nil
	a.logger.WarnContext(context.Background(), "action failed", "run", run.ID, "action", act.Name, "status_code", run.StatusCode, "error", apperr.Cause(runErr))
}

// finish records how the run ended: in one transaction its status and
// data, its cost spent or released, and its completion event. Then it
// writes the run's records.
//
// An outcome the store cannot keep (ErrUnstorable: a U+0000 in a model's
// answer, which PostgreSQL's jsonb refuses) would fail the same way on
// every attempt, and a run left pending holds its credits until recovery
// calls it interrupted, which is not what happened. Such a run ends at once
// as an error that says why, its cost released, without the data that
// could not be kept.
//
// An outcome that could not be written because the database was
// unavailable is kept in this process and written as soon as the database
// answers again (keepOutcome, outcomeretry.go), as an error that says so,
// its cost released; the caller is answered 503 at once. Either way this
// process stops renewing the run's lease once its outcome is recorded or
// given up (a failure recovery then ends, once the lease is over).
func (a *Actions) finish(ctx context.Context, run Run, act *action.Action, res action.Result, runErr error) (Outcome, error) {
	a.outcome(&run, act, res, runErr)
	out, err := a.record(ctx, run, act)
	if errors.Is(err, ErrUnstorable) {
		a.logger.WarnContext(ctx, "an action's outcome could not be stored; the run ends as an error", "run", run.ID, "action", act.Name,
			"status", run.Status, "error", apperr.Cause(err))
		run.Status, run.StatusCode, run.Writes = StatusError, 500, nil
		run.Data = map[string]any{"error": fmt.Sprintf("%s finished, but its result holds a value that cannot be stored (such as text with a U+0000 character), so it was not recorded; nothing was charged. Quote run %s if it persists", act.Name, run.ID)}
		out, err = a.record(ctx, run, act)
	}
	if apperr.KindOf(err) == apperr.KindUnavailable {
		return out, a.keepOutcome(ctx, run, act, err)
	}
	a.letGo(run.ID)
	return out, err
}

// record stores the outcome of run (with its action_runs row), its refund
// if it failed and its completion event in one transaction, then writes
// its records.
func (a *Actions) record(ctx context.Context, run Run, act *action.Action) (Outcome, error) {
	run.Writes = append(run.Writes, runRow(run, act))
	var bal Balance
	event, err := completed(ctx, run)
	if err != nil {
		return Outcome{}, fmt.Errorf("the completion event of run %s: %w: %w", run.ID, ErrUnstorable, err)
	}
	var refund action.Cost
	if run.Status != StatusSuccess {
		refund = run.Cost
	}
	ready, isReport, err := reportReady(run)
	if err != nil {
		return Outcome{}, fmt.Errorf("the report event of run %s: %w: %w", run.ID, ErrUnstorable, err)
	}
	err = a.store.InTx(ctx, func(tx Tx) error {
		ok, b, err := tx.FinishRun(ctx, run, refund, event)
		if err != nil {
			return err
		}
		if !ok {
			return errInterrupted
		}
		bal = b
		if isReport {
			if err := tx.Enqueue(ctx, ready); err != nil {
				return err
			}
		}
		return a.scheduleRunEnded(ctx, tx, run)
	})
	if err == nil || errors.Is(err, errInterrupted) {
		// The run's outcome is recorded (this one or another): its lease
		// is no longer this process's to renew.
		a.letGo(run.ID)
	}
	if errors.Is(err, errInterrupted) {
		// Recovery declared the run abandoned (it outlived its lease) and
		// released its cost, or its caller canceled it: its answer is the
		// recorded one.
		recorded, rerr := a.store.Run(ctx, run.ID)
		if rerr != nil {
			return Outcome{}, rerr
		}
		b, berr := a.store.Balance(ctx, run.AgencyID)
		return Outcome{Run: recorded, Balance: b}, berr
	}
	if err != nil {
		return Outcome{}, err
	}
	a.metrics.finished(ctx, run)
	a.queue.ended()
	a.apply(ctx, run)
	return Outcome{Run: run, Balance: bal}, nil
}

var errInterrupted = errors.New("the run has finished already")

// runRow is the finished run as a row of the action_runs dataset.
func runRow(run Run, act *action.Action) action.RecordWrite {
	return stateRow(run, act, run.FinishedAt)
}

// stateRow is the run as a row of the action_runs dataset in the state it
// entered at at, which is the row's updated_at: the data service keeps the
// row with the latest, whatever order the writes of one run's states
// arrive in. Its status is the run resource's state, and it shows
// started_at and finished_at as the run resource does.
func stateRow(run Run, act *action.Action, at time.Time) action.RecordWrite {
	d := datasets.ActionRuns
	row := map[string]any{
		d.ID: run.ID, d.Action: run.Action, d.Status: State(run), d.StatusCode: float64(run.StatusCode),
		d.AgencyID: run.AgencyID, d.RecordResource: act.Writes,
		d.CreatedAt: run.CreatedAt.Format(time.RFC3339Nano), d.UpdatedAt: at.Format(time.RFC3339Nano),
		d.CreditsAI: 0.0, d.CreditsData: 0.0, d.ProviderCost: run.ProviderCost.Float(), d.Cached: run.Cached,
	}
	if Started(run) {
		row[d.StartedAt] = run.StartedAt.Format(time.RFC3339Nano)
	}
	if !run.Finished() {
		row[d.StatusCode] = float64(http.StatusAccepted)
		return action.RecordWrite{Resource: d.Resource, Mode: action.Upsert, Rows: []map[string]any{row}}
	}
	row[d.Data], row[d.FinishedAt] = shortened(run.Data), run.FinishedAt.Format(time.RFC3339Nano)
	if run.Status == StatusSuccess {
		row[d.CreditsAI], row[d.CreditsData] = float64(run.Cost.AI), float64(run.Cost.Data)
		if id, ok := run.Data["id"].(string); ok {
			row[d.RecordID] = id
		}
	} else if msg, ok := run.Data["error"].(string); ok {
		row[d.Error] = msg
	}
	return action.RecordWrite{Resource: d.Resource, Mode: action.Upsert, Rows: []map[string]any{row}}
}

// Started reports whether run has started: a synchronous run at once, an
// asynchronous one once a worker has claimed it (one canceled while queued
// never started).
func Started(run Run) bool { return !run.Async || run.Attempts > 0 }

// runDataMax is the longest string a run's row keeps of its data; longer
// ones (an article's body) are in the record itself.
const runDataMax = 500

// shortened is data with its long strings cut to runDataMax characters,
// marked with the length they had.
func shortened(data map[string]any) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		if s, ok := v.(string); ok && utf8.RuneCountInString(s) > runDataMax {
			v = string([]rune(s)[:runDataMax]) + fmt.Sprintf("… (%d characters; the record has them all)", utf8.RuneCountInString(s))
		}
		out[k] = v
	}
	return out
}
