package dataforseo

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// pathKeywordIdeas is DataForSEO Labs' keyword ideas for Google: keywords
// in the seed's categories, with search volume, CPC, keyword difficulty
// and search intent, from DataForSEO's own database (live, one request).
const pathKeywordIdeas = "/v3/dataforseo_labs/google/keyword_ideas/live"

// Limits of a keyword question, DataForSEO Labs' own.
const (
	DefaultKeywordLimit = 20
	MaxKeywordLimit     = 1000
	// MaxSeedLength is the longest keyword DataForSEO Labs takes, in
	// characters.
	MaxSeedLength = 80
)

// keywordIdeasResult is the part of a keyword ideas result Atrium reads.
type keywordIdeasResult struct {
	Items []struct {
		Keyword     string `json:"keyword"`
		KeywordInfo *struct {
			SearchVolume *int     `json:"search_volume"`
			CPC          *float64 `json:"cpc"`
		} `json:"keyword_info"`
		KeywordProperties *struct {
			KeywordDifficulty *float64 `json:"keyword_difficulty"`
		} `json:"keyword_properties"`
		SearchIntentInfo *struct {
			MainIntent string `json:"main_intent"`
		} `json:"search_intent_info"`
	} `json:"items"`
}

var intents = []string{"informational", "commercial", "transactional", "navigational"}

// KeywordIdeas asks DataForSEO Labs for up to Limit ideas around the seed
// in the country the location names (the default location when empty),
// resolved to its location code first: an unknown one is a 400 and costs
// nothing. The seed goes first when DataForSEO has it; a search volume or
// CPC it has no figure for is 0 (nobody searches or bids), a difficulty
// NoFigure, an intent empty.
func (p *Provider) KeywordIdeas(ctx context.Context, q provider.KeywordQuery) (provider.KeywordResult, error) {
	if err := ctx.Err(); err != nil {
		return provider.KeywordResult{}, err
	}
	seed := strings.ToLower(strings.Join(strings.Fields(q.Seed), " "))
	limit := q.Limit
	if limit == 0 {
		limit = DefaultKeywordLimit
	}
	switch {
	case seed == "":
		return provider.KeywordResult{}, invalid("seed is required: the keyword to find ideas around")
	case utf8.RuneCountInString(seed) > MaxSeedLength:
		return provider.KeywordResult{}, invalid("seed is %d characters long; DataForSEO Labs takes at most %d", utf8.RuneCountInString(seed), MaxSeedLength)
	case limit < 1 || limit > MaxKeywordLimit:
		return provider.KeywordResult{}, invalid("limit %d is out of range; allowed: 1 to %d, or 0 for %d", q.Limit, MaxKeywordLimit, DefaultKeywordLimit)
	}
	loc, err := p.resolve(ctx, q.Location)
	if err != nil {
		return provider.KeywordResult{}, err
	}
	var results []keywordIdeasResult
	err = p.call(ctx, pathKeywordIdeas, map[string]any{
		"keywords": []string{seed}, "location_code": loc.Code, "limit": limit, "include_serp_info": false,
	}, &results)
	if err != nil {
		return provider.KeywordResult{}, err
	}
	out := provider.KeywordResult{Location: loc.Name}
	seen := map[string]bool{}
	for _, r := range results {
		for _, it := range r.Items {
			kw := strings.Join(strings.Fields(it.Keyword), " ")
			if kw == "" || seen[strings.ToLower(kw)] {
				continue
			}
			seen[strings.ToLower(kw)] = true
			idea := provider.KeywordIdea{Keyword: kw, Difficulty: provider.NoFigure}
			if in := it.KeywordInfo; in != nil {
				if in.SearchVolume != nil && *in.SearchVolume > 0 {
					idea.SearchVolume = *in.SearchVolume
				}
				if in.CPC != nil && *in.CPC > 0 {
					idea.CPC = *in.CPC
				}
			}
			if kp := it.KeywordProperties; kp != nil && kp.KeywordDifficulty != nil && *kp.KeywordDifficulty >= 0 && *kp.KeywordDifficulty <= 100 {
				idea.Difficulty = *kp.KeywordDifficulty
			}
			if si := it.SearchIntentInfo; si != nil && slices.Contains(intents, si.MainIntent) {
				idea.Intent = si.MainIntent
			}
			out.Ideas = append(out.Ideas, idea)
		}
	}
	// The seed first: it is the question, whatever DataForSEO's relevance
	// puts before it.
	if i := slices.IndexFunc(out.Ideas, func(k provider.KeywordIdea) bool { return strings.EqualFold(k.Keyword, seed) }); i > 0 {
		s := out.Ideas[i]
		copy(out.Ideas[1:i+1], out.Ideas[:i])
		out.Ideas[0] = s
	}
	out.Ideas = out.Ideas[:min(limit, len(out.Ideas))]
	return out, nil
}

// invalid reports a question DataForSEO would refuse, before it is sent.
func invalid(format string, a ...any) error {
	return provider.Failure(providerName, http.StatusBadRequest, nil, format, a...)
}
