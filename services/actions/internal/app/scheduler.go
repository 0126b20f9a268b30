package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
	"github.com/atrium-hq/atrium/services/actions/internal/app/timing"
)

// The scheduler: a loop of every replica that, each ScheduleTick, claims
// the active schedules whose next slot is due (Tx.ClaimDueSchedules: FOR
// UPDATE SKIP LOCKED on PostgreSQL, with a claim that lapses, so two
// replicas never handle a schedule at once and a replica that dies leaves
// it to the others) and handles each one's due slot:
//
//   - After downtime only the latest slot within ScheduleCatchup runs;
//     older ones are recorded as missed.
//   - A slot whose previous run is still queued or running is skipped.
//   - A slot whose cost would pass the schedule's max_credits_per_month,
//     or that the balance cannot cover, is skipped, with the event
//     schedule.run_skipped.
//   - Otherwise it starts an ordinary asynchronous run with the
//     Idempotency-Key schedule:{id}:{slot unix}: were a slot ever handled
//     twice (a claim that lapsed under a stalled replica), the second
//     submission replays the first run instead of starting another.
//
// After PauseAfter failed runs or skipped slots in a row the schedule
// pauses itself (schedule.paused). A run's end is counted where runs end
// (scheduleRunEnded, in the transaction of its outcome).

// scheduleClaimBatch is how many schedules one claim takes.
const scheduleClaimBatch = 100

// scheduleConcurrency is how many schedules of a claimed batch a replica
// handles at once. Each is a read, the run's transaction, a call to the
// CRM (mostly cached) and the settling transaction: time spent waiting on
// PostgreSQL, not computing. Handled one after the other, 10,000
// schedules due in one minute took two replicas minutes to start
// (docs/performance.md, bench-schedules); four at once is the pool's
// default size on a two-core machine.
const scheduleConcurrency = 4

// slotScanLimit bounds the slots a claim walks from a schedule's
// next_run_at to now (after a long downtime, older ones are counted
// missed together).
const slotScanLimit = 10000

