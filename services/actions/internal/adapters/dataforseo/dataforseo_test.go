package dataforseo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/atrium-hq/atrium/services/actions/dataforseotest"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/dataforseo"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// metered is a context with a fresh meter, and the meter.
func metered(t *testing.T) (context.Context, *provider.Meter) {
	m := new(provider.Meter)
	return provider.WithMeter(t.Context(), m), m
}

// The keyword ideas are DataForSEO Labs' figures for the country asked,
// the seed first, and a metric DataForSEO has no figure for is said to be
// missing, not 0.
func TestKeywordIdeasAreDataForSEOsFigures(t *testing.T) {
	w := newWorld(t, dataforseotest.Config{}, dataforseo.Config{})
	ctx, m := metered(t)
	res, err := w.p.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "  Sourdough   Bread ", Location: "uk", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Location != "United Kingdom" {
		t.Errorf("location %q, want United Kingdom (uk resolved to DataForSEO's name)", res.Location)
	}
	if len(res.Ideas) != dataforseotest.KeywordIdeaCount || res.Ideas[0].Keyword != "sourdough bread" {
		t.Fatalf("%d ideas starting with %+v, want all %d with the seed first", len(res.Ideas), res.Ideas[0], dataforseotest.KeywordIdeaCount)
	}
	for _, k := range res.Ideas {
		if want := dataforseotest.KeywordVolume(k.Keyword, "sourdough bread", 2826); k.SearchVolume != want {
			t.Errorf("%q: search volume %d, want DataForSEO's %d", k.Keyword, k.SearchVolume, want)
		}
		informational := strings.HasPrefix(k.Keyword, "what is") || strings.HasPrefix(k.Keyword, "how to") ||
			slices.ContainsFunc([]string{" guide", " tips", " ideas", " examples", " for beginners"}, func(s string) bool { return strings.HasSuffix(k.Keyword, s) })
		switch {
		case strings.HasSuffix(k.Keyword, " jobs") && k.Difficulty != provider.NoFigure:
			t.Errorf("%q: difficulty %v, want NoFigure: DataForSEO has none", k.Keyword, k.Difficulty)
		case strings.HasSuffix(k.Keyword, " examples") && k.Intent != "":
			t.Errorf("%q: intent %q, want none: DataForSEO has none", k.Keyword, k.Intent)
		case informational && k.CPC != 0:
			t.Errorf("%q: CPC %v, want 0: nobody bids on it", k.Keyword, k.CPC)
		case !informational && k.CPC <= 0:
			t.Errorf("%q: CPC %v, want DataForSEO's", k.Keyword, k.CPC)
		}
	}
	calls := w.fake.Calls()
	ideas := slices.IndexFunc(calls, func(c dataforseotest.Call) bool { return c.Path == dataforseotest.PathKeywordIdea })
	if ideas < 0 || calls[ideas].Task["location_code"] != 2826.0 || fmt.Sprint(calls[ideas].Task["keywords"]) != "[sourdough bread]" || calls[ideas].Task["limit"] != 100.0 {
		t.Fatalf("keyword ideas asked %v, want the seed, location code 2826 and limit 100", calls)
	}
	if u := m.Usage(); u.Cost != provider.Dollars(calls[ideas].Cost) || u.Cost == 0 {
		t.Errorf("the run was told %s, DataForSEO charged $%v", u.Cost, calls[ideas].Cost)
	}

	// No location: the deployment's default, a country by any spelling.
	for _, c := range []struct{ def, want string }{{"", "United States"}, {"de", "Germany"}, {"FRANCE", "France"}} {
		p := newProvider(t, dataforseo.Config{BaseURL: w.srv.URL, DefaultLocation: c.def})
		res, err := p.KeywordIdeas(t.Context(), provider.KeywordQuery{Seed: "bread", Limit: 3})
		if err != nil || res.Location != c.want || len(res.Ideas) != 3 {
			t.Errorf("default location %q: %+v, %v; want 3 ideas counted in %s", c.def, res, err, c.want)
		}
	}
}

