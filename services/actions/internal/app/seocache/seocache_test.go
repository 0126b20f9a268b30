package seocache_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/seocache"
)

// paid is a provider that charges a cent a question and counts them; while
// hold is set, a question waits for it to close.
type paid struct {
	asked atomic.Int32
	fail  atomic.Bool
	hold  chan struct{}
}

func (p *paid) Source() string                              { return "paid" }
func (p *paid) CheckLocation(context.Context, string) error { return nil }

func (p *paid) charge(ctx context.Context) error {
	p.asked.Add(1)
	provider.Billed(ctx, provider.Dollars(0.01))
	if p.hold != nil {
		select {
		case <-p.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if p.fail.Load() {
		return provider.Failure("paid", http.StatusTooManyRequests, nil, "rate limited")
	}
	return nil
}

func (p *paid) KeywordIdeas(ctx context.Context, q provider.KeywordQuery) (provider.KeywordResult, error) {
	if err := p.charge(ctx); err != nil {
		return provider.KeywordResult{}, err
	}
	return provider.KeywordResult{Location: "United Kingdom", Ideas: []provider.KeywordIdea{
		{Keyword: q.Seed, SearchVolume: 1300, Difficulty: provider.NoFigure, CPC: 1.25, Intent: "commercial"}}}, nil
}

func (p *paid) GridSearch(ctx context.Context, q provider.GridQuery) (provider.GridResult, error) {
	if err := p.charge(ctx); err != nil {
		return provider.GridResult{}, err
	}
	return provider.GridResult{Points: []provider.GridPoint{{Lat: q.Lat, Lng: q.Lng, Rank: 3}}, AverageRank: 3, Competitors: []string{"Crust"}}, nil
}

func (p *paid) Backlinks(ctx context.Context, domain string) (provider.BacklinkProfile, error) {
	if err := p.charge(ctx); err != nil {
		return provider.BacklinkProfile{}, err
	}
	return provider.BacklinkProfile{Domain: domain, DomainAuthority: 41, Total: 1200, ReferringDomains: 80, Backlinks: []provider.Backlink{
		{SourceURL: "https://medium.com/a", TargetURL: "https://" + domain + "/", SourceDomain: "medium.com", SourceType: "blog",
			LinkingDomains: provider.NoFigure, FirstSeen: time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC)}}}, nil
}

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }
func newClock() *clock               { return &clock{now: time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)} }
func meter(t *testing.T) (context.Context, *provider.Meter) {
	m := new(provider.Meter)
	return provider.WithMeter(t.Context(), m), m
}

func newCache(t *testing.T, next provider.SearchData, st seocache.Store, c *clock, ns string) *seocache.Cache {
	t.Helper()
	cache, err := seocache.New(next, st, seocache.Config{TTL: 24 * time.Hour, Namespace: ns, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return cache
}

// An identical question (whatever its case and spacing) within the TTL is
// answered from the cache, free, as cached and measured when first asked;
// another question is asked; after the TTL the question is paid for again.
func TestARepeatWithinTheTTLIsFree(t *testing.T) {
	p, c := &paid{}, newClock()
	cache := newCache(t, p, memory.New(memdb.New(nil)), c, "paid prod")
	first := c.Now()
	ctx, m := meter(t)
	want, err := cache.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "Sourdough Bread", Location: "United Kingdom", Limit: 20})
	if err != nil || m.Usage().Cost != provider.Dollars(0.01) || m.Usage().Cached != 0 {
		t.Fatalf("first question: %v, usage %+v", err, m.Usage())
	}
	c.add(23 * time.Hour)
	ctx, m = meter(t)
	got, err := cache.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "  sourdough   BREAD", Location: "united kingdom", Limit: 20})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("repeat: %+v, %v; want %+v", got, err, want)
	}
	if u := m.Usage(); u.Cost != 0 || u.Cached != 1 || u.Calls != 0 || !u.MeasuredAt.Equal(first) {
		t.Errorf("repeat usage %+v, want cached, free, measured at %s", u, first)
	}
	if provider.MeasuredAt(ctx, c.Now()) != first {
		t.Error("a handler would date the cached answer today")
	}
	for _, other := range []provider.KeywordQuery{
		{Seed: "sourdough bread", Location: "Ireland", Limit: 20},
		{Seed: "sourdough bread", Location: "United Kingdom", Limit: 10},
		{Seed: "rye bread", Location: "United Kingdom", Limit: 20},
	} {
		if _, err := cache.KeywordIdeas(t.Context(), other); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.asked.Load(); n != 4 {
		t.Fatalf("%d questions asked, want 4: the first and three others", n)
	}
	c.add(time.Hour)
	ctx, m = meter(t)
	if _, err := cache.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "sourdough bread", Location: "United Kingdom", Limit: 20}); err != nil {
		t.Fatal(err)
	}
	if u := m.Usage(); p.asked.Load() != 5 || u.Cached != 0 || u.Cost == 0 {
		t.Errorf("after the TTL: asked %d, usage %+v; want it paid for again", p.asked.Load(), u)
	}
}

