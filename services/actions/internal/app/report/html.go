package report

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/platform/chart"
)

// Branding is how an agency's reports look: its name and colours (hex,
// checked when they were set), and its logo's file, drawn in the header
// of both renderings when it is a PNG or JPEG image (logo.go).
type Branding struct {
	Name            string
	Primary, Accent string
	Logo            []byte
}

// Default colours, for an agency that set none.
const (
	DefaultPrimary = "#1f3a5f"
	DefaultAccent  = "#e07a2e"
)

var hexColour = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// colours are the branding's colours, the defaults for any that is not a
// six-digit hex colour (the only form a stylesheet gets from here).
func (b Branding) colours() (primary, accent string) {
	primary, accent = DefaultPrimary, DefaultAccent
	if hexColour.MatchString(b.Primary) {
		primary = b.Primary
	}
	if hexColour.MatchString(b.Accent) {
		accent = b.Accent
	}
	return primary, accent
}

// Num writes a figure as both renderings show it: an integer without a
// decimal point, anything else with one decimal.
func Num(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// position writes a ranking position, "-" when not ranked.
func position(p int) string {
	if p <= 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

func signed(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

var funcs = template.FuncMap{"num": Num, "pos": position, "signed": signed, "int": func(n int64) string { return strconv.FormatInt(n, 10) }}

var page = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{{.F.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header class="masthead">
<p class="agency">{{with .Logo}}<img class="logo" src="{{.}}" alt="">{{end}}<span>{{.B.Name}}</span></p>
<h1>{{.F.Title}}</h1>
<p class="period">{{.F.Client}}{{if .F.Domain}} ({{.F.Domain}}){{end}} &middot; {{.F.Period.Label}} ({{.F.Period.First}} to {{.F.Period.Last}})</p>
</header>
<main>
{{with .F.Narrative}}<section id="narrative"><h2>Summary</h2>{{range $.Paragraphs}}<p>{{.}}</p>{{end}}</section>{{end}}
{{with .F.Rankings}}<section id="rankings"><h2>Rankings</h2>
<dl class="figures"><div><dt>Keywords tracked</dt><dd>{{.Tracked}}</dd></div><div><dt>Average position</dt><dd>{{num .AvgBefore}} &rarr; {{num .AvgAfter}}</dd></div><div><dt>Improved</dt><dd>{{.Improved}}</dd></div><div><dt>Declined</dt><dd>{{.Declined}}</dd></div><div><dt>In the top 10</dt><dd>{{.Top10}}</dd></div></dl>
{{$.RankChart}}
<div class="cols"><div><h3>Winners</h3>{{if .Winners}}<table><thead><tr><th scope="col">Keyword</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">Change</th></tr></thead><tbody>{{range .Winners}}<tr><td>{{.Keyword}}</td><td>{{pos .Before}}</td><td>{{pos .After}}</td><td class="up">{{signed .Change}}</td></tr>{{end}}</tbody></table>{{else}}<p>No keyword climbed.</p>{{end}}</div>
<div><h3>Losers</h3>{{if .Losers}}<table><thead><tr><th scope="col">Keyword</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">Change</th></tr></thead><tbody>{{range .Losers}}<tr><td>{{.Keyword}}</td><td>{{pos .Before}}</td><td>{{pos .After}}</td><td class="down">{{signed .Change}}</td></tr>{{end}}</tbody></table>{{else}}<p>No keyword fell.</p>{{end}}</div></div>
</section>{{end}}
{{with .F.Audit}}<section id="audit"><h2>Site audit</h2>
<dl class="figures"><div><dt>Pages audited</dt><dd>{{.Pages}}</dd></div><div><dt>Average score</dt><dd>{{num .AvgScore}}</dd></div><div><dt>Issues open</dt><dd>{{.Issues}}</dd></div><div><dt>Audits this period</dt><dd>{{.InPeriod}}</dd></div></dl>
{{$.AuditChart}}
{{if .Worst}}<table><thead><tr><th scope="col">Page</th><th scope="col">Score</th><th scope="col">Issues</th></tr></thead><tbody>{{range .Worst}}<tr><td>{{.URL}}</td><td>{{num .Score}}</td><td>{{.Issues}}</td></tr>{{end}}</tbody></table>{{else}}<p>No page has been audited yet.</p>{{end}}
</section>{{end}}
{{with .F.Backlinks}}<section id="backlinks"><h2>Backlinks</h2>
<dl class="figures"><div><dt>Backlinks</dt><dd>{{.Total}}</dd></div><div><dt>New this period</dt><dd>{{.New}}</dd></div><div><dt>Referring domains</dt><dd>{{.Domains}}</dd></div></dl>
{{$.LinkChart}}
{{if .NewLinks}}<h3>New backlinks</h3><table><thead><tr><th scope="col">From</th><th scope="col">To</th><th scope="col">Authority</th></tr></thead><tbody>{{range .NewLinks}}<tr><td>{{.Source}}</td><td>{{.Target}}</td><td>{{num .Authority}}</td></tr>{{end}}</tbody></table>{{end}}
</section>{{end}}
{{with .F.Posts}}<section id="gbp_posts"><h2>Google Business Profile posts</h2>
<dl class="figures"><div><dt>Posts this period</dt><dd>{{.Count}}</dd></div><div><dt>Published</dt><dd>{{.Published}}</dd></div></dl>
{{if .Listed}}<table><thead><tr><th scope="col">Date</th><th scope="col">Post</th><th scope="col">Status</th></tr></thead><tbody>{{range .Listed}}<tr><td>{{.Date}}</td><td>{{.Title}}</td><td>{{.Status}}</td></tr>{{end}}</tbody></table>{{else}}<p>No post this period.</p>{{end}}
</section>{{end}}
{{with .F.LLM}}<section id="llm_visibility"><h2>Answer-engine visibility</h2>
<dl class="figures"><div><dt>Checks</dt><dd>{{.Checks}}</dd></div><div><dt>Mentioned in</dt><dd>{{.Mentioned}}</dd></div><div><dt>Average visibility</dt><dd>{{num .AvgVisibility}}</dd></div></dl>
{{$.LLMChart}}
</section>{{end}}
{{with .F.Work}}<section id="work_done"><h2>Work done</h2>
<dl class="figures"><div><dt>Actions run</dt><dd>{{.Runs}}</dd></div><div><dt>AI credits</dt><dd>{{int .AI}}</dd></div><div><dt>Data credits</dt><dd>{{int .Data}}</dd></div></dl>
{{if .ByAction}}<table><thead><tr><th scope="col">Action</th><th scope="col">Runs</th></tr></thead><tbody>{{range .ByAction}}<tr><td>{{.Label}}</td><td>{{.N}}</td></tr>{{end}}</tbody></table>{{else}}<p>No action ran this period.</p>{{end}}
</section>{{end}}
</main>
<footer><p>Prepared by {{.B.Name}} on {{.Generated}}.</p></footer>
</body>
</html>
`))

// css is the report's stylesheet before the branding's colours: the only
// style of the page, in its one <style> element, which the share route's
// Content-Security-Policy allows by its hash.
const css = `:root{--primary:%s;--accent:%s}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;margin:0;background:#fff}
.masthead{background:var(--primary);color:#fff;padding:24px 32px}
.masthead h1{margin:4px 0;font-size:26px}.agency{margin:0;font-weight:600;color:var(--accent);display:flex;align-items:center;gap:12px}
.logo{height:48px;width:auto;max-width:240px;object-fit:contain;background:#fff;padding:4px;border-radius:4px}.period{margin:0;opacity:.9}
main{max-width:960px;margin:0 auto;padding:8px 32px}
h2{color:var(--primary);border-bottom:3px solid var(--accent);padding-bottom:4px;margin-top:32px}
.figures{display:flex;flex-wrap:wrap;gap:12px;margin:0 0 16px}.figures div{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:120px}
.figures dt{font-size:12px;color:#555}.figures dd{margin:0;font-size:22px;font-weight:700}
table{border-collapse:collapse;width:100%%;margin:8px 0 16px;font-size:14px}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e4e4e4;overflow-wrap:anywhere}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:24px}@media (max-width:700px){.cols{grid-template-columns:1fr}}
.up{color:#1a7f37;font-weight:600}.down{color:#b42318;font-weight:600}
svg{width:100%%;max-width:680px;height:auto;display:block}
footer{color:#666;font-size:13px;padding:16px 32px;border-top:1px solid #eee}
`

// HTML renders the report as one self-contained page: the stylesheet in
// its <style>, the charts as inline SVG, no script and nothing fetched.
func HTML(f Figures, b Branding) ([]byte, error) {
	primary, accent := b.colours()
	data := map[string]any{
		"F": f, "B": b, "CSS": template.CSS(fmt.Sprintf(css, primary, accent) + chart.CSS), //nolint:gosec // G203: our own stylesheet; the colours are #rrggbb, checked by colours()
		"Generated":  f.Generated.Format("2 January 2006"),
		"Paragraphs": paragraphs(f.Narrative),
		// The logo's alt is empty: the agency's name is written beside it.
		"Logo": b.logoURL(),
	}
	if r := f.Rankings; r != nil && len(r.Trend) > 0 {
		data["RankChart"] = chart.Line([]chart.Series{{Name: "Average position", Points: r.Trend}}, chart.Options{Title: "Average position by day", InvertY: true, YLabel: "Position"})
	}
	if a := f.Audit; a != nil && len(a.Worst) > 0 {
		labels, values := make([]string, 0, len(a.Worst)), make([]float64, 0, len(a.Worst))
		for _, p := range a.Worst[:min(maxBarItems, len(a.Worst))] {
			labels, values = append(labels, p.URL), append(values, p.Score)
		}
		zero, hundred := 0.0, 100.0
		data["AuditChart"] = chart.Bars(labels, values, chart.Options{Title: "Audit score by page", YMin: &zero, YMax: &hundred})
	}
	if l := f.Backlinks; l != nil && len(l.TopDomains) > 0 {
		data["LinkChart"] = chart.Bars(countLabels(l.TopDomains), countValues(l.TopDomains), chart.Options{Title: "Backlinks by referring domain", Unit: "links"})
	}
	if l := f.LLM; l != nil && len(l.Prompts) > 0 {
		labels, values := make([]string, 0, len(l.Prompts)), make([]float64, 0, len(l.Prompts))
		for _, p := range l.Prompts[:min(maxBarItems, len(l.Prompts))] {
			labels, values = append(labels, p.Prompt), append(values, p.Visibility)
		}
		zero, hundred := 0.0, 100.0
		data["LLMChart"] = chart.Bars(labels, values, chart.Options{Title: "Visibility by prompt", YMin: &zero, YMax: &hundred})
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func countLabels(cs []Count) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Label
	}
	return out
}

func countValues(cs []Count) []float64 {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = float64(c.N)
	}
	return out
}

// paragraphs splits a narrative at its blank lines.
func paragraphs(s string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
