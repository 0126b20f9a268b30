package chart

import (
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Bars draws a horizontal bar per label (audit scores per page, credits
// per action), the label on the left and the value at the bar's end.
// values[i] belongs to labels[i]; a label without a value, or with NaN or
// ±Inf, gets no bar and reads "no value"; values beyond the labels are
// drawn with empty labels. The axis runs from 0 (or the smallest negative
// value) to the largest value, or from YMin to YMax when given (0 to 100
// for scores). Up to [MaxBars] bars are drawn; a note counts the rest.
// Height, when zero, is what the bars need. InvertY does not apply.
func Bars(labels []string, values []float64, o Options) template.HTML {
	n := max(len(labels), len(values))
	hidden := max(n-MaxBars, 0)
	n -= hidden
	w := o.Width
	if w <= 0 {
		w = 640
	}
	w = min(max(w, 60), 4000)
	fs := fontSize(w)
	rowH := fs * 1.8
	pad := fs * 0.5
	noteH := 0.0
	if hidden > 0 {
		noteH = fs * 1.6
	}

	anyValue := false
	vLo, vHi := 0.0, 0.0
	for i := 0; i < n && i < len(values); i++ {
		if v := values[i]; finite(v) {
			anyValue = true
			vLo, vHi = math.Min(vLo, clampAbs(v)), math.Max(vHi, clampAbs(v))
		}
	}
	if !anyValue {
		h := o.Height
		if h <= 0 {
			h = 160
		}
		_, h = size(Options{Width: w, Height: h}, w, h)
		return template.HTML(emptyChart("bars", w, h, o)) //nolint:gosec // G203: built by this package, every user string escaped by esc
	}
	if o.YMin != nil && finite(*o.YMin) {
		vLo = clampAbs(*o.YMin)
	}
	if o.YMax != nil && finite(*o.YMax) {
		vHi = clampAbs(*o.YMax)
	}
	if vLo > vHi {
		vLo, vHi = vHi, vLo
	}
	if vHi == vLo {
		vHi = vLo + 1
	}

	W := float64(w)
	H := pad*2 + float64(n)*rowH + noteH
	if o.Height > 0 {
		H = math.Max(float64(o.Height), H)
	}

	// Label column: as wide as the longest label, at most 40% of the width.
	names := make([]string, n)
	valueText := make([]string, n)
	labelW, valueW := 0.0, 0.0
	for i := 0; i < n; i++ {
		if i < len(labels) {
			names[i] = truncate(labels[i], maxName)
		}
		labelW = math.Max(labelW, textWidth(names[i], fs))
		v := math.NaN()
		if i < len(values) {
			v = values[i]
		}
		valueText[i] = formatValue(v, o.Unit)
		valueW = math.Max(valueW, textWidth(valueText[i], fs))
	}
	labelW = math.Min(labelW, W*0.4)
	maxChars := max(int(labelW/(fs*0.6)), 4)
	left := pad + labelW + fs*0.5
	right := pad + valueW + fs*0.4
	plotW := math.Max(W-left-right, fs*2)
	xOf := func(v float64) float64 {
		v = math.Max(vLo, math.Min(vHi, clampAbs(v)))
		return left + (v-vLo)/(vHi-vLo)*plotW
	}
	zero := xOf(0)

	var b strings.Builder
	b.Grow(1024 + 400*n)
	desc := o.Desc
	if desc == "" {
		desc = describeBars(names, values, n, hidden, o)
	}
	openSVG(&b, "bars", W, H, titleOr(o.Title), desc, true)
	b.WriteString(`<line class="chart-axis" stroke="` + axisColour + `" x1="` + num(zero) + `" x2="` + num(zero) +
		`" y1="` + num(pad) + `" y2="` + num(pad+float64(n)*rowH) + `"/>`)
	for i := 0; i < n; i++ {
		y := pad + float64(i)*rowH
		mid := y + rowH/2
		label := truncate(names[i], maxChars)
		b.WriteString(`<g class="chart-bar-row"><title>` + esc(names[i]) + `: ` + esc(valueText[i]) + `</title>`)
		b.WriteString(`<text class="chart-text" fill="` + textColour + `" x="` + num(left-fs*0.5) + `" y="` + num(mid+fs*0.35) +
			`" text-anchor="end">` + esc(label) + `</text>`)
		v := math.NaN()
		if i < len(values) {
			v = values[i]
		}
		end := zero
		if finite(v) {
			x0, x1 := zero, xOf(v)
			if x1 < x0 {
				x0, x1 = x1, x0
			}
			end = x1
			if v < 0 {
				end = zero
			}
			b.WriteString(`<rect class="chart-bar chart-s0" fill="` + palette[0] + `" x="` + num(x0) + `" y="` + num(y+rowH*0.15) +
				`" width="` + num(math.Max(x1-x0, 1)) + `" height="` + num(rowH*0.7) + `"/>`)
		}
		b.WriteString(`<text class="chart-text chart-value" fill="` + textColour + `" x="` + num(end+fs*0.3) + `" y="` + num(mid+fs*0.35) +
			`">` + esc(valueText[i]) + `</text></g>`)
	}
	if hidden > 0 {
		b.WriteString(`<text class="chart-text chart-note" fill="` + textColour + `" x="` + num(pad) + `" y="` + num(pad+float64(n)*rowH+fs*1.2) +
			`">+` + strconv.Itoa(hidden) + ` more not shown</text>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // G203: built by this package, every user string escaped by esc
}

// describeBars lists the bars for a screen reader, up to 20 of them.
func describeBars(names []string, values []float64, n, hidden int, o Options) string {
	var b strings.Builder
	b.WriteString("Bar chart of " + strconv.Itoa(n+hidden) + " values.")
	for i := 0; i < n && i < 20; i++ {
		v := math.NaN()
		if i < len(values) {
			v = values[i]
		}
		b.WriteString(" " + names[i] + ": " + formatValue(v, o.Unit) + ".")
	}
	if more := n + hidden - min(n, 20); more > 0 {
		b.WriteString(" " + strconv.Itoa(more) + " more.")
	}
	return b.String()
}
