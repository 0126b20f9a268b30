package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/onpage"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The SEO actions: audits and optimisations of pages, keyword ideas and
// indexing.

// SEOAudit is seo_audit: the on-page checks of a fetched page, recorded as
// the URL's report and one task per check, refreshed in place on a re-run.
func SEOAudit(ctx context.Context, x *action.Exec) (action.Result, error) {
	u := x.Input.Str("url")
	page, err := x.P.Pages.Fetch(ctx, u)
	if err != nil {
		return action.Result{}, err
	}
	audit := onpage.Audit(page, "")
	issues := audit.Issues()
	key := normalURL(u)
	r, tk := datasets.SEOReports, datasets.SEOTasks
	reportID := keyID(x, r.Resource, key)
	var issueList []any
	var open, done []map[string]any
	for _, c := range audit.Checks {
		task := map[string]any{
			tk.ID: keyID(x, tk.Resource, key+"|"+c.ID), tk.Title: c.Title, tk.Description: c.Message,
			tk.Priority: c.Severity, tk.CategoryID: c.Category, tk.URL: u, tk.SourceID: reportID, tk.Check: c.ID,
		}
		if c.Passed {
			task[tk.Status] = "done"
			done = append(done, task)
			continue
		}
		task[tk.Status] = "pending"
		open = append(open, task)
	}
	for _, c := range issues {
		issueList = append(issueList, map[string]any{"check": c.ID, "title": c.Title, "severity": c.Severity, "category": c.Category, "message": c.Message})
	}
	report := map[string]any{
		r.ID: reportID, r.URL: u, r.Title: page.Title, r.Score: audit.Score, r.IssuesFound: float64(len(issues)),
		r.ChecksPassed: float64(len(audit.Checks) - len(issues)), r.StatusCode: float64(page.StatusCode),
		r.Summary: auditSummary(page, audit, issues), r.Issues: orEmpty(issueList), r.FetchedAt: ts(x.Now),
	}
	// The report and its open tasks are the same records run after run;
	// a task whose check passes now is marked done if it exists.
	writes := []action.RecordWrite{upsert(r.Resource, report)}
	if len(open) > 0 {
		writes = append(writes, upsert(tk.Resource, open...))
	}
	if len(done) > 0 {
		writes = append(writes, action.RecordWrite{Resource: tk.Resource, Mode: action.Update, Rows: done})
	}
	return action.Result{Data: report, Writes: writes}, nil
}

func auditSummary(p *provider.Page, a onpage.AuditResult, issues []onpage.Check) string {
	s := fmt.Sprintf("%s scored %s/100: %d of %d checks passed", p.FinalURL, strconv.FormatFloat(a.Score, 'f', -1, 64), len(a.Checks)-len(issues), len(a.Checks))
	if len(issues) == 0 {
		return s + "."
	}
	var top []string
	for _, c := range issues[:min(3, len(issues))] {
		top = append(top, strings.ToLower(c.Title))
	}
	return s + "; fix first: " + strings.Join(top, ", ") + "."
}

// OptimizePage is optimize_page: the audit's findings and the keyword sent
// to the text generator, whose recommendations become SEO tasks.
func OptimizePage(ctx context.Context, x *action.Exec) (action.Result, error) {
	u, kw := x.Input.Str("url"), x.Input.Str("keyword")
	page, err := x.P.Pages.Fetch(ctx, u)
	if err != nil {
		return action.Result{}, err
	}
	audit := onpage.Audit(page, kw)
	var found []string
	for _, c := range audit.Issues() {
		found = append(found, c.Message)
	}
	h1 := ""
	for _, h := range page.Headings {
		if h.Level == 1 {
			h1 = h.Text
			break
		}
	}
	t, err := write(ctx, x, provider.TextPageOptimization,
		fmt.Sprintf("Suggest on-page optimisations for %s%s: a better title and meta description, and one concrete recommendation per issue found.", u, forKeyword(kw)),
		map[string]string{"url": u, "keyword": kw, "current_title": page.Title, "current_meta_description": page.MetaDescription,
			"current_h1": h1, "issues": strings.Join(found, "\n")},
		provider.TextField{Name: "title", Description: "a suggested title, under 60 characters, with the keyword near the start"},
		provider.TextField{Name: "meta_description", Description: "a suggested meta description, 120 to 160 characters, with the keyword"},
		provider.TextField{Name: "recommendations", Description: "one concrete recommendation per line"})
	if err != nil {
		return action.Result{}, err
	}
	recs := lines(t.Fields["recommendations"])
	if len(recs) > 25 {
		recs = recs[:25]
	}
	var tasks []map[string]any
	var recList []any
	tk := datasets.SEOTasks
	for i, r := range recs {
		id := newID(x, tk.Resource, i)
		tasks = append(tasks, map[string]any{
			tk.ID: id, tk.Title: clip(r, 120), tk.Description: r, tk.Priority: "medium", tk.Status: "pending",
			tk.CategoryID: "on_page", tk.URL: u, tk.SourceID: x.RunID,
		})
		recList = append(recList, map[string]any{"task_id": id, "recommendation": r})
	}
	data := map[string]any{
		"id": x.RunID, "url": u, "keyword": kw, "score": audit.Score, "issues_found": float64(len(found)),
		"suggested_title": clip(oneLine(t.Fields["title"]), 200), "suggested_meta_description": clip(oneLine(t.Fields["meta_description"]), 160),
		"recommendations": orEmpty(recList), "model": t.Model,
	}
	var writes []action.RecordWrite
	if len(tasks) > 0 {
		writes = append(writes, upsert(tk.Resource, tasks...))
	}
	return action.Result{Data: data, Writes: writes}, nil
}

