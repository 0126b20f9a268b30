package timing

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// Spec is a schedule's timing as a caller writes it: Cron, or Every with
// At (and Weekday for a week, Monthday for a month), in Timezone, with no
// slot before StartsAt nor after EndsAt (zero: unbounded).
type Spec struct {
	Cron     string
	Every    string
	At       string
	Weekday  string
	Monthday int
	Timezone string
	StartsAt time.Time
	EndsAt   time.Time
}

// The values of Spec.Every.
const (
	EveryDay   = "day"
	EveryWeek  = "week"
	EveryMonth = "month"
)

// MaxMonthday is the last day of the month a monthly schedule may name:
// every month has it.
const MaxMonthday = 28

var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// parser reads the five standard fields, or six with seconds first (which
// only a deployment with a short --schedule-min-interval, such as a test's,
// lets through); the descriptors (@daily) and a CRON_TZ= prefix are
// refused: the time zone is the schedule's field.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// Plan is a validated Spec: it answers the slots.
type Plan struct {
	spec Spec
	loc  *time.Location
	cron cron.Schedule
	// hour, minute of At; weekday of Weekday.
	hour, minute int
	weekday      time.Weekday
}

// scanLimit bounds the slots Parse walks to find a cron's smallest gap,
// and PerMonth to count a month's.
const scanLimit = 20000

// Parse validates s and returns its plan. A cron whose slots fall closer
// together than minInterval (or an every shorter than it) is refused,
// naming both: now is where the search for the smallest gap begins (a
// year of slots from it).
func Parse(s Spec, minInterval time.Duration, now time.Time) (*Plan, error) {
	p := &Plan{spec: s}
	if s.Timezone == "" {
		return nil, apperr.Invalid("timezone is required: an IANA time zone such as Europe/London or UTC")
	}
	if strings.ContainsAny(s.Timezone, " \\") || strings.HasPrefix(s.Timezone, "/") || strings.Contains(s.Timezone, "..") || strings.EqualFold(s.Timezone, "local") {
		return nil, apperr.Invalid("timezone %q is not an IANA time zone such as Europe/London or UTC", s.Timezone)
	}
	loc, err := time.LoadLocation(s.Timezone)
	if err != nil {
		return nil, apperr.Invalid("timezone %q is not an IANA time zone such as Europe/London or UTC", s.Timezone)
	}
	p.loc = loc
	if !s.StartsAt.IsZero() && !s.EndsAt.IsZero() && !s.EndsAt.After(s.StartsAt) {
		return nil, apperr.Invalid("ends_at (%s) must be after starts_at (%s)", s.EndsAt.Format(time.RFC3339), s.StartsAt.Format(time.RFC3339))
	}
	switch {
	case s.Cron != "" && s.Every != "":
		return nil, apperr.Invalid("give either cron or every (with at), not both")
	case s.Cron != "":
		if s.At != "" || s.Weekday != "" || s.Monthday != 0 {
			return nil, apperr.Invalid("at, weekday and monthday go with every, not with cron: a cron expression says the time itself")
		}
		c, err := parser.Parse(s.Cron)
		if err != nil || strings.HasPrefix(strings.TrimSpace(s.Cron), "CRON_TZ") || strings.HasPrefix(strings.TrimSpace(s.Cron), "TZ") {
			return nil, apperr.Invalid("cron %q is not a five-field cron expression (minute hour day-of-month month day-of-week, such as \"0 7 * * 1\"; a sixth field first gives seconds); the time zone is the timezone field", s.Cron)
		}
		if spec, ok := c.(*cron.SpecSchedule); ok {
			spec.Location = loc
		}
		p.cron = c
		if gap, a, ok := p.smallestGap(now); ok && gap < minInterval {
			return nil, apperr.Invalid("cron %q runs every %s at its closest (at %s), more often than the minimum interval of %s (--schedule-min-interval)",
				s.Cron, gap, a.In(loc).Format(time.RFC3339), minInterval)
		} else if !ok {
			return nil, apperr.Invalid("cron %q has no time in the next year; give one that runs at least once a year", s.Cron)
		}
	case s.Every != "":
		if err := p.parseEvery(minInterval); err != nil {
			return nil, err
		}
	default:
		return nil, apperr.Invalid("give cron (such as \"0 7 * * 1\") or every (day, week or month) with at (HH:MM)")
	}
	return p, nil
}

