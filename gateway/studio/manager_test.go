package studio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/chart"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

// The manager's pages' templates parse with the others.
func TestManagerTemplatesParse(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manager/clients", "manager/client", "manager/actions", "manager/action", "manager/runs", "manager/run", "manager/webhooks", "manager/webhook", "manager/share-created"} {
		if p.byName[name] == nil {
			t.Errorf("no page %s", name)
		}
	}
	for _, name := range []string{"manager/client", "owner/results"} {
		if p.byName[name].Lookup("reports") == nil {
			t.Errorf("the page %s has no Reports section", name)
		}
	}
	if p.byName["manager/run"].Lookup("run-state") == nil {
		t.Error("the run page has no run-state block for its event stream")
	}
}

// The positions chart draws the eight keywords with the largest search
// volume, each in date order, and says how many it left out.
func TestKeywordSeriesPicksTheLargestVolumes(t *testing.T) {
	var rows []map[string]any
	for i := range 10 {
		for day := 3; day >= 1; day-- {
			rows = append(rows, map[string]any{"keyword": fmt.Sprintf("kw%d", i), "position": float64(10 + i - day),
				"search_volume": float64(100 * i), "tracked_at": fmt.Sprintf("2026-11-0%dT08:00:00Z", day)})
		}
	}
	rows = append(rows, map[string]any{"keyword": "no position", "position": nil, "tracked_at": "2026-11-01T00:00:00Z"},
		map[string]any{"keyword": "dated only", "position": 3.0, "created_at": "2026-11-02", "search_volume": 5000.0})
	series, hidden := keywordSeries(rows)
	if len(series) != 8 || hidden != 3 {
		t.Fatalf("%d series, %d hidden; want 8 and 3 (11 keywords with positions)", len(series), hidden)
	}
	if series[0].Name != "dated only" || series[1].Name != "kw9" || series[7].Name != "kw3" {
		t.Errorf("order %v, want the largest volumes first", names(series))
	}
	pts := series[1].Points
	if len(pts) != 3 || !pts[0].X.Before(pts[2].X) || pts[0].Y != 18 {
		t.Errorf("kw9's points %v, want three in date order starting at 18", pts)
	}
}

func names(ss []chart.Series) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// Audit scores: the latest report of each page, worst first.
func TestAuditScoresLatestPerPageWorstFirst(t *testing.T) {
	labels, values := auditScores([]map[string]any{
		{"url": "https://a.example/", "score": 40.0, "fetched_at": "2026-11-01T00:00:00Z"},
		{"url": "https://a.example/", "score": 90.0, "fetched_at": "2026-11-05T00:00:00Z"},
		{"url": "https://b.example/", "score": 55.0, "fetched_at": "2026-11-02T00:00:00Z"},
		{"url": "https://c.example/", "score": nil},
	})
	if strings.Join(labels, " ") != "b.example/ a.example/" || values[0] != 55 || values[1] != 90 {
		t.Fatalf("got %v %v", labels, values)
	}
}

// Backlinks grow as a running total per day first seen.
func TestBacklinkGrowthIsARunningTotal(t *testing.T) {
	s := backlinkGrowth([]map[string]any{
		{"first_seen": "2026-11-02"}, {"first_seen": "2026-11-01"}, {"first_seen": "2026-11-02"},
		{"created_at": "2026-11-03T10:00:00Z"}, {"first_seen": "not a date"},
	})
	if len(s) != 1 || len(s[0].Points) != 3 || s[0].Points[0].Y != 1 || s[0].Points[1].Y != 3 || s[0].Points[2].Y != 4 {
		t.Fatalf("got %+v", s)
	}
	if backlinkGrowth(nil) != nil {
		t.Error("no rows should draw no chart")
	}
}

// Visibility: a series per engine, in name order.
func TestVisibilitySeriesPerEngine(t *testing.T) {
	s := visibilitySeries([]map[string]any{
		{"engine": "perplexity", "visibility": 0.4, "scored_at": "2026-11-02T00:00:00Z"},
		{"engine": "chatgpt", "visibility": 0.2, "scored_at": "2026-11-02T00:00:00Z"},
		{"engine": "chatgpt", "visibility": 0.1, "scored_at": "2026-11-01T00:00:00Z"},
	})
	if len(s) != 2 || s[0].Name != "chatgpt" || s[0].Points[0].Y != 0.1 || s[1].Name != "perplexity" {
		t.Fatalf("got %+v", s)
	}
}

// A run's result reads as fields; an error apart; structures as JSON.
func TestResultFields(t *testing.T) {
	f, e := resultFields(map[string]any{"score": 42.0, "issues": []any{map[string]any{"check": "title"}}, "url": "https://a.example/", "ok": true})
	if e != "" || len(f) != 4 || f[0].Name != "issues" || !f[0].Block || !strings.Contains(f[0].Value, `"check": "title"`) ||
		f[1].Value != "yes" || f[2].Value != "42" {
		t.Fatalf("got %+v %q", f, e)
	}
	if _, e := resultFields(map[string]any{"error": "the page answered 500"}); e != "the page answered 500" {
		t.Fatalf("error %q", e)
	}
}

// Server-sent events carry each line of the fragment as a data: line.
func TestSSEEvent(t *testing.T) {
	got := string(sseEvent("run", "<p>\r\nqueued</p>"))
	if got != "event: run\ndata: <p>\ndata: queued</p>\n\n" {
		t.Fatalf("got %q", got)
	}
}

// Idempotency keys: generated ones are valid; spaces and controls are not.
func TestIdempotencyKeys(t *testing.T) {
	k := newIdempotencyKey()
	if !validKey(k) || len(k) != 32 || k == newIdempotencyKey() {
		t.Fatalf("key %q", k)
	}
	for _, bad := range []string{"", "a b", "é", strings.Repeat("x", 256), "a\x00"} {
		if validKey(bad) {
			t.Errorf("%q taken", bad)
		}
	}
}

// Event types as checkboxes: the families' wildcards first, then the
// types, the chosen ones ticked, ids unique.
func TestEventChoices(t *testing.T) {
	c := eventChoicesOf([]*webhooksv1.EventType{{Type: "item.published"}, {Type: "action_run.failed", Description: "A run failed."}, {Type: "item.deleted"}},
		[]string{"item.*", "action_run.failed"})
	var got []string
	ids := map[string]bool{}
	for _, e := range c {
		mark := ""
		if e.Checked {
			mark = "+"
		}
		got = append(got, mark+e.Type)
		ids[e.ID] = true
	}
	if strings.Join(got, " ") != "action_run.* +item.* +action_run.failed item.deleted item.published" || len(ids) != 5 {
		t.Fatalf("got %v", got)
	}
}

// Chart labels: the pages of one site by their paths.
func TestPageLabels(t *testing.T) {
	got := pageLabels([]string{"https://client.example/", "https://client.example/menu?x=1"})
	if strings.Join(got, " ") != "/ /menu?x=1" {
		t.Fatalf("got %v", got)
	}
}
