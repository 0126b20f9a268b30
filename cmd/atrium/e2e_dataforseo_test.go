package main

// atrium serve with DataForSEO as the SEO data provider, driven over HTTP
// as a new user would, against a local stand-in for DataForSEO's API
// (services/actions/dataforseotest): keyword, grid and backlink actions
// record DataForSEO's figures labelled dataforseo with what they cost; an
// unknown location is a 400 before anything is spent; DataForSEO's errors
// and rate limit are the runs' status with nothing charged; a repeat is
// answered from the cache, free. On the memory store and on PostgreSQL,
// where the cache is a table the replicas share.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/services/actions/dataforseotest"
)

const (
	dfsLogin    = "agency@example.com"
	dfsPassword = "dfs-Passw0rd-that-must-never-show"
)

func TestDataForSEOEndToEnd(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		t.Parallel()
		testDataForSEO(t, func(flags ...string) *stack { return startDataForSEOStack(t, flags...) })
	})
	t.Run("Postgres", func(t *testing.T) {
		t.Parallel()
		natsURL := natstest.URL(t)
		testDataForSEO(t, func(flags ...string) *stack {
			return startDataForSEOStack(t, append([]string{"--database-url=" + migratedDatabase(t), "--nats-url=" + natsURL}, flags...)...)
		})
	})
}

// startDataForSEOStack is atrium serve with debug logs (to show that not
// even they hold the password) and retries a millisecond apart.
func startDataForSEOStack(t *testing.T, flags ...string) *stack {
	return startStackWith(t, func(c *serveConfig) { c.actions.DataForSEOBackoff = time.Millisecond }, append(flags, "--log-level=debug")...)
}

// events collects the completion events of the actions service.
type events struct {
	mu   sync.Mutex
	runs map[string]map[string]any
}