// A location DataForSEO Labs has no keyword data for is a 400 that lists
// the countries it has, asked of its free list of locations, which is
// fetched once however often it is asked; nothing is spent.
func TestAnUnknownLocationIsRefusedFreeListingTheCountries(t *testing.T) {
	w := newWorld(t, dataforseotest.Config{}, dataforseo.Config{})
	ctx, m := metered(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := w.p.CheckLocation(ctx, "Leeds"); err != nil {
				wantError(t, err, 400, "a country DataForSEO Labs has keyword data for", "United Kingdom (GB)", "Germany (DE)")
			} else {
				t.Error("Leeds was accepted: DataForSEO Labs counts by country")
			}
		})
	}
	wg.Wait()
	for _, ok := range []string{"United Kingdom", "gb", " united  kingdom ", "UK", "usa", ""} {
		if err := w.p.CheckLocation(ctx, ok); err != nil {
			t.Errorf("CheckLocation(%q): %v", ok, err)
		}
	}
	_, err := w.p.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "bread", Location: "Atlantis", Limit: 5})
	wantError(t, err, 400, "one of:")
	if n := w.fake.CallsTo(dataforseotest.PathLocations); n != 1 {
		t.Errorf("the locations were fetched %d times, want once", n)
	}
	if n := w.fake.CallsTo(dataforseotest.PathKeywordIdea); n != 0 || m.Usage().Cost != 0 {
		t.Errorf("%d keyword requests and %s spent for refused locations, want none", n, m.Usage().Cost)
	}

	// A deployment whose own default is wrong is the operator's problem,
	// not the caller's: 503 naming the setting.
	p := newProvider(t, dataforseo.Config{BaseURL: w.srv.URL, DefaultLocation: "Narnia"})
	_, err = p.KeywordIdeas(t.Context(), provider.KeywordQuery{Seed: "bread"})
	wantError(t, err, 503, "--dataforseo-location", "Narnia")
}

// The list of locations is fetched again once a day; a refresh that fails
// keeps the list it had, and a list that cannot be fetched at all is a
// failure the engine lets through (not a 400).
func TestTheLocationsAreRefreshedDaily(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	w := newWorld(t, dataforseotest.Config{}, dataforseo.Config{Now: clock})
	check := func(loc string) error { return w.p.CheckLocation(t.Context(), loc) }
	if err := check("gb"); err != nil {
		t.Fatal(err)
	}
	advance(23 * time.Hour)
	_ = check("gb")
	if n := w.fake.CallsTo(dataforseotest.PathLocations); n != 1 {
		t.Fatalf("fetched %d times within the day, want once", n)
	}
	advance(2 * time.Hour)
	w.fake.Inject(dataforseotest.PathLocations, dataforseotest.Fault{HTTPStatus: 500}, dataforseotest.Fault{HTTPStatus: 500},
		dataforseotest.Fault{HTTPStatus: 500}, dataforseotest.Fault{HTTPStatus: 500})
	if err := check("gb"); err != nil {
		t.Fatalf("a failed refresh lost the list: %v", err)
	}
	if n := w.fake.CallsTo(dataforseotest.PathLocations); n != 5 {
		t.Fatalf("%d requests for the locations, want the first and four attempts to refresh", n)
	}
	if err := check("gb"); err != nil {
		t.Fatal(err)
	}
	if n := w.fake.CallsTo(dataforseotest.PathLocations); n != 6 {
		t.Fatalf("%d requests, want one more: a stale list is fetched again", n)
	}

	// Never fetched: a failure, not a refusal.
	down := newProvider(t, dataforseo.Config{BaseURL: "http://" + closedAddr(t)})
	err := down.CheckLocation(t.Context(), "gb")
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.StatusCode == 400 {
		t.Fatalf("unreachable DataForSEO: %v, want a failure that is not a 400", err)
	}
}

