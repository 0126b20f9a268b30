package app

import (
	"context"
	"fmt"
	"time"
)

// This file declares the ports through which actions do their work outside
// Atrium: language models, web pages, mail, search engines, images and SEO
// data. Each has a real adapter under internal/adapters and, where the work
// can be done offline, a built-in one that is the embedded default.

// ProviderError is a failure of an outside provider: a model server, a web
// page, an SMTP server, a search engine's submission endpoint. The run ends
// with status "error", StatusCode as its status_code and Message in its
// data, and spends no credits.
type ProviderError struct {
	// StatusCode is HTTP-style: the provider's own status when it answered
	// with one (429, 500, ...), 502 for an answer that could not be used,
	// 503 for a provider that is not configured or not reachable, 504 for a
	// provider that did not answer in time, 403 for an address the fetcher
	// may not reach.
	StatusCode int
	// Provider names the provider in words: "text generator", "web page".
	Provider string
	// Message says what went wrong, for the caller; it never holds
	// credentials.
	Message string
	// Err is the cause, for logs.
	Err error
}

func (e *ProviderError) Error() string { return fmt.Sprintf("%s: %s", e.Provider, e.Message) }

// Unwrap returns the cause.
func (e *ProviderError) Unwrap() error { return e.Err }

// ProviderFailure returns a ProviderError.
func ProviderFailure(provider string, code int, cause error, format string, a ...any) *ProviderError {
	return &ProviderError{StatusCode: code, Provider: provider, Message: fmt.Sprintf(format, a...), Err: cause}
}

// TextGenerator writes the pieces of text an action asks for: an article's
// title, meta description and body; an email's subject and body.
type TextGenerator interface {
	Generate(ctx context.Context, req TextRequest) (Text, error)
}

// Kinds of text, one per piece of writing an action asks for. The built-in
// generator writes each from its Inputs; a language model gets
// Instructions, Inputs and Fields.
const (
	// Inputs: keyword, tone, client_name, client_domain. Fields: title,
	// meta_description, content (HTML: <h2> sections, <p> paragraphs).
	TextBlogArticle = "blog_article"
	// Inputs: keyword, city, state, client_name, client_domain. Fields:
	// title, meta_description, content (HTML).
	TextGeoArticle = "geo_article"
	// Inputs: headline, body_points (one per line), client_name,
	// client_domain. Fields: title, body (plain text paragraphs).
	TextPressRelease = "press_release"
	// Inputs: topic, cta, client_name. Fields: title, body (under 1,500
	// characters).
	TextGBPPost = "gbp_post"
	// Inputs: prospect_url, prospect_domain, tone, client_name,
	// client_domain. Fields: subject, body (plain text).
	TextOutreachEmail = "outreach_email"
	// Inputs: topic, depth (1 to 3: clusters per pillar grow with it).
	// Fields: outline (one line per pillar, "Pillar: cluster; cluster; ..."),
	// summary.
	TextTopicalMap = "topical_map"
	// Inputs: url, keyword, current_title, current_meta_description,
	// current_h1, issues (one per line). Fields: title, meta_description,
	// recommendations (one per line).
	TextPageOptimization = "page_optimization"
	// Inputs: prompt. Hints: brand_name, competitors (comma-separated).
	// Fields: answer.
	TextLLMAnswer = "llm_answer"
	// Inputs: transcript, lead_grade, quality_grade. Fields: summary.
	TextCallSummary = "call_summary"
)

// TextRequest asks for named pieces of text.
type TextRequest struct {
	// Kind is one of the Text* constants.
	Kind string
	// Instructions say what to write, in words, for a language model.
	Instructions string
	// Inputs are the facts to write from (keyword, tone, city, ...).
	Inputs map[string]string
	// Hints are facts the built-in generator may use but a language model
	// must not see: they would bias an answer that is being measured (the
	// brand an answer-engine visibility check looks for).
	Hints map[string]string
	// Fields are the pieces wanted, in order.
	Fields []TextField
}

// TextField is one piece of text wanted.
type TextField struct {
	Name        string // title
	Description string // "the article's title, under 60 characters"
}

// Text is what a generator wrote.
type Text struct {
	// Fields holds one non-empty text per requested field.
	Fields map[string]string
	// Model names what wrote it: the model's name, or "atrium-builtin".
	Model string
}

// PageFetcher fetches a web page and reads what an audit checks.
type PageFetcher interface {
	Fetch(ctx context.Context, url string) (*Page, error)
}

// Page is a fetched web page as an audit sees it.
type Page struct {
	URL         string // as asked
	FinalURL    string // after redirects
	StatusCode  int
	Redirects   int
	ContentType string
	Bytes       int
	Elapsed     time.Duration
	Title       string
	// MetaDescription and MetaRobots are the content of those meta tags.
	MetaDescription string
	MetaRobots      string
	// Canonical is the href of <link rel="canonical">, resolved against
	// FinalURL.
	Canonical string
	// Lang is the <html lang> attribute.
	Lang     string
	Viewport bool
	Headings []Heading // in document order
	Images   []PageImage
	Links    []Link
	// Text is the visible text, whitespace collapsed, at most 100 KB.
	Text      string
	WordCount int
}

// Heading is an <h1> to <h6>.
type Heading struct {
	Level int
	Text  string
}

// PageImage is an <img>.
type PageImage struct {
	Src    string // resolved against the page
	Alt    string
	HasAlt bool // an alt attribute is present, even empty
}

// Link is an <a href>.
type Link struct {
	Href     string // resolved against the page
	Text     string
	Internal bool // same host as the page
	NoFollow bool
}

// Mailer sends email.
type Mailer interface {
	Send(ctx context.Context, m Mail) (SentMail, error)
}

// Mail is one message. The sender is the mailer's configured address.
type Mail struct {
	To, Subject, HTML string
}

// SentMail is what the mail server accepted.
type SentMail struct {
	MessageID string
	From      string
}

// Indexer submits URLs to search engines for indexing.
type Indexer interface {
	Submit(ctx context.Context, urls []string) (Submission, error)
}

// Submission is an accepted submission.
type Submission struct {
	Endpoint   string
	StatusCode int // 200 or 202
}

// ImageRenderer draws a featured image.
type ImageRenderer interface {
	Render(ctx context.Context, req ImageRequest) (RenderedImage, error)
}

// Image styles.
const (
	StyleGradient = "gradient"
	StyleMinimal  = "minimal"
	StyleBold     = "bold"
	StyleDark     = "dark"
)

// ImageStyles lists the styles a featured image may have.
var ImageStyles = []string{StyleGradient, StyleMinimal, StyleBold, StyleDark}

// ImageRequest is a featured image to draw: the title large, the subtitle
// small, on a background of the style.
type ImageRequest struct {
	Title, Subtitle string
	Style           string // one of ImageStyles
	Width, Height   int
}

// RenderedImage is a PNG.
type RenderedImage struct {
	PNG           []byte
	Width, Height int
}

// BlobStore keeps generated files, such as images, and serves them back.
type BlobStore interface {
	Put(ctx context.Context, name, contentType string, data []byte) error
	// Get returns ErrNotFound for a name it does not hold.
	Get(ctx context.Context, name string) (Blob, error)
}

// Blob is a stored file.
type Blob struct {
	ContentType string
	Data        []byte
}

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
