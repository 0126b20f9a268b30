package app_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// billing is an SEO data provider that knows only countries, charges what
// DataForSEO would, and can be told to fail after it charged, to answer
// from a cache, or that it cannot tell which locations it has.
type billing struct {
	fail        error
	cached      bool
	cannotCheck bool
	asked       atomic.Int32
}

var measured = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

func (b *billing) Source() string { return "dataforseo" }

func (b *billing) CheckLocation(_ context.Context, loc string) error {
	switch {
	case b.cannotCheck:
		return provider.Failure("DataForSEO", http.StatusServiceUnavailable, nil, "cannot reach DataForSEO")
	case loc != "" && loc != "United Kingdom":
		return provider.Failure("DataForSEO", http.StatusBadRequest, nil, "a country DataForSEO Labs has keyword data for, one of: United Kingdom (GB)")
	}
	return nil
}

func (b *billing) answer(ctx context.Context, cost float64) error {
	b.asked.Add(1)
	if b.cached {
		provider.Cached(ctx, measured)
		return nil
	}
	provider.Billed(ctx, provider.Dollars(cost))
	return b.fail
}

func (b *billing) KeywordIdeas(ctx context.Context, q provider.KeywordQuery) (provider.KeywordResult, error) {
	if err := b.CheckLocation(ctx, q.Location); err != nil && !b.cannotCheck {
		return provider.KeywordResult{}, err
	}
	if err := b.answer(ctx, 0.0103); err != nil {
		return provider.KeywordResult{}, err
	}
	return provider.KeywordResult{Location: "United Kingdom", Ideas: []provider.KeywordIdea{
		{Keyword: q.Seed, SearchVolume: 880, Difficulty: 31, CPC: 1.2, Intent: "commercial"},
		{Keyword: q.Seed + " jobs", SearchVolume: 90, Difficulty: provider.NoFigure, CPC: 0},
	}}, nil
}

func (b *billing) GridSearch(ctx context.Context, q provider.GridQuery) (provider.GridResult, error) {
	for range q.Size * q.Size {
		if err := b.answer(ctx, 0.002); err != nil {
			return provider.GridResult{}, err
		}
	}
	return provider.GridResult{Points: []provider.GridPoint{{Lat: q.Lat, Lng: q.Lng, Rank: 2}}, AverageRank: 2}, nil
}

func (b *billing) Backlinks(ctx context.Context, domain string) (provider.BacklinkProfile, error) {
	if err := b.answer(ctx, 0.043); err != nil {
		return provider.BacklinkProfile{}, err
	}
	return provider.BacklinkProfile{Domain: domain, DomainAuthority: 30, Total: 500, ReferringDomains: 40}, nil
}

func (e *env) keywords(loc string) map[string]any {
	body := map[string]any{"action": "generate_keywords", "client_id": e.client.ID, "seed": "sourdough"}
	if loc != "" {
		body["location"] = loc
	}
	return body
}

// A location the SEO data provider has no figures for is a 400 naming
// the field and what is accepted, before anything is reserved or asked;
// a provider that cannot tell lets the run go ahead.
func TestAnUnknownLocationIsA400BeforeAnythingIsReserved(t *testing.T) {
	e := newEnv(t, app.Config{})
	search := &billing{}
	e.providers.Search = search
	e.grant(t, 0, 10)
	_, err := e.actions.Run(t.Context(), e.agency, e.keywords("Atlantis"), "")
	wantKind(t, err, apperr.KindInvalid, `generate_keywords.location must be a country DataForSEO Labs has keyword data for, one of: United Kingdom (GB); got "Atlantis"`)
	if b := e.balance(t); b.Data != 10 || search.asked.Load() != 0 || len(e.events()) != 0 || e.records.count("action_runs") != 0 {
		t.Fatalf("a refused location left balance %+v, %d questions, %d events, %d runs", b, search.asked.Load(), len(e.events()), e.records.count("action_runs"))
	}
	search.cannotCheck = true
	out, err := e.actions.Run(t.Context(), e.agency, e.keywords("Atlantis"), "")
	if err != nil || out.Run.Status != app.StatusSuccess {
		t.Fatalf("with a provider that cannot tell: %+v, %v; want the run to go ahead", out.Run, err)
	}
}

