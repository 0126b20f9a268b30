package report

import (
	"fmt"
	"time"
	_ "time/tzdata" // a report's time zone must load in a container without zoneinfo

	"github.com/atrium-hq/atrium/platform/apperr"
)

// Named periods.
const (
	LastMonth = "last_month"
	LastWeek  = "last_week"
)

// MaxSpanDays bounds a period given by dates: a year, a leap one included.
const MaxSpanDays = 366

// dateLayout is how dates are written: YYYY-MM-DD.
const dateLayout = time.DateOnly

// PeriodSpec is a checked period as the request gave it: a name, or two
// dates (From and To, both included).
type PeriodSpec struct {
	Name     string
	From, To string
}

// periodExpected says what a period may be.
const periodExpected = `"last_month", "last_week" or {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"} with from before to, at most 366 days apart`

// PeriodSchema is the JSON Schema of a period.
func PeriodSchema() map[string]any {
	date := map[string]any{"type": "string", "format": "date", "pattern": `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`}
	return map[string]any{"oneOf": []any{
		map[string]any{"type": "string", "enum": []any{LastMonth, LastWeek}},
		map[string]any{"type": "object", "properties": map[string]any{"from": date, "to": date},
			"required": []any{"from", "to"}, "additionalProperties": false},
	}}
}

// CheckPeriod checks a period field's value, a 400 naming name when it is
// not one.
func CheckPeriod(name string, v any) (any, error) {
	switch p := v.(type) {
	case string:
		if p == LastMonth || p == LastWeek {
			return PeriodSpec{Name: p}, nil
		}
	case map[string]any:
		for k := range p {
			if k != "from" && k != "to" {
				return nil, apperr.Invalid("%s has no field %q; a period is %s", name, k, periodExpected)
			}
		}
		from, err := date(name+".from", p["from"])
		if err != nil {
			return nil, err
		}
		to, err := date(name+".to", p["to"])
		if err != nil {
			return nil, err
		}
		if !from.Before(to) {
			return nil, apperr.Invalid("%s.from must be before %s.to; got %s and %s", name, name, from.Format(dateLayout), to.Format(dateLayout))
		}
		if days := int(to.Sub(from).Hours() / 24); days > MaxSpanDays {
			return nil, apperr.Invalid("%s spans %d days; a period spans at most %d", name, days, MaxSpanDays)
		}
		return PeriodSpec{From: from.Format(dateLayout), To: to.Format(dateLayout)}, nil
	}
	return nil, apperr.Invalid("%s must be %s; got %s", name, periodExpected, shown(v))
}

func date(name string, v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, apperr.Invalid("%s must be a date, YYYY-MM-DD; got %s", name, shown(v))
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return time.Time{}, apperr.Invalid("%s must be a date, YYYY-MM-DD; got %q", name, s)
	}
	return t, nil
}

// shown is a value as a 400 quotes it, cut short.
func shown(v any) string {
	s := fmt.Sprintf("%#v", v)
	if v == nil {
		s = "null"
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// CheckTimezone checks a time zone field: an IANA name.
func CheckTimezone(name string, v any) (any, error) {
	s, ok := v.(string)
	if ok && s != "" && len(s) <= 64 {
		if _, err := time.LoadLocation(s); err == nil {
			return s, nil
		}
	}
	return nil, apperr.Invalid("%s must be an IANA time zone name such as Europe/London or UTC; got %s", name, shown(v))
}

// Period is a resolved period: [Start, End) in a time zone, with the
// dates it reads as (First and Last, both included).
type Period struct {
	Start, End  time.Time
	First, Last string
	Label       string
}

// Resolve turns a spec into instants at now in loc: last_month is the
// calendar month before now's, last_week the Monday-to-Sunday week before
// now's.
func Resolve(p PeriodSpec, now time.Time, loc *time.Location) Period {
	now = now.In(loc)
	var start, end time.Time
	switch p.Name {
	case LastMonth:
		end = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
		start = end.AddDate(0, -1, 0)
	case LastWeek:
		daysSinceMonday := (int(now.Weekday()) + 6) % 7
		end = time.Date(now.Year(), now.Month(), now.Day()-daysSinceMonday, 0, 0, 0, 0, loc)
		start = end.AddDate(0, 0, -7)
	default:
		f, _ := time.ParseInLocation(dateLayout, p.From, loc)
		t, _ := time.ParseInLocation(dateLayout, p.To, loc)
		start, end = f, t.AddDate(0, 0, 1)
	}
	last := end.AddDate(0, 0, -1)
	out := Period{Start: start, End: end, First: start.Format(dateLayout), Last: last.Format(dateLayout)}
	out.Label = start.Format("2 January 2006") + " to " + last.Format("2 January 2006")
	if p.Name == LastMonth {
		out.Label = start.Format("January 2006")
	}
	return out
}

// Contains reports whether t falls in the period.
func (p Period) Contains(t time.Time) bool { return !t.Before(p.Start) && t.Before(p.End) }
