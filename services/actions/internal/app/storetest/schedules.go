package storetest

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/timing"
)

func newSchedule(agency string, next time.Time) app.Schedule {
	return app.Schedule{ID: id(), AgencyID: agency, ClientID: id(), Action: "track_rankings",
		Params:     map[string]any{"keywords": []any{"rye bread"}, "depth": float64(10)},
		Timing:     timing.Spec{Every: "week", At: "07:00", Weekday: "monday", Timezone: "Europe/London", StartsAt: base},
		PauseAfter: 3, Description: "weekly ranks", State: app.ScheduleActive, NextRunAt: next, CreatedAt: base, UpdatedAt: base}
}

func putSchedules(t *testing.T, s Store, list ...app.Schedule) {
	t.Helper()
	mustTx(t, s, func(tx app.Tx) error {
		for _, sc := range list {
			if err := tx.InsertSchedule(t.Context(), sc); err != nil {
				return err
			}
		}
		return nil
	})
}

func claimSchedules(t *testing.T, s Store, now time.Time, limit int) []app.Schedule {
	t.Helper()
	var out []app.Schedule
	mustTx(t, s, func(tx app.Tx) error {
		var err error
		out, err = tx.ClaimDueSchedules(t.Context(), now, now.Add(time.Minute), limit)
		return err
	})
	return out
}

// testSchedulesRoundTrip: a schedule reads back as written (its params,
// timing, cap and slots), a change replaces it, the list filters and
// pages by id within the agency, and a delete removes it.
func testSchedulesRoundTrip(t *testing.T, s Store) {
	a, other := id(), id()
	one := newSchedule(a, base.Add(time.Hour))
	one.MaxPerMonth = &app.Balance{AI: 10, Data: 3}
	two := newSchedule(a, base.Add(2*time.Hour))
	two.Action, two.State, two.NextRunAt = "site_audit", app.SchedulePaused, time.Time{}
	theirs := newSchedule(other, base)
	putSchedules(t, s, one, two, theirs)
	var n int
	mustTx(t, s, func(tx app.Tx) error {
		var err error
		n, err = tx.CountSchedules(t.Context(), a)
		return err
	})
	if n != 2 {
		t.Fatalf("CountSchedules = %d; want 2", n)
	}
	got, err := s.Schedule(t.Context(), one.ID)
	if err != nil || !reflect.DeepEqual(got, one) {
		t.Fatalf("Schedule = %+v, %v;\nwant %+v", got, err, one)
	}
	one.Slots = []app.Slot{{Slot: base, Outcome: app.SlotSkipped, Reason: "credits", At: base.Add(time.Second)},
		{Slot: base.Add(-time.Hour), Outcome: app.SlotStarted, RunID: id(), At: base}}
	one.Failures, one.LastRunID, one.MaxPerMonth, one.Params = 1, id(), nil, map[string]any{"depth": float64(20)}
	mustTx(t, s, func(tx app.Tx) error {
		cur, err := tx.ScheduleForUpdate(t.Context(), one.ID)
		if err != nil || cur.ID != one.ID {
			return errors.Join(err, errors.New("ScheduleForUpdate read another"))
		}
		return tx.PutSchedule(t.Context(), one)
	})
	if got, err := s.Schedule(t.Context(), one.ID); err != nil || !reflect.DeepEqual(got, one) {
		t.Fatalf("after PutSchedule = %+v, %v;\nwant %+v", got, err, one)
	}
	list := func(f app.ScheduleFilter) []string {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 10
		}
		l, err := s.ListSchedules(t.Context(), a, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, sc := range l {
			ids = append(ids, sc.ID)
		}
		return ids
	}
	for _, c := range []struct {
		f    app.ScheduleFilter
		want []string
	}{
		{app.ScheduleFilter{}, []string{one.ID, two.ID}},
		{app.ScheduleFilter{Limit: 1}, []string{one.ID}},
		{app.ScheduleFilter{After: one.ID}, []string{two.ID}},
		{app.ScheduleFilter{State: app.SchedulePaused}, []string{two.ID}},
		{app.ScheduleFilter{Action: "track_rankings"}, []string{one.ID}},
		{app.ScheduleFilter{ClientID: two.ClientID}, []string{two.ID}},
		{app.ScheduleFilter{ClientID: theirs.ClientID}, nil},
	} {
		if got := list(c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ListSchedules(%+v) = %v; want %v", c.f, got, c.want)
		}
	}
	mustTx(t, s, func(tx app.Tx) error { return tx.DeleteSchedule(t.Context(), two.ID) })
	if _, err := s.Schedule(t.Context(), two.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("a deleted schedule reads %v; want ErrNotFound", err)
	}
	err = s.InTx(t.Context(), func(tx app.Tx) error { return tx.DeleteSchedule(t.Context(), two.ID) })
	if !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("deleting it again = %v; want ErrNotFound", err)
	}
}

