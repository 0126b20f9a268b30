package provider

import (
	"context"
	"time"
)

// SearchData answers questions about search engines and links: keyword
// ideas, local rankings and backlink profiles. The built-in provider's
// answers are synthetic (deterministic from the question) and say so in
// Source; a commercial SEO data API plugs in behind the same interface.
type SearchData interface {
	// Source names where the data comes from; "synthetic" for the
	// built-in provider.
	Source() string
	KeywordIdeas(ctx context.Context, q KeywordQuery) ([]KeywordIdea, error)
	GridSearch(ctx context.Context, q GridQuery) (GridResult, error)
	Backlinks(ctx context.Context, domain string) (BacklinkProfile, error)
}

// KeywordQuery asks for keyword ideas around a seed.
type KeywordQuery struct {
	Seed     string
	Location string // empty: no location
	Limit    int
}

// KeywordIdea is one suggested keyword with its metrics.
type KeywordIdea struct {
	Keyword      string
	SearchVolume int     // monthly searches
	Difficulty   float64 // 0 to 100
	CPC          float64 // cost per click, USD
	Intent       string  // informational, commercial, transactional, navigational
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
	Backlinks       []Backlink
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
	// ExternalPages and LinkingDomains describe the linking page: how many
	// outbound external links it has, and how many domains link to it.
	ExternalPages, LinkingDomains int
	NoFollow                      bool
	FirstSeen                     time.Time
}
