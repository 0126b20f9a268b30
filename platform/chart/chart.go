package chart

import (
	_ "embed"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Point is one measurement: the value Y at the time X.
type Point struct {
	X time.Time
	Y float64
}

// Series is one line of a chart, such as one keyword's positions.
type Series struct {
	Name   string
	Points []Point
}

// Options describe a chart. The zero value draws a 640×280 chart titled
// "Chart" with its y axis fitted to the data.
type Options struct {
	// Title is the chart's accessible name (the SVG <title>, the table's
	// caption). It is not drawn: the page's heading shows it.
	Title string
	// Desc is the accessible description (the SVG <desc>). Empty means a
	// summary written from the data: the span, each series' first and last
	// value.
	Desc string
	// YLabel is drawn along the y axis (such as "Position").
	YLabel string
	// InvertY puts the smallest value at the top, for positions where 1 is
	// the best.
	InvertY bool
	// YMin and YMax fix the y axis (such as 0 and 100 for scores); nil
	// means fitted to the data. Values outside are drawn at the edge.
	YMin, YMax *float64
	// Width and Height are the size of the drawing in SVG units (the
	// viewBox); the SVG itself takes its container's width. Defaults:
	// 640×280 for Line, 640 wide and as tall as the bars need for Bars,
	// 120×32 for Sparkline. A Line legend takes its rows from Height,
	// unless the plot would be left shorter than half of it: then the
	// chart grows taller.
	Width, Height int
	// Unit follows every value: "%" is written right after the number
	// ("42%"), any other unit after a space ("12 credits").
	Unit string
}

// Limits, fixed so that pages stay small whatever the data.
const (
	// MaxSeries is how many series Line draws; the rest are named in a
	// note and are still in Table.
	MaxSeries = 8
	// MaxPointsPerSeries is how many points of a series Line draws; longer
	// series are reduced to it, keeping each bucket's minimum and maximum.
	MaxPointsPerSeries = 500
	// MaxBars is how many bars Bars draws; a note counts the rest.
	MaxBars = 100
	// MaxTableRows is how many dates Table lists, the latest ones; the
	// caption says how many were left out.
	MaxTableRows = 1000
	// maxAbs bounds the values drawn: beyond it a number is drawn at the
	// edge (it would only make the axis unreadable, and it keeps the scale
	// arithmetic finite). Tooltips and tables still show the value.
	maxAbs = 1e12
	// maxName bounds a name or label as the charts repeat it (in every
	// tooltip of a series): a pasted paragraph must not weigh megabytes.
	// Tables show names whole.
	maxName = 120
	// minFontPx is the smallest text height on a phone, in CSS pixels, and
	// phoneWidth the width of the phone's screen it is measured on.
	minFontPx  = 11
	phoneWidth = 360
)

// CSS holds the styles of the classes the charts use. The console's
// stylesheet includes it; the charts read right without it too, since
// colours are also presentation attributes.
//
//go:embed chart.css
var CSS string

// palette holds the series colours, each with at least 3:1 contrast on
// white (WCAG 1.4.11), the same as chart.css (a test holds them equal).
var palette = [MaxSeries]string{
	"#1d4ed8", // blue
	"#c2410c", // orange
	"#047857", // green
	"#7e22ce", // purple
	"#b91c1c", // red
	"#0e7490", // teal
	"#a16207", // ochre
	"#4b5563", // grey
}

// dashes holds a stroke pattern per series, so that lines are told apart
// without colour. Units are SVG units at a stroke width of 2.5.
var dashes = [MaxSeries]string{
	"",
	"10 5",
	"2 5",
	"14 5 2 5",
	"5 5",
	"18 7",
	"2 4 2 10",
	"10 4 2 4 2 4",
}

const (
	textColour  = "#374151" // 10:1 on white
	axisColour  = "#6b7280" // 4.8:1 on white
	gridColour  = "#e5e7eb" // decorative
	emptyColour = "#4b5563"
	fontFamily  = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"
	noData      = "No data yet"
)

// idSeq makes the ids of <title> and <desc> unique within a page (and
// within a process): two charts on one page must not share them.
var idSeq atomic.Uint64

func nextID() string {
	return "chart-" + strconv.FormatUint(idSeq.Add(1), 36)
}

// fontSize is the text size in SVG units for a drawing w units wide, so
// that the text is minFontPx tall once the drawing is shrunk to a phone's
// width.
func fontSize(w int) float64 {
	fs := math.Ceil(minFontPx * float64(w) / phoneWidth)
	return math.Max(fs, 12)
}

// esc makes user text safe in SVG and HTML, text and attribute alike:
// it drops what XML 1.0 cannot hold (control characters, invalid UTF-8)
// and escapes <, >, &, ' and ".
func esc(s string) string {
	return html.EscapeString(xmlSafe(s))
}

func xmlSafe(s string) string {
	ok := true
	for _, r := range s {
		if !xmlChar(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if xmlChar(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func xmlChar(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20:
		return false
	case r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
		return false
	}
	return r <= 0x10FFFF
}

// truncate shortens s to n runes, ending with an ellipsis when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// textWidth estimates the drawn width of s at font size fs: the charts
// cannot measure text on the server, so labels get room for an average
// glyph of 0.6 em.
func textWidth(s string, fs float64) float64 {
	return float64(utf8.RuneCountInString(s)) * fs * 0.6
}

// num writes an SVG coordinate with one decimal, without trailing zeros.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func clampAbs(v float64) float64 { return math.Max(-maxAbs, math.Min(maxAbs, v)) }

// withUnit appends the unit to a formatted number.
func withUnit(s, unit string) string {
	switch unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + unit
}

// formatValue writes a value for people: thousands grouped, at most two
// decimals, no trailing zeros ("12,345", "3.5", "42%").
func formatValue(v float64, unit string) string {
	if !finite(v) {
		return "no value"
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return withUnit(group(s), unit)
}

// group inserts thousands separators in the integer part of a decimal.
func group(s string) string {
	if s == "-0" {
		s = "0"
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	if len(intPart) <= 3 {
		return sign + intPart + frac
	}
	var b strings.Builder
	lead := len(intPart) % 3
	if lead > 0 {
		b.WriteString(intPart[:lead])
	}
	for i := lead; i < len(intPart); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(intPart[i : i+3])
	}
	return sign + b.String() + frac
}

// cleanSeries returns the series' drawable points: finite values only,
// ordered by time, reduced to limit points.
func cleanSeries(pts []Point, limit int) []Point {
	out := make([]Point, 0, len(pts))
	for _, p := range pts {
		if finite(p.Y) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].X.Before(out[j].X) })
	return downsample(out, limit)
}

// downsample reduces pts (ordered by time) to at most limit points: the
// first, the last, and between them the minimum and maximum of each
// bucket, in time order, so that peaks and dips (a keyword falling out of
// the top 10 for a day) survive the reduction.
func downsample(pts []Point, limit int) []Point {
	n := len(pts)
	if n <= limit || limit < 4 {
		return pts
	}
	out := make([]Point, 0, limit)
	out = append(out, pts[0])
	inner := pts[1 : n-1]
	buckets := (limit - 2) / 2
	for b := 0; b < buckets; b++ {
		lo := b * len(inner) / buckets
		hi := (b + 1) * len(inner) / buckets
		if lo >= hi {
			continue
		}
		iMin, iMax := lo, lo
		for i := lo + 1; i < hi; i++ {
			if inner[i].Y < inner[iMin].Y {
				iMin = i
			}
			if inner[i].Y > inner[iMax].Y {
				iMax = i
			}
		}
		first, second := min(iMin, iMax), max(iMin, iMax)
		out = append(out, inner[first])
		if second != first {
			out = append(out, inner[second])
		}
	}
	return append(out, pts[n-1])
}

// openSVG writes the root element and its accessible name and description.
func openSVG(b *strings.Builder, kind string, w, h float64, title, desc string, responsive bool) {
	id := nextID()
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg chart-`)
	b.WriteString(kind)
	b.WriteString(`" viewBox="0 0 `)
	b.WriteString(num(w))
	b.WriteByte(' ')
	b.WriteString(num(h))
	if responsive {
		b.WriteString(`" width="100%" preserveAspectRatio="xMidYMid meet"`)
	} else {
		b.WriteString(`" width="` + num(w) + `" height="` + num(h) + `"`)
	}
	b.WriteString(` role="img" aria-labelledby="` + id + `-t" aria-describedby="` + id + `-d"`)
	b.WriteString(` font-family="` + fontFamily + `" font-size="` + num(fontSize(int(w))) + `">`)
	b.WriteString(`<title id="` + id + `-t">` + esc(title) + `</title>`)
	b.WriteString(`<desc id="` + id + `-d">` + esc(desc) + `</desc>`)
}

func titleOr(t string) string {
	if strings.TrimSpace(t) == "" {
		return "Chart"
	}
	return t
}

// emptyChart is the chart of no data: the same size as the chart would
// be, so the page does not jump, with "No data yet" in the middle.
func emptyChart(kind string, w, h int, o Options) string {
	var b strings.Builder
	desc := o.Desc
	if desc == "" {
		desc = noData
	}
	openSVG(&b, kind, float64(w), float64(h), titleOr(o.Title), desc, true)
	fs := fontSize(w)
	b.WriteString(`<rect class="chart-frame" x="0.5" y="0.5" width="` + num(float64(w)-1) + `" height="` + num(float64(h)-1) +
		`" fill="none" stroke="` + gridColour + `"/>`)
	b.WriteString(`<text class="chart-empty" x="` + num(float64(w)/2) + `" y="` + num(float64(h)/2+fs/3) +
		`" text-anchor="middle" fill="` + emptyColour + `">` + noData + `</text></svg>`)
	return b.String()
}

// size returns the options' size, or the default for missing parts, kept
// within bounds where the drawing still makes sense.
func size(o Options, defW, defH int) (int, int) {
	w, h := o.Width, o.Height
	if w <= 0 {
		w = defW
	}
	if h <= 0 {
		h = defH
	}
	return min(max(w, 60), 4000), min(max(h, 16), 4000)
}