// testSchedulesClaim: only active schedules due by now and not claimed
// are claimed, oldest due first, up to the limit; a claim holds them
// until it lapses.
func testSchedulesClaim(t *testing.T, s Store) {
	a := id()
	early, late, future := newSchedule(a, base.Add(-time.Hour)), newSchedule(a, base), newSchedule(a, base.Add(time.Second))
	paused := newSchedule(a, base.Add(-2*time.Hour))
	paused.State = app.SchedulePaused
	putSchedules(t, s, late, future, early, paused)
	got := claimSchedules(t, s, base, 1)
	if len(got) != 1 || got[0].ID != early.ID || !got[0].ClaimedUntil.Equal(base.Add(time.Minute)) {
		t.Fatalf("first claim = %+v; want the earliest due, claimed for a minute", got)
	}
	got = claimSchedules(t, s, base, 10)
	if len(got) != 1 || got[0].ID != late.ID {
		t.Fatalf("second claim = %+v; want the one left due", got)
	}
	if got := claimSchedules(t, s, base.Add(30*time.Second), 10); len(got) != 1 || got[0].ID != future.ID {
		t.Fatalf("claim within the first claims' minute = %+v; want only the newly due", got)
	}
	if got := claimSchedules(t, s, base.Add(2*time.Minute), 10); len(got) != 3 {
		t.Fatalf("claim after the claims lapsed = %d schedules; want 3", len(got))
	}
}

// testSchedulesConcurrentClaims: concurrent claims never take a schedule
// twice.
func testSchedulesConcurrentClaims(t *testing.T, s Store) {
	a := id()
	var all []app.Schedule
	for range 40 {
		all = append(all, newSchedule(a, base))
	}
	putSchedules(t, s, all...)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for {
				var got []app.Schedule
				err := s.InTx(t.Context(), func(tx app.Tx) error {
					var err error
					got, err = tx.ClaimDueSchedules(t.Context(), base, base.Add(time.Minute), 3)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, sc := range got {
					seen[sc.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != len(all) {
		t.Fatalf("claimed %d schedules; want %d", len(seen), len(all))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("schedule %s claimed %d times", id, n)
		}
	}
}

// testScheduleSpent: a schedule's month counts its runs that hold or
// spent credits since the month began, and ListRuns filters by schedule.
func testScheduleSpent(t *testing.T, s Store) {
	a := id()
	sc := newSchedule(a, base)
	var runs []app.Run
	for i, st := range []string{app.StatusSuccess, app.StatusError, app.StatusQueued, app.StatusCanceled, app.StatusSuccess} {
		r := newRun(a)
		r.ScheduleID, r.Status, r.CreatedAt = sc.ID, st, base.Add(time.Duration(i)*time.Minute)
		if i == 4 {
			r.CreatedAt = base.AddDate(0, -1, 0) // last month
		}
		runs = append(runs, r)
	}
	other := newRun(a)
	insert(t, s, append(runs, other)...)
	got, err := s.ScheduleSpent(t.Context(), sc.ID, base)
	if err != nil || got != (app.Balance{AI: 4, Data: 2}) {
		t.Fatalf("ScheduleSpent = %+v, %v; want the success and the queued run since base: 4 AI, 2 data", got, err)
	}
	l, err := s.ListRuns(t.Context(), a, app.RunFilter{ScheduleID: sc.ID, Limit: 10})
	if err != nil || len(l) != 5 {
		t.Fatalf("ListRuns by schedule = %d runs, %v; want 5", len(l), err)
	}
	for _, r := range l {
		if r.ScheduleID != sc.ID {
			t.Fatalf("run %s has schedule %q; want %q", r.ID, r.ScheduleID, sc.ID)
		}
	}
}
