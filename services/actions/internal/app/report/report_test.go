package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/report"
)

// rows of a client: three keywords tracked before and during March 2026,
// two audited pages, three backlinks, two posts, two answer checks, runs.
func sources() report.Sources {
	kw := func(k string, pos float64, at string) map[string]any {
		return map[string]any{"keyword": k, "position": pos, "tracked_at": at}
	}
	return report.Sources{
		Keywords: []map[string]any{
			kw("emergency plumber", 14, "2026-02-25T07:00:00Z"), kw("emergency plumber", 9, "2026-03-10T07:00:00Z"), kw("emergency plumber", 4, "2026-03-30T07:00:00Z"),
			kw("boiler repair", 6, "2026-02-25T07:00:00Z"), kw("boiler repair", 11, "2026-03-30T07:00:00Z"),
			kw("drain unblocking", 20, "2026-02-25T07:00:00Z"), kw("drain unblocking", 17, "2026-03-30T07:00:00Z"),
			kw("emergency plumber", 1, "2026-04-02T07:00:00Z"), // after the period: not counted
		},
		Audits: []map[string]any{
			{"url": "https://rye.example/", "score": 82.0, "issues_found": 3.0, "fetched_at": "2026-03-05T10:00:00Z"},
			{"url": "https://rye.example/boilers", "score": 57.5, "issues_found": 7.0, "fetched_at": "2026-03-06T10:00:00Z"},
		},
		Backlinks: []map[string]any{
			{"source_url": "https://news.example/a", "source_domain": "news.example", "target_url": "https://rye.example/", "first_seen": "2026-01-10", "domain_authority": 40.0},
			{"source_url": "https://blog.example/b", "source_domain": "blog.example", "target_url": "https://rye.example/", "first_seen": "2026-03-12", "domain_authority": 31.0},
			{"source_url": "https://news.example/c", "source_domain": "news.example", "target_url": "https://rye.example/boilers", "first_seen": "2026-03-20", "domain_authority": 40.0},
		},
		GBPPosts: []map[string]any{
			{"title": "Spring boiler service offer", "status": "published", "posted_at": "2026-03-03T09:00:00Z"},
			{"title": "Frozen pipes: what to do", "status": "draft", "created_at": "2026-03-15T09:00:00Z"},
		},
		LLM: []map[string]any{
			{"prompt": "best plumber in Leeds", "mentioned": true, "position": 2.0, "visibility": 70.7, "scored_at": "2026-03-08T09:00:00Z"},
			{"prompt": "boiler repair near me", "mentioned": false, "position": 0.0, "visibility": 0.0, "scored_at": "2026-03-09T09:00:00Z"},
		},
		Runs: []report.Run{
			{Action: "seo_audit", Status: "success", Data: 1, At: time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)},
			{Action: "seo_audit", Status: "success", Data: 1, At: time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC)},
			{Action: "generate_gbp_post", Status: "success", AI: 1, At: time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)},
			{Action: "generate_blog", Status: "error", AI: 2, At: time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)},
		},
	}
}

func march(t *testing.T) report.Period {
	t.Helper()
	spec, err := report.CheckPeriod("period", report.LastMonth)
	if err != nil {
		t.Fatal(err)
	}
	return report.Resolve(spec.(report.PeriodSpec), time.Date(2026, 4, 14, 12, 0, 0, 0, time.UTC), time.UTC)
}

