package chart

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// barRows returns each bar row's rect (if any) and value label.
func barRows(t *testing.T, root node) (rects []*node, values []node) {
	t.Helper()
	for _, g := range root.all("g") {
		if g.attr("class") != "chart-bar-row" {
			continue
		}
		var r *node
		if rs := g.all("rect"); len(rs) == 1 {
			r = &rs[0]
		}
		rects = append(rects, r)
		for _, txt := range g.all("text") {
			if strings.Contains(txt.attr("class"), "chart-value") {
				values = append(values, txt)
			}
		}
	}
	return rects, values
}

func TestBarsShowScoresWithValuesAtTheEnd(t *testing.T) {
	labels := []string{"/", "/pricing", "/contact"}
	out := Bars(labels, []float64{100, 50, math.NaN()}, Options{Title: "Audit scores", YMin: ptr(0), YMax: ptr(100)})
	root := parse(t, out)
	checkAccessible(t, root, "Audit scores")
	rects, values := barRows(t, root)
	if len(rects) != 3 || len(values) != 3 {
		t.Fatalf("%d rows with %d value labels, want 3 and 3", len(rects), len(values))
	}
	if rects[2] != nil || values[2].text() != "no value" {
		t.Errorf("a NaN score got a bar or reads %q, want no bar and \"no value\"", values[2].text())
	}
	full, half := rects[0].num(t, "width"), rects[1].num(t, "width")
	if math.Abs(full-2*half) > 1 {
		t.Errorf("score 100 is %v wide and 50 is %v: not proportional on a 0–100 axis", full, half)
	}
	for i := 0; i < 2; i++ {
		end := rects[i].num(t, "x") + rects[i].num(t, "width")
		if x := values[i].num(t, "x"); x < end {
			t.Errorf("value label of bar %d at x=%v, inside the bar ending at %v", i, x, end)
		}
	}
	if values[0].text() != "100" || values[1].text() != "50" {
		t.Errorf("value labels %q %q", values[0].text(), values[1].text())
	}
	if desc := root.all("desc")[0].text(); !strings.Contains(desc, "/pricing: 50.") {
		t.Errorf("description %q does not list the bars", desc)
	}
}

func TestBarsLimitsAndMismatches(t *testing.T) {
	var labels []string
	var values []float64
	for i := 0; i < 150; i++ {
		labels = append(labels, fmt.Sprintf("action %d", i))
		values = append(values, float64(i))
	}
	root := parse(t, Bars(labels, values, Options{Unit: "credits"}))
	rects, _ := barRows(t, root)
	if len(rects) != MaxBars || !strings.Contains(root.text(), "+50 more not shown") {
		t.Errorf("%d bars for 150 values, want %d and a note on the other 50", len(rects), MaxBars)
	}
	if !strings.Contains(root.text(), "99 credits") {
		t.Error("the unit is not written after the value")
	}

	// More values than labels, and the other way round.
	root = parse(t, Bars([]string{"a"}, []float64{1, 2}, Options{}))
	if rects, _ := barRows(t, root); len(rects) != 2 {
		t.Errorf("%d rows for 1 label and 2 values, want 2", len(rects))
	}
	root = parse(t, Bars([]string{"a", "b"}, []float64{1}, Options{}))
	if rects, values := barRows(t, root); len(rects) != 2 || rects[1] != nil || values[1].text() != "no value" {
		t.Errorf("a label without a value should read \"no value\" and have no bar")
	}
	for _, vals := range [][]float64{nil, {math.NaN()}, {math.Inf(-1)}} {
		root = parse(t, Bars([]string{"a"}, vals, Options{}))
		if !strings.Contains(root.text(), "No data yet") {
			t.Errorf("bars of %v: no \"No data yet\"", vals)
		}
	}
	// Negative values grow left from zero and keep their label right of zero.
	root = parse(t, Bars([]string{"gain", "loss"}, []float64{10, -10}, Options{}))
	rects, _ = barRows(t, root)
	if rects[0].num(t, "x") <= rects[1].num(t, "x") {
		t.Error("a negative bar does not start left of the positive one")
	}
}

func TestSparklineIsSmallAndInline(t *testing.T) {
	out := Sparkline([]float64{5, 4, 3, 2, 1}, Options{Title: "Position trend", InvertY: true})
	root := parse(t, out)
	checkAccessible(t, root, "Position trend")
	if root.attr("width") != "120" || root.attr("height") != "32" {
		t.Errorf("sparkline is %sx%s, want a fixed 120x32", root.attr("width"), root.attr("height"))
	}
	if len(out) > 1200 {
		t.Errorf("a 5-value sparkline takes %d bytes", len(out))
	}
	last := root.all("circle")[0]
	if last.num(t, "cy") > 4 {
		t.Errorf("inverted: the latest value, position 1, sits at y=%v, not at the top", last.num(t, "cy"))
	}
	desc := root.all("desc")[0].text()
	if !strings.Contains(desc, "first 5, latest 1, lowest 1, highest 5") {
		t.Errorf("description %q", desc)
	}
	long := make([]float64, 10000)
	for i := range long {
		long[i] = float64(i % 13)
	}
	if out := Sparkline(long, Options{}); len(out) > 12_000 {
		t.Errorf("10,000 values make a %d byte sparkline", len(out))
	}
	for _, vals := range [][]float64{nil, {math.NaN()}, {3}, {2, 2, 2}} {
		parse(t, Sparkline(vals, Options{}))
	}
}

