package chart

import (
	"math"
	"strconv"
	"time"
)

// axis is a linear value axis: its domain and the ticks to label.
type axis struct {
	lo, hi float64
	step   float64
	ticks  []float64
}

// maxTicks bounds the ticks of any axis, whatever the arithmetic says.
const maxTicks = 50

// niceNum returns a "nice" number near x (1, 2, 2.5 or 5 times a power of
// ten), after Heckbert's "Nice numbers for graph labels" (Graphics Gems,
// 1990): ticks on such numbers are the ones people read at a glance.
func niceNum(x float64) float64 {
	if x <= 0 || !finite(x) {
		return 1
	}
	exp := math.Floor(math.Log10(x))
	f := x / math.Pow(10, exp)
	var nf float64
	switch {
	case f < 1.5:
		nf = 1
	case f < 2.25:
		nf = 2
	case f < 3.5 && exp >= 1:
		// 25, 250: but never 2.5 or 0.25, which need a decimal more than
		// their neighbours and read badly as positions or counts.
		nf = 2.5
	case f < 7.5:
		nf = 5
	default:
		nf = 10
	}
	return nf * math.Pow(10, exp)
}

// niceAxis fits an axis of about target ticks around [lo, hi]. An end
// given by the caller (fixLo, fixHi) stays where it is; a free end moves
// out to the next tick. A flat range is widened so that the line sits in
// the middle instead of on an edge.
//
// integer says the data are whole numbers (positions, counts): then the
// step is at least 1, so no tick reads "4.5" between positions 4 and 5.
func niceAxis(lo, hi float64, target int, fixLo, fixHi, integer bool) axis {
	lo, hi = clampAbs(lo), clampAbs(hi)
	if lo > hi {
		lo, hi = hi, lo
	}
	if hi-lo <= 1e-9*math.Max(1, math.Abs(lo)) {
		pad := math.Max(math.Abs(lo)*0.1, 1)
		switch {
		case !fixLo && !fixHi:
			lo, hi = lo-pad, hi+pad
		case !fixLo:
			lo -= 2 * pad
		case !fixHi:
			hi += 2 * pad
		default:
			lo, hi = lo-pad, hi+pad
		}
	}
	target = max(target, 2)
	step := niceNum((hi - lo) / float64(target-1))
	if integer {
		step = math.Max(step, 1)
	}
	if !fixLo {
		lo = math.Floor(lo/step) * step
	}
	if !fixHi {
		hi = math.Ceil(hi/step) * step
	}
	a := axis{lo: lo, hi: hi, step: step}
	first := math.Ceil(lo/step-1e-9) * step
	for i := 0; i < maxTicks; i++ {
		v := first + float64(i)*step
		if v > hi+step*1e-9 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		a.ticks = append(a.ticks, v)
	}
	return a
}

// startAtOne moves an axis of positions that came out below 1 (such as
// 0 to 50) to start at 1: there is no position 0, and "1" at the top is
// what a position chart is read against.
func (a *axis) startAtOne() {
	if a.lo >= 1 {
		return
	}
	a.lo = 1
	ticks := []float64{1}
	for _, t := range a.ticks {
		if t-1 >= a.step/2 {
			ticks = append(ticks, t)
		}
	}
	a.ticks = ticks
}

// tickLabels writes the ticks with as many decimals as the step needs,
// in thousands ("10k") or millions ("2.5M") when the numbers are long.
func (a axis) tickLabels(unit string) []string {
	var big float64
	for _, t := range a.ticks {
		big = math.Max(big, math.Abs(t))
	}
	div, suffix := 1.0, ""
	switch {
	case big >= 1e9:
		div, suffix = 1e9, "B"
	case big >= 1e6:
		div, suffix = 1e6, "M"
	case big >= 1e4:
		div, suffix = 1e3, "k"
	}
	// As many decimals as the step has (0.05 needs two, 25k none), the
	// same for every tick so that they line up.
	decimals := 0
	for s := a.step / div; decimals < 6; decimals++ {
		if r := s * math.Pow(10, float64(decimals)); math.Abs(r-math.Round(r)) <= 1e-6*math.Max(1, r) {
			break
		}
	}
	out := make([]string, len(a.ticks))
	for i, t := range a.ticks {
		if t == 0 {
			out[i] = withUnit("0", unit)
			continue
		}
		s := strconv.FormatFloat(t/div, 'f', decimals, 64)
		out[i] = withUnit(group(s)+suffix, unit)
	}
	return out
}

