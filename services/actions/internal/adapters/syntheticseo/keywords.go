package syntheticseo

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Search intents, as keyword tools classify them.
const (
	IntentInformational = "informational"
	IntentCommercial    = "commercial"
	IntentTransactional = "transactional"
	IntentNavigational  = "navigational"
)

// Limits of a keyword question.
const (
	DefaultKeywordLimit = 20
	MaxKeywordLimit     = 100
	// MaxSeedLength is the longest seed, in characters: the limit Google's
	// keyword tools and the APIs built on them set.
	MaxSeedLength = 80
	// MaxLocationLength is the longest location name, in characters.
	MaxLocationLength = 100
)

// volumeBuckets are the values keyword tools report search volumes in:
// exact counts are not published, only these rounded figures.
var volumeBuckets = []int{
	10, 20, 30, 50, 70, 90, 110, 140, 170, 210, 260, 320, 390, 480, 590, 720, 880,
	1000, 1300, 1600, 1900, 2400, 2900, 3600, 4400, 5400, 6600, 8100, 9900,
	12100, 14800, 18100, 22200, 27100, 33100, 40500, 49500, 60500, 74000, 90500,
	110000, 135000, 165000, 201000, 246000, 301000, 368000, 450000, 550000, 673000, 823000,
	1000000,
}

// roundVolume returns the bucket nearest to v on a log scale.
func roundVolume(v float64) int {
	if v <= float64(volumeBuckets[0]) {
		return volumeBuckets[0]
	}
	best, bestDist := volumeBuckets[0], math.Inf(1)
	for _, b := range volumeBuckets {
		d := math.Abs(math.Log(v) - math.Log(float64(b)))
		if d < bestDist {
			best, bestDist = b, d
		}
	}
	return best
}

// ideaTemplate is one way keyword tools see a seed searched: {s} is the
// seed, {l} the location, {y} the reference year.
type ideaTemplate struct {
	text   string
	intent string
	// share is the template's typical search volume relative to the seed's.
	share float64
}

