package syntheticseo_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/syntheticseo"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

func newProvider(t *testing.T) *syntheticseo.Provider {
	t.Helper()
	p, err := syntheticseo.New(syntheticseo.Config{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func TestSourceSaysSynthetic(t *testing.T) {
	var sd provider.SearchData = newProvider(t)
	if got := sd.Source(); got != "synthetic" {
		t.Fatalf("Source() = %q, want %q", got, "synthetic")
	}
}

func TestNewRejectsReferenceDateOutOfRange(t *testing.T) {
	for _, d := range []time.Time{time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2101, 1, 1, 0, 0, 0, 0, time.UTC)} {
		_, err := syntheticseo.New(syntheticseo.Config{ReferenceDate: d})
		if err == nil || !strings.Contains(err.Error(), "ReferenceDate") {
			t.Errorf("New(ReferenceDate %s) error = %v, want one naming ReferenceDate", d.Format(time.DateOnly), err)
		}
	}
}

// Every answer is a function of the question: two providers (no shared
// state) give identical answers, and changing any part of the question
// changes the answer.
func TestAnswersAreDeterministic(t *testing.T) {
	ctx := context.Background()
	a, b := newProvider(t), newProvider(t)

	kq := provider.KeywordQuery{Seed: "dog grooming", Location: "Denver, CO", Limit: 50}
	ka, errA := a.KeywordIdeas(ctx, kq)
	kb, errB := b.KeywordIdeas(ctx, kq)
	if errA != nil || errB != nil {
		t.Fatalf("KeywordIdeas: %v, %v", errA, errB)
	}
	if !reflect.DeepEqual(ka, kb) {
		t.Error("KeywordIdeas: the same question got two different answers")
	}
	for _, other := range []provider.KeywordQuery{
		{Seed: "cat grooming", Location: "Denver, CO", Limit: 50},
		{Seed: "dog grooming", Location: "Boulder, CO", Limit: 50},
		{Seed: "dog grooming", Limit: 50},
	} {
		ko, err := a.KeywordIdeas(ctx, other)
		if err != nil {
			t.Fatalf("KeywordIdeas(%+v): %v", other, err)
		}
		if sameVolumes(ka.Ideas, ko.Ideas) {
			t.Errorf("KeywordIdeas(%+v): same volumes as for %+v", other, kq)
		}
	}

	gq := provider.GridQuery{Keyword: "dog grooming", Lat: 39.7392, Lng: -104.9903, RadiusKm: 8, Size: 7, BusinessName: "Happy Paws"}
	ga, errA := a.GridSearch(ctx, gq)
	gb, errB := b.GridSearch(ctx, gq)
	if errA != nil || errB != nil {
		t.Fatalf("GridSearch: %v, %v", errA, errB)
	}
	if !reflect.DeepEqual(ga, gb) {
		t.Error("GridSearch: the same question got two different answers")
	}
	for _, mod := range []func(*provider.GridQuery){
		func(q *provider.GridQuery) { q.Keyword = "cat grooming" },
		func(q *provider.GridQuery) { q.BusinessName = "Muddy Paws" },
		func(q *provider.GridQuery) { q.Lat += 0.01 },
	} {
		q := gq
		mod(&q)
		g, err := a.GridSearch(ctx, q)
		if err != nil {
			t.Fatalf("GridSearch(%+v): %v", q, err)
		}
		if reflect.DeepEqual(ranks(g), ranks(ga)) {
			t.Errorf("GridSearch(%+v): same ranks as for %+v", q, gq)
		}
	}

	ba, errA := a.Backlinks(ctx, "happypaws.com")
	bb, errB := b.Backlinks(ctx, "happypaws.com")
	if errA != nil || errB != nil {
		t.Fatalf("Backlinks: %v, %v", errA, errB)
	}
	if !reflect.DeepEqual(ba, bb) {
		t.Error("Backlinks: the same question got two different answers")
	}
	bo, err := a.Backlinks(ctx, "muddypaws.com")
	if err != nil {
		t.Fatalf("Backlinks: %v", err)
	}
	if reflect.DeepEqual(sourceURLs(ba), sourceURLs(bo)) {
		t.Error("Backlinks: two domains got the same linking pages")
	}
}

func sameVolumes(a, b []provider.KeywordIdea) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SearchVolume != b[i].SearchVolume {
			return false
		}
	}
	return true
}

func ranks(g provider.GridResult) []int {
	var r []int
	for _, p := range g.Points {
		r = append(r, p.Rank)
	}
	return r
}

func sourceURLs(p provider.BacklinkProfile) []string {
	var u []string
	for _, l := range p.Backlinks {
		u = append(u, l.SourceURL)
	}
	return u
}