// seconds is a time as float seconds: time.Duration overflows past 292
// years, and a chart must not fail on a zero time in users' data.
func seconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// timeStep is one candidate spacing of date ticks.
type timeStep struct {
	hours, days, months int
	layout              string
}

func (s timeStep) approxSeconds() float64 {
	return float64(s.hours)*3600 + float64(s.days)*86400 + float64(s.months)*30.44*86400
}

func (s timeStep) add(t time.Time) time.Time {
	if s.hours > 0 {
		return t.Add(time.Duration(s.hours) * time.Hour)
	}
	return t.AddDate(0, s.months, s.days)
}

// floor aligns t down to the step's grid: whole hours, midnights, Mondays,
// first days of months, first days of years.
func (s timeStep) floor(t time.Time) time.Time {
	loc := t.Location()
	y, m, d := t.Date()
	switch {
	case s.hours > 0:
		return time.Date(y, m, d, t.Hour()-t.Hour()%s.hours, 0, 0, 0, loc)
	case s.days == 7 || s.days == 14:
		day := time.Date(y, m, d, 0, 0, 0, 0, loc)
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		return day.AddDate(0, 0, -back)
	case s.days > 0:
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	case s.months < 12:
		mi := int(m) - 1
		return time.Date(y, time.Month(mi-mi%s.months+1), 1, 0, 0, 0, 0, loc)
	}
	years := s.months / 12
	return time.Date(y-((y%years)+years)%years, 1, 1, 0, 0, 0, 0, loc)
}

var timeSteps = func() []timeStep {
	var s []timeStep
	for _, h := range []int{1, 2, 3, 6, 12} {
		s = append(s, timeStep{hours: h, layout: "2 Jan 15:04"})
	}
	for _, d := range []int{1, 2, 7, 14} {
		s = append(s, timeStep{days: d, layout: "2 Jan"})
	}
	for _, m := range []int{1, 2, 3, 6} {
		s = append(s, timeStep{months: m, layout: "Jan 2006"})
	}
	for _, y := range []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000} {
		s = append(s, timeStep{months: 12 * y, layout: "2006"})
	}
	return s
}()

// timeTicks picks dates to label between lo and hi: the finest calendar
// step whose labels fit (fit says how many labels of a layout fit), on the step's grid (midnights,
// Mondays, months), formatted for the span (hours, days, months, years).
func timeTicks(lo, hi time.Time, fit func(layout string) int) ([]time.Time, string) {
	span := seconds(hi) - seconds(lo)
	if span <= 0 {
		return []time.Time{lo}, dayLayout(lo)
	}
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s.approxSeconds() <= float64(max(fit(s.layout), 2)) {
			step = s
			break
		}
	}
	var ticks []time.Time
	t := step.floor(lo)
	for i := 0; i < 4*maxTicks && !t.After(hi) && len(ticks) < maxTicks; i++ {
		if !t.Before(lo) {
			ticks = append(ticks, t)
		}
		next := step.add(t)
		if !next.After(t) { // past the years time.Time can hold
			break
		}
		t = next
	}
	if len(ticks) == 0 {
		// A span shorter than the finest step: label both ends.
		return []time.Time{lo, hi}, "2 Jan 15:04"
	}
	return ticks, step.layout
}

// dayLayout is the layout of a lone date: with the time of day when it
// has one.
func dayLayout(t time.Time) string {
	if t.Hour() != 0 || t.Minute() != 0 {
		return "2 Jan 2006 15:04"
	}
	return "2 Jan 2006"
}

// tooltipLayout is how a point's date reads in its tooltip and the table:
// with the time of day when the data is finer than a day.
func tooltipLayout(series [][]Point) string {
	for _, pts := range series {
		for _, p := range pts {
			if h, m, s := p.X.Clock(); h != 0 || m != 0 || s != 0 {
				return "2 Jan 2006 15:04"
			}
		}
	}
	return "2 Jan 2006"
}

// formatDate formats a date for people; month names are English, as is
// the rest of the console.
func formatDate(t time.Time, layout string) string {
	return t.Format(layout)
}