var ideaTemplates = []ideaTemplate{
	// Questions.
	{"what is {s}", IntentInformational, 0.08},
	{"what is the best {s}", IntentCommercial, 0.02},
	{"how much does {s} cost", IntentCommercial, 0.06},
	{"how much is {s}", IntentCommercial, 0.04},
	{"how to choose the right {s}", IntentInformational, 0.02},
	{"how to find the best {s}", IntentInformational, 0.015},
	{"how does {s} work", IntentInformational, 0.02},
	{"how to use {s}", IntentInformational, 0.025},
	{"is {s} worth it", IntentCommercial, 0.02},
	{"where to buy {s}", IntentTransactional, 0.02},
	{"what to look for in {s}", IntentInformational, 0.01},
	{"why {s} matters", IntentInformational, 0.008},
	// Before the seed.
	{"best {s}", IntentCommercial, 0.25},
	{"top {s}", IntentCommercial, 0.06},
	{"top rated {s}", IntentCommercial, 0.05},
	{"cheap {s}", IntentTransactional, 0.10},
	{"cheapest {s}", IntentTransactional, 0.03},
	{"affordable {s}", IntentTransactional, 0.07},
	{"buy {s}", IntentTransactional, 0.05},
	{"professional {s}", IntentCommercial, 0.04},
	{"local {s}", IntentTransactional, 0.06},
	{"free {s}", IntentInformational, 0.05},
	{"diy {s}", IntentInformational, 0.04},
	{"types of {s}", IntentInformational, 0.05},
	{"average {s} cost", IntentCommercial, 0.03},
	{"cost of {s}", IntentCommercial, 0.04},
	{"{s} cost {y}", IntentCommercial, 0.02},
	// After the seed.
	{"{s} reviews", IntentCommercial, 0.12},
	{"{s} cost", IntentCommercial, 0.18},
	{"{s} price", IntentTransactional, 0.10},
	{"{s} prices", IntentTransactional, 0.05},
	{"{s} {y}", IntentCommercial, 0.06},
	{"{s} for beginners", IntentInformational, 0.05},
	{"{s} for small business", IntentCommercial, 0.04},
	{"{s} services", IntentTransactional, 0.09},
	{"{s} company", IntentCommercial, 0.07},
	{"{s} companies", IntentCommercial, 0.04},
	{"{s} deals", IntentTransactional, 0.03},
	{"{s} coupon", IntentTransactional, 0.02},
	{"{s} for sale", IntentTransactional, 0.05},
	{"{s} online", IntentTransactional, 0.08},
	{"{s} guide", IntentInformational, 0.04},
	{"{s} tips", IntentInformational, 0.05},
	{"{s} ideas", IntentInformational, 0.06},
	{"{s} examples", IntentInformational, 0.03},
	{"{s} checklist", IntentInformational, 0.02},
	{"{s} benefits", IntentInformational, 0.03},
	{"{s} meaning", IntentInformational, 0.04},
	{"{s} definition", IntentInformational, 0.02},
	{"{s} alternatives", IntentCommercial, 0.04},
	{"{s} comparison", IntentCommercial, 0.03},
	{"{s} vs diy", IntentCommercial, 0.02},
	{"{s} brands", IntentCommercial, 0.03},
	{"{s} quote", IntentTransactional, 0.03},
	{"{s} cost calculator", IntentCommercial, 0.015},
	{"{s} cost estimate", IntentCommercial, 0.01},
	{"{s} website", IntentNavigational, 0.03},
	{"{s} phone number", IntentNavigational, 0.02},
	{"{s} hours", IntentNavigational, 0.02},
	// Two modifiers.
	{"best {s} {y}", IntentCommercial, 0.05},
	{"best {s} for beginners", IntentCommercial, 0.02},
	{"best {s} for small business", IntentCommercial, 0.015},
	{"best {s} online", IntentCommercial, 0.02},
	{"best {s} reviews", IntentCommercial, 0.02},
	{"best {s} services", IntentCommercial, 0.015},
	{"best {s} company", IntentCommercial, 0.02},
	{"best {s} deals", IntentTransactional, 0.01},
	{"best {s} alternatives", IntentCommercial, 0.01},
	{"best {s} brands", IntentCommercial, 0.015},
	{"best {s} ideas", IntentInformational, 0.01},
	{"best cheap {s}", IntentTransactional, 0.015},
	{"best affordable {s}", IntentTransactional, 0.01},
	{"top {s} {y}", IntentCommercial, 0.015},
	{"top 10 {s}", IntentCommercial, 0.03},
	{"top {s} companies", IntentCommercial, 0.015},
	{"top {s} brands", IntentCommercial, 0.01},
	{"top rated {s} {y}", IntentCommercial, 0.008},
	{"top rated {s} company", IntentCommercial, 0.006},
	{"cheap {s} online", IntentTransactional, 0.02},
	{"cheap {s} for sale", IntentTransactional, 0.015},
	{"cheap {s} deals", IntentTransactional, 0.01},
	{"cheap {s} services", IntentTransactional, 0.01},
	{"affordable {s} services", IntentTransactional, 0.015},
	{"affordable {s} company", IntentTransactional, 0.008},
	{"affordable {s} online", IntentTransactional, 0.008},
	{"professional {s} services", IntentCommercial, 0.01},
	{"buy {s} online", IntentTransactional, 0.02},
	{"free {s} online", IntentInformational, 0.01},
	{"{s} reviews {y}", IntentCommercial, 0.015},
	{"{s} price {y}", IntentTransactional, 0.01},
	{"{s} price list", IntentTransactional, 0.015},
	{"{s} tips for beginners", IntentInformational, 0.008},
	{"{s} guide for beginners", IntentInformational, 0.006},
	{"{s} guide {y}", IntentInformational, 0.006},
	{"{s} ideas {y}", IntentInformational, 0.008},
	{"{s} for small business {y}", IntentCommercial, 0.004},
	{"{s} cost per hour", IntentCommercial, 0.01},
	{"{s} services cost", IntentCommercial, 0.01},
	{"{s} company reviews", IntentCommercial, 0.01},
	{"{s} customer reviews", IntentCommercial, 0.008},
	{"{s} pros and cons", IntentCommercial, 0.01},
	{"{s} near me", IntentTransactional, 0.45},
	// With a location.
	{"{s} in {l}", IntentTransactional, 0.15},
	{"{s} {l}", IntentTransactional, 0.10},
	{"{l} {s}", IntentTransactional, 0.05},
	{"best {s} in {l}", IntentCommercial, 0.06},
	{"best {s} near me", IntentCommercial, 0.12},
	{"cheap {s} near me", IntentTransactional, 0.04},
	{"cheap {s} in {l}", IntentTransactional, 0.02},
	{"affordable {s} near me", IntentTransactional, 0.03},
	{"affordable {s} in {l}", IntentTransactional, 0.015},
	{"top rated {s} near me", IntentCommercial, 0.03},
	{"top rated {s} in {l}", IntentCommercial, 0.01},
	{"{s} near me open now", IntentTransactional, 0.04},
	{"{s} services in {l}", IntentTransactional, 0.02},
	{"{s} companies in {l}", IntentCommercial, 0.015},
	{"{s} cost in {l}", IntentCommercial, 0.01},
	{"how much does {s} cost in {l}", IntentCommercial, 0.008},
	{"who is the best {s} in {l}", IntentCommercial, 0.005},
}

