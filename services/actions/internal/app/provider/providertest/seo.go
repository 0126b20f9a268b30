package providertest

import (
	"context"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// intents are the search intents a keyword idea may have.
var intents = []string{"informational", "commercial", "transactional", "navigational"}

// sourceTypes are the kinds of linking site a backlink may come from.
var sourceTypes = []string{"blog", "directory", "news", "forum", "social"}

// RunSEO runs the SEO data contract against providers made by newProvider,
// with what generate_keywords, run_grid_search and fetch_backlinks record
// from it: the source of the data named; keyword ideas, distinct and with
// metrics in range (or NoFigure), located where asked; a grid of ranks
// around the centre asked for; a backlink profile of the domain asked for,
// every link a page on another site to a page of the domain; a location it
// does not know refused with a 400 before anything is asked; a question it
// cannot answer is a provider failure; what the calls cost reported to the
// run's meter; and the caller's context ends a call.
func RunSEO(t *testing.T, newProvider func(t *testing.T) provider.SearchData) {
	t.Run("NamesItsSource", func(t *testing.T) {
		if newProvider(t).Source() == "" {
			t.Error("Source is empty: the records say where their data comes from")
		}
	})
	t.Run("KeywordIdeas", func(t *testing.T) {
		p := newProvider(t)
		for _, q := range []provider.KeywordQuery{{Seed: "coffee beans", Limit: 20}, {Seed: "emergency plumber", Location: "United Kingdom", Limit: 5}} {
			if err := p.CheckLocation(t.Context(), q.Location); q.Location != "" && err != nil {
				t.Fatalf("CheckLocation(%q): %v", q.Location, err)
			}
			res, err := p.KeywordIdeas(t.Context(), q)
			if err != nil {
				t.Fatalf("%+v: %v", q, err)
			}
			ideas := res.Ideas
			if len(ideas) == 0 || len(ideas) > q.Limit {
				t.Errorf("%+v: %d ideas, want 1 to %d", q, len(ideas), q.Limit)
			}
			if q.Location != "" && strings.TrimSpace(res.Location) == "" {
				t.Errorf("%+v: the answer does not say where its figures are counted", q)
			}
			seen := map[string]bool{}
			for _, k := range ideas {
				if strings.TrimSpace(k.Keyword) == "" || seen[k.Keyword] {
					t.Errorf("%+v: keyword %q is empty or repeated", q, k.Keyword)
				}
				seen[k.Keyword] = true
				if k.SearchVolume < 0 || (k.Difficulty != provider.NoFigure && (k.Difficulty < 0 || k.Difficulty > 100)) || k.CPC < 0 ||
					(k.Intent != "" && !slices.Contains(intents, k.Intent)) {
					t.Errorf("%+v: idea %+v has a metric out of range", q, k)
				}
			}
		}
	})
	t.Run("GridSearch", func(t *testing.T) {
		q := provider.GridQuery{Keyword: "bakery", Lat: 53.8, Lng: -1.55, RadiusKm: 5, Size: 5, Domain: "rye.example", BusinessName: "Rye & Co"}
		g, err := newProvider(t).GridSearch(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Points) != q.Size*q.Size {
			t.Fatalf("%d points, want %d", len(g.Points), q.Size*q.Size)
		}
		sum, ranked := 0, 0
		for _, pt := range g.Points {
			if pt.Rank < 0 || pt.Rank > 20 {
				t.Errorf("rank %d at %v,%v; want 1 to 20, or 0 for not in the top 20", pt.Rank, pt.Lat, pt.Lng)
			}
			if pt.Rank > 0 {
				sum, ranked = sum+pt.Rank, ranked+1
			}
			// A corner of the grid is the radius away along both axes.
			if d := distanceKm(q.Lat, q.Lng, pt.Lat, pt.Lng); d > q.RadiusKm*math.Sqrt2*1.01 {
				t.Errorf("point %v,%v is %.1f km from the centre, outside a grid of radius %v km", pt.Lat, pt.Lng, d, q.RadiusKm)
			}
		}
		if want := float64(sum) / float64(max(ranked, 1)); math.Abs(g.AverageRank-want) > 0.01 {
			t.Errorf("average rank %v, want %v: the mean over the points where the client ranks", g.AverageRank, want)
		}
		for _, c := range g.Competitors {
			if strings.TrimSpace(c) == "" {
				t.Error("an empty competitor")
			}
		}
	})
	t.Run("Backlinks", func(t *testing.T) {
		const domain = "rye.example"
		p, err := newProvider(t).Backlinks(t.Context(), domain)
		if err != nil {
			t.Fatal(err)
		}
		if p.Domain != domain || len(p.Backlinks) == 0 {
			t.Fatalf("profile of %q with %d links, want %s's", p.Domain, len(p.Backlinks), domain)
		}
		if p.Total < len(p.Backlinks) || p.ReferringDomains < 1 || p.ReferringDomains > p.Total {
			t.Errorf("%d backlinks from %d domains, with %d listed: the totals count every link", p.Total, p.ReferringDomains, len(p.Backlinks))
		}
		for name, v := range map[string]float64{"domain authority": p.DomainAuthority, "page authority": p.PageAuthority, "spam score": p.SpamScore} {
			if v < 0 || v > 100 {
				t.Errorf("%s %v, want 0 to 100", name, v)
			}
		}
		for _, l := range p.Backlinks {
			src, serr := url.Parse(l.SourceURL)
			dst, derr := url.Parse(l.TargetURL)
			switch {
			case serr != nil || derr != nil || !strings.HasPrefix(src.Scheme, "http") || !strings.HasPrefix(dst.Scheme, "http"):
				t.Errorf("link %s -> %s: not absolute http(s) URLs", l.SourceURL, l.TargetURL)
			case strings.TrimPrefix(dst.Hostname(), "www.") != domain && !strings.HasSuffix(dst.Hostname(), "."+domain):
				t.Errorf("link to %s, not a page of %s", l.TargetURL, domain)
			case src.Hostname() != l.SourceDomain && !strings.HasSuffix(src.Hostname(), "."+l.SourceDomain):
				t.Errorf("link from %s, not a page of its source domain %s", l.SourceURL, l.SourceDomain)
			case l.SourceDomain == domain:
				t.Errorf("link from %s: the domain itself", l.SourceURL)
			}
			if !slices.Contains(sourceTypes, l.SourceType) || l.DomainAuthority < 0 || l.DomainAuthority > 100 ||
				l.ExternalPages < 0 || (l.LinkingDomains < 0 && l.LinkingDomains != provider.NoFigure) ||
				l.FirstSeen.IsZero() || l.FirstSeen.After(time.Now()) {
				t.Errorf("link %+v has a value out of range", l)
			}
		}
	})
	t.Run("AnUnknownLocationIsRefusedBeforeAnythingIsAsked", func(t *testing.T) {
		p := newProvider(t)
		// No provider has a place of this name, and none of this length.
		unknown := strings.Repeat("Atlantis ", 12)
		err := p.CheckLocation(t.Context(), unknown)
		wantFailure(t, err, 400)
		m := new(provider.Meter)
		_, err = p.KeywordIdeas(provider.WithMeter(t.Context(), m), provider.KeywordQuery{Seed: "coffee", Location: unknown, Limit: 5})
		wantFailure(t, err, 400)
		if u := m.Usage(); u.Cost != 0 {
			t.Errorf("a refused location cost %s, want nothing", u.Cost)
		}
	})
	t.Run("AQuestionItCannotAnswerIsAFailure", func(t *testing.T) {
		_, err := newProvider(t).KeywordIdeas(t.Context(), provider.KeywordQuery{Seed: "", Limit: 20})
		wantFailure(t, err, 0)
	})
	t.Run("WhatItCostsIsReportedToTheRun", func(t *testing.T) {
		p := newProvider(t)
		m := new(provider.Meter)
		ctx := provider.WithMeter(t.Context(), m)
		if _, err := p.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "coffee", Limit: 5}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Backlinks(ctx, "rye.example"); err != nil {
			t.Fatal(err)
		}
		if u := m.Usage(); u.Cost < 0 || (u.Cost > 0 && u.Calls == 0) || u.Cached != 0 {
			t.Errorf("usage %+v: a cost needs the calls that made it, and nothing here came from a cache", u)
		}
	})
	t.Run("TheCallersContextEndsTheCall", func(t *testing.T) {
		p := newProvider(t)
		callerContexts(t, func(ctx context.Context) error {
			_, err := p.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "coffee", Limit: 5})
			return err
		})
		callerContexts(t, func(ctx context.Context) error {
			_, err := p.GridSearch(ctx, provider.GridQuery{Keyword: "bakery", Lat: 53.8, Lng: -1.55, RadiusKm: 1, Size: 3, Domain: "rye.example"})
			return err
		})
		callerContexts(t, func(ctx context.Context) error {
			_, err := p.Backlinks(ctx, "rye.example")
			return err
		})
	})
}

// distanceKm is the great-circle distance between two points.
func distanceKm(lat1, lng1, lat2, lng2 float64) float64 {
	rad := math.Pi / 180
	dLat, dLng := (lat2-lat1)*rad, (lng2-lng1)*rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * 6371 * math.Asin(math.Sqrt(a))
}
