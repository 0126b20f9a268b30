package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// TestScheduleLoopKeepsLocalTimeAcrossClockChanges runs the real
// scheduler loop and the queue's workers on the memory store for most of
// a year of fake time (a synctest bubble, which starts on 1 January 2000):
// a weekly 07:00 on Sundays in Europe/London starts one run every Sunday
// at 07:00 London time, before and after the clocks go forward (26 March
// 2000) and back (29 October 2000), each within a tick of its slot, and
// never twice.
func TestScheduleLoopKeepsLocalTimeAcrossClockChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		london, err := time.LoadLocation("Europe/London")
		if err != nil {
			t.Fatal(err)
		}
		dir := &directory{links: map[string]action.Client{}}
		agency, client := uuid.NewString(), action.Client{ID: uuid.NewString(), Name: "Bakery"}
		dir.links[agency+"|"+client.ID] = client
		const tick = 15 * time.Minute
		a := app.NewActions(memory.New(memdb.New(nil)), dir, &records{rows: map[string]map[string]map[string]any{}}, &action.Providers{Text: &text{}},
			app.Clock(time.Now), app.Config{ScheduleTick: tick, Workers: 2, QueuePoll: time.Hour}, slog.New(slog.DiscardHandler))
		if _, err := a.AddCredits(t.Context(), agency, 1000, 0); err != nil {
			t.Fatal(err)
		}
		s, err := a.CreateSchedule(t.Context(), agency, app.ScheduleInput{Action: ptr("generate_blog"), ClientID: ptr(client.ID),
			Params: map[string]any{"keyword": "rye"}, Every: ptr("week"), At: ptr("07:00"), Weekday: ptr("sunday"), Timezone: ptr("Europe/London")}, false)
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(t.Context())
		var loops sync.WaitGroup
		loops.Go(func() { a.RunSchedules(ctx) })
		loops.Go(func() { a.Work(ctx) })
		end := time.Date(2000, 11, 10, 0, 0, 0, 0, time.UTC)
		time.Sleep(time.Until(end)) // why sleep: fake time in a synctest bubble, the year's two clock changes
		stop()
		loops.Wait()

		page, err := a.ListRuns(t.Context(), agency, "", "", "", s.ID, ptr(int32(100)), "")
		if err != nil {
			t.Fatal(err)
		}
		var sundays []time.Time
		for d := time.Date(2000, 1, 2, 7, 0, 0, 0, london); d.Before(end); d = d.AddDate(0, 0, 7) {
			sundays = append(sundays, d)
		}
		if len(page.Runs) != len(sundays) {
			t.Fatalf("%d runs from 2 January to 5 November; want %d, one each Sunday", len(page.Runs), len(sundays))
		}
		seen := map[int64]bool{}
		for _, r := range page.Runs {
			unix, err := strconv.ParseInt(strings.TrimPrefix(r.IdempotencyKey, fmt.Sprintf("schedule:%s:", s.ID)), 10, 64)
			if err != nil {
				t.Fatalf("run %s has Idempotency-Key %q; want schedule:{id}:{slot}", r.ID, r.IdempotencyKey)
			}
			slot := time.Unix(unix, 0).In(london)
			if slot.Weekday() != time.Sunday || slot.Hour() != 7 || slot.Minute() != 0 || seen[unix] {
				t.Fatalf("a run for the slot %s (London); want each Sunday at 07:00 London time, once", slot)
			}
			seen[unix] = true
			if late := r.CreatedAt.Sub(slot); late < 0 || late > tick {
				t.Fatalf("the run of %s was queued %s after it; want within the scheduler's tick (%s)", slot, late, tick)
			}
			if r.Status != app.StatusSuccess {
				t.Fatalf("the run of %s is %s; want success", slot, r.Status)
			}
		}
		for _, d := range []time.Time{time.Date(2000, 3, 26, 7, 0, 0, 0, london), time.Date(2000, 10, 29, 7, 0, 0, 0, london)} {
			if !seen[d.Unix()] {
				t.Fatalf("no run on the day the clocks changed, %s", d)
			}
		}
	})
}