// local reports whether a template only makes sense for a
// location: it names it, or it is a "near me" search, which keyword tools
// report for a location.
func (t ideaTemplate) local() bool {
	return strings.Contains(t.text, "{l}") || strings.Contains(t.text, "near")
}

// fillerWords are template words that do not make a seed and a template
// repeat each other.
var fillerWords = map[string]bool{
	"a": true, "the": true, "in": true, "for": true, "to": true, "of": true,
	"is": true, "does": true, "it": true, "and": true, "{s}": true, "{l}": true, "{y}": true,
}

// questionWords start a seed that is already a question; such a seed gets
// only the ideas that add to its end ("how to bake bread for beginners").
var questionWords = map[string]bool{
	"what": true, "how": true, "why": true, "when": true, "where": true, "who": true,
	"which": true, "is": true, "are": true, "can": true, "does": true, "do": true, "should": true,
}

// intentWords are the words that make a seed's own intent plain; a seed
// without any reads as commercial, as a product or service name does.
var intentWords = map[string]string{
	"login": IntentNavigational, "website": IntentNavigational, "official": IntentNavigational,
	"buy": IntentTransactional, "cheap": IntentTransactional, "cheapest": IntentTransactional,
	"price": IntentTransactional, "prices": IntentTransactional, "pricing": IntentTransactional,
	"deal": IntentTransactional, "deals": IntentTransactional, "coupon": IntentTransactional,
	"discount": IntentTransactional, "order": IntentTransactional, "hire": IntentTransactional,
	"book": IntentTransactional, "sale": IntentTransactional, "shop": IntentTransactional,
	"near": IntentTransactional, "affordable": IntentTransactional, "quote": IntentTransactional,
	"best": IntentCommercial, "top": IntentCommercial, "review": IntentCommercial,
	"reviews": IntentCommercial, "vs": IntentCommercial, "versus": IntentCommercial,
	"comparison": IntentCommercial, "compare": IntentCommercial, "alternative": IntentCommercial,
	"alternatives": IntentCommercial, "cost": IntentCommercial, "rated": IntentCommercial,
	"what": IntentInformational, "how": IntentInformational, "why": IntentInformational,
	"who": IntentInformational, "guide": IntentInformational, "tips": IntentInformational,
	"ideas": IntentInformational, "tutorial": IntentInformational, "beginners": IntentInformational,
	"examples": IntentInformational, "meaning": IntentInformational, "definition": IntentInformational,
	"diy": IntentInformational, "learn": IntentInformational,
}

// intentRank orders intents by which wins when a keyword shows several:
// "cheap ... for beginners" is a purchase, "best ... guide" a comparison.
var intentRank = map[string]int{
	IntentInformational: 1, IntentCommercial: 2, IntentTransactional: 3, IntentNavigational: 4,
}

// Advertisers bid for searches that buy and compete to rank for them;
// questions are cheap clicks.
var (
	intentDifficulty = map[string]float64{IntentInformational: -2, IntentNavigational: -4, IntentCommercial: 7, IntentTransactional: 5}
	intentCPC        = map[string]float64{IntentInformational: 0.3, IntentNavigational: 0.45, IntentCommercial: 1, IntentTransactional: 1.3}
)

// seedIntent is the intent the seed's own words show, "" if none.
func seedIntent(words []string) string {
	intent := ""
	for _, w := range words {
		if i, ok := intentWords[w]; ok && intentRank[i] > intentRank[intent] {
			intent = i
		}
	}
	return intent
}

// normalizePhrase lower-cases a phrase and collapses its spaces and
// commas, as keyword tools show keywords.
func normalizePhrase(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.ReplaceAll(s, ",", " "))), " ")
}

// CheckLocation accepts any location a keyword idea can name: the built-in
// provider counts searches anywhere.
func (p *Provider) CheckLocation(_ context.Context, location string) error {
	if n := utf8.RuneCountInString(normalizePhrase(location)); n > MaxLocationLength {
		return invalid("a place of at most %d characters", MaxLocationLength)
	}
	return nil
}

// KeywordIdeas returns up to Limit ideas around the seed: the seed first,
// then the others by search volume, highest first. An idea's metrics depend
// only on the seed, the location and the idea, so a smaller limit gives a
// prefix of a larger one. The location is the question's, as asked.
func (p *Provider) KeywordIdeas(ctx context.Context, q provider.KeywordQuery) (provider.KeywordResult, error) {
	ideas, err := p.ideas(ctx, q)
	if err != nil {
		return provider.KeywordResult{}, err
	}
	return provider.KeywordResult{Location: strings.TrimSpace(q.Location), Ideas: ideas}, nil
}