// RunSchedules runs the scheduler until ctx ends.
func (a *Actions) RunSchedules(ctx context.Context) {
	t := time.NewTicker(a.cfg.ScheduleTick)
	defer t.Stop()
	for {
		for {
			n, err := a.ScheduleOnce(ctx)
			if err != nil && ctx.Err() == nil {
				a.logger.WarnContext(ctx, "handling due schedules failed; retrying", "error", apperr.Cause(err), "retry_in", a.cfg.ScheduleTick)
			}
			if err != nil || n < scheduleClaimBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ScheduleOnce claims one batch of due schedules and handles them; it
// returns how many it claimed.
func (a *Actions) ScheduleOnce(ctx context.Context) (int, error) {
	now := a.clock.Now()
	var due []Schedule
	err := a.store.InTx(ctx, func(tx Tx) error {
		var err error
		due, err = tx.ClaimDueSchedules(ctx, now, now.Add(a.scheduleClaim()), scheduleClaimBatch)
		return err
	})
	if err != nil {
		return 0, err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, scheduleConcurrency)
	)
	for _, s := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := a.handleDue(ctx, s, now); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("schedule %s: %w", s.ID, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return len(due), errors.Join(errs...)
}

// scheduleClaim is how long a claim holds a schedule: long enough for a
// batch's submissions, short enough that a dead replica's schedules wait
// little.
func (a *Actions) scheduleClaim() time.Duration { return max(30*time.Second, 4*a.cfg.ScheduleTick) }

// handleDue handles the due slots of a claimed schedule.
func (a *Actions) handleDue(ctx context.Context, s Schedule, now time.Time) error {
	plan, err := timing.Parse(s.Timing, 0, now)
	if err != nil {
		return a.settle(ctx, s, now, func(cur *Schedule) []outbox.Event {
			cur.State, cur.NextRunAt = SchedulePaused, time.Time{}
			cur.addSlot(Slot{Slot: s.NextRunAt, Outcome: SlotFailed, Reason: "its timing is no longer valid: " + err.Error(), At: now})
			return nil
		})
	}
	// The due slots: next_run_at and those after it up to now.
	latest, missed := s.NextRunAt, 0
	for range slotScanLimit {
		n, ok := plan.Next(latest)
		if !ok || n.After(now) {
			break
		}
		latest = n
		missed++
	}
	var records []Slot
	if missed > 0 {
		records = append(records, Slot{Slot: s.NextRunAt, Outcome: SlotMissed, At: now,
			Reason: fmt.Sprintf("%d slots from this one were due while no replica ran the scheduler; only the latest within --schedule-catchup (%s) runs", missed, a.cfg.ScheduleCatchup)})
	}
	var (
		outcome   Slot
		runID     string
		counts    bool // a skip that counts towards pausing
		skipEvent bool
	)
	switch {
	case now.Sub(latest) > a.cfg.ScheduleCatchup:
		outcome = Slot{Slot: latest, Outcome: SlotMissed, At: now,
			Reason: fmt.Sprintf("due %s ago, longer than --schedule-catchup (%s): no replica ran the scheduler in time", now.Sub(latest).Round(time.Second), a.cfg.ScheduleCatchup)}
	default:
		outcome, runID, counts, skipEvent, err = a.runSlot(ctx, s, plan, latest, now)
		if err != nil {
			return err // unavailable: the claim lapses and the slot is tried again
		}
	}
	next, more := plan.Next(now)
	return a.settle(ctx, s, now, func(cur *Schedule) []outbox.Event {
		for i := len(records) - 1; i >= 0; i-- {
			cur.addSlot(records[i])
		}
		cur.addSlot(outcome)
		if runID != "" {
			cur.LastRunID = runID
		}
		// The user may have paused or retimed it meanwhile: their word
		// stands.
		if cur.State == ScheduleActive && cur.NextRunAt.Equal(s.NextRunAt) {
			if more {
				cur.NextRunAt = next
			} else {
				cur.State, cur.NextRunAt = ScheduleEnded, time.Time{}
			}
		}
		var evs []outbox.Event
		if skipEvent {
			evs = append(evs, a.scheduleEvent(events.ScheduleRunSkipped, *cur, latest, outcome.Reason, cur.Failures+btoi(counts), now))
		}
		if counts {
			evs = append(evs, a.countFailure(cur, latest, outcome.Reason, now)...)
		}
		return evs
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runSlot decides and, if it may, starts the run of a slot.
func (a *Actions) runSlot(ctx context.Context, s Schedule, plan *timing.Plan, slot, now time.Time) (out Slot, runID string, counts, skipEvent bool, err error) {
	out = Slot{Slot: slot, At: now}
	if s.LastRunID != "" {
		prev, err := a.store.Run(ctx, s.LastRunID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return out, "", false, false, err
		}
		if err == nil && !prev.Finished() {
			out.Outcome, out.Reason = SlotSkipped, fmt.Sprintf("the previous run %s is still %s", prev.ID, State(prev))
			return out, "", false, true, nil
		}
	}
	act, ok := catalog.Lookup(s.Action)
	if ok && s.MaxPerMonth != nil {
		since := monthStart(now, plan.Location())
		spent, err := a.store.ScheduleSpent(ctx, s.ID, since)
		if err != nil {
			return out, "", false, false, err
		}
		cost := costOf(act.Cost)
		if spent.AI+cost.AI > s.MaxPerMonth.AI || spent.Data+cost.Data > s.MaxPerMonth.Data {
			out.Outcome = SlotSkipped
			out.Reason = fmt.Sprintf("the run's %s credits would pass max_credits_per_month (%s): its runs have taken %s credits since %s",
				creditsText(cost), creditsText(*s.MaxPerMonth), creditsText(spent), since.Format("2006-01-02"))
			return out, "", true, true, nil
		}
	}
	o, err := a.submitScheduled(ctx, s, fmt.Sprintf("schedule:%s:%d", s.ID, slot.Unix()))
	switch {
	case err == nil:
		out.Outcome, out.RunID = SlotStarted, o.Run.ID
		return out, o.Run.ID, false, false, nil
	case apperr.KindOf(err) == apperr.KindExhausted:
		// Credits short, or the agency's queue full.
		out.Outcome, out.Reason = SlotSkipped, oneLine(err.Error())
		return out, "", true, true, nil
	case apperr.KindOf(err) == apperr.KindUnavailable || apperr.KindOf(err) == 0:
		return out, "", false, false, err
	default:
		// The request is no longer valid (the client was unlinked, the
		// action's rules changed): the slot fails.
		out.Outcome, out.Reason = SlotFailed, oneLine(err.Error())
		return out, "", true, false, nil
	}
}

// countFailure counts a failed run or skipped slot against cur and
// pauses it after PauseAfter in a row.
func (a *Actions) countFailure(cur *Schedule, slot time.Time, reason string, now time.Time) []outbox.Event {
	cur.Failures++
	if cur.Failures < cur.PauseAfter || cur.State != ScheduleActive {
		return nil
	}
	cur.State, cur.NextRunAt = SchedulePaused, time.Time{}
	why := fmt.Sprintf("%d failed or skipped slots in a row (pause_after_failures); the last: %s", cur.Failures, reason)
	return []outbox.Event{a.scheduleEvent(events.SchedulePaused, *cur, slot, why, cur.Failures, now)}
}

func (a *Actions) scheduleEvent(def *events.Def[events.ScheduleEvent], s Schedule, slot time.Time, reason string, failures int, now time.Time) outbox.Event {
	e, err := outbox.Of(def, events.ScheduleEvent{ScheduleID: s.ID, AgencyID: s.AgencyID, ClientID: s.ClientID, Action: s.Action,
		Slot: slot, Reason: reason, Failures: failures, At: now}, now)
	if err != nil {
		a.logger.Error("a schedule event could not be built", "schedule", s.ID, "error", err)
	}
	return e
}

// settle applies change to the schedule as it is now, releases the
// claim and enqueues the events change returns, in one transaction. A
// schedule deleted meanwhile is left deleted.
func (a *Actions) settle(ctx context.Context, s Schedule, now time.Time, change func(cur *Schedule) []outbox.Event) error {
	return a.store.InTx(context.WithoutCancel(ctx), func(tx Tx) error {
		cur, err := tx.ScheduleForUpdate(ctx, s.ID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range change(&cur) {
			if e.Subject == "" {
				continue
			}
			if err := tx.Enqueue(ctx, e); err != nil {
				return err
			}
		}
		cur.ClaimedUntil, cur.UpdatedAt = time.Time{}, now
		return tx.PutSchedule(ctx, cur)
	})
}

// scheduleRunEnded counts the end of a schedule's run, in the
// transaction that records it: an error is a failure (and may pause the
// schedule), a success clears the count.
func (a *Actions) scheduleRunEnded(ctx context.Context, tx Tx, run Run) error {
	if run.ScheduleID == "" || run.Status == StatusCanceled {
		return nil
	}
	cur, err := tx.ScheduleForUpdate(ctx, run.ScheduleID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := a.clock.Now()
	if run.Status == StatusSuccess {
		if cur.Failures == 0 {
			return nil
		}
		cur.Failures = 0
	} else {
		reason := fmt.Sprintf("run %s ended with status_code %d", run.ID, run.StatusCode)
		if msg, ok := run.Data["error"].(string); ok {
			reason += ": " + oneLine(msg)
		}
		cur.addSlot(Slot{Slot: run.CreatedAt, Outcome: SlotFailed, RunID: run.ID, Reason: reason, At: now})
		for _, e := range a.countFailure(&cur, run.CreatedAt, reason, now) {
			if err := tx.Enqueue(ctx, e); err != nil {
				return err
			}
		}
	}
	cur.UpdatedAt = now
	return tx.PutSchedule(ctx, cur)
}
