package app

import (
	"context"
	"errors"
	"regexp"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/outbox"
)

// SubjectCreditsChanged announces an administrator's change to a balance.
const SubjectCreditsChanged = "atrium.actions.credits.changed"

type creditsChanged struct {
	AgencyID string    `json:"agency_id"`
	Added    Credits   `json:"added"`
	Balance  Credits   `json:"balance"`
	At       time.Time `json:"at"`
}

// agency checks that an agency exists, asking the CRM.
func (a *Actions) agency(ctx context.Context, agencyID string) (string, error) {
	id, err := uuid.Parse(agencyID)
	if err != nil || len(agencyID) != 36 {
		return "", apperr.NotFound("agency %q not found", agencyID)
	}
	ok, err := a.clients.AgencyExists(ctx, id.String())
	if err != nil {
		return "", apperr.Unavailable(err, "cannot check the agency now: the CRM service is unavailable; retry later")
	}
	if !ok {
		return "", apperr.NotFound("agency %q not found", agencyID)
	}
	return id.String(), nil
}

// AddCredits adds credits of each kind to an agency's balance; negative
// amounts remove credits, never below zero.
func (a *Actions) AddCredits(ctx context.Context, agencyID string, ai, data int64) (Balance, error) {
	if ai == 0 && data == 0 {
		return Balance{}, apperr.Invalid("ai and data are both 0: give an amount of AI or data credits to add (negative to remove)")
	}
	id, err := a.agency(ctx, agencyID)
	if err != nil {
		return Balance{}, err
	}
	var bal Balance
	err = a.store.InTx(ctx, func(tx Tx) error {
		cur, err := tx.Balance(ctx, id)
		if err != nil {
			return err
		}
		if cur.AI+ai > MaxBalance || cur.Data+data > MaxBalance {
			return apperr.Invalid("a balance holds at most %d credits of each kind; the agency has %d AI and %d data credits", int64(MaxBalance), cur.AI, cur.Data)
		}
		b, ok, err := tx.AddCredits(ctx, id, Balance{AI: ai, Data: data})
		if err != nil {
			return err
		}
		if !ok {
			return apperr.Conflict("cannot remove more credits than the agency has: it has %d AI and %d data credits", b.AI, b.Data)
		}
		bal = b
		now := a.clock.Now()
		return outbox.Enqueue(ctx, tx, SubjectCreditsChanged, creditsChanged{AgencyID: id, Added: Credits{AI: ai, Data: data}, Balance: Credits{AI: b.AI, Data: b.Data}, At: now}, now)
	})
	return bal, err
}

// Credits returns an agency's balance, for an administrator.
func (a *Actions) Credits(ctx context.Context, agencyID string) (Balance, error) {
	id, err := a.agency(ctx, agencyID)
	if err != nil {
		return Balance{}, err
	}
	return a.store.Balance(ctx, id)
}

// OwnCredits returns the balance of the caller's own agency.
func (a *Actions) OwnCredits(ctx context.Context, agencyID string) (Balance, error) {
	return a.store.Balance(ctx, agencyID)
}

// mediaName is the form of the names actions give generated files: 128
// random bits in hex and an extension. Anything else names nothing.
var mediaName = regexp.MustCompile(`^[0-9a-f]{32}\.(png)$`)

// Media returns a generated file by the name its URL carries.
func (a *Actions) Media(ctx context.Context, name string) (Blob, error) {
	if !mediaName.MatchString(name) {
		return Blob{}, apperr.NotFound("no media named %q", name)
	}
	b, err := a.providers.Blobs.Get(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return Blob{}, apperr.NotFound("no media named %q", name)
	}
	return b, err
}

// Recover finishes what a stopped process left: pending runs whose lease
// has ended are recorded as failed (status_code 500) and their cost
// released, with their completion event; finished runs whose records were
// not written are written. It returns how many runs of each it handled.
func (a *Actions) Recover(ctx context.Context) (abandoned, written int, err error) {
	if err := a.flushMarks(ctx); err != nil {
		return 0, 0, err
	}
	now := a.clock.Now()
	var ended []Run
	err = a.store.InTx(ctx, func(tx Tx) error {
		ended = ended[:0]
		runs, err := tx.ExpiredRuns(ctx, now, 100)
		if err != nil {
			return err
		}
		for _, run := range runs {
			act, ok := LookupAction(run.Action)
			if !ok {
				act = &Action{Name: run.Action}
			}
			run.Status, run.StatusCode, run.FinishedAt = StatusError, 500, now
			run.Data = map[string]any{"error": run.Action + " was interrupted (the service stopped before it finished); nothing was charged"}
			run.Writes = []RecordWrite{runRow(run, act)}
			event, err := completed(ctx, run)
			if err != nil {
				return err
			}
			if ok, _, err := tx.FinishRun(ctx, run, run.Cost, event); err != nil || !ok {
				return errors.Join(err, errors.New("an expired run changed under its lock"))
			}
			ended = append(ended, run)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
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

// markInterval is how often the marks of written records are flushed.
const markInterval = 20 * time.Millisecond

// RunRecovery calls Recover every interval, and flushes the marks of
// written records every markInterval, until ctx ends; then it flushes the
// last marks.
func (a *Actions) RunRecovery(ctx context.Context, interval time.Duration) {
	recoveries := time.NewTicker(interval)
	defer recoveries.Stop()
	marks := time.NewTicker(markInterval)
	defer marks.Stop()
	for {
		if _, _, err := a.Recover(ctx); err != nil && ctx.Err() == nil {
			a.logger.WarnContext(ctx, "action recovery failed; retrying", "error", apperr.Cause(err), "retry_in", interval)
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := a.flushMarks(fctx); err != nil {
					a.logger.WarnContext(fctx, "marking written records failed at shutdown; recovery writes them again", "error", apperr.Cause(err))
				}
				return
			case <-marks.C:
				if err := a.flushMarks(ctx); err != nil && ctx.Err() == nil {
					a.logger.WarnContext(ctx, "marking written records failed; recovery writes them again", "error", apperr.Cause(err))
				}
			case <-recoveries.C:
				break wait
			}
		}
	}
}