func subscribeCompleted(t *testing.T, natsURL string) *events {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ev := &events{runs: map[string]map[string]any{}}
	if _, err := nc.Subscribe("atrium.actions.completed.>", func(m *nats.Msg) {
		var e map[string]any
		if json.Unmarshal(m.Data, &e) == nil {
			ev.mu.Lock()
			ev.runs[fmt.Sprint(e["run_id"])] = e
			ev.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ev
}

func (e *events) of(t *testing.T, runID string) map[string]any {
	t.Helper()
	var got map[string]any
	eventually(t, 10*time.Second, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		got = e.runs[runID]
		return got != nil
	})
	return got
}

// runOf is the action_runs row of the run that made a record, or of the
// latest run of the action.
func (s *stack) runOf(t *testing.T, tn tenant, client, action string, runs int) map[string]any {
	t.Helper()
	var rows []any
	eventually(t, 5*time.Second, func() bool {
		rows = s.read(t, tn.read, params("resource", "action_runs", "client_id", client, "order", "created_at", "direction", "asc", "limit", "1000")).json["data"].([]any)
		return len(rows) == runs
	})
	last := rows[len(rows)-1].(map[string]any)
	if last["action"] != action {
		t.Fatalf("the latest run is %v, want one of %s", last, action)
	}
	return last
}

func testDataForSEO(t *testing.T, start func(flags ...string) *stack) {
	// The client's bakery in the middle of a neighbourhood of 40 others.
	fake := dataforseotest.New(dataforseotest.Config{Login: dfsLogin, Password: dfsPassword,
		Businesses: append(dataforseotest.Neighbourhood("bakery", 53.8, -1.55, 40), dataforseotest.Business{Title: "The Client's Bakery", Domain: "client.example", Lat: 53.8, Lng: -1.55})})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	s := start("--seo-provider=dataforseo", "--dataforseo-base-url="+srv.URL, "--dataforseo-login="+dfsLogin,
		"--dataforseo-password="+dfsPassword, "--provider-timeout=5s")
	ev := subscribeCompleted(t, s.natsURL)
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 0, 100)
	runs := 0
	act := func(body map[string]any, status string) (response, map[string]any) {
		t.Helper()
		body["client_id"] = client
		r := s.act(t, tn.write, body)
		d := wantAction(t, r, body["action"].(string), client, status)
		runs++
		return r, d
	}
	wantRun := func(action string, cost float64, cached bool, status string) map[string]any {
		t.Helper()
		row := s.runOf(t, tn, client, action, runs)
		if row["status"] != status || math.Abs(row["provider_cost"].(float64)-cost) > 1e-9 || row["cached"] != cached {
			t.Fatalf("%s's action_runs row: %v; want %s, provider_cost %v, cached %v", action, row, status, cost, cached)
		}
		e := ev.of(t, row["id"].(string))
		if math.Abs(e["provider_cost"].(float64)-cost) > 1e-9 || e["cached"] != cached || e["status"] != status {
			t.Fatalf("%s's completion event: %v; want provider_cost %v, cached %v", action, e, cost, cached)
		}
		return row
	}

	// Keyword ideas: DataForSEO Labs' volumes for the country asked.
	_, d := act(map[string]any{"action": "generate_keywords", "seed": "Sourdough Bread", "location": "United Kingdom"}, "success")
	if d["source"] != "dataforseo" || d["location"] != "United Kingdom" || d["count"] != float64(20) {
		t.Fatalf("generate_keywords data: %v", d)
	}
	rows := s.read(t, tn.read, params("resource", "keywords", "client_id", client, "limit", "100")).json["data"].([]any)
	if len(rows) != 20 {
		t.Fatalf("%d keyword rows, want 20", len(rows))
	}
	for _, raw := range rows {
		row := raw.(map[string]any)
		want := dataforseotest.KeywordVolume(row["keyword"].(string), "sourdough bread", 2826)
		if row["source"] != "dataforseo" || row["location"] != "United Kingdom" || row["search_volume"] != float64(want) {
			t.Errorf("keyword row %v: want source dataforseo, location United Kingdom, DataForSEO's volume %d", row, want)
		}
	}
	keywordsCost := dataforseotest.PriceKeywordIdeas + 20*dataforseotest.PriceKeywordIdeasRow
	wantRun("generate_keywords", keywordsCost, false, "success")

	// A location DataForSEO Labs does not have: 400 naming the field, and
	// nothing spent, reserved or asked.
	asked := fake.CallsTo(dataforseotest.PathKeywordIdea)
	r := s.act(t, tn.write, map[string]any{"action": "generate_keywords", "client_id": client, "seed": "rye", "location": "Leeds"})
	wantError(t, r, http.StatusBadRequest, "generate_keywords.location must be a country DataForSEO Labs has keyword data for", "United Kingdom (GB)", `got "Leeds"`)
	if _, data := s.credits(t, tn.agency); data != 98 || fake.CallsTo(dataforseotest.PathKeywordIdea) != asked {
		t.Fatalf("a refused location: data credits %v (want 98), keyword requests %d (want %d)", data, fake.CallsTo(dataforseotest.PathKeywordIdea), asked)
	}

	// A grid: 25 Maps searches; the client ranks first where it stands.
	_, g := act(map[string]any{"action": "run_grid_search", "keyword": "bakery", "lat": 53.8, "lng": -1.55}, "success")
	points := g["points"].([]any)
	if g["source"] != "dataforseo" || len(points) != 25 || points[12].(map[string]any)["rank"] != float64(1) || fake.CallsTo(dataforseotest.PathMaps) != 25 {
		t.Fatalf("run_grid_search data %v after %d Maps searches; want 25 points, rank 1 at the centre", g, fake.CallsTo(dataforseotest.PathMaps))
	}
	wantRun("run_grid_search", 25*dataforseotest.PriceMaps, false, "success")

	// Backlinks: the Backlinks API's profile.
	_, b := act(map[string]any{"action": "fetch_backlinks"}, "success")
	if b["source"] != "dataforseo" || b["domain_authority"] != math.Round(float64(dataforseotest.Rank("client.example"))/10) ||
		b["backlinks"] != float64(fake.TotalBacklinks("client.example")) || b["listed"] != float64(30) {
		t.Fatalf("fetch_backlinks data %v", b)
	}
	metrics := s.read(t, tn.read, params("resource", "domain_metrics", "client_id", client)).json["data"].([]any)
	links := s.read(t, tn.read, params("resource", "backlinks", "client_id", client, "limit", "100")).json["data"].([]any)
	if len(metrics) != 1 || metrics[0].(map[string]any)["source"] != "dataforseo" || len(links) != 30 || links[0].(map[string]any)["source"] != "dataforseo" {
		t.Fatalf("domain_metrics %v and %d backlinks, want them labelled dataforseo", metrics, len(links))
	}
	backlinksCost := dataforseotest.PriceSummary + dataforseotest.PriceBacklinks + 30*dataforseotest.PriceBacklinksRow +
		dataforseotest.PriceBulkRanks + dataforseotest.PriceBulkRanksRow
	wantRun("fetch_backlinks", backlinksCost, false, "success")
	spent := fake.Spent()

	// Repeats, however spelled, come from the cache: no request, no cost,
	// the same figures; the credits are the action's price all the same.
	_, again := act(map[string]any{"action": "generate_keywords", "seed": "sourdough  bread", "location": "united kingdom"}, "success")
	if fmt.Sprint(again["keywords"]) == "" || len(again["keywords"].([]any)) != 20 {
		t.Fatalf("cached keywords: %v", again)
	}
	wantRun("generate_keywords", 0, true, "success")
	act(map[string]any{"action": "fetch_backlinks"}, "success")
	wantRun("fetch_backlinks", 0, true, "success")
	if fake.Spent() != spent {
		t.Fatalf("the repeats cost $%v at DataForSEO", fake.Spent()-spent)
	}
	if _, data := s.credits(t, tn.agency); data != 98-3-2-2-2 {
		t.Fatalf("data credits %v, want %v", data, 98-3-2-2-2)
	}

	// DataForSEO's errors: the run's status_code, nothing charged; its
	// rate limit is retried, then answered 429.
	for _, c := range []struct {
		fault  []dataforseotest.Fault
		status string
		code   float64
		words  string
	}{
		{[]dataforseotest.Fault{{Status: dataforseotest.StatusFunds}}, "error", 402, "funds"},
		{[]dataforseotest.Fault{{Status: 40202}, {Status: 40202}, {Status: 40202}, {Status: 40202}}, "error", 429, "rate limit"},
		{[]dataforseotest.Fault{{Body: "<html>502 Bad Gateway</html>"}}, "error", 502, "documented shape"},
		{[]dataforseotest.Fault{{Status: 40202}, {Status: 50000}}, "success", 200, ""},
	} {
		_, before := s.credits(t, tn.agency)
		fake.Inject(dataforseotest.PathKeywordIdea, c.fault...)
		r, d := act(map[string]any{"action": "generate_keywords", "seed": fmt.Sprintf("bread %d", runs), "location": "gb"}, c.status)
		if r.json["status_code"] != c.code || !strings.Contains(fmt.Sprint(d["error"]), c.words) {
			t.Fatalf("fault %v: %s", c.fault, r)
		}
		_, after := s.credits(t, tn.agency)
		want := before
		if c.status == "success" {
			want -= 2
		}
		if after != want || r.header.Get("Atrium-Data-Credits-Remaining") != fmt.Sprint(want) {
			t.Fatalf("fault %v: data credits %v -> %v, want %v", c.fault, before, after, want)
		}
		cost := 0.0
		if c.status == "success" {
			cost = keywordsCost
		}
		wantRun("generate_keywords", cost, false, c.status)
	}
	if fake.Faults(dataforseotest.PathKeywordIdea) != 0 {
		t.Fatal("not every fault was met: a retry is missing")
	}
	// What DataForSEO cost and how the cache answered, for operators.
	var text string
	eventually(t, 10*time.Second, func() bool {
		text = scrape(t, s.admin+"/metrics")
		return sample(text, "atrium_actions_seo_cache_lookups_total", `result="hit"`) == 2
	})
	if v := sample(text, "atrium_actions_provider_cost_total", `action="run_grid_search"`); math.Abs(v-25*dataforseotest.PriceMaps) > 1e-9 {
		t.Errorf("atrium_actions_provider_cost_total of run_grid_search = %v, want %v\n%s", v, 25*dataforseotest.PriceMaps, text)
	}
	if v := sample(text, "atrium_actions_seo_cache_lookups_total", `result="miss"`); v != 7 {
		t.Errorf("cache misses = %v, want 7: the first three questions and the four of the faults", v)
	}
	if strings.Contains(s.logs.String(), dfsPassword) {
		t.Fatal("the logs hold the DataForSEO password")
	}
	if !strings.Contains(s.logs.String(), "SEO data from DataForSEO") {
		t.Fatalf("the logs do not say where SEO data comes from:\n%s", s.logs)
	}
}

// The SEO settings are checked when atrium serve starts, each refusal
// naming the setting and never quoting the password; -h never shows the
// password either, even when the environment sets it.
func TestDataForSEOSettingsAreCheckedAtStart(t *testing.T) {
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--seo-provider=semrush"}, "--seo-provider must be synthetic or dataforseo"},
		{[]string{"--seo-provider=dataforseo", "--dataforseo-login=a@b.example"}, "--dataforseo-password"},
		{[]string{"--seo-provider=dataforseo", "--dataforseo-password=" + dfsPassword}, "--dataforseo-login"},
		{[]string{"--seo-cache-ttl=-1h"}, "--seo-cache-ttl"},
		{[]string{"--dataforseo-rate-limit=0"}, "--dataforseo-rate-limit"},
		{[]string{"--seo-provider=dataforseo", "--dataforseo-login=a", "--dataforseo-password=" + dfsPassword,
			"--dataforseo-base-url=https://a:" + dfsPassword + "@api.dataforseo.com"}, "must not hold credentials"},
	} {
		err := serveRefusal(t, c.flags...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), dfsPassword) {
			t.Errorf("%v: serve returned %v; want a refusal saying %q without the password", c.flags, err, c.want)
		}
	}
	var help strings.Builder
	env := func(k string) (string, bool) { return dfsPassword, k == "ATRIUM_DATAFORSEO_PASSWORD" }
	if _, err := parseServe([]string{"-h"}, env, &help, &help); err == nil || !strings.Contains(help.String(), "--dataforseo-password") ||
		strings.Contains(help.String(), dfsPassword) {
		t.Fatalf("-h (%v) shows the password or not the flag:\n%s", err, help.String())
	}
}