func (p *Plan) parseEvery(minInterval time.Duration) error {
	s := p.spec
	var nominal time.Duration
	switch s.Every {
	case EveryDay:
		nominal = 24 * time.Hour
		if s.Weekday != "" || s.Monthday != 0 {
			return apperr.Invalid("every day takes at only; weekday goes with every week, monthday with every month")
		}
	case EveryWeek:
		nominal = 7 * 24 * time.Hour
		wd, ok := weekdays[strings.ToLower(s.Weekday)]
		if !ok {
			return apperr.Invalid("every week needs weekday: one of monday, tuesday, wednesday, thursday, friday, saturday, sunday; got %q", s.Weekday)
		}
		if s.Monthday != 0 {
			return apperr.Invalid("monthday goes with every month, not every week")
		}
		p.weekday = wd
	case EveryMonth:
		nominal = 28 * 24 * time.Hour
		if s.Monthday < 1 || s.Monthday > MaxMonthday {
			return apperr.Invalid("every month needs monthday: a day from 1 to %d (every month has it); got %d", MaxMonthday, s.Monthday)
		}
		if s.Weekday != "" {
			return apperr.Invalid("weekday goes with every week, not every month")
		}
	default:
		return apperr.Invalid("every must be one of day, week, month; got %q", s.Every)
	}
	t, err := time.Parse("15:04", s.At)
	if err != nil || len(s.At) != 5 {
		return apperr.Invalid("at must be a local time HH:MM from 00:00 to 23:59, such as 07:00; got %q", s.At)
	}
	p.hour, p.minute = t.Hour(), t.Minute()
	if nominal < minInterval {
		return apperr.Invalid("every %s runs more often than the minimum interval of %s (--schedule-min-interval)", s.Every, minInterval)
	}
	return nil
}

// smallestGap walks the cron's slots for a year from now (up to
// scanLimit of them) and returns the smallest gap between two and where
// it begins; ok is false if it has fewer than two.
func (p *Plan) smallestGap(now time.Time) (gap time.Duration, at time.Time, ok bool) {
	end := now.AddDate(1, 0, 0)
	prev := p.cron.Next(now)
	if prev.IsZero() || prev.After(end) {
		return 0, time.Time{}, false
	}
	gap = end.Sub(now)
	for range scanLimit {
		next := p.cron.Next(prev)
		if next.IsZero() || next.After(end) {
			break
		}
		if d := next.Sub(prev); d < gap {
			gap, at = d, prev
		}
		prev = next
	}
	return gap, at, true
}

// Location is the plan's time zone.
func (p *Plan) Location() *time.Location { return p.loc }

// Next returns the first slot strictly after after, within StartsAt and
// EndsAt; false when none remains.
func (p *Plan) Next(after time.Time) (time.Time, bool) {
	if !p.spec.StartsAt.IsZero() && after.Before(p.spec.StartsAt) {
		after = p.spec.StartsAt.Add(-time.Nanosecond)
	}
	t := p.next(after)
	if t.IsZero() || (!p.spec.EndsAt.IsZero() && t.After(p.spec.EndsAt)) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// NextN returns up to n slots after after.
func (p *Plan) NextN(after time.Time, n int) []time.Time {
	var out []time.Time
	for len(out) < n {
		t, ok := p.Next(after)
		if !ok {
			break
		}
		out = append(out, t)
		after = t
	}
	return out
}

func (p *Plan) next(after time.Time) time.Time {
	if p.cron != nil {
		return p.cron.Next(after)
	}
	l := after.In(p.loc)
	y, m, d := l.Date()
	switch p.spec.Every {
	case EveryMonth:
		for i := range 3 {
			if t := time.Date(y, m+time.Month(i), p.spec.Monthday, p.hour, p.minute, 0, 0, p.loc); t.After(after) {
				return t
			}
		}
	default:
		for i := range 9 {
			if p.spec.Every == EveryWeek && time.Date(y, m, d+i, 12, 0, 0, 0, p.loc).Weekday() != p.weekday {
				continue
			}
			// time.Date places a local time in the hour the clocks skip
			// at the instant after the jump; one in the hour they repeat
			// is taken at its first occurrence. One slot either way.
			t := firstOccurrence(time.Date(y, m, d+i, p.hour, p.minute, 0, 0, p.loc))
			if t.After(after) {
				return t
			}
		}
	}
	return time.Time{} // unreachable: a day, week or month always has a next slot
}

// firstOccurrence returns the first instant with t's wall clock when the
// clocks went back over it (t may be its second occurrence), else t.
func firstOccurrence(t time.Time) time.Time {
	_, now := t.Zone()
	_, before := t.Add(-3 * time.Hour).Zone()
	if d := time.Duration(before-now) * time.Second; d > 0 {
		if e := t.Add(-d); e.Format("15:04:05") == t.Format("15:04:05") && e.Day() == t.Day() {
			return e
		}
	}
	return t
}

// PerMonth is how many slots fall in the 30 days after now, the basis of
// a schedule's estimated monthly credits (a cron denser than scanLimit in
// 30 days is extrapolated from its first scanLimit slots).
func (p *Plan) PerMonth(now time.Time) int64 {
	end := now.Add(30 * 24 * time.Hour)
	var n int64
	t := now
	for n < scanLimit {
		next, ok := p.Next(t)
		if !ok || next.After(end) {
			return n
		}
		n++
		t = next
	}
	return int64(float64(n) * float64(end.Sub(now)) / float64(max(t.Sub(now), time.Second)))
}

// String describes the timing for messages.
func (s Spec) String() string {
	if s.Cron != "" {
		return fmt.Sprintf("cron %q in %s", s.Cron, s.Timezone)
	}
	return fmt.Sprintf("every %s at %s in %s", s.Every, s.At, s.Timezone)
}
