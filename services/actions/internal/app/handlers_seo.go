package app

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// The SEO actions: audits and optimisations of pages, keyword ideas,
// indexing and the backlink profile.

func runSEOAudit(ctx context.Context, x *Exec) (Result, error) {
	u := x.Input.Str("url")
	page, err := x.P.Pages.Fetch(ctx, u)
	if err != nil {
		return Result{}, err
	}
	audit := Audit(page, "")
	issues := audit.Issues()
	key := normalURL(u)
	reportID := x.keyID("seo_reports", key)
	var issueList []any
	var open, done []map[string]any
	for _, c := range audit.Checks {
		task := map[string]any{
			"id": x.keyID("seo_tasks", key+"|"+c.ID), "title": c.Title, "description": c.Message,
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
	writes := []RecordWrite{{Resource: "seo_reports", Mode: Upsert, Rows: []map[string]any{report}}}
	if len(open) > 0 {
		writes = append(writes, RecordWrite{Resource: "seo_tasks", Mode: Upsert, Rows: open})
	}
	if len(done) > 0 {
		writes = append(writes, RecordWrite{Resource: "seo_tasks", Mode: Update, Rows: done})
	}
	return Result{Data: report, Writes: writes}, nil
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func auditSummary(p *Page, a AuditResult, issues []Check) string {
	s := fmt.Sprintf("%s scored %s/100: %d of %d checks passed", p.FinalURL, fmtNum(a.Score), len(a.Checks)-len(issues), len(a.Checks))
	if len(issues) == 0 {
		return s + "."
	}
	var top []string
	for _, c := range issues[:min(3, len(issues))] {
		top = append(top, strings.ToLower(c.Title))
	}
	return s + "; fix first: " + strings.Join(top, ", ") + "."
}

func runOptimizePage(ctx context.Context, x *Exec) (Result, error) {
	u, kw := x.Input.Str("url"), x.Input.Str("keyword")
	page, err := x.P.Pages.Fetch(ctx, u)
	if err != nil {
		return Result{}, err
	}
	audit := Audit(page, kw)
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
	t, err := write(ctx, x, TextPageOptimization,
		fmt.Sprintf("Suggest on-page optimisations for %s%s: a better title and meta description, and one concrete recommendation per issue found.", u, forKeyword(kw)),
		map[string]string{"url": u, "keyword": kw, "current_title": page.Title, "current_meta_description": page.MetaDescription,
			"current_h1": h1, "issues": strings.Join(found, "\n")},
		TextField{Name: "title", Description: "a suggested title, under 60 characters, with the keyword near the start"},
		TextField{Name: "meta_description", Description: "a suggested meta description, 120 to 160 characters, with the keyword"},
		TextField{Name: "recommendations", Description: "one concrete recommendation per line"})
	if err != nil {
		return Result{}, err
	}
	recs := lines(t.Fields["recommendations"])
	if len(recs) > 25 {
		recs = recs[:25]
	}
	var tasks []map[string]any
	var recList []any
	for i, r := range recs {
		id := x.newID("seo_tasks", i)
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
	var writes []RecordWrite
	if len(tasks) > 0 {
		writes = append(writes, RecordWrite{Resource: "seo_tasks", Mode: Upsert, Rows: tasks})
	}
	return Result{Data: data, Writes: writes}, nil
}

func forKeyword(kw string) string {
	if kw == "" {
		return ""
	}
	return fmt.Sprintf(" targeting the keyword %q", kw)
}

func runGenerateKeywords(ctx context.Context, x *Exec) (Result, error) {
	seed, loc := x.Input.Str("seed"), x.Input.Str("location")
	if seed == "" {
		seed = strings.TrimSuffix(clip(x.clientName(), 80), "…")
	}
	ideas, err := x.P.Search.KeywordIdeas(ctx, KeywordQuery{Seed: seed, Location: loc, Limit: 20})
	if err != nil {
		return Result{}, err
	}
	source := x.P.Search.Source()
	var rows []map[string]any
	var list []any
	for i, k := range ideas {
		row := map[string]any{
			"id": x.newID("keywords", i), "keyword": k.Keyword, "search_volume": float64(k.SearchVolume),
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
	var writes []RecordWrite
	if len(rows) > 0 {
		writes = append(writes, RecordWrite{Resource: "keywords", Mode: Upsert, Rows: rows})
	}
	return Result{Data: data, Writes: writes}, nil
}

func runIndexURL(ctx context.Context, x *Exec) (Result, error) {
	u := x.Input.Str("url")
	sub, err := x.P.Index.Submit(ctx, []string{u})
	if err != nil {
		return Result{}, err
	}
	row := map[string]any{
		"id": x.newID("seo_tasks", 0), "title": clip("Submitted "+u+" for indexing", 200),
		"description": fmt.Sprintf("IndexNow accepted the submission (HTTP %d) at %s.", sub.StatusCode, sub.Endpoint),
		"priority":    "low", "status": "submitted", "category_id": "indexing", "url": u, "source_id": x.RunID,
	}
	data := map[string]any{"id": row["id"], "url": u, "endpoint": sub.Endpoint, "submitted_at": ts(x.Now), "status": "submitted"}
	return Result{Data: data, StatusCode: sub.StatusCode, Writes: []RecordWrite{{Resource: "seo_tasks", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

func runFetchBacklinks(ctx context.Context, x *Exec) (Result, error) {
	domain := x.clientDomain()
	if domain == "" {
		return Result{}, ProviderFailure("backlink data", 422, nil, "client %s has no domain to look up backlinks for; an administrator sets it", x.Client.ID)
	}
	p, err := x.P.Search.Backlinks(ctx, domain)
	if err != nil {
		return Result{}, err
	}
	// Every record is keyed by what it describes, so that a refresh
	// replaces it rather than adding another.
	var links []map[string]any
	anchors := map[string]int{}
	type page struct {
		links   int
		domains map[string]bool
	}
	pages := map[string]*page{}
	sources := map[string]bool{}
	for _, b := range p.Backlinks {
		links = append(links, map[string]any{
			"id": x.keyID("backlinks", b.SourceURL+"|"+b.TargetURL), "source_url": b.SourceURL, "target_url": b.TargetURL,
			"anchor_text": b.AnchorText, "source_type": b.SourceType, "source_id": b.SourceDomain, "source_domain": b.SourceDomain,
			"domain_authority": b.DomainAuthority, "external_pages": float64(b.ExternalPages), "linking_domains": float64(b.LinkingDomains),
			"first_seen": b.FirstSeen.UTC().Format("2006-01-02"), "nofollow": b.NoFollow,
		})
		anchors[b.AnchorText]++
		pg := pages[b.TargetURL]
		if pg == nil {
			pg = &page{domains: map[string]bool{}}
			pages[b.TargetURL] = pg
		}
		pg.links++
		pg.domains[b.SourceDomain] = true
		sources[b.SourceDomain] = true
	}
	var anchorRows, pageRows []map[string]any
	for _, a := range slices.Sorted(maps.Keys(anchors)) {
		anchorRows = append(anchorRows, map[string]any{
			"id": x.keyID("anchor_texts", a), "anchor": a, "count": float64(anchors[a]),
			"percentage": math.Round(1000*float64(anchors[a])/float64(max(1, len(p.Backlinks)))) / 10, "source_id": domain,
		})
	}
	for _, u := range slices.Sorted(maps.Keys(pages)) {
		pageRows = append(pageRows, map[string]any{
			"id": x.keyID("top_linked_pages", u), "url": u, "linking_domains": float64(len(pages[u].domains)), "external_pages": float64(pages[u].links),
		})
	}
	metrics := map[string]any{
		"id": x.keyID("domain_metrics", domain), "domain": domain, "domain_authority": p.DomainAuthority, "page_authority": p.PageAuthority,
		"spam_score": p.SpamScore, "backlinks": float64(len(p.Backlinks)), "linking_domains": float64(len(sources)), "fetched_at": ts(x.Now),
	}
	top := slices.SortedFunc(maps.Keys(anchors), func(a, b string) int { return cmp.Or(cmp.Compare(anchors[b], anchors[a]), strings.Compare(a, b)) })
	var topAnchors []any
	for _, a := range top[:min(5, len(top))] {
		topAnchors = append(topAnchors, a)
	}
	data := map[string]any{
		"id": metrics["id"], "domain": domain, "source": x.P.Search.Source(), "backlinks": metrics["backlinks"],
		"linking_domains": metrics["linking_domains"], "domain_authority": p.DomainAuthority, "page_authority": p.PageAuthority,
		"spam_score": p.SpamScore, "top_anchors": orEmpty(topAnchors), "fetched_at": metrics["fetched_at"],
	}
	writes := []RecordWrite{{Resource: "domain_metrics", Mode: Upsert, Rows: []map[string]any{metrics}}}
	for _, w := range []RecordWrite{{"backlinks", Upsert, links}, {"anchor_texts", Upsert, anchorRows}, {"top_linked_pages", Upsert, pageRows}} {
		if len(w.Rows) > 0 {
			writes = append(writes, w)
		}
	}
	return Result{Data: data, Writes: writes}, nil
}