// The reference date, not the clock, dates the data: ideas name its year,
// links were first seen in the three years before it.
func TestReferenceDateDatesTheData(t *testing.T) {
	ref := time.Date(2031, time.June, 15, 13, 45, 0, 0, time.UTC)
	p, err := syntheticseo.New(syntheticseo.Config{ReferenceDate: ref})
	if err != nil {
		t.Fatal(err)
	}
	ideas, err := p.KeywordIdeas(context.Background(), provider.KeywordQuery{Seed: "standing desk", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	years := 0
	for _, i := range ideas.Ideas {
		if strings.Contains(i.Keyword, "2031") {
			years++
		}
		if strings.Contains(i.Keyword, "2026") {
			t.Errorf("idea %q names 2026, not the reference year 2031", i.Keyword)
		}
	}
	if years == 0 {
		t.Error("no idea names the reference year 2031")
	}
	prof, err := p.Backlinks(context.Background(), "standingdesks.com")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2031, time.June, 15, 0, 0, 0, 0, time.UTC)
	for _, l := range prof.Backlinks {
		if !l.FirstSeen.Before(day) || l.FirstSeen.Before(day.AddDate(-3, 0, 0)) {
			t.Errorf("link first seen %s, want within the three years before %s", l.FirstSeen.Format(time.DateOnly), day.Format(time.DateOnly))
		}
	}
}

// A caller's cancellation comes back as the context's error, not as a
// provider failure.
func TestCanceledContextIsReturnedAsIs(t *testing.T) {
	p := newProvider(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.KeywordIdeas(ctx, provider.KeywordQuery{Seed: "tea"})
	assertCanceled(t, "KeywordIdeas", err)
	_, err = p.GridSearch(ctx, provider.GridQuery{Keyword: "tea", RadiusKm: 1, Domain: "tea.com"})
	assertCanceled(t, "GridSearch", err)
	_, err = p.Backlinks(ctx, "tea.com")
	assertCanceled(t, "Backlinks", err)
}

func assertCanceled(t *testing.T, method string, err error) {
	t.Helper()
	var pe *provider.Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Errorf("%s on a canceled context: error %v, want context.Canceled and no ProviderError", method, err)
	}
}

// Questions the provider cannot answer are rejected as a real API would:
// a ProviderError with status 400 whose message names the field.
func TestInvalidQuestionsAreRejected(t *testing.T) {
	p := newProvider(t)
	grid := provider.GridQuery{Keyword: "tea shop", Lat: 51.5, Lng: -0.12, RadiusKm: 3, Size: 5, Domain: "tea.co.uk"}
	if _, err := p.GridSearch(context.Background(), grid); err != nil {
		t.Fatalf("the valid grid the cases start from: %v", err)
	}
	gridWith := func(mod func(*provider.GridQuery)) provider.GridQuery { q := grid; mod(&q); return q }
	cases := []struct {
		name, want string
		call       func() error
	}{
		{"empty seed", "seed", kw(p, provider.KeywordQuery{Seed: "  "})},
		{"seed too long", "seed", kw(p, provider.KeywordQuery{Seed: strings.Repeat("a", 81)})},
		{"negative limit", "limit", kw(p, provider.KeywordQuery{Seed: "tea", Limit: -1})},
		{"limit over 100", "limit", kw(p, provider.KeywordQuery{Seed: "tea", Limit: 101})},
		{"location too long", "location", kw(p, provider.KeywordQuery{Seed: "tea", Location: strings.Repeat("x", 101)})},
		{"empty keyword", "keyword", gs(p, gridWith(func(q *provider.GridQuery) { q.Keyword = "" }))},
		{"even size", "size", gs(p, gridWith(func(q *provider.GridQuery) { q.Size = 4 }))},
		{"size 1", "size", gs(p, gridWith(func(q *provider.GridQuery) { q.Size = 1 }))},
		{"size 11", "size", gs(p, gridWith(func(q *provider.GridQuery) { q.Size = 11 }))},
		{"negative size", "size", gs(p, gridWith(func(q *provider.GridQuery) { q.Size = -5 }))},
		{"zero radius", "radius", gs(p, gridWith(func(q *provider.GridQuery) { q.RadiusKm = 0 }))},
		{"negative radius", "radius", gs(p, gridWith(func(q *provider.GridQuery) { q.RadiusKm = -2 }))},
		{"radius over 100 km", "radius", gs(p, gridWith(func(q *provider.GridQuery) { q.RadiusKm = 150 }))},
		{"latitude 91", "latitude", gs(p, gridWith(func(q *provider.GridQuery) { q.Lat = 91 }))},
		{"latitude near the pole", "latitude", gs(p, gridWith(func(q *provider.GridQuery) { q.Lat = -89 }))},
		{"longitude 181", "longitude", gs(p, gridWith(func(q *provider.GridQuery) { q.Lng = 181 }))},
		{"no client", "domain or business name", gs(p, gridWith(func(q *provider.GridQuery) { q.Domain = ""; q.BusinessName = " " }))},
		{"empty domain", "domain", bl(p, "")},
		{"URL for domain", "bare host", bl(p, "https://example.com/")},
		{"domain with path", "bare host", bl(p, "example.com/about")},
		{"domain with port", "bare host", bl(p, "example.com:8080")},
		{"single label", "top-level domain", bl(p, "localhost")},
		{"IP address", "top-level domain", bl(p, "192.168.1.1")},
		{"underscore", "letters, digits", bl(p, "my_site.com")},
		{"leading hyphen", "letters, digits", bl(p, "-site.com")},
		{"empty label", "letters, digits", bl(p, "site..com")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *provider.Error", err)
			}
			if pe.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400", pe.StatusCode)
			}
			if !strings.Contains(pe.Message, c.want) {
				t.Errorf("message %q does not mention %q", pe.Message, c.want)
			}
		})
	}
}

func kw(p *syntheticseo.Provider, q provider.KeywordQuery) func() error {
	return func() error { _, err := p.KeywordIdeas(context.Background(), q); return err }
}

func gs(p *syntheticseo.Provider, q provider.GridQuery) func() error {
	return func() error { _, err := p.GridSearch(context.Background(), q); return err }
}

func bl(p *syntheticseo.Provider, domain string) func() error {
	return func() error { _, err := p.Backlinks(context.Background(), domain); return err }
}
