package studio

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/chart"
)

// The client page's charts are drawn from the rows the data service
// returns (maps of a row's JSON), so these helpers know only the fields
// docs/datasets.md lists and tolerate any of them missing or null: a row
// without a date or a number is left out of a chart (it still shows in
// the dataset's table).

// maxKeywordSeries is how many keywords the positions chart draws: the
// chart package draws at most chart.MaxSeries lines, which stay legible.
const maxKeywordSeries = chart.MaxSeries

// rowTime reads a row's timestamp (RFC 3339) or date (YYYY-MM-DD) field.
func rowTime(row map[string]any, field string) (time.Time, bool) {
	s, ok := row[field].(string)
	if !ok || s == "" {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// firstTime is the first of fields that the row has as a time.
func firstTime(row map[string]any, fields ...string) (time.Time, bool) {
	for _, f := range fields {
		if t, ok := rowTime(row, f); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// rowNumber reads a row's number field (JSON numbers arrive as float64).
func rowNumber(row map[string]any, field string) (float64, bool) {
	n, ok := row[field].(float64)
	return n, ok
}

// rowText reads a row's string field, trimmed.
func rowText(row map[string]any, field string) string {
	s, _ := row[field].(string)
	return strings.TrimSpace(s)
}

// keywordSeries makes the positions chart's series: one per keyword, its
// position at each tracked_at (created_at when not tracked). At most
// maxKeywordSeries keywords are kept, by a rule a manager would pick:
// the largest search volume first (the keywords that bring visits), then
// the best latest position, then the name, so that the choice is stable.
// hidden is how many keywords were left out.
func keywordSeries(rows []map[string]any) (series []chart.Series, hidden int) {
	type kw struct {
		name   string
		volume float64
		points []chart.Point
		latest chart.Point
	}
	by := map[string]*kw{}
	for _, r := range rows {
		name := rowText(r, "keyword")
		pos, okP := rowNumber(r, "position")
		at, okT := firstTime(r, "tracked_at", "created_at")
		if name == "" || !okP || !okT {
			continue
		}
		k := by[name]
		if k == nil {
			k = &kw{name: name}
			by[name] = k
		}
		if v, ok := rowNumber(r, "search_volume"); ok && v > k.volume {
			k.volume = v
		}
		p := chart.Point{X: at, Y: pos}
		k.points = append(k.points, p)
		if p.X.After(k.latest.X) || len(k.points) == 1 {
			k.latest = p
		}
	}
	all := make([]*kw, 0, len(by))
	for _, k := range by {
		all = append(all, k)
	}
	slices.SortFunc(all, func(a, b *kw) int {
		if c := cmp.Compare(b.volume, a.volume); c != 0 {
			return c
		}
		if c := cmp.Compare(a.latest.Y, b.latest.Y); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	if len(all) > maxKeywordSeries {
		hidden = len(all) - maxKeywordSeries
		all = all[:maxKeywordSeries]
	}
	for _, k := range all {
		slices.SortFunc(k.points, func(a, b chart.Point) int { return a.X.Compare(b.X) })
		series = append(series, chart.Series{Name: k.name, Points: k.points})
	}
	return series, hidden
}

// auditScores are the audit reports' latest score per page (URL), for a
// bar chart: the pages in the order of their scores, worst first, since
// those are the pages to work on.
func auditScores(rows []map[string]any) (labels []string, values []float64) {
	type score struct {
		url string
		at  time.Time
		v   float64
	}
	latest := map[string]score{}
	for _, r := range rows {
		u := rowText(r, "url")
		v, ok := rowNumber(r, "score")
		if u == "" || !ok {
			continue
		}
		at, _ := firstTime(r, "fetched_at", "updated_at", "created_at")
		if cur, seen := latest[u]; !seen || at.After(cur.at) {
			latest[u] = score{url: u, at: at, v: v}
		}
	}
	all := make([]score, 0, len(latest))
	for _, s := range latest {
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b score) int {
		if c := cmp.Compare(a.v, b.v); c != 0 {
			return c
		}
		return strings.Compare(a.url, b.url)
	})
	for _, s := range all {
		labels = append(labels, s.url)
		values = append(values, s.v)
	}
	return pageLabels(labels), values
}

// pageLabels shortens URLs for a chart's labels, which have little room:
// without the scheme, and without the host when every URL shares it.
func pageLabels(urls []string) []string {
	out := make([]string, len(urls))
	host := ""
	same := true
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			out[i], same = raw, false
			continue
		}
		if i == 0 {
			host = u.Host
		}
		same = same && u.Host == host
		out[i] = u.Host + u.EscapedPath()
		if u.RawQuery != "" {
			out[i] += "?" + u.RawQuery
		}
	}
	if same && host != "" {
		for i := range out {
			out[i] = strings.TrimPrefix(out[i], host)
			if out[i] == "" {
				out[i] = "/"
			}
		}
	}
	return out
}

// backlinkGrowth is the number of backlinks known on each day one was
// first seen (first_seen, else created_at): a running total, so the line
// shows the link profile growing.
func backlinkGrowth(rows []map[string]any) []chart.Series {
	perDay := map[time.Time]int{}
	for _, r := range rows {
		at, ok := firstTime(r, "first_seen", "created_at")
		if !ok {
			continue
		}
		y, m, d := at.UTC().Date()
		perDay[time.Date(y, m, d, 0, 0, 0, 0, time.UTC)]++
	}
	if len(perDay) == 0 {
		return nil
	}
	days := make([]time.Time, 0, len(perDay))
	for d := range perDay {
		days = append(days, d)
	}
	slices.SortFunc(days, func(a, b time.Time) int { return a.Compare(b) })
	pts := make([]chart.Point, 0, len(days))
	total := 0
	for _, d := range days {
		total += perDay[d]
		pts = append(pts, chart.Point{X: d, Y: float64(total)})
	}
	return []chart.Series{{Name: "Backlinks", Points: pts}}
}

// visibilitySeries is the answer engines' visibility over time: a series
// per engine, its visibility at each scored_at (created_at when absent).
func visibilitySeries(rows []map[string]any) []chart.Series {
	by := map[string][]chart.Point{}
	for _, r := range rows {
		engine := rowText(r, "engine")
		v, okV := rowNumber(r, "visibility")
		at, okT := firstTime(r, "scored_at", "created_at")
		if engine == "" || !okV || !okT {
			continue
		}
		by[engine] = append(by[engine], chart.Point{X: at, Y: v})
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]chart.Series, 0, len(names))
	for _, n := range names {
		pts := by[n]
		slices.SortFunc(pts, func(a, b chart.Point) int { return a.X.Compare(b.X) })
		out = append(out, chart.Series{Name: n, Points: pts})
	}
	return out
}

// cell is how a dataset table shows one value of a row: text, a number as
// it came, a boolean as yes or no, a JSON value shortened.
func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case float64:
		if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
			return fmt.Sprint(int64(v))
		}
		return fmt.Sprint(v)
	case []any:
		return fmt.Sprintf("%d items", len(v))
	case map[string]any:
		return fmt.Sprintf("%d fields", len(v))
	}
	return fmt.Sprint(v)
}
