package chart

import (
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// Above visibleMarkers points a series' markers are invisible hover
// targets: drawn, hundreds of them would hide the line they sit on. And
// such a series keeps at most maxHoverMarkers of them (each bucket's
// minimum and maximum, as for the line): points closer than a marker's
// width cannot be hovered apart anyway, each marker's tooltip costs about
// 90 bytes of page, and Table has every number.
const (
	visibleMarkers  = 60
	maxHoverMarkers = 120
)

// strokeWidth is the width of series lines, in SVG units.
const strokeWidth = "2.5"

// drawnSeries is a series as Line draws it.
type drawnSeries struct {
	name string
	pts  []Point
}

func seriesName(name string, i int) string {
	if strings.TrimSpace(name) == "" {
		return "Series " + strconv.Itoa(i+1)
	}
	return name
}

// Line draws series over time: axes with ticks on nice numbers, dates
// labelled by the span (hours, days, months or years), a legend, and a
// marker per point whose tooltip reads "Name: value on date". Up to
// [MaxSeries] series are drawn, each with its own colour and dash pattern;
// a note counts the rest. Each series is reduced to
// [MaxPointsPerSeries] points. With no finite value at all it draws
// "No data yet".
func Line(series []Series, o Options) template.HTML {
	w, h := size(o, 640, 280)
	var ds []drawnSeries
	hidden := 0
	for i, s := range series {
		pts := cleanSeries(s.Points, MaxPointsPerSeries)
		if len(pts) == 0 {
			continue
		}
		if len(ds) == MaxSeries {
			hidden++
			continue
		}
		ds = append(ds, drawnSeries{name: truncate(seriesName(s.Name, i), maxName), pts: pts})
	}
	if len(ds) == 0 {
		return template.HTML(emptyChart("line", w, h, o)) //nolint:gosec // G203: built by this package, every user string escaped by esc
	}
	return template.HTML(drawLine(ds, hidden, w, h, o)) //nolint:gosec // G203: as above
}

func drawLine(ds []drawnSeries, hidden, w, h int, o Options) string {
	fs := fontSize(w)
	W := float64(w)
	pad := fs * 0.5

	// The data's extent.
	tLo, tHi := ds[0].pts[0].X, ds[0].pts[0].X
	vLo, vHi := math.Inf(1), math.Inf(-1)
	integer := true
	for _, s := range ds {
		for _, p := range s.pts {
			if p.X.Before(tLo) {
				tLo = p.X
			}
			if p.X.After(tHi) {
				tHi = p.X
			}
			v := clampAbs(p.Y)
			vLo, vHi = math.Min(vLo, v), math.Max(vHi, v)
			integer = integer && v == math.Trunc(v)
		}
	}

	// The legend, laid out first: its rows are added below the plot.
	legend, legendH := layoutLegend(ds, hidden, W-2*pad, fs)

	top := fs * 0.75
	xLabelH := fs * 1.7
	// The legend takes its rows from the plot, down to a plot of half the
	// height; beyond that the chart grows taller than Height.
	plotH := math.Max(float64(h)-top-xLabelH-legendH-pad, math.Max(float64(h)*0.5, fs*3))
	totalH := top + plotH + xLabelH + legendH + pad

	// The y axis.
	lo, hi := vLo, vHi
	fixLo, fixHi := false, false
	if o.YMin != nil && finite(*o.YMin) {
		lo, fixLo = *o.YMin, true
	}
	if o.YMax != nil && finite(*o.YMax) {
		hi, fixHi = *o.YMax, true
	}
	target := min(max(int(plotH/(fs*2)), 2), 10)
	ax := niceAxis(lo, hi, target, fixLo, fixHi, integer)
	if o.InvertY && !fixLo && vLo >= 1 {
		ax.startAtOne()
	}
	labels := ax.tickLabels(o.Unit)
	labelW := 0.0
	for _, l := range labels {
		labelW = math.Max(labelW, textWidth(l, fs))
	}
	left := pad + labelW + fs*0.5
	if o.YLabel != "" {
		left += fs * 1.4
	}
	right := pad + fs*2
	plotW := math.Max(W-left-right, fs*4)

	yOf := func(v float64) float64 {
		v = math.Max(ax.lo, math.Min(ax.hi, clampAbs(v)))
		f := (v - ax.lo) / (ax.hi - ax.lo)
		if o.InvertY {
			return top + f*plotH
		}
		return top + (1-f)*plotH
	}
	s0, span := seconds(tLo), seconds(tHi)-seconds(tLo)
	xOf := func(t time.Time) float64 {
		if span <= 0 {
			return left + plotW/2
		}
		return left + (seconds(t)-s0)/span*plotW
	}

	var b strings.Builder
	b.Grow(4096 + 120*len(ds)*len(ds[0].pts))
	desc := o.Desc
	if desc == "" {
		desc = describeLine(ds, hidden, tLo, tHi, o)
	}
	openSVG(&b, "line", W, totalH, titleOr(o.Title), desc, true)

	// Grid and y ticks.
	b.WriteString(`<g class="chart-grid" stroke="` + gridColour + `" stroke-width="1">`)
	for _, t := range ax.ticks {
		y := num(yOf(t))
		b.WriteString(`<line x1="` + num(left) + `" x2="` + num(left+plotW) + `" y1="` + y + `" y2="` + y + `"/>`)
	}
	b.WriteString(`</g><g class="chart-text chart-ticks" fill="` + textColour + `" text-anchor="end">`)
	for i, t := range ax.ticks {
		b.WriteString(`<text x="` + num(left-fs*0.4) + `" y="` + num(yOf(t)+fs*0.35) + `">` + esc(labels[i]) + `</text>`)
	}
	b.WriteString(`</g>`)
	if o.YLabel != "" {
		b.WriteString(`<text class="chart-text chart-ylabel" fill="` + textColour + `" text-anchor="middle" transform="translate(` +
			num(pad+fs*0.8) + ` ` + num(top+plotH/2) + `) rotate(-90)">` + esc(truncate(o.YLabel, 40)) + `</text>`)
	}

	// Axes.
	b.WriteString(`<g class="chart-axis" stroke="` + axisColour + `" stroke-width="1">`)
	b.WriteString(`<line x1="` + num(left) + `" x2="` + num(left) + `" y1="` + num(top) + `" y2="` + num(top+plotH) + `"/>`)
	b.WriteString(`<line x1="` + num(left) + `" x2="` + num(left+plotW) + `" y1="` + num(top+plotH) + `" y2="` + num(top+plotH) + `"/>`)

	// Date ticks: as many as fit their labels.
	ticks, layout := timeTicks(tLo, tHi, func(layout string) int {
		return int(plotW / (textWidth(layout, fs) + fs*1.2))
	})
	for _, t := range ticks {
		x := num(xOf(t))
		b.WriteString(`<line x1="` + x + `" x2="` + x + `" y1="` + num(top+plotH) + `" y2="` + num(top+plotH+fs*0.3) + `"/>`)
	}
	b.WriteString(`</g><g class="chart-text chart-dates" fill="` + textColour + `">`)
	for _, t := range ticks {
		label := formatDate(t, layout)
		x, half := xOf(t), textWidth(label, fs)/2
		anchor := "middle"
		switch {
		case x-half < 0:
			anchor = "start"
			x = math.Max(x-fs*0.3, 0)
		case x+half > W:
			anchor = "end"
			x = math.Min(x+fs*0.3, W)
		}
		b.WriteString(`<text x="` + num(x) + `" y="` + num(top+plotH+fs*1.35) + `" text-anchor="` + anchor + `">` + esc(label) + `</text>`)
	}
	b.WriteString(`</g>`)

	// The series, the first on top: drawn last.
	dateLayout := tooltipLayout(seriesPoints(ds))
	for i := len(ds) - 1; i >= 0; i-- {
		s := ds[i]
		c := strconv.Itoa(i)
		b.WriteString(`<g class="chart-series chart-s` + c + `" stroke="` + palette[i] + `" fill="` + palette[i] + `">`)
		if len(s.pts) > 1 {
			b.WriteString(`<path class="chart-path" fill="none" stroke-width="` + strokeWidth +
				`" stroke-linejoin="round" stroke-linecap="round"`)
			if dashes[i] != "" {
				b.WriteString(` stroke-dasharray="` + dashes[i] + `"`)
			}
			b.WriteString(` d="`)
			for j, p := range s.pts {
				if j == 0 {
					b.WriteByte('M')
				} else {
					b.WriteByte('L')
				}
				b.WriteString(num(xOf(p.X)))
				b.WriteByte(' ')
				b.WriteString(num(yOf(p.Y)))
			}
			b.WriteString(`"/>`)
		}
		if len(s.pts) > visibleMarkers {
			b.WriteString(`<g class="chart-points chart-dense" fill-opacity="0" stroke="none">`)
		} else {
			b.WriteString(`<g class="chart-points" stroke="#ffffff" stroke-width="1">`)
		}
		name := esc(s.name)
		for _, p := range downsample(s.pts, maxHoverMarkers) {
			b.WriteString(`<circle cx="` + num(xOf(p.X)) + `" cy="` + num(yOf(p.Y)) + `" r="4"><title>` + name + `: ` +
				esc(formatValue(p.Y, o.Unit)) + ` on ` + esc(formatDate(p.X, dateLayout)) + `</title></circle>`)
		}
		b.WriteString(`</g></g>`)
	}

	// The legend, below the date labels.
	legendTop := top + plotH + xLabelH
	b.WriteString(`<g class="chart-legend">`)
	for _, it := range legend {
		y := legendTop + it.row*fs*1.5 + fs*0.75
		x := pad + it.x
		if it.series >= 0 {
			i := it.series
			b.WriteString(`<line class="chart-s` + strconv.Itoa(i) + `" stroke="` + palette[i] + `" stroke-width="` + strokeWidth +
				`" stroke-linecap="round" x1="` + num(x+2) + `" x2="` + num(x+fs*2-2) + `" y1="` + num(y) + `" y2="` + num(y) + `"`)
			if dashes[i] != "" {
				b.WriteString(` stroke-dasharray="` + dashes[i] + `"`)
			}
			b.WriteString(`/>`)
			x += fs * 2.4
		}
		b.WriteString(`<text class="chart-text" fill="` + textColour + `" x="` + num(x) + `" y="` + num(y+fs*0.35) + `">`)
		if it.full != it.label {
			b.WriteString(`<title>` + esc(it.full) + `</title>`)
		}
		b.WriteString(esc(it.label) + `</text>`)
	}
	b.WriteString(`</g></svg>`)
	return b.String()
}

func seriesPoints(ds []drawnSeries) [][]Point {
	out := make([][]Point, len(ds))
	for i, s := range ds {
		out[i] = s.pts
	}
	return out
}

// legendItem is one entry of the legend: a series' swatch and name, or
// (series -1) the note on series left out.
type legendItem struct {
	series      int
	label, full string
	x, row      float64
}

// layoutLegend places the legend's entries in rows of the given width and
// returns them with the height they take.
func layoutLegend(ds []drawnSeries, hidden int, width, fs float64) ([]legendItem, float64) {
	var items []legendItem
	for i, s := range ds {
		items = append(items, legendItem{series: i, label: truncate(s.name, 28), full: s.name})
	}
	if hidden > 0 {
		note := "+" + strconv.Itoa(hidden) + " more series in the table"
		items = append(items, legendItem{series: -1, label: note, full: note})
	}
	x, row := 0.0, 0.0
	for i := range items {
		w := textWidth(items[i].label, fs) + fs*1.2
		if items[i].series >= 0 {
			w += fs * 2.4
		}
		if x > 0 && x+w > width {
			x, row = 0, row+1
		}
		items[i].x, items[i].row = x, row
		x += w
	}
	return items, (row+1)*fs*1.5 + fs*0.25
}

// describeLine writes the description a screen reader reads for a line
// chart: what it covers and where each series went.
func describeLine(ds []drawnSeries, hidden int, lo, hi time.Time, o Options) string {
	layout := tooltipLayout(seriesPoints(ds))
	var b strings.Builder
	b.WriteString("Line chart of " + strconv.Itoa(len(ds)+hidden) + " series")
	if lo.Equal(hi) {
		b.WriteString(" on " + formatDate(lo, layout))
	} else {
		b.WriteString(" from " + formatDate(lo, layout) + " to " + formatDate(hi, layout))
	}
	b.WriteString(".")
	if o.InvertY {
		b.WriteString(" Lower values are higher up.")
	}
	for _, s := range ds {
		first, last := s.pts[0], s.pts[len(s.pts)-1]
		b.WriteString(" " + s.name + ": ")
		if len(s.pts) == 1 {
			b.WriteString(formatValue(first.Y, o.Unit) + ".")
			continue
		}
		b.WriteString(formatValue(first.Y, o.Unit) + " to " + formatValue(last.Y, o.Unit) + ".")
	}
	if hidden > 0 {
		b.WriteString(" " + strconv.Itoa(hidden) + " more series are only in the table.")
	}
	return b.String()
}
