package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// node is any XML element, decoded generically so tests can walk the SVG
// the way a browser's DOM would.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []node     `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n node) num(t *testing.T, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attr(name), 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.XMLName.Local, name, n.attr(name), err)
	}
	return v
}

// all returns every element named local, in document order.
func (n node) all(local string) []node {
	var out []node
	var walk func(node)
	walk = func(m node) {
		if m.XMLName.Local == local {
			out = append(out, m)
		}
		for _, c := range m.Nodes {
			walk(c)
		}
	}
	walk(n)
	return out
}

// text is the element's text content, its descendants' included, as a
// browser's textContent.
func (n node) text() string {
	var b strings.Builder
	b.WriteString(n.Text)
	for _, c := range n.Nodes {
		b.WriteString(c.text())
	}
	return b.String()
}

// parse proves out is well-formed XML and checks what every chart
// promises: no style attribute (the CSP refuses them), no script or style
// element, only chart- classes, and no NaN or Inf in a number.
func parse(t *testing.T, out template.HTML) node {
	t.Helper()
	var root node
	if err := xml.Unmarshal([]byte(out), &root); err != nil {
		t.Fatalf("not well-formed XML: %v\n%s", err, clip(string(out)))
	}
	var walk func(node)
	walk = func(m node) {
		switch m.XMLName.Local {
		case "script", "style", "foreignObject":
			t.Errorf("output has a <%s> element", m.XMLName.Local)
		}
		for _, a := range m.Attrs {
			switch {
			case a.Name.Local == "style":
				t.Errorf("<%s> has a style attribute: the CSP forbids inline styles", m.XMLName.Local)
			case strings.HasPrefix(strings.ToLower(a.Name.Local), "on"):
				t.Errorf("<%s> has an event handler attribute %s", m.XMLName.Local, a.Name.Local)
			case a.Name.Local == "class":
				for _, c := range strings.Fields(a.Value) {
					if !strings.HasPrefix(c, "chart-") {
						t.Errorf("class %q is not prefixed chart-", c)
					}
				}
			case a.Name.Local != "title" && (strings.Contains(a.Value, "NaN") || strings.Contains(a.Value, "Inf")):
				t.Errorf("<%s %s=%q>: not a number", m.XMLName.Local, a.Name.Local, a.Value)
			}
		}
		for _, c := range m.Nodes {
			walk(c)
		}
	}
	walk(root)
	return root
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// checkAccessible checks the root is an image named by its <title> and
// described by its <desc>, through ids that exist.
func checkAccessible(t *testing.T, root node, title string) {
	t.Helper()
	if root.XMLName.Local != "svg" || root.attr("role") != "img" {
		t.Fatalf("root is <%s role=%q>, want <svg role=img>", root.XMLName.Local, root.attr("role"))
	}
	ids := map[string]node{}
	for _, local := range []string{"title", "desc"} {
		for _, n := range root.all(local) {
			if id := n.attr("id"); id != "" {
				ids[id] = n
			}
		}
	}
	name, ok := ids[root.attr("aria-labelledby")]
	if !ok || name.XMLName.Local != "title" || name.text() != title {
		t.Errorf("aria-labelledby=%q names %q, want a <title> %q", root.attr("aria-labelledby"), name.text(), title)
	}
	desc, ok := ids[root.attr("aria-describedby")]
	if !ok || desc.XMLName.Local != "desc" || strings.TrimSpace(desc.text()) == "" {
		t.Errorf("aria-describedby=%q does not name a non-empty <desc>", root.attr("aria-describedby"))
	}
	if root.attr("viewBox") == "" {
		t.Error("no viewBox: the chart would not scale")
	}
}

var day0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func daily(name string, ys ...float64) Series {
	s := Series{Name: name}
	for i, y := range ys {
		s.Points = append(s.Points, Point{X: day0.AddDate(0, 0, i), Y: y})
	}
	return s
}

func ptr(v float64) *float64 { return &v }

// circleFor returns the marker whose tooltip starts with prefix.
func circleFor(t *testing.T, root node, prefix string) node {
	t.Helper()
	for _, c := range root.all("circle") {
		if strings.HasPrefix(c.text(), prefix) {
			return c
		}
	}
	t.Fatalf("no marker with a tooltip starting %q", prefix)
	return node{}
}

func TestLineIsAnAccessibleScalableImage(t *testing.T) {
	out := Line([]Series{daily("seo tools", 12, 9, 7)}, Options{Title: "Positions in March", YLabel: "Position", InvertY: true})
	root := parse(t, out)
	checkAccessible(t, root, "Positions in March")
	if root.attr("width") != "100%" || root.attr("preserveAspectRatio") == "" {
		t.Errorf("width=%q preserveAspectRatio=%q: want 100%% and a ratio, to fit a phone", root.attr("width"), root.attr("preserveAspectRatio"))
	}
	if root.attr("viewBox") != "0 0 640 280" {
		t.Errorf("viewBox %q, want the default 640×280, legend included", root.attr("viewBox"))
	}
	c := circleFor(t, root, "seo tools: 9 on")
	if got := c.text(); got != "seo tools: 9 on 2 Mar 2026" {
		t.Errorf("tooltip %q, want %q", got, "seo tools: 9 on 2 Mar 2026")
	}
	desc := root.all("desc")[0].text()
	for _, want := range []string{"1 Mar 2026", "3 Mar 2026", "seo tools: 12 to 7", "Lower values are higher up"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description %q lacks %q", desc, want)
		}
	}
	if !strings.Contains(string(out), ">Position</text>") {
		t.Error("the y label is not drawn")
	}
}