// A grid is one Maps search per point, at the point's coordinates with a
// zoom of about two cells; the client is found by its domain or its name,
// never as the paid listing; competitors are who is first most often; a
// point without results ranks 0 and its cost is counted.
func TestGridSearchIsOneMapsSearchPerPoint(t *testing.T) {
	centreLat, centreLng := 53.8, -1.55
	others := dataforseotest.Neighbourhood("bakery", centreLat, centreLng, 40)
	client := dataforseotest.Business{Title: "Rye & Co Bakery", Domain: "shop.rye.example", Lat: 53.81, Lng: -1.56}
	w := newWorld(t, dataforseotest.Config{Businesses: append(slices.Clone(others), client)}, dataforseo.Config{})
	q := provider.GridQuery{Keyword: "bakery", Lat: centreLat, Lng: centreLng, RadiusKm: 5, Size: 5, Domain: "https://www.Rye.example/", BusinessName: "Rye and Co"}
	w.fake.Inject(dataforseotest.PathMaps, dataforseotest.Fault{Status: dataforseotest.StatusNoResults, Task: true, Cost: dataforseotest.PriceMaps})
	ctx, m := metered(t)
	g, err := w.p.GridSearch(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	calls := w.fake.Calls()
	if len(calls) != 25 || w.fake.CallsTo(dataforseotest.PathMaps) != 25 {
		t.Fatalf("%d requests, want 25 Maps searches", len(calls))
	}
	if u := m.Usage(); u.Cost != 25*provider.Dollars(dataforseotest.PriceMaps) || u.Calls != 25 {
		t.Errorf("usage %+v, want 25 searches at $%v, the one without results included", u, dataforseotest.PriceMaps)
	}
	byCoord := map[string]dataforseotest.Call{}
	for _, c := range calls {
		byCoord[c.Task["location_coordinate"].(string)] = c
		if c.Task["keyword"] != "bakery" || c.Task["depth"] != 20.0 || c.Task["language_code"] != "en" {
			t.Errorf("a search asked %v", c.Task)
		}
	}
	everyone := append(slices.Clone(others), client)
	noResults, sum, ranked := 0, 0, 0
	firsts := map[string]int{}
	for _, pt := range g.Points {
		c, ok := byCoord[fmt.Sprintf("%v,%v,14z", pt.Lat, pt.Lng)]
		if !ok {
			t.Fatalf("no search at %v,%v with zoom 14 (a map of two 2.5 km cells at 53.8°N); searches: %v", pt.Lat, pt.Lng, calls)
		}
		if c.Status == dataforseotest.StatusNoResults {
			noResults++
			if pt.Rank != 0 {
				t.Errorf("rank %d where the search found nothing, want 0", pt.Rank)
			}
			continue
		}
		// The map ranks by distance: the client's rank is one more than the
		// businesses nearer to the point.
		order := slices.Clone(everyone)
		slices.SortStableFunc(order, func(a, b dataforseotest.Business) int {
			da, db := dataforseotest.DistanceKm(pt.Lat, pt.Lng, a.Lat, a.Lng), dataforseotest.DistanceKm(pt.Lat, pt.Lng, b.Lat, b.Lng)
			return cmpFloat(da, db, a.Title, b.Title)
		})
		want := slices.IndexFunc(order, func(b dataforseotest.Business) bool { return b == client }) + 1
		if want > 20 {
			want = 0
		}
		if pt.Rank != want {
			t.Errorf("rank %d at %v,%v, want %d", pt.Rank, pt.Lat, pt.Lng, want)
		}
		if pt.Rank > 0 {
			sum, ranked = sum+pt.Rank, ranked+1
		}
		if order[0] != client {
			firsts[order[0].Title]++
		}
	}
	if noResults != 1 {
		t.Errorf("%d points without results, want the one injected", noResults)
	}
	if math.Abs(g.AverageRank-float64(sum)/float64(ranked)) > 0.01 || ranked < 5 {
		t.Errorf("average rank %v over %d ranked points, want %v", g.AverageRank, ranked, float64(sum)/float64(ranked))
	}
	if len(g.Competitors) == 0 || firsts[g.Competitors[0]] != slices.Max(mapValues(firsts)) || slices.Contains(g.Competitors, dataforseotest.Sponsored.Title) {
		t.Errorf("competitors %v; first at points: %v (the paid listing is not a competitor)", g.Competitors, firsts)
	}

	// By name alone, when the client has no domain, and the zoom of a
	// wider grid is wider.
	w.fake.SetBusinesses([]dataforseotest.Business{{Title: "Rye & Co.", Lat: 53.8, Lng: -1.55}, {Title: "Rye & Cousins", Lat: 53.8001, Lng: -1.55}})
	g, err = w.p.GridSearch(t.Context(), provider.GridQuery{Keyword: "bakery", Lat: 53.8, Lng: -1.55, RadiusKm: 50, Size: 3, BusinessName: "Rye & Co"})
	if err != nil || g.Points[4].Rank != 1 {
		t.Fatalf("by name: %+v, %v; want rank 1 at the centre", g, err)
	}
	if c := w.fake.Calls(); !strings.HasSuffix(c[len(c)-1].Task["location_coordinate"].(string), ",10z") {
		t.Errorf("a 50 km grid of 3 searched at %v, want zoom 10", c[len(c)-1].Task["location_coordinate"])
	}
}

func mapValues(m map[string]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func cmpFloat(a, b float64, ta, tb string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return strings.Compare(ta, tb)
}

// A backlink profile is the Backlinks API's: the summary's rank, spam
// score and totals, the listed links with their linking domain's rank and
// kind, and the home page's rank; three requests, their costs counted.
func TestBacklinksAreTheBacklinksAPIs(t *testing.T) {
	w := newWorld(t, dataforseotest.Config{BacklinksPerTarget: 24}, dataforseo.Config{})
	ctx, m := metered(t)
	p, err := w.p.Backlinks(ctx, "WWW.Rye.example")
	if err != nil {
		t.Fatal(err)
	}
	const d = "rye.example"
	if p.Domain != d || p.DomainAuthority != math.Round(float64(dataforseotest.Rank(d))/10) ||
		p.PageAuthority != math.Round(float64(dataforseotest.Rank("https://"+d+"/"))/10) || p.SpamScore != float64(dataforseotest.SpamScore(d)) {
		t.Errorf("profile %s: DA %v PA %v spam %v", p.Domain, p.DomainAuthority, p.PageAuthority, p.SpamScore)
	}
	if p.Total != w.fake.TotalBacklinks(d) || p.ReferringDomains != w.fake.ReferringDomains(d) || len(p.Backlinks) != 24 {
		t.Errorf("%d backlinks from %d domains, %d listed; want the summary's totals and the 24 listed", p.Total, p.ReferringDomains, len(p.Backlinks))
	}
	kinds := map[string]string{}
	for _, l := range p.Backlinks {
		kinds[l.SourceDomain] = l.SourceType
		if l.LinkingDomains != provider.NoFigure || l.FirstSeen.Year() != 2024 || l.ExternalPages < 3 {
			t.Errorf("link %+v", l)
		}
	}
	for domain, want := range map[string]string{"reddit.com": "forum", "facebook.com": "social", "linkedin.com": "social", "wikipedia.org": "forum",
		"yelp.com": "directory", "medium.com": "blog", "localnews.example": "news", "cityguide.example": "blog", "shopdirectory.example": "directory"} {
		if kinds[domain] != want {
			t.Errorf("a link from %s is a %q, want %q", domain, kinds[domain], want)
		}
	}
	if nofollow := slices.ContainsFunc(p.Backlinks, func(l provider.Backlink) bool { return l.NoFollow }); !nofollow {
		t.Error("no nofollow link, though DataForSEO marked some dofollow false")
	}
	for _, path := range []string{dataforseotest.PathSummary, dataforseotest.PathBacklinks, dataforseotest.PathBulkRanks} {
		if n := w.fake.CallsTo(path); n != 1 {
			t.Errorf("%d requests to %s, want 1", n, path)
		}
	}
	for _, c := range w.fake.Calls() {
		if c.Task["rank_scale"] != "one_hundred" {
			t.Errorf("%s asked ranks on the scale %v, want one_hundred", c.Path, c.Task["rank_scale"])
		}
	}
	if u := m.Usage(); u.Calls != 3 || u.Cost != provider.Dollars(w.fake.Spent()) {
		t.Errorf("usage %+v, want 3 calls costing $%v", u, w.fake.Spent())
	}
	_, err = w.p.Backlinks(t.Context(), "not a domain")
	wantError(t, err, 400, "domain")
}

// DataForSEO's errors arrive inside HTTP 200 or as an HTTP status; each is
// the run's status_code, with its code and message, never the password:
// its rate limit and its own failures are retried, the rest are not, and a
// failure it charges for is counted.
func TestDataForSEOsErrorsBecomeTheRunsStatus(t *testing.T) {
	type F = dataforseotest.Fault
	for _, c := range []struct {
		name     string
		faults   []F
		status   int // 0: the call succeeds
		attempts int
		words    []string
	}{
		{"rate limit, persistent", []F{{Status: 40202}, {Status: 40202}, {Status: 40202}, {Status: 40202}}, 429, 4, []string{"40202", "rate limit"}},
		{"rate limit, then fine", []F{{Status: 40202}, {Status: 40202}}, 0, 3, nil},
		{"funds", []F{{Status: 40210}}, 402, 1, []string{"40210", "funds"}},
		{"daily cost limit", []F{{Status: 40203}}, 402, 1, []string{"40203", "cost limit"}},
		{"billing", []F{{Status: 40200, Message: "Payment Required."}}, 402, 1, []string{"40200"}},
		{"credentials in the envelope", []F{{Status: 40100}}, 401, 1, []string{"login and password"}},
		{"no access to the API", []F{{Status: 40204, Message: "Access denied."}}, 403, 1, []string{"40204", "dashboard"}},
		{"a field refused", []F{{Status: 40501, Task: true, Message: "Invalid Field: 'keywords'."}}, 400, 1, []string{"40501", "keywords"}},
		{"internal error, persistent", []F{{Status: 50000}, {Status: 50000}, {Status: 50000}, {Status: 50000}}, 500, 4, []string{"50000"}},
		{"internal error of the task, then fine", []F{{Status: 50000, Task: true}}, 0, 2, nil},
		{"unknown code", []F{{Status: 40999, Message: "Something new."}}, 502, 1, []string{"40999"}},
		{"HTTP 401", []F{{HTTPStatus: 401}}, 401, 1, []string{"--dataforseo-login"}},
		{"HTTP 402", []F{{HTTPStatus: 402}}, 402, 1, []string{"balance"}},
		{"HTTP 404", []F{{HTTPStatus: 404}}, 502, 1, []string{"--dataforseo-base-url"}},
		{"HTTP 500, then fine", []F{{HTTPStatus: 500}}, 0, 2, nil},
		{"HTTP 503, persistent", []F{{HTTPStatus: 503}, {HTTPStatus: 503}, {HTTPStatus: 503}, {HTTPStatus: 503}}, 503, 4, []string{"503"}},
		{"malformed body", []F{{Body: `{"status_code": 20000, "tasks": [`}}, 502, 1, []string{"not JSON"}},
		{"HTML instead of JSON", []F{{Body: `<html><body>Bad gateway</body></html>`}}, 502, 1, []string{"documented shape"}},
		{"a result of the wrong shape", []F{{Body: `{"status_code": 20000, "cost": 0.01, "tasks": [{"status_code": 20000, "result": [{"items": {"keyword": 3}}]}]}`}}, 502, 1, []string{"documented shape"}},
		{"no task", []F{{Body: `{"status_code": 20000, "cost": 0, "tasks_count": 0, "tasks": []}`}}, 502, 1, []string{"no task"}},
		{"a message quoting the password", []F{{Status: 40100, Message: "bad password " + password}}, 401, 1, []string{"[redacted]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, dataforseotest.Config{}, dataforseo.Config{})
			if err := w.p.CheckLocation(t.Context(), "gb"); err != nil { // the free list, before the faults
				t.Fatal(err)
			}
			for i := range c.faults {
				if c.faults[i].Body == "" {
					c.faults[i].Cost = 0.01 // DataForSEO charged for it, and said so
				}
			}
			w.fake.Inject(dataforseotest.PathKeywordIdea, c.faults...)
			ctx, m := metered(t)
			res, err := w.p.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "bread", Location: "gb", Limit: 5})
			if c.status == 0 {
				if err != nil || len(res.Ideas) != 5 {
					t.Fatalf("%+v, %v; want the ideas after the retries", res, err)
				}
			} else {
				wantError(t, err, c.status, append([]string{"DataForSEO"}, c.words...)...)
			}
			if n := w.fake.CallsTo(dataforseotest.PathKeywordIdea); n != c.attempts {
				t.Errorf("%d attempts, want %d", n, c.attempts)
			}
			if u := m.Usage(); u.Cost != provider.Dollars(w.fake.Spent()) || u.Calls != c.attempts {
				t.Errorf("usage %+v; DataForSEO charged $%v for %d attempts", u, w.fake.Spent(), c.attempts)
			}
		})
	}
}

