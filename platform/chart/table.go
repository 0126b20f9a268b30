package chart

import (
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Table gives the numbers of a line chart as an HTML table, for screen
// readers and for people who prefer numbers (the console shows it in a
// <details> under the chart): a row per date, the latest first, a column
// per series, a caption with the title. Every series is listed, beyond
// the [MaxSeries] that Line draws; a date without a value in a series has
// an empty cell. The latest [MaxTableRows] dates are listed; the caption
// says how many more there are.
func Table(series []Series, o Options) template.HTML {
	cols := make([]string, len(series))
	byDate := map[dateKey]map[int]float64{}
	var dates []time.Time
	var all [][]Point
	for i, s := range series {
		cols[i] = seriesName(s.Name, i)
		var kept []Point
		for _, p := range s.Points {
			if !finite(p.Y) {
				continue
			}
			kept = append(kept, p)
			k := keyOf(p.X)
			row, ok := byDate[k]
			if !ok {
				row = map[int]float64{}
				byDate[k] = row
				dates = append(dates, p.X)
			}
			row[i] = p.Y // the last value of a date wins, as on the chart's line
		}
		all = append(all, kept)
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i].After(dates[j]) })
	more := max(len(dates)-MaxTableRows, 0)
	dates = dates[:len(dates)-more]
	layout := tooltipLayout(all)

	var b strings.Builder
	b.Grow(256 + len(dates)*(24+16*len(series)))
	b.WriteString(`<table class="chart-table"><caption>` + esc(titleOr(o.Title)))
	if more > 0 {
		b.WriteString(` <span class="chart-table-note">(the latest ` + strconv.Itoa(len(dates)) + ` dates; ` + strconv.Itoa(more) + ` earlier not listed)</span>`)
	}
	b.WriteString(`</caption>`)
	if len(dates) == 0 {
		b.WriteString(`<tbody><tr><td class="chart-empty">` + noData + `</td></tr></tbody></table>`)
		return template.HTML(b.String()) //nolint:gosec // G203: built by this package, every user string escaped by esc
	}
	b.WriteString(`<thead><tr><th scope="col">Date</th>`)
	for _, c := range cols {
		b.WriteString(`<th scope="col">` + esc(c) + `</th>`)
	}
	b.WriteString(`</tr></thead><tbody>`)
	for _, d := range dates {
		row := byDate[keyOf(d)]
		b.WriteString(`<tr><th scope="row"><time datetime="` + esc(d.Format(time.RFC3339)) + `">` + esc(formatDate(d, layout)) + `</time></th>`)
		for i := range cols {
			if v, ok := row[i]; ok {
				b.WriteString(`<td class="chart-num">` + esc(formatValue(v, o.Unit)) + `</td>`)
			} else {
				b.WriteString(`<td></td>`)
			}
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table>`)
	return template.HTML(b.String()) //nolint:gosec // G203: as above
}

// BarsTable gives the numbers of a bar chart as an HTML table: a row per
// label, in the order given, with every label (no [MaxBars] limit).
func BarsTable(labels []string, values []float64, o Options) template.HTML {
	n := max(len(labels), len(values))
	var b strings.Builder
	b.WriteString(`<table class="chart-table"><caption>` + esc(titleOr(o.Title)) + `</caption>`)
	if n == 0 {
		b.WriteString(`<tbody><tr><td class="chart-empty">` + noData + `</td></tr></tbody></table>`)
		return template.HTML(b.String()) //nolint:gosec // G203: built by this package, every user string escaped by esc
	}
	b.WriteString(`<tbody>`)
	for i := 0; i < n; i++ {
		label, v := "", math.NaN()
		if i < len(labels) {
			label = labels[i]
		}
		if i < len(values) {
			v = values[i]
		}
		b.WriteString(`<tr><th scope="row">` + esc(label) + `</th><td class="chart-num">` + esc(formatValue(v, o.Unit)) + `</td></tr>`)
	}
	b.WriteString(`</tbody></table>`)
	return template.HTML(b.String()) //nolint:gosec // G203: as above
}

// dateKey identifies an instant whatever its time zone (time.Time's ==
// compares zones too) and whatever its year (UnixNano overflows).
type dateKey struct {
	sec  int64
	nsec int
}

func keyOf(t time.Time) dateKey { return dateKey{t.Unix(), t.Nanosecond()} }
