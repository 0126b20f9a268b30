package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
)

func ptr[T any](v T) *T { return &v }

func slogDiscard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// hourlyBlog is a schedule of generate_blog (2 AI credits) at minute 0
// of every hour, in UTC.
func (e *env) hourlyBlog() app.ScheduleInput {
	return app.ScheduleInput{Action: ptr("generate_blog"), ClientID: ptr(e.client.ID), Params: map[string]any{"keyword": "rye"},
		Cron: ptr("0 * * * *"), Timezone: ptr("UTC")}
}

func (e *env) runsOf(t *testing.T, scheduleID string) []app.Run {
	t.Helper()
	page, err := e.actions.ListRuns(t.Context(), e.agency, "", "", "", scheduleID, ptr(int32(100)), "")
	if err != nil {
		t.Fatal(err)
	}
	return page.Runs
}

func (e *env) scheduleOnce(t *testing.T) {
	t.Helper()
	if _, err := e.actions.ScheduleOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func (e *env) subjects() []string {
	var out []string
	for _, ev := range e.pending() {
		if strings.Contains(ev.Subject, ".schedule.") {
			out = append(out, ev.Subject)
		}
	}
	return out
}

// A dry run answers the schedule and stores nothing; a real one starts
// one run per slot, with its schedule_id and key, whichever replica (or
// how many times) the scheduler looks.
func TestScheduleStartsOneRunPerSlot(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 100, 0)
		dry, err := e.actions.CreateSchedule(t.Context(), e.agency, e.hourlyBlog(), true)
		if err != nil {
			t.Fatal(err)
		}
		if len(dry.NextRuns) != 5 || !dry.NextRunAt.Equal(time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC)) ||
			dry.PerRun != (app.Balance{AI: 2}) || dry.PerMonth != (app.Balance{AI: 2 * 720}) {
			t.Fatalf("dry run = id %q, next %s, %d next runs, %+v per run, %+v per month", dry.ID, dry.NextRunAt, len(dry.NextRuns), dry.PerRun, dry.PerMonth)
		}
		if page, _ := e.actions.ListSchedules(t.Context(), e.agency, "", "", "", nil, ""); len(page.Schedules) != 0 {
			t.Fatalf("a dry run stored %d schedules", len(page.Schedules))
		}
		if dry.ID != "" {
			t.Fatalf("the dry run answered the id %q, which names no schedule; want none", dry.ID)
		}
		s, err := e.actions.CreateSchedule(t.Context(), e.agency, e.hourlyBlog(), false)
		if err != nil {
			t.Fatal(err)
		}
		e.scheduleOnce(t)
		if n := len(e.runsOf(t, s.ID)); n != 0 {
			t.Fatalf("%d runs before the first slot", n)
		}
		e.advance(time.Hour)
		second := app.NewActions(e.store, e.dir, e.records, e.providers, e.clock, e.cfg, slogDiscard())
		e.scheduleOnce(t)
		if _, err := second.ScheduleOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		runs := e.runsOf(t, s.ID)
		if len(runs) != 1 || runs[0].ScheduleID != s.ID || runs[0].Status != app.StatusQueued ||
			runs[0].IdempotencyKey != fmt.Sprintf("schedule:%s:%d", s.ID, time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC).Unix()) {
			t.Fatalf("runs after the first slot = %+v", runs)
		}
		got, err := e.actions.GetSchedule(t.Context(), e.agency, s.ID)
		if err != nil || got.LastRunID != runs[0].ID || len(got.Slots) != 1 || got.Slots[0].Outcome != app.SlotStarted ||
			!got.NextRunAt.Equal(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)) {
			t.Fatalf("schedule after its first slot = %+v, %v", got, err)
		}
		// The next slot finds the run still queued: skipped, not counted.
		e.advance(time.Hour)
		e.scheduleOnce(t)
		got, _ = e.actions.GetSchedule(t.Context(), e.agency, s.ID)
		if len(e.runsOf(t, s.ID)) != 1 || got.Slots[0].Outcome != app.SlotSkipped || !strings.Contains(got.Slots[0].Reason, "still queued") || got.Failures != 0 {
			t.Fatalf("overlapping slot = %+v (failures %d)", got.Slots[0], got.Failures)
		}
		// Another agency sees none of it.
		other := "00000000-0000-4000-8000-000000000000"
		if _, err := e.actions.GetSchedule(t.Context(), other, s.ID); apperr.KindOf(err) != apperr.KindNotFound {
			t.Fatalf("another agency's schedule: %v; want not found", err)
		}
		for name, err := range map[string]error{
			"pause":   func() error { _, err := e.actions.PauseSchedule(t.Context(), other, s.ID); return err }(),
			"delete":  e.actions.DeleteSchedule(t.Context(), other, s.ID),
			"trigger": func() error { _, err := e.actions.TriggerSchedule(t.Context(), other, s.ID); return err }(),
			"update": func() error {
				_, err := e.actions.UpdateSchedule(t.Context(), other, s.ID, app.ScheduleInput{})
				return err
			}(),
		} {
			if apperr.KindOf(err) != apperr.KindNotFound {
				t.Errorf("%s of another agency's schedule: %v; want not found", name, err)
			}
		}
		if page, _ := e.actions.ListRuns(t.Context(), other, "", "", "", s.ID, nil, ""); len(page.Runs) != 0 {
			t.Fatalf("another agency lists %d runs of the schedule", len(page.Runs))
		}
	})
}

