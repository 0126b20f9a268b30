package timing_test

import (
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/timing"
)

func mustParse(t *testing.T, s timing.Spec, now time.Time) *timing.Plan {
	t.Helper()
	p, err := timing.Parse(s, time.Hour, now)
	if err != nil {
		t.Fatalf("Parse(%+v): %v", s, err)
	}
	return p
}

func local(t *testing.T, ts []time.Time, loc *time.Location) []string {
	t.Helper()
	var out []string
	for _, x := range ts {
		out = append(out, x.In(loc).Format("2006-01-02 15:04 MST"))
	}
	return out
}

func equal(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("slots:\n got %q\nwant %q", got, want)
	}
}

// A weekly 07:00 in London stays 07:00 local across both changes of 2026
// (29 March, 25 October), for every and for cron alike.
func TestWeeklyStaysLocalAcrossDST(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	for _, s := range []timing.Spec{
		{Every: "week", At: "07:00", Weekday: "sunday", Timezone: "Europe/London"},
		{Cron: "0 7 * * 0", Timezone: "Europe/London"},
	} {
		p := mustParse(t, s, time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC))
		equal(t, local(t, p.NextN(time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC), 3), london),
			[]string{"2026-03-22 07:00 GMT", "2026-03-29 07:00 BST", "2026-04-05 07:00 BST"})
		got := p.NextN(time.Date(2026, 10, 17, 0, 0, 0, 0, time.UTC), 3)
		equal(t, local(t, got, london), []string{"2026-10-18 07:00 BST", "2026-10-25 07:00 GMT", "2026-11-01 07:00 GMT"})
		// In UTC the slot moves by the hour the clocks did.
		if got[0].UTC().Hour() != 6 || got[1].UTC().Hour() != 7 {
			t.Fatalf("UTC hours %d, %d; want 6 then 7", got[0].UTC().Hour(), got[1].UTC().Hour())
		}
	}
}

// 01:30 does not exist in London on 29 March 2026 (01:00 GMT becomes
// 02:00 BST) and happens twice on 25 October: a daily 01:30 runs once on
// each of those days.
func TestDailyInTheSkippedAndRepeatedHour(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	p := mustParse(t, timing.Spec{Every: "day", At: "01:30", Timezone: "Europe/London"}, time.Now())
	spring := p.NextN(time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC), 3)
	equal(t, local(t, spring, london), []string{"2026-03-28 01:30 GMT", "2026-03-29 02:30 BST", "2026-03-30 01:30 BST"})
	autumn := p.NextN(time.Date(2026, 10, 23, 12, 0, 0, 0, time.UTC), 3)
	equal(t, local(t, autumn, london), []string{"2026-10-24 01:30 BST", "2026-10-25 01:30 BST", "2026-10-26 01:30 GMT"})
	// One slot on the long day: the next after the first 01:30 is the
	// next day's, not the second 01:30 an hour later.
	if d := autumn[2].Sub(autumn[1]); d != 25*time.Hour {
		t.Fatalf("gap over the autumn change %s; want 25h", d)
	}
}

func TestMonthlyStartsAndEnds(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	p := mustParse(t, timing.Spec{Every: "month", At: "09:15", Monthday: 4, Timezone: "America/New_York",
		StartsAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), EndsAt: time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)}, now)
	ny, _ := time.LoadLocation("America/New_York")
	equal(t, local(t, p.NextN(now, 5), ny), []string{"2026-03-04 09:15 EST", "2026-04-04 09:15 EDT"})
	if _, ok := p.Next(time.Date(2026, 4, 5, 0, 0, 0, 0, time.UTC)); ok {
		t.Fatal("a slot after ends_at")
	}
	if n := p.PerMonth(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)); n != 1 {
		t.Fatalf("PerMonth = %d; want 1", n)
	}
}

func TestRefused(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		spec timing.Spec
		want string
	}{
		{timing.Spec{Cron: "*/10 * * * *", Timezone: "UTC"}, "runs every 10m0s at its closest"},
		{timing.Spec{Cron: "0 7,8 * * 1", Timezone: "UTC"}, ""},
		{timing.Spec{Cron: "0 7 * *", Timezone: "UTC"}, "not a five-field cron expression"},
		{timing.Spec{Cron: "@daily", Timezone: "UTC"}, "not a five-field cron expression"},
		{timing.Spec{Cron: "0 7 31 2 *", Timezone: "UTC"}, "no time in the next year"},
		{timing.Spec{Cron: "0 7 * * 1", Timezone: "Mars/Olympus"}, "not an IANA time zone"},
		{timing.Spec{Cron: "0 7 * * 1", Timezone: "Local"}, "not an IANA time zone"},
		{timing.Spec{Cron: "0 7 * * 1"}, "timezone is required"},
		{timing.Spec{Every: "week", At: "07:00", Timezone: "UTC"}, "every week needs weekday"},
		{timing.Spec{Every: "month", At: "07:00", Monthday: 31, Timezone: "UTC"}, "a day from 1 to 28"},
		{timing.Spec{Every: "day", At: "7am", Timezone: "UTC"}, "HH:MM"},
		{timing.Spec{Every: "hour", At: "07:00", Timezone: "UTC"}, "one of day, week, month"},
		{timing.Spec{Cron: "0 7 * * 1", Every: "day", Timezone: "UTC"}, "not both"},
		{timing.Spec{Timezone: "UTC"}, "give cron"},
		{timing.Spec{Every: "day", At: "07:00", Timezone: "UTC", StartsAt: now, EndsAt: now}, "must be after starts_at"},
	} {
		_, err := timing.Parse(c.spec, time.Hour, now)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v; want accepted (its closest gap is the minimum)", c.spec, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v; want an error with %q", c.spec, err, c.want)
		}
	}
	if _, err := timing.Parse(timing.Spec{Every: "day", At: "07:00", Timezone: "UTC"}, 48*time.Hour, now); err == nil ||
		!strings.Contains(err.Error(), "minimum interval of 48h0m0s") {
		t.Errorf("every day under a 48h minimum: %v", err)
	}
}

// Seconds, first, for deployments whose minimum interval allows them.
func TestCronWithSeconds(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := timing.Parse(timing.Spec{Cron: "*/2 * * * * *", Timezone: "UTC"}, time.Hour, now); err == nil {
		t.Fatal("a cron every 2 seconds passed a 1h minimum")
	}
	p, err := timing.Parse(timing.Spec{Cron: "*/2 * * * * *", Timezone: "UTC"}, time.Second, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.NextN(now, 2); len(got) != 2 || got[1].Sub(got[0]) != 2*time.Second {
		t.Fatalf("slots = %v", got)
	}
	// More slots in 30 days than are counted: extrapolated, not overflowed.
	if n := p.PerMonth(now); n < 1_290_000 || n > 1_300_000 {
		t.Fatalf("PerMonth = %d; want about 1,296,000", n)
	}
}