// A DataForSEO that does not answer in time is a 504 naming the time-out;
// a caller that goes away ends the request with its own error; an
// unreachable one is a 503.
func TestSlowAndMissingAnswers(t *testing.T) {
	w := newWorld(t, dataforseotest.Config{}, dataforseo.Config{Timeout: 300 * time.Millisecond})
	t.Cleanup(w.fake.Release)
	w.fake.Inject(dataforseotest.PathBacklinks, dataforseotest.Fault{Hang: true})
	start := time.Now()
	_, err := w.p.Backlinks(t.Context(), "rye.example")
	wantError(t, err, 504, "did not answer within 300ms", "--provider-timeout")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the time-out took %s", d)
	}

	w.fake.Inject(dataforseotest.PathSummary, dataforseotest.Fault{Hang: true})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := w.p.Backlinks(ctx, "rye.example"); done <- err }()
	waitFor(t, func() bool { return w.fake.CallsTo(dataforseotest.PathSummary) == 2 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller that went away: %v, want context.Canceled itself", err)
	}

	down := newProvider(t, dataforseo.Config{BaseURL: "http://" + closedAddr(t)})
	_, err = down.Backlinks(t.Context(), "rye.example")
	wantError(t, err, 503, "cannot reach DataForSEO")
}

// waitFor polls cond, which has no signal of its own: the stand-in's log
// of requests.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond) // why sleep: a poll of the stand-in's request log, which has no push form
	}
}