func TestInvertedAxisPutsPositionOneAbovePositionFifty(t *testing.T) {
	s := []Series{daily("kw", 50, 1, 20)}
	root := parse(t, Line(s, Options{InvertY: true}))
	one, fifty := circleFor(t, root, "kw: 1 on"), circleFor(t, root, "kw: 50 on")
	if one.num(t, "cy") >= fifty.num(t, "cy") {
		t.Errorf("inverted: position 1 at y=%v, position 50 at y=%v; 1 must be higher (smaller y)", one.num(t, "cy"), fifty.num(t, "cy"))
	}
	// The axis starts at 1, at the top: there is no position 0.
	ticks := tickYs(t, root)
	if _, ok := ticks["0"]; ok {
		t.Errorf("inverted position axis has a 0 tick: %v", ticks)
	}
	if y1, ok := ticks["1"]; !ok {
		t.Errorf("inverted position axis has no tick 1: %v", ticks)
	} else {
		for label, y := range ticks {
			if label != "1" && y <= y1 {
				t.Errorf("tick %s at y=%v is not below tick 1 at y=%v", label, y, y1)
			}
		}
	}

	root = parse(t, Line(s, Options{}))
	one, fifty = circleFor(t, root, "kw: 1 on"), circleFor(t, root, "kw: 50 on")
	if one.num(t, "cy") <= fifty.num(t, "cy") {
		t.Errorf("not inverted: 1 at y=%v, 50 at y=%v; 50 must be higher", one.num(t, "cy"), fifty.num(t, "cy"))
	}
}

// tickYs maps each y tick label to its height.
func tickYs(t *testing.T, root node) map[string]float64 {
	out := map[string]float64{}
	for _, g := range root.all("g") {
		if strings.Contains(g.attr("class"), "chart-ticks") {
			for _, txt := range g.all("text") {
				out[txt.text()] = txt.num(t, "y")
			}
		}
	}
	return out
}

