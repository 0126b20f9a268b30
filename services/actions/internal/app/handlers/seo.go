package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
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
	reportID := keyID(x, "seo_reports", key)
	var issueList []any
	var open, done []map[string]any
	for _, c := range audit.Checks {
		task := map[string]any{
			"id": keyID(x, "seo_tasks", key+"|"+c.ID), "title": c.Title, "description": c.Message,
			"priority": c.Severity, "category_id": c.Category, "url": u, "source_id": reportID, "check": c.ID,
		}
		if c.Passed {
			task["status"] = "done"
			done = append(done, task)
			continue
		}
		task["status"] = "pending"
		open = append(open, task)
	}
	for _, c := range issues {
		issueList = append(issueList, map[string]any{"check": c.ID, "title": c.Title, "severity": c.Severity, "category": c.Category, "message": c.Message})
	}
	report := map[string]any{
		"id": reportID, "url": u, "title": page.Title, "score": audit.Score, "issues_found": float64(len(issues)),
		"checks_passed": float64(len(audit.Checks) - len(issues)), "status_code": float64(page.StatusCode),
		"summary": auditSummary(page, audit, issues), "issues": orEmpty(issueList), "fetched_at": ts(x.Now),
	}
	// The report and its open tasks are the same records run after run;
	// a task whose check passes now is marked done if it exists.
	writes := []action.RecordWrite{{Resource: "seo_reports", Mode: action.Upsert, Rows: []map[string]any{report}}}
	if len(open) > 0 {
		writes = append(writes, action.RecordWrite{Resource: "seo_tasks", Mode: action.Upsert, Rows: open})
	}
	if len(done) > 0 {
		writes = append(writes, action.RecordWrite{Resource: "seo_tasks", Mode: action.Update, Rows: done})
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
	for i, r := range recs {
		id := newID(x, "seo_tasks", i)
		tasks = append(tasks, map[string]any{
			"id": id, "title": clip(r, 120), "description": r, "priority": "medium", "status": "pending",
			"category_id": "on_page", "url": u, "source_id": x.RunID,
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
		writes = append(writes, action.RecordWrite{Resource: "seo_tasks", Mode: action.Upsert, Rows: tasks})
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
// provider, recorded as suggested keywords.
func GenerateKeywords(ctx context.Context, x *action.Exec) (action.Result, error) {
	seed, loc := x.Input.Str("seed"), x.Input.Str("location")
	if seed == "" {
		seed = strings.TrimSuffix(clip(clientName(x), 80), "…")
	}
	ideas, err := x.P.Search.KeywordIdeas(ctx, provider.KeywordQuery{Seed: seed, Location: loc, Limit: 20})
	if err != nil {
		return action.Result{}, err
	}
	source := x.P.Search.Source()
	var rows []map[string]any
	var list []any
	for i, k := range ideas {
		row := map[string]any{
			"id": newID(x, "keywords", i), "keyword": k.Keyword, "search_volume": float64(k.SearchVolume),
			"difficulty": k.Difficulty, "cpc": k.CPC, "intent": k.Intent, "status": "suggested", "source": source,
		}
		if loc != "" {
			row["location"] = loc
		}
		rows = append(rows, row)
		list = append(list, map[string]any{"id": row["id"], "keyword": k.Keyword, "search_volume": float64(k.SearchVolume),
			"difficulty": k.Difficulty, "cpc": k.CPC, "intent": k.Intent})
	}
	data := map[string]any{"id": x.RunID, "seed": seed, "location": loc, "source": source, "count": float64(len(rows)), "keywords": orEmpty(list)}
	var writes []action.RecordWrite
	if len(rows) > 0 {
		writes = append(writes, action.RecordWrite{Resource: "keywords", Mode: action.Upsert, Rows: rows})
	}
	return action.Result{Data: data, Writes: writes}, nil
}

// IndexURL is index_url: a URL submitted over IndexNow, recorded as a task.
func IndexURL(ctx context.Context, x *action.Exec) (action.Result, error) {
	u := x.Input.Str("url")
	sub, err := x.P.Index.Submit(ctx, []string{u})
	if err != nil {
		return action.Result{}, err
	}
	row := map[string]any{
		"id": newID(x, "seo_tasks", 0), "title": clip("Submitted "+u+" for indexing", 200),
		"description": fmt.Sprintf("IndexNow accepted the submission (HTTP %d) at %s.", sub.StatusCode, sub.Endpoint),
		"priority":    "low", "status": "submitted", "category_id": "indexing", "url": u, "source_id": x.RunID,
	}
	data := map[string]any{"id": row["id"], "url": u, "endpoint": sub.Endpoint, "submitted_at": ts(x.Now), "status": "submitted"}
	return action.Result{Data: data, StatusCode: sub.StatusCode, Writes: []action.RecordWrite{{Resource: "seo_tasks", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
}