// The client-side rate limit keeps a grid's 25 searches under the
// account's limit (no 40202 at all), paced over fake time; a limit above
// the account's meets 40202 and the retries wait it out, within the
// request's time-out, or end in 429.
func TestTheRateLimitKeepsUnderTheAccountsLimit(t *testing.T) {
	q := provider.GridQuery{Keyword: "bakery", Lat: 53.8, Lng: -1.55, RadiusKm: 5, Size: 5, Domain: "rye.example"}
	synctest.Test(t, func(t *testing.T) {
		fake := dataforseotest.New(dataforseotest.Config{Login: login, Password: password, RatePerMinute: 60})
		p := newProvider(t, dataforseo.Config{HTTPClient: inProcess(fake), RatePerMinute: 60, MaxConcurrent: 5, Timeout: time.Minute})
		start := time.Now()
		if _, err := p.GridSearch(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		// A burst of 5, then one a second.
		if d := time.Since(start); d < 19*time.Second || d > 21*time.Second {
			t.Errorf("25 searches at 60 a minute (burst 5) took %s, want about 20s", d)
		}
		for _, c := range fake.Calls() {
			if c.Status != dataforseotest.StatusOK {
				t.Fatalf("DataForSEO answered %d: the client-side limit let a request past the account's", c.Status)
			}
		}
	})
	synctest.Test(t, func(t *testing.T) {
		fake := dataforseotest.New(dataforseotest.Config{Login: login, Password: password, RatePerMinute: 5})
		p := newProvider(t, dataforseo.Config{HTTPClient: inProcess(fake), RatePerMinute: 600, Backoff: 10 * time.Second,
			MaxAttempts: 10, Timeout: 5 * time.Minute})
		ctx, m := metered(t)
		g, err := p.GridSearch(ctx, provider.GridQuery{Keyword: "bakery", Lat: 53.8, Lng: -1.55, RadiusKm: 5, Size: 3, Domain: "rye.example"})
		if err != nil || len(g.Points) != 9 {
			t.Fatalf("%+v, %v; want the grid once the retries waited out the account's minute", g, err)
		}
		limited := 0
		for _, c := range fake.Calls() {
			if c.Status == dataforseotest.StatusRateLimit {
				limited++
			}
		}
		if limited == 0 || m.Usage().Calls != len(fake.Calls()) {
			t.Errorf("%d answers were 40202 and the run counted %d calls of %d", limited, m.Usage().Calls, len(fake.Calls()))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		fake := dataforseotest.New(dataforseotest.Config{Login: login, Password: password, RatePerMinute: 2})
		p := newProvider(t, dataforseo.Config{HTTPClient: inProcess(fake), RatePerMinute: 600, Backoff: time.Second, Timeout: 20 * time.Second})
		_, err := p.GridSearch(t.Context(), provider.GridQuery{Keyword: "bakery", Lat: 53.8, Lng: -1.55, RadiusKm: 5, Size: 3, Domain: "rye.example"})
		wantError(t, err, 429, "40202")
	})
}

// The password is never in a log line, and New's refusals never quote it.
func TestThePasswordIsNeverShown(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := newWorld(t, dataforseotest.Config{}, dataforseo.Config{Logger: logger})
	w.fake.Inject(dataforseotest.PathBulkRanks, dataforseotest.Fault{Status: 50000, Message: "failed for " + password})
	if _, err := w.p.Backlinks(t.Context(), "rye.example"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "retrying") || strings.Contains(logs.String(), password) {
		t.Errorf("logs (want a retry, never the password):\n%s", logs.String())
	}
	for _, cfg := range []dataforseo.Config{
		{BaseURL: "https://" + login + ":" + password + "@api.dataforseo.com", Login: login, Password: password},
		{BaseURL: "ftp://api.dataforseo.com", Login: login, Password: password},
		{Login: "", Password: password},
	} {
		_, err := dataforseo.New(cfg)
		if err == nil || strings.Contains(err.Error(), password) {
			t.Errorf("New(%q): %v; want a refusal that does not quote the password", cfg.BaseURL, err)
		}
	}
}

func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
