package report_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/report"
)

// A client with 1,000 keywords tracked weekly for a year (52,000 rows),
// 200 audited pages, 5,000 backlinks, 100 posts, 500 answer checks and
// 2,000 runs: the figures worked out and drawn as HTML and as PDF, each
// timed from the rows (make bench-reports; the target is under 5 s each).
func yearOfRows() report.Sources {
	var src report.Sources
	start := time.Date(2025, 12, 1, 7, 0, 0, 0, time.UTC)
	for k := range 1000 {
		for w := range 52 {
			pos := float64(1 + (k*7+w*(k%5-2)+1000)%100)
			src.Keywords = append(src.Keywords, map[string]any{"keyword": fmt.Sprintf("keyword %d", k), "position": pos,
				"tracked_at": start.AddDate(0, 0, 7*w).Format(time.RFC3339)})
		}
	}
	for i := range 200 {
		src.Audits = append(src.Audits, map[string]any{"url": fmt.Sprintf("https://big.example/page-%d", i), "score": float64(40 + i%60), "issues_found": float64(i % 9), "fetched_at": start.AddDate(0, 0, i).Format(time.RFC3339)})
	}
	for i := range 5000 {
		src.Backlinks = append(src.Backlinks, map[string]any{"source_url": fmt.Sprintf("https://site%d.example/p%d", i%700, i), "source_domain": fmt.Sprintf("site%d.example", i%700), "target_url": "https://big.example/", "first_seen": start.AddDate(0, 0, i%365).Format(time.DateOnly), "domain_authority": float64(i % 90)})
	}
	for i := range 100 {
		src.GBPPosts = append(src.GBPPosts, map[string]any{"title": fmt.Sprintf("Post %d", i), "status": "published", "posted_at": start.AddDate(0, 0, 3*i).Format(time.RFC3339)})
	}
	for i := range 500 {
		src.LLM = append(src.LLM, map[string]any{"prompt": fmt.Sprintf("prompt %d", i%40), "mentioned": i%3 == 0, "position": float64(i % 4), "visibility": float64(i % 100), "scored_at": start.AddDate(0, 0, i%365).Format(time.RFC3339)})
	}
	for i := range 2000 {
		src.Runs = append(src.Runs, report.Run{Action: []string{"seo_audit", "generate_blog", "fetch_backlinks"}[i%3], Status: "success", AI: 1, At: start.AddDate(0, 0, i%365)})
	}
	return src
}

func yearPeriod() report.Period {
	return report.Resolve(report.PeriodSpec{From: "2025-12-01", To: "2026-11-29"}, time.Now(), time.UTC)
}

func BenchmarkReportYearHTML(b *testing.B) {
	src, p := yearOfRows(), yearPeriod()
	brand := report.Branding{Name: "Northwind SEO"}
	var size int
	for b.Loop() {
		f := report.Build(src, nil, p, time.UTC)
		page, err := report.HTML(f, brand)
		if err != nil {
			b.Fatal(err)
		}
		size = len(page)
	}
	b.ReportMetric(float64(size), "bytes")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/report")
}

func BenchmarkReportYearPDF(b *testing.B) {
	src, p := yearOfRows(), yearPeriod()
	brand := report.Branding{Name: "Northwind SEO"}
	var size int
	for b.Loop() {
		f := report.Build(src, nil, p, time.UTC)
		pdf, err := report.PDF(f, brand)
		if err != nil {
			b.Fatal(err)
		}
		size = len(pdf)
	}
	b.ReportMetric(float64(size), "bytes")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/report")
}