func forKeyword(kw string) string {
	if kw == "" {
		return ""
	}
	return fmt.Sprintf(" targeting the keyword %q", kw)
}

// GenerateKeywords is generate_keywords: keyword ideas from the SEO data
// provider, recorded as suggested keywords where the provider counts their
// searches. A metric the provider has no figure for is left out of the
// record rather than written as 0.
func GenerateKeywords(ctx context.Context, x *action.Exec) (action.Result, error) {
	seed, loc := x.Input.Str("seed"), x.Input.Str("location")
	if seed == "" {
		seed = strings.TrimSuffix(clip(clientName(x), 80), "…")
	}
	res, err := x.P.Search.KeywordIdeas(ctx, provider.KeywordQuery{Seed: seed, Location: loc, Limit: 20})
	if err != nil {
		return action.Result{}, err
	}
	if res.Location != "" {
		loc = res.Location
	}
	source := x.P.Search.Source()
	var rows []map[string]any
	var list []any
	d := datasets.Keywords
	for i, k := range res.Ideas {
		row := map[string]any{
			d.ID: newID(x, d.Resource, i), d.Keyword: k.Keyword, d.SearchVolume: float64(k.SearchVolume),
			d.CPC: k.CPC, d.Status: "suggested", d.Source: source,
		}
		item := map[string]any{"id": row[d.ID], "keyword": k.Keyword, "search_volume": float64(k.SearchVolume), "cpc": k.CPC}
		if k.Difficulty != provider.NoFigure {
			row[d.Difficulty], item["difficulty"] = k.Difficulty, k.Difficulty
		}
		if k.Intent != "" {
			row[d.Intent], item["intent"] = k.Intent, k.Intent
		}
		if loc != "" {
			row[d.Location] = loc
		}
		rows = append(rows, row)
		list = append(list, item)
	}
	data := map[string]any{"id": x.RunID, "seed": seed, "location": loc, "source": source, "count": float64(len(rows)), "keywords": orEmpty(list)}
	var writes []action.RecordWrite
	if len(rows) > 0 {
		writes = append(writes, upsert(d.Resource, rows...))
	}
	return action.Result{Data: data, Writes: writes}, nil
}

// KnownLocation is generate_keywords.location's check before a run is
// reserved: the SEO data provider says whether it has figures for the
// place, so that an unknown one is a 400 that costs nothing.
func KnownLocation(ctx context.Context, p *action.Providers, v any) error {
	loc, _ := v.(string)
	return p.Search.CheckLocation(ctx, loc)
}

// IndexURL is index_url: a URL submitted over IndexNow, recorded as a task.
func IndexURL(ctx context.Context, x *action.Exec) (action.Result, error) {
	u := x.Input.Str("url")
	sub, err := x.P.Index.Submit(ctx, []string{u})
	if err != nil {
		return action.Result{}, err
	}
	tk := datasets.SEOTasks
	row := map[string]any{
		tk.ID: newID(x, tk.Resource, 0), tk.Title: clip("Submitted "+u+" for indexing", 200),
		tk.Description: fmt.Sprintf("IndexNow accepted the submission (HTTP %d) at %s.", sub.StatusCode, sub.Endpoint),
		tk.Priority:    "low", tk.Status: "submitted", tk.CategoryID: "indexing", tk.URL: u, tk.SourceID: x.RunID,
	}
	data := map[string]any{"id": row[tk.ID], "url": u, "endpoint": sub.Endpoint, "submitted_at": ts(x.Now), "status": "submitted"}
	return action.Result{Data: data, StatusCode: sub.StatusCode, Writes: []action.RecordWrite{upsert(tk.Resource, row)}}, nil
}