func TestUsersTextStaysEscaped(t *testing.T) {
	evil := []string{`<script>alert(1)</script>`, `"&'`, "</svg><img src=x onerror=alert(1)>", "tab\there\x00\x1b[31m\xff"}
	var series []Series
	for _, name := range evil {
		series = append(series, daily(name, 3, 4))
	}
	o := Options{Title: evil[0], Desc: evil[1], YLabel: evil[2], Unit: `<b>`}
	outputs := map[string]template.HTML{
		"line":      Line(series, o),
		"bars":      Bars(evil, []float64{1, 2, 3, 4}, o),
		"sparkline": Sparkline([]float64{1, 2}, o),
		"table":     Table(series, o),
		"barstable": BarsTable(evil, []float64{1, 2, 3, 4}, o),
	}
	for kind, out := range outputs {
		s := string(out)
		for _, raw := range []string{"<script", "<img", "<b>", `"&'`} {
			if strings.Contains(s, raw) {
				t.Errorf("%s: raw %q in output", kind, raw)
			}
		}
		if !strings.Contains(s, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(s, "&#34;&amp;&#39;") {
			t.Errorf("%s: escaped names missing", kind)
		}
		root := parse(t, out)
		// Decoded, the text is the user's text again (less what XML cannot hold).
		if !strings.Contains(root.text(), `<script>alert(1)</script>`) {
			t.Errorf("%s: the name does not read back as the user wrote it", kind)
		}
	}
	root := parse(t, outputs["line"])
	checkAccessible(t, root, evil[0])
	if c := circleFor(t, root, `"&': 3`); c.text() != `"&': 3 <b> on 1 Mar 2026` {
		t.Errorf("tooltip %q", c.text())
	}
}

func TestChartsInATemplateStayAsMarkup(t *testing.T) {
	tpl := template.Must(template.New("p").Parse(`<figure>{{.Chart}}<details><summary>Numbers</summary>{{.Table}}</details></figure>`))
	var buf bytes.Buffer
	s := []Series{daily("a<b", 1, 2)}
	if err := tpl.Execute(&buf, map[string]any{"Chart": Line(s, Options{}), "Table": Table(s, Options{})}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<figure><svg ") || !strings.Contains(buf.String(), "<table ") || !strings.Contains(buf.String(), "a&lt;b") {
		t.Errorf("html/template did not embed the chart as markup:\n%s", clip(buf.String()))
	}
}

func TestOddInputDrawsSensiblyAndNeverPanics(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	var zeroTimes Series
	zeroTimes.Name = "zero"
	zeroTimes.Points = []Point{{Y: 1}, {X: day0, Y: 2}}
	cases := []struct {
		name   string
		series []Series
		o      Options
		empty  bool
		points int
	}{
		{name: "nil", series: nil, empty: true},
		{name: "no points", series: []Series{{Name: "a"}, {Name: "b"}}, empty: true},
		{name: "only NaN and Inf", series: []Series{daily("a", nan, inf, math.Inf(-1))}, empty: true},
		{name: "one point", series: []Series{daily("a", 5)}, points: 1},
		{name: "all equal", series: []Series{daily("a", 7, 7, 7, 7)}, points: 4},
		{name: "NaN among values", series: []Series{daily("a", 1, nan, 3, inf)}, points: 2},
		{name: "huge values", series: []Series{daily("a", math.MaxFloat64, -math.MaxFloat64, 1e300)}, points: 3},
		{name: "tiny values", series: []Series{daily("a", 1e-300, 2e-300, 5e-324)}, points: 3},
		{name: "zero time and now", series: []Series{zeroTimes}, points: 2},
		{name: "same time twice", series: []Series{{Name: "a", Points: []Point{{X: day0, Y: 1}, {X: day0, Y: 2}}}}, points: 2},
		{name: "YMin above YMax", series: []Series{daily("a", 1, 2)}, o: Options{YMin: ptr(100), YMax: ptr(0)}, points: 2},
		{name: "YMin equals YMax", series: []Series{daily("a", 1, 2)}, o: Options{YMin: ptr(5), YMax: ptr(5)}, points: 2},
		{name: "NaN bounds", series: []Series{daily("a", 1, 2)}, o: Options{YMin: ptr(nan), YMax: ptr(inf)}, points: 2},
		{name: "tiny size", series: []Series{daily("a", 1, 2, 3)}, o: Options{Width: 1, Height: 1}, points: 3},
		{name: "negative size", series: []Series{daily("a", 1, 2, 3)}, o: Options{Width: -5, Height: -5}, points: 3},
		{name: "inverted with zero and negatives", series: []Series{daily("a", 0, -3, 2)}, o: Options{InvertY: true}, points: 3},
		{name: "unnamed", series: []Series{daily("", 1, 2)}, points: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := Line(c.series, c.o)
			root := parse(t, out)
			checkAccessible(t, root, "Chart")
			hasEmpty := strings.Contains(root.text(), "No data yet")
			if hasEmpty != c.empty {
				t.Errorf("\"No data yet\" shown: %v, want %v", hasEmpty, c.empty)
			}
			if got := len(root.all("circle")); got != c.points {
				t.Errorf("%d markers, want %d", got, c.points)
			}
			parse(t, Table(c.series, c.o))
			var ys []float64
			for _, s := range c.series {
				for _, p := range s.Points {
					ys = append(ys, p.Y)
				}
			}
			parse(t, Sparkline(ys, c.o))
			parse(t, Bars([]string{"x"}, ys, c.o))
		})
	}
}