// A bad schedule is refused with the messages POST /api/v1/data gives, and
// a cron more frequent than the minimum interval names both.
func TestScheduleValidation(t *testing.T) {
	e := newEnv(t, app.Config{})
	in := e.hourlyBlog()
	in.Params = map[string]any{"tone": "grumpy"}
	_, want := e.actions.Run(t.Context(), e.agency, map[string]any{"action": "generate_blog", "client_id": e.client.ID, "tone": "grumpy"}, "")
	_, err := e.actions.CreateSchedule(t.Context(), e.agency, in, true)
	if want == nil || err == nil || err.Error() != want.Error() || apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("bad params: %v; want the run's own error %v", err, want)
	}
	in = e.hourlyBlog()
	in.Cron = ptr("*/15 * * * *")
	if _, err := e.actions.CreateSchedule(t.Context(), e.agency, in, false); err == nil || !strings.Contains(err.Error(), "every 15m0s") || !strings.Contains(err.Error(), "1h0m0s") {
		t.Fatalf("a cron every 15 minutes: %v", err)
	}
	in = e.hourlyBlog()
	in.ClientID = ptr("00000000-0000-4000-8000-00000000c11e")
	if _, err := e.actions.CreateSchedule(t.Context(), e.agency, in, false); err == nil || !strings.Contains(err.Error(), "is not linked to this key's agency") {
		t.Fatalf("a client not linked: %v; want the run's refusal", err)
	}
	in = e.hourlyBlog()
	in.PauseAfter = ptr(0)
	if _, err := e.actions.CreateSchedule(t.Context(), e.agency, in, false); err == nil || !strings.Contains(err.Error(), "pause_after_failures must be from 1 to 100") {
		t.Fatalf("pause_after_failures 0: %v", err)
	}
	if page, _ := e.actions.ListSchedules(t.Context(), e.agency, "", "", "", nil, ""); len(page.Schedules) != 0 {
		t.Fatalf("refused schedules stored: %d", len(page.Schedules))
	}
}