func TestBuildWorksTheFiguresOutOfTheRows(t *testing.T) {
	f := report.Build(sources(), nil, march(t), time.UTC)
	r := f.Rankings
	if r.Tracked != 3 || r.Improved != 2 || r.Declined != 1 || r.Top10 != 1 {
		t.Errorf("rankings = %+v, want 3 tracked, 2 improved, 1 declined, 1 in the top 10", r)
	}
	// Before: 14, 6, 20 (mean 13.3); after: 4, 11, 17 (mean 10.7).
	if r.AvgBefore != 13.3 || r.AvgAfter != 10.7 {
		t.Errorf("average position %v to %v, want 13.3 to 10.7", r.AvgBefore, r.AvgAfter)
	}
	if len(r.Winners) != 2 || r.Winners[0].Keyword != "emergency plumber" || r.Winners[0].Change != 10 {
		t.Errorf("winners = %+v, want emergency plumber +10 first", r.Winners)
	}
	if len(r.Losers) != 1 || r.Losers[0].Keyword != "boiler repair" || r.Losers[0].Change != -5 {
		t.Errorf("losers = %+v, want boiler repair -5", r.Losers)
	}
	if f.Audit.Pages != 2 || f.Audit.AvgScore != 69.8 || f.Audit.Issues != 10 {
		t.Errorf("audit = %+v, want 2 pages, 69.8 average, 10 issues", f.Audit)
	}
	if f.Backlinks.Total != 3 || f.Backlinks.New != 2 || f.Backlinks.Domains != 2 {
		t.Errorf("backlinks = %+v, want 3 in all, 2 new, 2 domains", f.Backlinks)
	}
	if f.Posts.Count != 2 || f.Posts.Published != 1 {
		t.Errorf("posts = %+v, want 2, 1 published", f.Posts)
	}
	if f.LLM.Checks != 2 || f.LLM.Mentioned != 1 || f.LLM.AvgVisibility != 35.4 {
		t.Errorf("llm = %+v, want 2 checks, 1 mention, 35.4 average", f.LLM)
	}
	if f.Work.Runs != 3 || f.Work.AI != 1 || f.Work.Data != 2 {
		t.Errorf("work = %+v, want 3 successful runs, 1 AI and 2 data credits", f.Work)
	}
}

func TestSectionsLeaveOutWhatWasNotAsked(t *testing.T) {
	f := report.Build(sources(), []string{report.SectionAudit}, march(t), time.UTC)
	if f.Audit == nil || f.Rankings != nil || f.Backlinks != nil || f.Work != nil || f.NarrativeAsked {
		t.Errorf("only the audit was asked for; got %+v", f)
	}
}

func figures(t *testing.T) report.Figures {
	f := report.Build(sources(), nil, march(t), time.UTC)
	f.Title, f.Client, f.Domain = "March report", "Rye Plumbing", "rye.example"
	f.Generated = time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	f.Narrative = "Rankings improved: 2 keywords climbed."
	return f
}

// The figures a client reads must be in both files, as the rows say.
var wantFigures = []string{"Rye Plumbing", "March 2026", "13.3", "10.7", "emergency plumber", "+10", "boiler repair", "-5", "69.8", "57.5", "news.example", "35.4", "70.7", "seo_audit", "Spring boiler service offer", "Rankings improved: 2 keywords climbed."}