func TestEqualValuesSitInTheMiddle(t *testing.T) {
	root := parse(t, Line([]Series{daily("flat", 42, 42, 42)}, Options{}))
	var cy []float64
	for _, c := range root.all("circle") {
		cy = append(cy, c.num(t, "cy"))
	}
	if cy[0] != cy[1] || cy[1] != cy[2] {
		t.Fatalf("equal values at different heights: %v", cy)
	}
	ticks := tickYs(t, root)
	var top, bottom = math.Inf(1), math.Inf(-1)
	for _, y := range ticks {
		top, bottom = math.Min(top, y), math.Max(bottom, y)
	}
	if cy[0] <= top || cy[0] >= bottom {
		t.Errorf("a flat line at y=%v lies on the axis' edge (ticks from %v to %v)", cy[0], top, bottom)
	}
}

func TestLongSeriesAreReducedKeepingPeaks(t *testing.T) {
	s := Series{Name: "backlinks"}
	for i := 0; i < 10000; i++ {
		y := 1000 + float64(i%7)
		switch i {
		case 4321:
			y = 99999 // a spike on one day
		case 7777:
			y = 3 // a dip
		}
		s.Points = append(s.Points, Point{X: day0.Add(time.Duration(i) * time.Hour), Y: y})
	}
	out := Line([]Series{s}, Options{Title: "Backlinks"})
	root := parse(t, out)
	vertices := strings.Count(root.all("path")[0].attr("d"), "L") + 1
	if vertices > MaxPointsPerSeries || vertices < MaxPointsPerSeries*9/10 {
		t.Errorf("the line of 10,000 points has %d vertices, want at most %d and not much fewer", vertices, MaxPointsPerSeries)
	}
	if markers := root.all("circle"); len(markers) > maxHoverMarkers {
		t.Errorf("%d markers for 10,000 points, want at most %d", len(markers), maxHoverMarkers)
	}
	if size := len(out); size > 30_000 {
		t.Errorf("10,000 points made %d bytes of SVG; the page must stay small", size)
	}
	// A pasted paragraph as a name does not weigh on every tooltip.
	s.Name = strings.Repeat("very long keyword ", 1000)
	if size := len(Line([]Series{s}, Options{})); size > 60_000 {
		t.Errorf("a long name made %d bytes of SVG", size)
	}
	tips := root.text()
	last := "on " + s.Points[len(s.Points)-1].X.Format("2 Jan 2006 15:04")
	for _, want := range []string{"backlinks: 99,999 on", "backlinks: 3 on", "on 1 Mar 2026 00:00", last} {
		if !strings.Contains(tips, want) {
			t.Errorf("reduced series lost %q (spike, dip, first or last point)", want)
		}
	}
}

