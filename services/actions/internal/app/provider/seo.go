package provider

import (
	"context"
	"time"
)

// SearchData answers questions about search engines and links: keyword
// ideas, local rankings and backlink profiles. The built-in provider's
// answers are synthetic (deterministic from the question) and say so in
// Source; a commercial SEO data API (DataForSEO) plugs in behind the same
// interface and says so in its Source.
type SearchData interface {
	// Source names where the data comes from: "synthetic" for the
	// built-in provider, "dataforseo". Records carry it as their source.
	Source() string
	// CheckLocation says, without spending anything, whether KeywordIdeas
	// answers for location: nil when it does, or when the provider cannot
	// tell now (the question then goes ahead and its answer decides); a
	// *Error with StatusCode 400 whose Message says what is accepted
	// ("a country DataForSEO Labs has keyword data for: ...") when it does
	// not. The engine asks it before a run's credits are reserved, so that
	// an unknown location is a 400 that costs nothing.
	CheckLocation(ctx context.Context, location string) error
	KeywordIdeas(ctx context.Context, q KeywordQuery) (KeywordResult, error)
	GridSearch(ctx context.Context, q GridQuery) (GridResult, error)
	Backlinks(ctx context.Context, domain string) (BacklinkProfile, error)
}

// NoFigure stands for a metric the provider has no figure for (DataForSEO
// has no keyword difficulty for some rare keywords). It is never 0, which
// is a figure: a record leaves the field out instead.
const NoFigure = -1

// KeywordQuery asks for keyword ideas around a seed.
type KeywordQuery struct {
	Seed string
	// Location is where the searches are counted, as the caller named it;
	// empty: the provider's default (everywhere for the built-in provider,
	// the configured country for DataForSEO).
	Location string
	Limit    int
}

// KeywordResult is the ideas for a question and where they are counted.
type KeywordResult struct {
	// Location is where the figures are counted, as the provider names it
	// ("United Kingdom" for a question that said "gb"); empty when the
	// question named none and the provider counts everywhere.
	Location string
	// Ideas are at most Limit, the seed first when the provider has it.
	Ideas []KeywordIdea
}

// KeywordIdea is one suggested keyword with its metrics.
type KeywordIdea struct {
	Keyword      string
	SearchVolume int     // monthly searches
	Difficulty   float64 // 0 to 100, or NoFigure
	CPC          float64 // cost per click, USD; 0 where nobody bids
	// Intent is informational, commercial, transactional or navigational;
	// empty when the provider has none.
	Intent string
}

// GridQuery is a local rank check on a square grid of points around a
// centre.
type GridQuery struct {
	Keyword  string
	Lat, Lng float64
	RadiusKm float64
	Size     int // points per side, odd
	// Domain and BusinessName are the client's, whose rank is looked up.
	Domain, BusinessName string
}

// GridPoint is the client's rank at one point; Rank 0 means not in the top
// 20.
type GridPoint struct {
	Lat, Lng float64
	Rank     int
}

// GridResult is a grid's ranks.
type GridResult struct {
	Points []GridPoint
	// AverageRank is over the points where the client ranks; 0 if none.
	AverageRank float64
	// Competitors are the businesses that rank first most often.
	Competitors []string
}

// BacklinkProfile is a domain's backlinks and authority.
type BacklinkProfile struct {
	Domain          string
	DomainAuthority float64 // 0 to 100
	PageAuthority   float64 // of the home page, 0 to 100
	SpamScore       float64 // 0 to 100
	// Total and ReferringDomains count every backlink to the domain and
	// every domain they come from, as the provider knows them; Backlinks
	// holds the strongest of them (a commercial provider lists a page, not
	// tens of thousands).
	Total, ReferringDomains int
	Backlinks               []Backlink
}

// Backlink is one link to the domain.
type Backlink struct {
	SourceURL, TargetURL string
	AnchorText           string
	// SourceType is the kind of linking site: blog, directory, news,
	// forum, social.
	SourceType string
	// SourceDomain is the linking site's domain.
	SourceDomain    string
	DomainAuthority float64 // of the linking domain
	// ExternalPages is how many outbound external links the linking page
	// has; LinkingDomains how many domains link to it, or NoFigure.
	ExternalPages, LinkingDomains int
	NoFollow                      bool
	FirstSeen                     time.Time
}
