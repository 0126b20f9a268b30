package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// reserve records run as pending (or queued, for an asynchronous run,
// with its queued event, unless the agency's queue is full) and takes its
// cost from the agency's balance, in one transaction, and returns the
// balance after. For a
// repeated Idempotency-Key it reserves nothing: within the key's TTL it
// returns the earlier run to replay (or refuses a different body, or a run
// still in flight); after the TTL it frees the key for this run.
func (a *Actions) reserve(ctx context.Context, run Run, act *action.Action, fields []string) (replay *Run, bal Balance, err error) {
	var staged []outbox.Event
	if run.Status == StatusQueued {
		queued, err := stageEvent(events.RunQueued, run, run.CreatedAt)
		if err != nil {
			return nil, Balance{}, err
		}
		recorded, err := auditEvent(ctx, runChange(run, "run.queued", fields), run.CreatedAt)
		if err != nil {
			return nil, Balance{}, err
		}
		// The common submission, a new run of an agency with room and
		// credits, in one step; a refusal, or a key seen before, goes
		// through the transaction below, which says why or replays.
		b, ok, err := a.store.SubmitRun(ctx, run, a.cfg.AgencyMaxQueued, queued, recorded)
		switch {
		case err == nil && ok:
			return nil, b, nil
		case err != nil && !errors.Is(err, ErrDuplicate):
			return nil, Balance{}, err
		}
		staged = append(staged, queued, recorded)
	}
	err = a.store.InTx(ctx, func(tx Tx) error {
		replay = nil
		if run.IdempotencyKey != "" {
			prev, err := tx.RunByKey(ctx, run.AgencyID, run.IdempotencyKey)
			switch {
			case err == nil && run.StartedAt.Sub(prev.StartedAt) < a.cfg.IdempotencyTTL:
				if prev.RequestHash != run.RequestHash {
					return apperr.Unprocessable("the Idempotency-Key %q was used with a different request body within the last %s; use a new key for a new request", run.IdempotencyKey, a.cfg.IdempotencyTTL)
				}
				if !prev.Finished() && !run.Async {
					return a.inFlight(run.IdempotencyKey, &prev)
				}
				// An asynchronous request replays the queued or running
				// run (its 202) as well as a finished one.
				replay = &prev
				bal, err = tx.Balance(ctx, run.AgencyID)
				return err
			case err == nil:
				if err := tx.ForgetKey(ctx, prev.ID); err != nil {
					return err
				}
			case !errors.Is(err, ErrNotFound):
				return err
			}
		}
		var (
			b      Balance
			ok     bool
			err    error
			queued int
		)
		if run.Status == StatusQueued {
			b, queued, ok, err = tx.QueueRun(ctx, run, a.cfg.AgencyMaxQueued, staged...)
			if err == nil && queued >= a.cfg.AgencyMaxQueued {
				return apperr.QueueFull("the agency has %d runs queued, the most it may have (--agency-max-queued); nothing was reserved. Retry after some have run (see Retry-After), or run synchronously", queued)
			}
		} else {
			b, ok, err = tx.StartRun(ctx, run)
		}
		if errors.Is(err, ErrDuplicate) {
			return a.inFlight(run.IdempotencyKey, nil) // a concurrent twin got there first
		}
		if err != nil {
			return err
		}
		bal = b
		if !ok {
			return insufficient(act, b)
		}
		if run.Status == StatusQueued {
			return nil // its audit event is among staged
		}
		return audit.Record(ctx, tx, auditService, runChange(run, "run.started", fields), run.CreatedAt)
	})
	return replay, bal, err
}

// checkIdempotencyKey validates an Idempotency-Key header.
func checkIdempotencyKey(key string) error {
	if len(key) > 255 {
		return apperr.Invalid("the Idempotency-Key header must be at most 255 characters; got %d", len(key))
	}
	for _, r := range key {
		if r < 0x21 || r > 0x7e {
			return apperr.Invalid("the Idempotency-Key header must be printable ASCII without spaces, such as a UUID")
		}
	}
	return nil
}

// requestHash identifies a request body for idempotency: the same JSON
// object, whatever its key order and spacing, hashes the same.
func requestHash(body map[string]any) string {
	b, _ := json.Marshal(body) // maps marshal with sorted keys
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// inFlight is the answer to a synchronous request whose Idempotency-Key
// names a run that has not finished (prev; nil for a concurrent twin that
// has just reserved): 409, with when to retry. A running run's answer is
// due by the end of its lease: its process renews the lease while it runs
// (leases.go), so by then the run has finished, or its process has died
// and recovery ends it within one --recovery-interval; either way the
// retry gets an answer or, rarely, another 409 with a shorter wait. A
// queued run has no lease yet: its caller is asked back in
// queuedRetryAfter, or to follow the run.
func (a *Actions) inFlight(key string, prev *Run) error {
	if prev != nil && prev.Status == StatusQueued {
		return &RetryAfterError{After: queuedRetryAfter, Err: apperr.Conflict(
			"the earlier request with the Idempotency-Key %q is still queued (submitted with Prefer: respond-async); retry in %d seconds (Retry-After) to get its answer, or follow it at /api/v1/runs/%s",
			key, seconds(queuedRetryAfter), prev.ID)}
	}
	wait := a.cfg.Lease
	if prev != nil {
		wait = prev.LeaseUntil.Sub(a.clock.Now())
	}
	return &RetryAfterError{After: time.Duration(seconds(wait)) * time.Second, Err: apperr.Conflict(
		"the earlier request with the Idempotency-Key %q is still running; retry in %d seconds (Retry-After) to get its answer: by then it has finished, or it has been ended as interrupted if the replica running it stopped",
		key, seconds(wait))}
}

// queuedRetryAfter is when a synchronous request is asked to come back
// for a queued run with its key.
const queuedRetryAfter = 5 * time.Second

// seconds is d in whole seconds, rounded up, at least 1: what Retry-After
// says.
func seconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// RetryAfterError is an error whose answer tells the caller when to try
// again (the transport sends it as Retry-After).
type RetryAfterError struct {
	After time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string { return e.Err.Error() }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryAfter returns when the caller of a request that failed with err
// should try again, if err says.
func RetryAfter(err error) (time.Duration, bool) {
	var r *RetryAfterError
	if errors.As(err, &r) {
		return r.After, true
	}
	return 0, false
}

// insufficient names the kind of credit that is short, what the action
// needs and what the agency has.
func insufficient(act *action.Action, b Balance) error {
	kind, need, have := "AI", act.Cost.AI, b.AI
	if b.AI >= act.Cost.AI {
		kind, need, have = "data", act.Cost.Data, b.Data
	}
	return apperr.InsufficientCredits("insufficient %s credits: %s needs %d %s credits (and %d %s), the agency has %d available; an administrator adds credits with POST /admin/v1/agencies/{agency_id}/credits",
		kind, act.Name, need, kind, otherCost(act, kind), other(kind), have)
}

func other(kind string) string {
	if kind == "AI" {
		return "data"
	}
	return "AI"
}

func otherCost(act *action.Action, kind string) int64 {
	if kind == "AI" {
		return act.Cost.Data
	}
	return act.Cost.AI
}