func (p *Provider) ideas(ctx context.Context, q provider.KeywordQuery) ([]provider.KeywordIdea, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seed := normalizePhrase(q.Seed)
	loc := normalizePhrase(q.Location)
	switch {
	case seed == "":
		return nil, invalid("seed is required: the keyword to find ideas around")
	case utf8.RuneCountInString(seed) > MaxSeedLength:
		return nil, invalid("seed is %d characters long; at most %d are allowed", utf8.RuneCountInString(seed), MaxSeedLength)
	case utf8.RuneCountInString(loc) > MaxLocationLength:
		return nil, invalid("location is %d characters long; at most %d are allowed", utf8.RuneCountInString(loc), MaxLocationLength)
	case q.Limit < 0 || q.Limit > MaxKeywordLimit:
		return nil, invalid("limit %d is out of range; allowed: 1 to %d, or 0 for %d", q.Limit, MaxKeywordLimit, DefaultKeywordLimit)
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultKeywordLimit
	}

	seedWords := strings.Fields(seed)
	ownIntent := seedIntent(seedWords)
	seedRand := newStream("keywords", seed, loc)
	// The seed's volume: a head term has tens of thousands of searches a
	// month, each extra word divides them, and a location narrows them to
	// that market.
	exp := seedRand.between(2.5, 5) - 0.35*float64(len(seedWords)-1)
	if loc != "" {
		exp -= seedRand.between(0.9, 1.5)
	}
	seedVolume := math.Pow(10, math.Max(exp, 1))
	// How contested the niche is, and what a click is worth in it.
	competition := seedRand.between(-6, 14)
	seedCPC := math.Exp(seedRand.between(math.Log(0.4), math.Log(14)))

	metrics := func(keyword string, volume float64, intent string) provider.KeywordIdea {
		r := newStream("keyword", seed, loc, keyword)
		vol := roundVolume(volume)
		kd := 12*math.Log10(float64(vol)) + competition + intentDifficulty[intent] + r.between(-6, 6)
		cpc := seedCPC * intentCPC[intent] * math.Exp(r.between(-0.25, 0.25))
		return provider.KeywordIdea{
			Keyword:      keyword,
			SearchVolume: vol,
			Difficulty:   clamp(math.Round(kd), 0, 100),
			CPC:          math.Max(round(cpc, 2), 0.05),
			Intent:       intent,
		}
	}

	intent := ownIntent
	if intent == "" {
		intent = IntentCommercial
	}
	seedIdea := metrics(seed, seedVolume, intent)

	fill := strings.NewReplacer("{s}", seed, "{l}", loc, "{y}", strconv.Itoa(p.ref.Year()))
	seen := map[string]bool{seed: true}
	var ideas []provider.KeywordIdea
	for _, t := range ideaTemplates {
		if !fits(t, seedWords, loc) {
			continue
		}
		keyword := fill.Replace(t.text)
		if seen[keyword] || utf8.RuneCountInString(keyword) > MaxSeedLength+MaxLocationLength {
			continue
		}
		seen[keyword] = true
		intent := t.intent
		if intentRank[ownIntent] > intentRank[intent] {
			intent = ownIntent
		}
		noise := math.Exp(newStream("volume", seed, loc, keyword).between(-0.7, 0.7))
		// Below the seed by construction: a variation of a search is never
		// searched more than the search itself.
		volume := math.Min(seedVolume*t.share*noise, seedVolume*0.8)
		ideas = append(ideas, metrics(keyword, volume, intent))
	}
	slices.SortFunc(ideas, func(a, b provider.KeywordIdea) int {
		if a.SearchVolume != b.SearchVolume {
			return b.SearchVolume - a.SearchVolume
		}
		return strings.Compare(a.Keyword, b.Keyword)
	})
	out := append([]provider.KeywordIdea{seedIdea}, ideas...)
	return out[:min(limit, len(out))], nil
}

// fits reports whether a template makes a sensible idea for the seed: it
// needs the location it names, does not repeat a word the seed already has
// ("best best ..."), and adds only to the end of a seed that is already a
// question.
func fits(t ideaTemplate, seedWords []string, loc string) bool {
	if t.local() && loc == "" {
		return false
	}
	if questionWords[seedWords[0]] && !strings.HasPrefix(t.text, "{s}") {
		return false
	}
	for _, w := range strings.Fields(t.text) {
		if !fillerWords[w] && slices.Contains(seedWords, w) {
			return false
		}
	}
	if strings.Contains(t.text, "{l}") {
		// A seed that already names the place gets no second mention.
		locWords := strings.Fields(loc)
		named := true
		for _, w := range locWords {
			named = named && slices.Contains(seedWords, w)
		}
		if named {
			return false
		}
	}
	return true
}