// Grids and backlink profiles come back as they were answered, their
// inputs normalised as a provider reads them.
func TestGridsAndProfilesComeBackWhole(t *testing.T) {
	p, c := &paid{}, newClock()
	cache := newCache(t, p, memory.New(memdb.New(nil)), c, "paid prod")
	q := provider.GridQuery{Keyword: "Bakery", Lat: 53.80000001, Lng: -1.55, RadiusKm: 5, Size: 5, Domain: "https://www.Rye.example/", BusinessName: "Rye & Co"}
	g1, _ := cache.GridSearch(t.Context(), q)
	q2 := q
	q2.Keyword, q2.Lat, q2.Domain, q2.BusinessName = "bakery ", 53.8, "rye.example", "rye & co"
	g2, err := cache.GridSearch(t.Context(), q2)
	if err != nil || !reflect.DeepEqual(g1, g2) || p.asked.Load() != 1 {
		t.Fatalf("grid repeat: %+v vs %+v, %v, asked %d", g1, g2, err, p.asked.Load())
	}
	b1, _ := cache.Backlinks(t.Context(), "rye.example")
	b2, err := cache.Backlinks(t.Context(), "WWW.rye.example.")
	if err != nil || !reflect.DeepEqual(b1, b2) || p.asked.Load() != 2 {
		t.Fatalf("profile repeat: %+v vs %+v, %v, asked %d", b1, b2, err, p.asked.Load())
	}
}

// A failure is not kept: the next identical question is asked. Two
// namespaces (a sandbox and production) never share answers.
func TestFailuresAndOtherNamespacesAreNotAnswered(t *testing.T) {
	p, c := &paid{}, newClock()
	st := memory.New(memdb.New(nil))
	cache := newCache(t, p, st, c, "paid prod")
	p.fail.Store(true)
	if _, err := cache.Backlinks(t.Context(), "rye.example"); err == nil {
		t.Fatal("the failure was not returned")
	}
	p.fail.Store(false)
	if _, err := cache.Backlinks(t.Context(), "rye.example"); err != nil || p.asked.Load() != 2 {
		t.Fatalf("after a failure: %v, asked %d; want it asked again", err, p.asked.Load())
	}
	sandbox := newCache(t, p, st, c, "paid sandbox")
	if _, err := sandbox.Backlinks(t.Context(), "rye.example"); err != nil || p.asked.Load() != 3 {
		t.Fatalf("another namespace: %v, asked %d; want it asked", err, p.asked.Load())
	}
}

// Identical questions at the same moment share one request: the others
// wait for it and are answered as cached; if it fails, each asks itself.
func TestIdenticalQuestionsInFlightShareOneRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, c := &paid{hold: make(chan struct{})}, newClock()
		cache := newCache(t, p, memory.New(memdb.New(nil)), c, "paid prod")
		var wg sync.WaitGroup
		usages := make([]provider.Usage, 5)
		for i := range usages {
			wg.Go(func() {
				ctx, m := meter(t)
				if _, err := cache.Backlinks(ctx, "rye.example"); err != nil {
					t.Error(err)
				}
				usages[i] = m.Usage()
			})
		}
		synctest.Wait()
		close(p.hold)
		wg.Wait()
		paidFor, shared := 0, 0
		for _, u := range usages {
			switch {
			case u.Cost > 0 && u.Cached == 0:
				paidFor++
			case u.Cost == 0 && u.Cached == 1:
				shared++
			}
		}
		if p.asked.Load() != 1 || paidFor != 1 || shared != 4 {
			t.Fatalf("asked %d; %d paid, %d shared (%+v); want one request shared by the other four", p.asked.Load(), paidFor, shared, usages)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		p, c := &paid{hold: make(chan struct{})}, newClock()
		p.fail.Store(true)
		cache := newCache(t, p, memory.New(memdb.New(nil)), c, "paid prod")
		var wg sync.WaitGroup
		var failed atomic.Int32
		for range 3 {
			wg.Go(func() {
				if _, err := cache.Backlinks(t.Context(), "rye.example"); err != nil {
					failed.Add(1)
				}
			})
		}
		synctest.Wait()
		close(p.hold)
		wg.Wait()
		if p.asked.Load() != 3 || failed.Load() != 3 {
			t.Fatalf("asked %d, %d failed; want each to ask for itself after the shared request failed", p.asked.Load(), failed.Load())
		}
	})
}

// broken is a store that always fails.
type broken struct{}

func (broken) CachedAnswer(context.Context, string, time.Time) (seocache.Answer, bool, error) {
	return seocache.Answer{}, false, errors.New("the database is away")
}
func (broken) CacheAnswer(context.Context, string, seocache.Answer) error {
	return errors.New("the database is away")
}

// A store that fails makes the cache step aside: every question is asked,
// none fails for it.
func TestAStoreThatFailsStepsAside(t *testing.T) {
	p, c := &paid{}, newClock()
	cache := newCache(t, p, broken{}, c, "paid prod")
	for range 2 {
		if _, err := cache.Backlinks(t.Context(), "rye.example"); err != nil {
			t.Fatal(err)
		}
	}
	if p.asked.Load() != 2 {
		t.Fatalf("asked %d, want 2", p.asked.Load())
	}
	if _, err := seocache.New(p, broken{}, seocache.Config{}); err == nil {
		t.Fatal("a cache without a TTL was made")
	}
}