func TestDownsample(t *testing.T) {
	var pts []Point
	for i := 0; i < 2001; i++ {
		pts = append(pts, Point{X: day0.Add(time.Duration(i) * time.Minute), Y: math.Sin(float64(i))})
	}
	got := downsample(pts, 100)
	if len(got) > 100 {
		t.Fatalf("%d points, want at most 100", len(got))
	}
	if got[0] != pts[0] || got[len(got)-1] != pts[len(pts)-1] {
		t.Error("first or last point dropped")
	}
	for i := 1; i < len(got); i++ {
		if !got[i].X.After(got[i-1].X) {
			t.Fatalf("points out of time order at %d", i)
		}
	}
	if n := len(downsample(pts[:100], 100)); n != 100 {
		t.Errorf("a series within the limit was changed: %d points", n)
	}
}

func TestSeriesBeyondEightAreCountedAndStillTabled(t *testing.T) {
	var series []Series
	for i := 0; i < 10; i++ {
		series = append(series, daily(fmt.Sprintf("keyword %d", i), float64(i+1), float64(i+2)))
	}
	out := Line(series, Options{})
	root := parse(t, out)
	dashesSeen := map[string]bool{}
	colours := map[string]bool{}
	groups := 0
	for _, g := range root.all("g") {
		if !strings.Contains(g.attr("class"), "chart-series") {
			continue
		}
		groups++
		colours[g.attr("stroke")] = true
		for _, p := range g.all("path") {
			dashesSeen[p.attr("stroke-dasharray")] = true
		}
	}
	if groups != MaxSeries || len(colours) != MaxSeries || len(dashesSeen) != MaxSeries {
		t.Errorf("%d series drawn with %d colours and %d dash patterns, want %d of each", groups, len(colours), len(dashesSeen), MaxSeries)
	}
	if !strings.Contains(root.text(), "+2 more series in the table") {
		t.Error("the legend does not say two series are left out")
	}
	for i := 0; i < MaxSeries; i++ {
		if !strings.Contains(string(out), fmt.Sprintf(`class="chart-s%d"`, i)) {
			t.Errorf("legend has no swatch chart-s%d", i)
		}
	}
	table := parse(t, Table(series, Options{}))
	if got := len(table.all("th")); got != 11+2 { // Date, 10 series, 2 rows
		t.Errorf("table has %d header cells, want 13", got)
	}
}

func TestTextIsReadableOnAPhone(t *testing.T) {
	for _, w := range []int{360, 640, 1200} {
		o := Options{Width: w}
		for kind, out := range map[string]template.HTML{
			"line": Line([]Series{daily("a", 1, 2)}, o),
			"bars": Bars([]string{"a"}, []float64{1}, o),
		} {
			root := parse(t, out)
			vb := strings.Fields(root.attr("viewBox"))
			vw, _ := strconv.ParseFloat(vb[2], 64)
			fs := root.num(t, "font-size")
			if px := fs * phoneWidth / vw; px < minFontPx {
				t.Errorf("%s %d wide: text is %.1f px on a 360 px phone, want at least 11", kind, w, px)
			}
			if strings.Count(string(out), "font-size") != 1 {
				t.Errorf("%s: some text sets its own font-size", kind)
			}
		}
	}
}