// A balance that runs out: each slot is skipped with schedule.run_skipped,
// and after pause_after_failures in a row the schedule pauses itself with
// schedule.paused. Resume clears the count; the monthly cap skips as the
// balance does.
func TestScheduleCreditsSkipThenPause(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 1, 0) // generate_blog needs 2
		s, err := e.actions.CreateSchedule(t.Context(), e.agency, e.hourlyBlog(), false)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			e.advance(time.Hour)
			e.scheduleOnce(t)
			got, _ := e.actions.GetSchedule(t.Context(), e.agency, s.ID)
			if got.Slots[0].Outcome != app.SlotSkipped || !strings.Contains(got.Slots[0].Reason, "insufficient AI credits") || got.Failures != i+1 {
				t.Fatalf("slot %d = %+v, failures %d", i, got.Slots[0], got.Failures)
			}
		}
		got, _ := e.actions.GetSchedule(t.Context(), e.agency, s.ID)
		if got.State != app.SchedulePaused || !got.NextRunAt.IsZero() {
			t.Fatalf("after 3 skips: state %s, next %s; want paused", got.State, got.NextRunAt)
		}
		want := []string{"atrium.actions.schedule.run_skipped", "atrium.actions.schedule.run_skipped", "atrium.actions.schedule.run_skipped", "atrium.actions.schedule.paused"}
		if got := e.subjects(); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("events = %v; want %v", got, want)
		}
		for _, ev := range e.pending() {
			if ev.Subject == "atrium.actions.schedule.paused" {
				var p events.ScheduleEvent
				if err := json.Unmarshal(ev.Payload, &p); err != nil || p.ScheduleID != s.ID || p.Failures != 3 || p.AgencyID != e.agency {
					t.Fatalf("paused payload = %+v, %v", p, err)
				}
			}
		}
		e.advance(time.Hour)
		e.scheduleOnce(t)
		if len(e.subjects()) != 4 {
			t.Fatal("a paused schedule's slot was handled")
		}
		// Credits, a cap of one run a month, and resume: the first slot
		// starts, the second passes the cap.
		e.grant(t, 100, 0)
		cap := app.Balance{AI: 2}
		if _, err := e.actions.UpdateSchedule(t.Context(), e.agency, s.ID, app.ScheduleInput{MaxPerMonth: &cap}); err != nil {
			t.Fatal(err)
		}
		got, err = e.actions.ResumeSchedule(t.Context(), e.agency, s.ID)
		if err != nil || got.State != app.ScheduleActive || got.Failures != 0 {
			t.Fatalf("resume = %+v, %v", got, err)
		}
		e.advance(time.Hour)
		e.scheduleOnce(t)
		runs := e.runsOf(t, s.ID)
		if len(runs) != 1 {
			t.Fatalf("%d runs after resume; want 1", len(runs))
		}
		if _, _, err := e.actions.CancelRun(t.Context(), e.agency, runs[0].ID); err != nil {
			t.Fatal(err)
		}
		// A canceled run gave its credits back: the cap still has room.
		e.advance(time.Hour)
		e.scheduleOnce(t)
		if runs = e.runsOf(t, s.ID); len(runs) != 2 {
			t.Fatalf("%d runs; want a second after the first was canceled", len(runs))
		}
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { e.actions.Work(ctx) })
		if r, err := e.actions.WaitRun(t.Context(), e.agency, runs[0].ID, time.Minute); err != nil || r.Status != app.StatusSuccess {
			t.Fatalf("scheduled run = %+v, %v", r, err)
		}
		stop()
		wg.Wait()
		e.advance(time.Hour)
		e.scheduleOnce(t)
		got, _ = e.actions.GetSchedule(t.Context(), e.agency, s.ID)
		if len(e.runsOf(t, s.ID)) != 2 || got.Slots[0].Outcome != app.SlotSkipped || !strings.Contains(got.Slots[0].Reason, "max_credits_per_month") {
			t.Fatalf("slot past the cap = %+v", got.Slots[0])
		}
	})
}