// What the providers charged is recorded on the run, in its action_runs
// row and its completion event, whether it succeeded or failed (a failed
// run is not charged credits, but was paid for); an answer from the cache
// is recorded as cached, free, and dated when it was measured.
func TestProviderCostIsRecordedOnTheRun(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		search := &billing{}
		e.providers.Search = search
		e.grant(t, 0, 100)
		grid := map[string]any{"action": "run_grid_search", "client_id": e.client.ID, "keyword": "bakery", "lat": 53.8, "lng": -1.55}

		ok, err := e.actions.Run(t.Context(), e.agency, grid, "")
		if err != nil || ok.Run.Status != app.StatusSuccess || ok.Run.ProviderCost != 25*provider.Dollars(0.002) || ok.Run.Cached {
			t.Fatalf("grid run %+v, %v; want success costing 25 × $0.002", ok.Run, err)
		}
		search.fail = provider.Failure("DataForSEO", http.StatusPaymentRequired, nil, "the DataForSEO account's funds are exhausted (40210)")
		failed, err := e.actions.Run(t.Context(), e.agency, e.keywords("United Kingdom"), "")
		if err != nil || failed.Run.Status != app.StatusError || failed.Run.StatusCode != 402 || failed.Run.ProviderCost != provider.Dollars(0.0103) {
			t.Fatalf("failed run %+v, %v; want error 402 that still cost $0.0103", failed.Run, err)
		}
		if failed.Balance.Data != 97 {
			t.Fatalf("balance %+v, want 97: the grid's 3 spent, the failed run's 2 released", failed.Balance)
		}
		search.fail, search.cached = nil, true
		cached, err := e.actions.Run(t.Context(), e.agency, map[string]any{"action": "fetch_backlinks", "client_id": e.client.ID}, "")
		if err != nil || cached.Run.Status != app.StatusSuccess || cached.Run.ProviderCost != 0 || !cached.Run.Cached {
			t.Fatalf("cached run %+v, %v; want success, cached and free", cached.Run, err)
		}
		if at := cached.Run.Data["fetched_at"]; at != measured.Format(time.RFC3339Nano) {
			t.Errorf("fetched_at %v, want when the cached answer was measured, %s", at, measured.Format(time.RFC3339Nano))
		}

		want := map[string]struct {
			cost   float64
			cached bool
		}{ok.Run.ID: {0.05, false}, failed.Run.ID: {0.0103, false}, cached.Run.ID: {0, true}}
		for id, w := range want {
			row, err := e.records.GetRecord(t.Context(), e.client.ID, "action_runs", id)
			if err != nil {
				t.Fatal(err)
			}
			if row["provider_cost"] != w.cost || row["cached"] != w.cached {
				t.Errorf("action_runs row %s: provider_cost %v cached %v, want %v %v", id, row["provider_cost"], row["cached"], w.cost, w.cached)
			}
			stored, err := e.store.Run(t.Context(), id)
			if err != nil || stored.ProviderCost.Float() != w.cost || stored.Cached != w.cached {
				t.Errorf("stored run %s: %s cached %v, %v", id, stored.ProviderCost, stored.Cached, err)
			}
		}
		evs := e.events()
		if len(evs) != 3 {
			t.Fatalf("%d completion events, want 3", len(evs))
		}
		for _, ev := range evs {
			if w := want[ev.RunID]; ev.ProviderCost != w.cost || ev.Cached != w.cached {
				t.Errorf("event of %s (%s): provider_cost %v cached %v, want %v %v", ev.Action, ev.Status, ev.ProviderCost, ev.Cached, w.cost, w.cached)
			}
		}
	})
}

// The figures a provider has none for are left out of the keyword rows,
// which say where they are counted and whose data they are.
func TestKeywordRowsSayWhereAndWhose(t *testing.T) {
	e := newEnv(t, app.Config{})
	e.providers.Search = &billing{}
	e.grant(t, 0, 10)
	out, err := e.actions.Run(t.Context(), e.agency, e.keywords(""), "")
	if err != nil || out.Run.Status != app.StatusSuccess {
		t.Fatalf("%+v, %v", out.Run, err)
	}
	if out.Run.Data["location"] != "United Kingdom" || out.Run.Data["source"] != "dataforseo" {
		t.Errorf("data %v: want the provider's location and source", out.Run.Data)
	}
	seen := 0
	for _, w := range out.Run.Writes {
		if w.Resource != "keywords" {
			continue
		}
		for _, row := range w.Rows {
			seen++
			if row["source"] != "dataforseo" || row["location"] != "United Kingdom" {
				t.Errorf("row %v: want source dataforseo and location United Kingdom", row)
			}
			if _, has := row["difficulty"]; has == (row["keyword"] == "sourdough jobs") {
				t.Errorf("row %v: a difficulty the provider has no figure for is written, or one it has is not", row)
			}
			if _, has := row["intent"]; has == (row["keyword"] == "sourdough jobs") {
				t.Errorf("row %v: an intent the provider has none for is written, or one it has is not", row)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d keyword rows, want 2", seen)
	}
}
