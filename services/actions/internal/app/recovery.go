package app

import (
	"context"
	"errors"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
)

// Recover finishes what a stopped process left: pending asynchronous runs
// whose lease has ended are queued again (once: maxAttempts); other
// pending runs whose lease has ended are recorded as failed (status_code 500) and their cost
// released, with their completion event (and, for a schedule's run, counted
// as its failure); finished runs whose records were
// not written are written. It returns how many runs of each it handled.
// maxAttempts is how many times a queued run is claimed at most: a run
// whose worker died once is run again, one that killed two is not.
const maxAttempts = 2

func (a *Actions) Recover(ctx context.Context) (abandoned, written int, err error) {
	if err := a.flushMarks(ctx); err != nil {
		return 0, 0, err
	}
	now := a.clock.Now()
	var ended, requeued []Run
	err = a.store.InTx(ctx, func(tx Tx) error {
		ended, requeued = ended[:0], requeued[:0]
		runs, err := tx.ExpiredRuns(ctx, now, 100)
		if err != nil {
			return err
		}
		for _, run := range runs {
			if run.Async && run.Attempts < maxAttempts {
				// Its worker stopped before it finished and nothing was
				// recorded: another worker runs it again, its cost still
				// reserved.
				if _, err := tx.RequeueRun(ctx, run.ID, run.Attempts); err != nil {
					return err
				}
				requeued = append(requeued, run)
				continue
			}
			act, ok := catalog.Lookup(run.Action)
			if !ok {
				act = &action.Action{Name: run.Action}
			}
			run.Status, run.StatusCode, run.FinishedAt = StatusError, 500, now
			run.Data = map[string]any{"error": run.Action + " was interrupted (the service stopped before it finished); nothing was charged"}
			run.Writes = []action.RecordWrite{runRow(run, act)}
			event, err := completed(ctx, run)
			if err != nil {
				return err
			}
			if ok, _, err := tx.FinishRun(ctx, run, run.Cost, event); err != nil || !ok {
				return errors.Join(err, errors.New("an expired run changed under its lock"))
			}
			// A scheduled run ended here failed like any other: it counts
			// towards its schedule's pause_after_failures, or a schedule
			// whose runs keep killing their worker would never pause.
			if err := a.scheduleRunEnded(ctx, tx, run); err != nil {
				return err
			}
			ended = append(ended, run)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	for _, run := range requeued {
		a.logger.WarnContext(ctx, "queued an abandoned asynchronous run again; its cost stays reserved", "run", run.ID, "action", run.Action, "attempts", run.Attempts)
		run.Status = StatusQueued
		a.noteState(run, now)
	}
	if len(requeued) > 0 {
		select {
		case a.queue.wake <- struct{}{}:
		default:
		}
	}
	for _, run := range ended {
		a.metrics.finished(ctx, run)
		a.logger.WarnContext(ctx, "recovered an abandoned action run; its cost is released", "run", run.ID, "action", run.Action, "started_at", run.StartedAt)
	}
	// Writes of runs finished a moment ago may still be on their way from
	// the request that finished them.
	runs, err := a.store.UnappliedRuns(ctx, now.Add(-5*time.Second), 100)
	if err != nil {
		return len(ended), 0, err
	}
	for _, run := range runs {
		if err := a.records.WriteRecords(ctx, run.ClientID, run.Writes); err != nil {
			return len(ended), written, apperr.Unavailable(err, "writing the records of run %s", run.ID)
		}
		if err := a.store.MarkApplied(ctx, []string{run.ID}); err != nil {
			return len(ended), written, err
		}
		written++
	}
	return len(ended), written, nil
}
