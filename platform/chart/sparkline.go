package chart

import (
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// Sparkline draws a small trend line to sit inside text or a table cell:
// no axes, no labels, a dot on the latest value. Values are evenly spaced
// in the order given; NaN and ±Inf are left out. InvertY, YMin and YMax
// apply as in [Line]. Unlike the charts it keeps its size (default
// 120×32) instead of taking its container's width. Its description, by
// default, gives the first, latest, lowest and highest value.
func Sparkline(values []float64, o Options) template.HTML {
	w, h := size(o, 120, 32)
	W, H := float64(w), float64(h)
	pts := make([]Point, len(values))
	for i, v := range values {
		pts[i] = Point{X: time.Unix(int64(i), 0), Y: v}
	}
	pts = cleanSeries(pts, MaxPointsPerSeries)

	var b strings.Builder
	if len(pts) == 0 {
		desc := o.Desc
		if desc == "" {
			desc = noData
		}
		openSVG(&b, "spark", W, H, titleOr(o.Title), desc, false)
		b.WriteString(`<text class="chart-empty" fill="` + emptyColour + `" x="` + num(W/2) + `" y="` + num(H/2+fontSize(w)/3) +
			`" text-anchor="middle">` + noData + `</text></svg>`)
		return template.HTML(b.String()) //nolint:gosec // G203: built by this package, every user string escaped by esc
	}

	vLo, vHi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		vLo, vHi = math.Min(vLo, p.Y), math.Max(vHi, p.Y)
	}
	lo, hi := clampAbs(vLo), clampAbs(vHi)
	if o.YMin != nil && finite(*o.YMin) {
		lo = clampAbs(*o.YMin)
	}
	if o.YMax != nil && finite(*o.YMax) {
		hi = clampAbs(*o.YMax)
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	pad := 3.0
	plotW, plotH := math.Max(W-2*pad, 1), math.Max(H-2*pad, 1)
	yOf := func(v float64) float64 {
		if hi == lo {
			return pad + plotH/2
		}
		v = math.Max(lo, math.Min(hi, clampAbs(v)))
		f := (v - lo) / (hi - lo)
		if o.InvertY {
			return pad + f*plotH
		}
		return pad + (1-f)*plotH
	}
	last := float64(max(len(values)-1, 1))
	xOf := func(p Point) float64 {
		if len(pts) == 1 {
			return pad + plotW/2
		}
		return pad + float64(p.X.Unix())/last*plotW
	}

	desc := o.Desc
	if desc == "" {
		desc = "Trend of " + strconv.Itoa(len(pts)) + " values: first " + formatValue(pts[0].Y, o.Unit) +
			", latest " + formatValue(pts[len(pts)-1].Y, o.Unit) + ", lowest " + formatValue(vLo, o.Unit) +
			", highest " + formatValue(vHi, o.Unit) + "."
	}
	openSVG(&b, "spark", W, H, titleOr(o.Title), desc, false)
	b.WriteString(`<g class="chart-series chart-s0" stroke="` + palette[0] + `" fill="` + palette[0] + `">`)
	if len(pts) > 1 {
		b.WriteString(`<path class="chart-path" fill="none" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round" d="`)
		for i, p := range pts {
			if i == 0 {
				b.WriteByte('M')
			} else {
				b.WriteByte('L')
			}
			b.WriteString(num(xOf(p)) + " " + num(yOf(p.Y)))
		}
		b.WriteString(`"/>`)
	}
	end := pts[len(pts)-1]
	b.WriteString(`<circle class="chart-last" stroke="none" cx="` + num(xOf(end)) + `" cy="` + num(yOf(end.Y)) + `" r="2.5"/></g></svg>`)
	return template.HTML(b.String()) //nolint:gosec // G203: as above
}