func TestTableListsTheNumbersLatestFirst(t *testing.T) {
	a := daily("seo tools", 3, 2)
	b := Series{Name: "crm", Points: []Point{{X: day0.AddDate(0, 0, 1), Y: 7}, {X: day0.AddDate(0, 0, 5), Y: math.NaN()}}}
	root := parse(t, Table([]Series{a, b}, Options{Title: "Positions", Unit: "%"}))
	if c := root.all("caption"); len(c) != 1 || c[0].text() != "Positions" {
		t.Fatalf("caption %v", c)
	}
	var heads []string
	for _, th := range root.all("th") {
		if th.attr("scope") == "col" {
			heads = append(heads, th.text())
		}
	}
	if strings.Join(heads, "|") != "Date|seo tools|crm" {
		t.Errorf("column heads %q", heads)
	}
	var rows []string
	for _, tr := range root.all("tbody")[0].all("tr") {
		var cells []string
		for _, c := range tr.Nodes {
			cells = append(cells, c.text())
		}
		rows = append(rows, strings.Join(cells, "|"))
	}
	want := []string{"2 Mar 2026|2%|7%", "1 Mar 2026|3%|"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}

	var many Series
	for i := 0; i < MaxTableRows+20; i++ {
		many.Points = append(many.Points, Point{X: day0.Add(time.Duration(i) * time.Hour), Y: 1})
	}
	root = parse(t, Table([]Series{many}, Options{}))
	if n := len(root.all("tbody")[0].all("tr")); n != MaxTableRows {
		t.Errorf("%d rows, want %d", n, MaxTableRows)
	}
	if !strings.Contains(root.all("caption")[0].text(), "20 earlier not listed") {
		t.Error("the caption does not say rows were left out")
	}
	if !strings.Contains(string(Table(nil, Options{})), "No data yet") {
		t.Error("an empty table does not say so")
	}
	root = parse(t, BarsTable([]string{"/", "/a"}, []float64{90}, Options{}))
	if got := root.text(); got != "Chart/90/ano value" {
		t.Errorf("bars table reads %q", got)
	}
}

// luminance is WCAG 2's relative luminance of a #rrggbb colour.
func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	var l [3]float64
	for i := range l {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		c := float64(v) / 255
		if c <= 0.04045 {
			l[i] = c / 12.92
		} else {
			l[i] = math.Pow((c+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
}

func contrastOnWhite(t *testing.T, hex string) float64 {
	return 1.05 / (luminance(t, hex) + 0.05)
}

func TestColoursMeetWCAGAAOnWhite(t *testing.T) {
	for i, c := range palette {
		if r := contrastOnWhite(t, c); r < 3 {
			t.Errorf("series colour %d %s has %.2f:1 on white, want at least 3:1", i, c, r)
		}
	}
	for name, c := range map[string]string{"text": textColour, "empty": emptyColour} {
		if r := contrastOnWhite(t, c); r < 4.5 {
			t.Errorf("%s colour %s has %.2f:1, want at least 4.5:1", name, c, r)
		}
	}
	if r := contrastOnWhite(t, axisColour); r < 3 {
		t.Errorf("axis colour %s has %.2f:1, want at least 3:1", axisColour, r)
	}
}

func TestCSSMatchesTheDrawing(t *testing.T) {
	for i, c := range palette {
		re := regexp.MustCompile(`\.chart-s` + strconv.Itoa(i) + `\s*\{\s*stroke:\s*(#[0-9a-f]{6});\s*fill:\s*(#[0-9a-f]{6});`)
		m := re.FindStringSubmatch(CSS)
		if m == nil || m[1] != c || m[2] != c {
			t.Errorf("chart.css colours .chart-s%d as %v, the SVG as %s", i, m, c)
		}
	}
	for class, colour := range map[string]string{"chart-text": textColour, "chart-grid": gridColour, "chart-axis": axisColour} {
		if !regexp.MustCompile(`\.` + class + `\s*\{[^}]*` + colour).MatchString(CSS) {
			t.Errorf("chart.css does not give .%s the SVG's %s", class, colour)
		}
	}
	if strings.Count(CSS, "{") != strings.Count(CSS, "}") {
		t.Error("chart.css has unbalanced braces")
	}
}