// serveRefusal starts atrium serve with flags and returns the error it
// stops with before it is ready.
func serveRefusal(t *testing.T, flags ...string) error {
	t.Helper()
	args := append([]string{"--http-addr=127.0.0.1:0", "--admin-addr=127.0.0.1:0", "--admin-token=" + testAdminToken,
		"--collections-grpc-addr=127.0.0.1:0", "--crm-grpc-addr=127.0.0.1:0", "--data-grpc-addr=127.0.0.1:0",
		"--actions-grpc-addr=127.0.0.1:0", "--audit-grpc-addr=127.0.0.1:0", "--nats-embedded-addr=127.0.0.1:0", "--log-level=error",
		"--internal-secret=" + testInternalSecret, "--drain-delay=0s"}, flags...)
	cfg, err := parseServe(args, func(string) (string, bool) { return "", false }, io.Discard, io.Discard)
	if err != nil {
		return err
	}
	logs := &syncBuffer{}
	logger, err := cfg.common.Logger(logs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, *cfg, logger, logs, func(listening) { ready <- struct{}{} }) }()
	select {
	case err := <-done:
		if strings.Contains(logs.String(), dfsPassword) {
			t.Errorf("the logs hold the password:\n%s", logs)
		}
		return err
	case <-ready:
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve, stopped once ready: %v", err)
		}
		return nil
	}
}

// With --seo-cache-ttl=0 every question is asked of DataForSEO and paid
// for: the cache is off.
func TestDataForSEOWithoutTheCache(t *testing.T) {
	fake := dataforseotest.New(dataforseotest.Config{Login: dfsLogin, Password: dfsPassword})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	s := startDataForSEOStack(t, "--seo-provider=dataforseo", "--dataforseo-base-url="+srv.URL, "--dataforseo-login="+dfsLogin,
		"--dataforseo-password="+dfsPassword, "--seo-cache-ttl=0")
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 0, 10)
	for i := 1; i <= 2; i++ {
		wantAction(t, s.act(t, tn.write, map[string]any{"action": "fetch_backlinks", "client_id": client}), "fetch_backlinks", client, "success")
		row := s.runOf(t, tn, client, "fetch_backlinks", i)
		if row["cached"] != false || row["provider_cost"].(float64) <= 0 || fake.CallsTo(dataforseotest.PathSummary) != i {
			t.Fatalf("run %d without the cache: %v after %d summaries; want it asked and paid for", i, row, fake.CallsTo(dataforseotest.PathSummary))
		}
	}
}