func TestHTMLShowsTheFiguresWithNoScript(t *testing.T) {
	b := report.Branding{Name: "Northwind SEO", Primary: "#123456", Accent: "#abcdef"}
	page, err := report.HTML(figures(t), b)
	if err != nil {
		t.Fatal(err)
	}
	s := html.UnescapeString(string(page))
	for _, want := range append(wantFigures, "Northwind SEO", "#123456", `<meta name="robots" content="noindex, nofollow">`, "<svg") {
		if !strings.Contains(s, want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", " style=", "<link", "<img", " src=", "url("} {
		if strings.Contains(strings.ToLower(s), bad) {
			t.Errorf("the HTML holds %q: it must be self-contained and script-free", bad)
		}
	}
	if strings.Count(s, "<style>") != 1 {
		t.Errorf("the HTML has %d <style> elements, want the one the CSP hashes", strings.Count(s, "<style>"))
	}
	// Every SVG is well-formed XML.
	for rest := s; strings.Contains(rest, "<svg"); {
		i := strings.Index(rest, "<svg")
		j := strings.Index(rest[i:], "</svg>") + i + len("</svg>")
		if err := xml.Unmarshal([]byte(rest[i:j]), new(struct{})); err != nil {
			t.Errorf("an SVG chart is not well-formed: %v", err)
		}
		rest = rest[j:]
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "r.html"), page, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestHTMLKeepsABadColourOutOfTheStylesheet(t *testing.T) {
	page, err := report.HTML(figures(t), report.Branding{Name: "X", Primary: "red;}</style><script>", Accent: "#zzzzzz"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "<script") || !strings.Contains(string(page), report.DefaultPrimary) {
		t.Errorf("a colour that is not #rrggbb must fall back to the default")
	}
}

// PDFText extracts a PDF's text with pdftotext, as a client copying it
// would get it.
func PDFText(t *testing.T, pdf []byte) string {
	t.Helper()
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %q", pdf[:min(20, len(pdf))])
	}
	path := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext (apt-get install poppler-utils; make services-up installs it): %v", err)
	}
	return string(out)
}

func TestPDFTextHoldsTheFigures(t *testing.T) {
	pdf, err := report.PDF(figures(t), report.Branding{Name: "Northwind SEO", Primary: "#123456", Accent: "#abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	text := PDFText(t, pdf)
	for _, want := range append(wantFigures, "Northwind SEO", "Backlinks by referring domain", "2026-03-10: 9") {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext does not read %q in the PDF:\n%s", want, text)
		}
	}
}

func TestCheckPeriod(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string // "" for valid, else a piece of the 400
	}{
		{"last_month", ""},
		{"last_week", ""},
		{map[string]any{"from": "2026-01-01", "to": "2026-03-31"}, ""},
		{"yesterday", `"last_month", "last_week" or {"from"`},
		{map[string]any{"from": "2026-03-01", "to": "2026-03-01"}, "period.from must be before period.to"},
		{map[string]any{"from": "2025-01-01", "to": "2026-03-01"}, "at most 366"},
		{map[string]any{"from": "01/03/2026", "to": "2026-03-02"}, "period.from must be a date, YYYY-MM-DD"},
		{map[string]any{"from": "2026-03-01"}, "period.to must be a date"},
		{map[string]any{"from": "2026-03-01", "to": "2026-03-02", "tz": "x"}, `no field "tz"`},
		{42.0, "got 42"},
	} {
		_, err := report.CheckPeriod("period", c.in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one saying %q", c.in, err, c.want)
		case c.want != "" && !isInvalid(err):
			t.Errorf("%v: %v is not a 400 (apperr.KindInvalid)", c.in, err)
		}
	}
}

func TestResolveNamedPeriodsInTheTimeZone(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	// 00:30 on 1 April in London is still 31 March in UTC.
	now := time.Date(2026, 3, 31, 23, 30, 0, 0, time.UTC)
	p := report.Resolve(report.PeriodSpec{Name: report.LastMonth}, now, london)
	if p.First != "2026-03-01" || p.Last != "2026-03-31" {
		t.Errorf("last_month in London at %v = %s to %s, want March", now, p.First, p.Last)
	}
	// Wednesday 15 April 2026: last week is Monday 6 to Sunday 12.
	p = report.Resolve(report.PeriodSpec{Name: report.LastWeek}, time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC), time.UTC)
	if p.First != "2026-04-06" || p.Last != "2026-04-12" {
		t.Errorf("last_week = %s to %s, want 2026-04-06 to 2026-04-12", p.First, p.Last)
	}
}

func isInvalid(err error) bool {
	var e *apperr.Error
	return errors.As(err, &e) && e.Kind == apperr.KindInvalid
}

// TestDocsPicture renders the sample report in Chromium to
// docs/reports/report.png when ATRIUM_UPDATE_DOCS=1 (docs/reports.md shows
// it), as docs/studio's pictures are made.
func TestDocsPicture(t *testing.T) {
	if os.Getenv("ATRIUM_UPDATE_DOCS") != "1" {
		t.Skip("set ATRIUM_UPDATE_DOCS=1 to redraw docs/reports/report.png")
	}
	page, err := report.HTML(figures(t), report.Branding{Name: "Northwind SEO", Primary: "#1f3a5f", Accent: "#e07a2e", Logo: encode(t, "png", sampleLogo())})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "report.html")
	if err := os.WriteFile(src, page, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := filepath.Abs("../../../../../docs/reports/report.png")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o750); err != nil {
		t.Fatal(err)
	}
	//nolint:gosec // G204: the browser's fixed path and files this test made
	cmd := exec.Command("/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1000,2600", "--screenshot="+out, "file://"+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
}