func TestDateLabelsFollowTheSpan(t *testing.T) {
	span := func(n int, step time.Duration) Series {
		s := Series{Name: "a"}
		for i := 0; i < n; i++ {
			s.Points = append(s.Points, Point{X: day0.Add(time.Duration(i) * step), Y: float64(i)})
		}
		return s
	}
	cases := []struct {
		name    string
		s       Series
		pattern string
	}{
		{"hours", span(24, time.Hour), `^\d{1,2} Mar \d\d:\d\d$`},
		{"days", span(20, 24*time.Hour), `^\d{1,2} Mar$`},
		{"months", span(300, 24*time.Hour), `^[A-Z][a-z]{2} 20\d\d$`},
		{"years", span(40, 90*24*time.Hour), `^20\d\d$`},
	}
	for _, c := range cases {
		root := parse(t, Line([]Series{c.s}, Options{}))
		var labels []string
		for _, g := range root.all("g") {
			if strings.Contains(g.attr("class"), "chart-dates") {
				for _, txt := range g.all("text") {
					labels = append(labels, txt.text())
				}
			}
		}
		if len(labels) < 2 {
			t.Errorf("%s: %d date labels, want at least 2", c.name, len(labels))
		}
		re := regexp.MustCompile(c.pattern)
		for _, l := range labels {
			if !re.MatchString(l) {
				t.Errorf("%s: date label %q does not match %s (all: %q)", c.name, l, c.pattern, labels)
			}
		}
	}
}

func TestTicksAreNiceNumbers(t *testing.T) {
	cases := []struct {
		lo, hi float64
		unit   string
		want   string
	}{
		{0, 97, "", "0 20 40 60 80 100"},
		{0, 100, "%", "0% 20% 40% 60% 80% 100%"},
		{1200, 48000, "", "0 10k 20k 30k 40k 50k"},
		{0.1, 0.37, "", "0.10 0.15 0.20 0.25 0.30 0.35 0.40"},
		{37.8, 46.2, "", "36 38 40 42 44 46 48"},
		{0, 230, "", "0 50 100 150 200 250"},
		{0, 120000, "", "0 25k 50k 75k 100k 125k"},
		{-3, 3, "", "-3 -2 -1 0 1 2 3"},
	}
	for _, c := range cases {
		a := niceAxis(c.lo, c.hi, 6, false, false, false)
		if got := strings.Join(a.tickLabels(c.unit), " "); got != c.want {
			t.Errorf("ticks of %v..%v = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	// Positions and counts are whole numbers: no tick between them.
	if got := strings.Join(niceAxis(5, 5, 6, false, false, true).tickLabels(""), " "); got != "4 5 6" {
		t.Errorf("ticks around a lone position 5 = %q, want \"4 5 6\"", got)
	}
	for label := range tickYs(t, parse(t, Line([]Series{daily("kw", 3, 4)}, Options{InvertY: true}))) {
		if strings.Contains(label, ".") {
			t.Errorf("a chart of whole positions has the tick %q", label)
		}
	}
	fixed := niceAxis(0, 100, 6, true, true, false)
	if fixed.lo != 0 || fixed.hi != 100 {
		t.Errorf("fixed axis moved to %v..%v", fixed.lo, fixed.hi)
	}
}

func TestValuesReadForPeople(t *testing.T) {
	cases := map[float64]string{0: "0", 3: "3", 2.5: "2.5", 1234567: "1,234,567", -1234.5: "-1,234.5", 0.126: "0.13", math.NaN(): "no value"}
	for v, want := range cases {
		if got := formatValue(v, ""); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", v, got, want)
		}
	}
	if got := formatValue(42, "%"); got != "42%" {
		t.Errorf("percent: %q", got)
	}
	if got := formatValue(3, "credits"); got != "3 credits" {
		t.Errorf("unit: %q", got)
	}
}

func TestIDsAreUniquePerChart(t *testing.T) {
	a := parse(t, Line([]Series{daily("a", 1)}, Options{}))
	b := parse(t, Line([]Series{daily("a", 1)}, Options{}))
	c := parse(t, Sparkline(nil, Options{}))
	seen := map[string]bool{}
	for _, root := range []node{a, b, c} {
		for _, id := range []string{root.attr("aria-labelledby"), root.attr("aria-describedby")} {
			if seen[id] {
				t.Errorf("id %q used by two charts on one page", id)
			}
			seen[id] = true
		}
	}
}
