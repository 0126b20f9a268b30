package syntheticseo_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

var testSeeds = []string{"plumber", "running shoes", "wedding photographer", "seo audit", "dog grooming", "coffee", "kitchen remodel", "tax accountant"}

func ideas(t *testing.T, q provider.KeywordQuery) []provider.KeywordIdea {
	t.Helper()
	got, err := newProvider(t).KeywordIdeas(context.Background(), q)
	if err != nil {
		t.Fatalf("KeywordIdeas(%+v): %v", q, err)
	}
	return got.Ideas
}

func TestKeywordIdeasSeedFirstUniqueWithinLimit(t *testing.T) {
	for _, c := range []struct{ limit, want int }{{0, 20}, {1, 1}, {7, 7}, {20, 20}, {100, 100}} {
		got := ideas(t, provider.KeywordQuery{Seed: "  Wedding   Photographer ", Location: "Portland, OR", Limit: c.limit})
		if len(got) != c.want {
			t.Errorf("limit %d: %d ideas, want %d", c.limit, len(got), c.want)
		}
		if got[0].Keyword != "wedding photographer" {
			t.Errorf("limit %d: first idea %q, want the seed as keyword tools show it, %q", c.limit, got[0].Keyword, "wedding photographer")
		}
		seen := map[string]bool{}
		for _, i := range got {
			if seen[i.Keyword] {
				t.Errorf("limit %d: %q appears twice", c.limit, i.Keyword)
			}
			seen[i.Keyword] = true
			if !strings.Contains(i.Keyword, "wedding photographer") {
				t.Errorf("limit %d: idea %q is not built on the seed", c.limit, i.Keyword)
			}
		}
	}
}

// An idea's metrics do not depend on how many were asked for.
func TestKeywordIdeasSmallerLimitIsAPrefix(t *testing.T) {
	all := ideas(t, provider.KeywordQuery{Seed: "kitchen remodel", Limit: 100})
	some := ideas(t, provider.KeywordQuery{Seed: "kitchen remodel", Limit: 15})
	if !slices.Equal(some, all[:15]) {
		t.Errorf("the first 15 of 100 ideas differ from the 15 asked for:\n%v\n%v", all[:15], some)
	}
}

func TestKeywordIdeasUseTheLocation(t *testing.T) {
	local := ideas(t, provider.KeywordQuery{Seed: "plumber", Location: "Austin, TX", Limit: 100})
	var near, in bool
	for _, i := range local {
		near = near || strings.Contains(i.Keyword, "near me")
		in = in || strings.Contains(i.Keyword, "in austin tx")
	}
	if !near || !in {
		t.Errorf("with the location Austin, TX: a \"near me\" idea: %v, an \"in austin tx\" idea: %v; want both", near, in)
	}
	for _, i := range ideas(t, provider.KeywordQuery{Seed: "plumber", Limit: 100}) {
		if strings.Contains(i.Keyword, "near me") || strings.Contains(i.Keyword, "austin") {
			t.Errorf("without a location: idea %q is local", i.Keyword)
		}
	}
}

func TestKeywordIdeasUseRealisticModifiers(t *testing.T) {
	got := ideas(t, provider.KeywordQuery{Seed: "standing desk", Limit: 100})
	want := []string{"best standing desk", "cost of", "how to", "vs", "for beginners", "reviews", "cheap", "2026", "what is", "how much"}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(i provider.KeywordIdea) bool { return strings.Contains(i.Keyword, w) }) {
			t.Errorf("no idea contains %q", w)
		}
	}
	// A modifier the seed already has is not added again, and a seed that
	// is a question only grows at its end.
	for _, i := range ideas(t, provider.KeywordQuery{Seed: "best laptops", Limit: 100}) {
		if strings.Count(i.Keyword, "best") > 1 {
			t.Errorf("idea %q repeats the seed's modifier", i.Keyword)
		}
	}
	for _, i := range ideas(t, provider.KeywordQuery{Seed: "how to bake bread", Limit: 100}) {
		if !strings.HasPrefix(i.Keyword, "how to bake bread") {
			t.Errorf("idea %q does not start with the question it grows", i.Keyword)
		}
	}
}