// After a downtime only the latest slot within --schedule-catchup runs;
// the older ones are recorded as missed, and a slot later than the
// catch-up is missed too.
func TestScheduleCatchup(t *testing.T) {
	e := newEnv(t, app.Config{ScheduleCatchup: 90 * time.Minute})
	e.grant(t, 100, 0)
	s, err := e.actions.CreateSchedule(t.Context(), e.agency, e.hourlyBlog(), false)
	if err != nil {
		t.Fatal(err)
	}
	e.advance(5*time.Hour + 30*time.Minute) // slots 11:00 ... 15:00 due, now 15:30
	e.scheduleOnce(t)
	runs := e.runsOf(t, s.ID)
	if len(runs) != 1 || !strings.HasSuffix(runs[0].IdempotencyKey, fmt.Sprint(time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC).Unix())) {
		t.Fatalf("runs after the downtime = %+v; want the 15:00 slot's only", runs)
	}
	got, _ := e.actions.GetSchedule(t.Context(), e.agency, s.ID)
	if got.Slots[1].Outcome != app.SlotMissed || !strings.Contains(got.Slots[1].Reason, "4 slots") {
		t.Fatalf("the missed slots = %+v", got.Slots)
	}
	daily := e.hourlyBlog()
	daily.Cron, daily.Every, daily.At = nil, ptr("day"), ptr("07:00")
	d, err := e.actions.CreateSchedule(t.Context(), e.agency, daily, false)
	if err != nil {
		t.Fatal(err)
	}
	e.advance(24 * time.Hour) // the 07:00 slot is 8h30 late
	e.scheduleOnce(t)
	if runs := e.runsOf(t, d.ID); len(runs) != 0 {
		t.Fatalf("a slot later than the catch-up ran: %+v", runs)
	}
	got, _ = e.actions.GetSchedule(t.Context(), e.agency, d.ID)
	if got.Slots[0].Outcome != app.SlotMissed || !got.NextRunAt.Equal(time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)) {
		t.Fatalf("daily after the downtime = %+v, next %s", got.Slots, got.NextRunAt)
	}
}

// A run that ends in error counts as a failure; after pause_after_failures
// the schedule pauses. Trigger starts a run now whatever the state.
func TestScheduleFailedRunsPause(t *testing.T) {
	e := newEnv(t, app.Config{})
	e.grant(t, 100, 0)
	e.text.err = fmt.Errorf("the model is down")
	in := e.hourlyBlog()
	in.PauseAfter = ptr(2)
	s, err := e.actions.CreateSchedule(t.Context(), e.agency, in, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { e.actions.Work(ctx) })
	defer func() { stop(); wg.Wait() }()
	for i := range 2 {
		out, err := e.actions.TriggerSchedule(t.Context(), e.agency, s.ID)
		if err != nil || out.Run.ScheduleID != s.ID {
			t.Fatalf("trigger = %+v, %v", out.Run, err)
		}
		if r, err := e.actions.WaitRun(t.Context(), e.agency, out.Run.ID, time.Minute); err != nil || r.Status != app.StatusError {
			t.Fatalf("run %d = %+v, %v; want an error", i, r, err)
		}
	}
	got, _ := e.actions.GetSchedule(t.Context(), e.agency, s.ID)
	if got.State != app.SchedulePaused || got.Failures != 2 || got.Slots[0].Outcome != app.SlotFailed || !strings.Contains(got.Slots[0].Reason, "status_code") {
		t.Fatalf("after two failed runs: state %s, failures %d, slots %+v", got.State, got.Failures, got.Slots)
	}
}

// Two replicas' schedulers (real loops, ticking every few milliseconds)
// and workers on one PostgreSQL database, a slot due every hour of the
// test's clock: each slot starts exactly one run, none is missing, and
// when one replica stops the other carries on alone.
func TestTwoSchedulersOnePostgres(t *testing.T) {
	e := newEnvOn(t, app.Config{ScheduleTick: 5 * time.Millisecond, QueuePoll: 5 * time.Millisecond}, stores[1].open)
	e.grant(t, 1000, 0)
	s, err := e.actions.CreateSchedule(t.Context(), e.agency, e.hourlyBlog(), false)
	if err != nil {
		t.Fatal(err)
	}
	second := app.NewActions(e.store, e.dir, e.records, e.providers, e.clock, e.cfg, slogDiscard())
	start := func(a *app.Actions) (stop func()) {
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { a.RunSchedules(ctx) })
		wg.Go(func() { a.Work(ctx) })
		return func() { cancel(); wg.Wait() }
	}
	stopFirst := start(e.actions)
	stopSecond := start(second)
	defer stopSecond()
	const slots = 8
	for i := range slots {
		if i == slots/2 {
			stopFirst() // one replica goes away; the other takes every slot
		}
		e.advance(time.Hour)
		deadline := time.Now().Add(30 * time.Second)
		for {
			runs := e.runsOf(t, s.ID)
			if len(runs) == i+1 && runs[0].Finished() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("slot %d: %d runs after 30s; want %d, the newest finished", i, len(runs), i+1)
			}
			time.Sleep(5 * time.Millisecond) // why sleep: a poll of the runs table, which has no push form across replicas
		}
	}
	stopSecond()
	keys := map[string]bool{}
	runs := e.runsOf(t, s.ID)
	for _, r := range runs {
		keys[r.IdempotencyKey] = true
	}
	if len(runs) != slots || len(keys) != slots {
		t.Fatalf("%d runs with %d keys for %d slots", len(runs), len(keys), slots)
	}
	for i := range slots {
		slot := time.Date(2026, 11, 24, 11+i, 0, 0, 0, time.UTC)
		if !keys[fmt.Sprintf("schedule:%s:%d", s.ID, slot.Unix())] {
			t.Fatalf("no run for the slot %s", slot)
		}
	}
}

// A scheduled run whose worker died, ended by recovery as failed, counts
// as a failure of its schedule like a run that failed by itself: its
// slot says so, and after pause_after_failures of them the schedule
// pauses itself and says why.
func TestRecoveredRunCountsAsItsSchedulesFailure(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{ActionTimeout: time.Second, Lease: 2 * time.Second})
		e.grant(t, 10, 0)
		in := e.hourlyBlog()
		in.PauseAfter = ptr(2)
		s, err := e.actions.CreateSchedule(t.Context(), e.agency, in, false)
		if err != nil {
			t.Fatal(err)
		}
		// A run of the schedule whose worker dies, twice: recovery queues
		// it again after the first death and ends it, failed, after the
		// second (maxAttempts).
		abandon := func() string {
			out, err := e.actions.TriggerSchedule(t.Context(), e.agency, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			for attempt := 1; attempt <= 2; attempt++ {
				if err := e.store.InTx(t.Context(), func(tx app.Tx) error {
					now := *e.now.Load()
					r, ok, err := tx.ClaimRun(t.Context(), now, now.Add(2*time.Second))
					if err == nil && (!ok || r.ID != out.Run.ID) {
						err = fmt.Errorf("claimed %s (%v); want the schedule's run %s", r.ID, ok, out.Run.ID)
					}
					return err
				}); err != nil {
					t.Fatal(err)
				}
				e.advance(3 * time.Second)
				if n, _, err := e.actions.Recover(t.Context()); err != nil || n != attempt-1 {
					t.Fatalf("recovery after attempt %d ended %d runs (%v); want %d", attempt, n, err, attempt-1)
				}
			}
			return out.Run.ID
		}

		first := abandon()
		got, err := e.actions.GetSchedule(t.Context(), e.agency, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Failures != 1 || got.State != app.ScheduleActive || len(got.Slots) != 2 || got.Slots[0].Outcome != app.SlotFailed ||
			got.Slots[0].RunID != first || !strings.Contains(got.Slots[0].Reason, "interrupted") {
			t.Fatalf("after one recovered run the schedule has %d failures, state %s, slots %+v; want 1, active, the failed run (after its trigger) with its reason",
				got.Failures, got.State, got.Slots)
		}

		abandon()
		got, _ = e.actions.GetSchedule(t.Context(), e.agency, s.ID)
		if got.Failures != 2 || got.State != app.SchedulePaused || !got.NextRunAt.IsZero() {
			t.Fatalf("after two recovered runs the schedule has %d failures, state %s; want 2 and paused", got.Failures, got.State)
		}
		if subjects := fmt.Sprint(e.subjects()); !strings.Contains(subjects, "schedule.paused") {
			t.Fatalf("the schedule paused itself without saying so: events %s", subjects)
		}
		if b := e.balance(t); b.AI != 10 {
			t.Fatalf("balance = %+v; want both reservations released", b)
		}
	})
}