// Volumes are the rounded figures keyword tools publish, the seed's the
// highest, the rest a long tail in descending order.
func TestKeywordIdeasVolumesAreALongTailBelowTheSeed(t *testing.T) {
	buckets := []int{10, 20, 30, 50, 70, 90, 110, 140, 170, 210, 260, 320, 390, 480, 590, 720, 880, 1000, 1300,
		1600, 1900, 2400, 2900, 3600, 4400, 5400, 6600, 8100, 9900, 12100, 14800, 18100, 22200, 27100, 33100,
		40500, 49500, 60500, 74000, 90500, 110000, 135000, 165000, 201000, 246000, 301000, 368000, 450000,
		550000, 673000, 823000, 1000000}
	for _, seed := range testSeeds {
		got := ideas(t, provider.KeywordQuery{Seed: seed, Limit: 100})
		var rest []int
		for k, i := range got {
			if !slices.Contains(buckets, i.SearchVolume) {
				t.Errorf("%q: volume %d is not a published bucket", i.Keyword, i.SearchVolume)
			}
			if i.SearchVolume > got[0].SearchVolume {
				t.Errorf("%q: volume %d above the seed's %d", i.Keyword, i.SearchVolume, got[0].SearchVolume)
			}
			if k > 1 && i.SearchVolume > got[k-1].SearchVolume {
				t.Errorf("%q: volume %d after %q with %d: not in descending order", i.Keyword, i.SearchVolume, got[k-1].Keyword, got[k-1].SearchVolume)
			}
			if k > 0 {
				rest = append(rest, i.SearchVolume)
			}
		}
		slices.Sort(rest)
		if median := rest[len(rest)/2]; got[0].SearchVolume > 10 && median*5 > got[0].SearchVolume {
			t.Errorf("seed %q: median idea volume %d is more than a fifth of the seed's %d: no long tail", seed, median, got[0].SearchVolume)
		}
	}
}

func TestKeywordIdeasMetricsAreInRangeAndFollowIntent(t *testing.T) {
	allowed := []string{"informational", "commercial", "transactional", "navigational"}
	cpcByIntent := map[string][]float64{}
	var logVolume, difficulty []float64
	for _, seed := range testSeeds {
		for _, i := range ideas(t, provider.KeywordQuery{Seed: seed, Location: "Chicago", Limit: 100}) {
			if !slices.Contains(allowed, i.Intent) {
				t.Errorf("%q: intent %q, want one of %v", i.Keyword, i.Intent, allowed)
			}
			if i.Difficulty < 0 || i.Difficulty > 100 {
				t.Errorf("%q: difficulty %v out of 0 to 100", i.Keyword, i.Difficulty)
			}
			if i.CPC <= 0 || math.Abs(i.CPC*100-math.Round(i.CPC*100)) > 1e-6 {
				t.Errorf("%q: CPC %v, want a positive amount in cents", i.Keyword, i.CPC)
			}
			cpcByIntent[i.Intent] = append(cpcByIntent[i.Intent], i.CPC)
			logVolume = append(logVolume, math.Log(float64(i.SearchVolume)))
			difficulty = append(difficulty, i.Difficulty)
		}
	}
	paid := mean(append(cpcByIntent["commercial"], cpcByIntent["transactional"]...))
	if info := mean(cpcByIntent["informational"]); paid < 2*info {
		t.Errorf("mean CPC of commercial and transactional ideas %.2f, informational %.2f: want buying searches to cost clearly more", paid, info)
	}
	if r := correlation(logVolume, difficulty); r < 0.3 {
		t.Errorf("correlation of difficulty with log volume %.2f, want clearly positive", r)
	}

	intentOf := map[string]string{}
	for _, loc := range []string{"", "Miami"} {
		for _, i := range ideas(t, provider.KeywordQuery{Seed: "yoga mat", Location: loc, Limit: 100}) {
			intentOf[i.Keyword] = i.Intent
		}
	}
	for kw, want := range map[string]string{
		"what is yoga mat": "informational", "yoga mat for beginners": "informational",
		"best yoga mat": "commercial", "yoga mat reviews": "commercial", "yoga mat vs diy": "commercial",
		"cheap yoga mat": "transactional", "yoga mat near me": "transactional", "buy yoga mat": "transactional",
		"yoga mat website": "navigational",
	} {
		if got, ok := intentOf[kw]; !ok || got != want {
			t.Errorf("%q: intent %q (present: %v), want %q", kw, got, ok, want)
		}
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func correlation(x, y []float64) float64 {
	mx, my := mean(x), mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}
