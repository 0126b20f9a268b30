package app

import (
	"context"
	"slices"
	"strings"
)

// Field types of action fields, as discovery names them.
const (
	TString  = "string"
	TInteger = "integer"
	TNumber  = "number"
	TBoolean = "boolean"
	TArray   = "array" // of strings
)

// String formats.
const (
	FormatURL   = "url"
	FormatEmail = "email"
	FormatUUID  = "uuid"
	FormatHTML  = "html"
)

// Field is one action-specific field of a request: its type, format,
// bounds and allowed values. Validation, discovery and docs/actions.md all
// read it.
type Field struct {
	Name        string
	Type        string
	Format      string
	Description string
	Required    bool
	// Enum lists the allowed values of a string field.
	Enum []string
	// Min and Max bound a number or integer field.
	Min, Max *float64
	// MaxLength bounds a string, or each item of an array; MinLength is 1
	// for every string (an empty string is never a value).
	MaxLength int
	// MaxItems bounds an array.
	MaxItems int
	// Default is the value of an absent field, nil if none.
	Default any
	// Fetched marks a URL the service itself fetches: addresses on private
	// networks are refused (an audit is otherwise an SSRF door).
	Fetched bool
}

// Cost is what a successful run spends, in AI and data credits.
type Cost struct{ AI, Data int64 }

// Handler does an action's work for one run. It reads its validated input
// and the client from x, calls providers through x.P, and returns the
// record to answer with and the rows to write. A *ProviderError ends the
// run with status "error"; so does any other error (status_code 500).
type Handler func(ctx context.Context, x *Exec) (Result, error)

// Action is one action of the catalog, declared once.
type Action struct {
	Name        string
	Description string
	Fields      []Field
	Cost        Cost
	// Writes is the dataset its record goes to (a GET /api/v1/data
	// resource); some actions also write others (see docs/actions.md).
	Writes string
	// Refreshes marks actions that update the same records when re-run
	// (seo_audit, fetch_backlinks) instead of adding new ones.
	Refreshes bool
	Run       Handler
}

// Field returns the action's field called name.
func (a *Action) Field(name string) (Field, bool) {
	i := slices.IndexFunc(a.Fields, func(f Field) bool { return f.Name == name })
	if i < 0 {
		return Field{}, false
	}
	return a.Fields[i], true
}

// FieldNames lists the action's field names in declaration order.
func (a *Action) FieldNames() []string {
	out := make([]string, len(a.Fields))
	for i, f := range a.Fields {
		out[i] = f.Name
	}
	return out
}

func num(v float64) *float64 { return &v }

// Tones of generated writing.
var Tones = []string{"professional", "friendly", "casual", "authoritative", "playful"}

// CTAs of business-profile posts, as Google Business Profile names its
// call-to-action buttons.
var CTAs = []string{"book", "order", "shop", "learn_more", "sign_up", "call"}

// catalog is every action, in the spec's order. A new action appears in
// discovery, validation and the docs by being declared here.
var catalog = []*Action{
	{Name: "seo_audit", Description: "Runs an on-page SEO audit of a URL: fetches the page, checks title, meta description, headings, image alt texts, canonical, status, links and more, and records the score and the issues found. Re-running it for the same URL updates the same report and tasks.",
		Fields: []Field{
			{Name: "url", Type: TString, Format: FormatURL, Required: true, MaxLength: 2048, Fetched: true, Description: "The page to audit: an absolute http or https URL on a public address."},
		},
		Cost: Cost{Data: 1}, Writes: "seo_reports", Refreshes: true, Run: runSEOAudit},
	{Name: "optimize_page", Description: "Generates on-page optimisations for a URL: audits the page, checks where the keyword appears, and suggests a title, a meta description and fixes, recorded as SEO tasks.",
		Fields: []Field{
			{Name: "url", Type: TString, Format: FormatURL, Required: true, MaxLength: 2048, Fetched: true, Description: "The page to optimise: an absolute http or https URL on a public address."},
			{Name: "keyword", Type: TString, MaxLength: 100, Description: "The keyword the page should rank for."},
		},
		Cost: Cost{AI: 1, Data: 1}, Writes: "seo_tasks", Run: runOptimizePage},
	{Name: "generate_keywords", Description: "Generates keyword ideas with search volume, difficulty, cost per click and intent, recorded as suggested keywords. Without a seed, the client's name is the seed.",
		Fields: []Field{
			{Name: "seed", Type: TString, MaxLength: 80, Description: "The topic or keyword to grow ideas from; default: the client's name."},
			{Name: "location", Type: TString, MaxLength: 100, Description: "A place the ideas are for, such as a city."},
		},
		Cost: Cost{Data: 2}, Writes: "keywords", Run: runGenerateKeywords},
	{Name: "generate_topical_map", Description: "Builds a topical authority map: pillar topics and the cluster articles under each.",
		Fields: []Field{
			{Name: "topic", Type: TString, Required: true, MaxLength: 200, Description: "The topic to map."},
			{Name: "depth", Type: TInteger, Min: num(1), Max: num(3), Default: 2.0, Description: "How deep the map goes: clusters per pillar grow with it (1: 2, 2: 4, 3: 6)."},
		},
		Cost: Cost{AI: 2}, Writes: "topical_maps", Run: runTopicalMap},
	{Name: "generate_blog", Description: "Drafts a blog article (title, meta description, HTML body) for a keyword. It is a draft unless the client has auto_deploy on, in which case it is published.",
		Fields: []Field{
			{Name: "keyword", Type: TString, Required: true, MaxLength: 100, Description: "The keyword the article targets."},
			{Name: "category_id", Type: TString, MaxLength: 100, Description: "The blog category to file it under."},
			{Name: "tone", Type: TString, Enum: Tones, Default: "professional", Description: "The voice of the writing."},
		},
		Cost: Cost{AI: 2}, Writes: "blogs", Run: runGenerateBlog},
	{Name: "generate_blog_image", Description: "Generates a featured image (a 1200x630 PNG with the title on a styled background) and returns its URL.",
		Fields: []Field{
			{Name: "title", Type: TString, Required: true, MaxLength: 200, Description: "The text on the image, usually the post's title."},
			{Name: "style", Type: TString, Enum: ImageStyles, Default: StyleGradient, Description: "The look of the background."},
		},
		Cost: Cost{AI: 1}, Writes: "blog_images", Run: runBlogImage},
	{Name: "generate_geo_article", Description: "Drafts a geo-targeted article about a keyword in a city. A draft unless the client has auto_deploy on.",
		Fields: []Field{
			{Name: "keyword", Type: TString, Required: true, MaxLength: 100, Description: "The service or topic, such as \"emergency plumber\"."},
			{Name: "city", Type: TString, Required: true, MaxLength: 100, Description: "The city the article targets."},
			{Name: "state", Type: TString, Required: true, MaxLength: 100, Description: "The state, region or province of the city."},
			{Name: "category_id", Type: TString, MaxLength: 100, Description: "The blog category to file it under."},
		},
		Cost: Cost{AI: 2}, Writes: "geo_articles", Run: runGeoArticle},
	{Name: "generate_press_release", Description: "Drafts a press release from a headline and key points.",
		Fields: []Field{
			{Name: "headline", Type: TString, Required: true, MaxLength: 200, Description: "The news in one line."},
			{Name: "body_points", Type: TArray, MaxItems: 10, MaxLength: 500, Description: "Facts the release must cover, one per item."},
		},
		Cost: Cost{AI: 1}, Writes: "press_releases", Run: runPressRelease},
	{Name: "generate_gbp_post", Description: "Drafts a Google Business Profile post. A draft unless the client has auto_deploy on.",
		Fields: []Field{
			{Name: "topic", Type: TString, Required: true, MaxLength: 200, Description: "What the post is about."},
			{Name: "cta", Type: TString, Enum: CTAs, Description: "The call-to-action button of the post."},
		},
		Cost: Cost{AI: 1}, Writes: "gbp_posts", Run: runGBPPost},
	{Name: "deploy_blog", Description: "Deploys the blog widget for the client's site and returns its embed code; with post_id, also publishes that post.",
		Fields: []Field{
			{Name: "post_id", Type: TString, Format: FormatUUID, Description: "A blog post (blogs resource id) to publish."},
		},
		Writes: "integrations", Run: runDeployBlog},
	{Name: "index_url", Description: "Submits a URL to search engines for indexing over the IndexNow protocol.",
		Fields: []Field{
			{Name: "url", Type: TString, Format: FormatURL, Required: true, MaxLength: 2048, Description: "The page to submit: an absolute http or https URL."},
		},
		Cost: Cost{Data: 1}, Writes: "seo_tasks", Run: runIndexURL},
	{Name: "fetch_backlinks", Description: "Refreshes the client's backlink profile: backlinks, anchor texts, most-linked pages and domain metrics. Re-running it updates the same records.",
		Cost: Cost{Data: 2}, Writes: "backlinks", Refreshes: true, Run: runFetchBacklinks},
	{Name: "generate_outreach_email", Description: "Drafts an outreach email to a prospect site, recorded in the outreach pipeline.",
		Fields: []Field{
			{Name: "prospectUrl", Type: TString, Format: FormatURL, Required: true, MaxLength: 2048, Description: "The prospect's site: an absolute http or https URL."},
			{Name: "tone", Type: TString, Enum: Tones, Default: "friendly", Description: "The voice of the email."},
		},
		Cost: Cost{AI: 1}, Writes: "backlink_outreach", Run: runOutreachEmail},
	{Name: "send_prospect_email", Description: "Sends an email to a prospect over the configured SMTP server, recorded in the outreach pipeline.",
		Fields: []Field{
			{Name: "to", Type: TString, Format: FormatEmail, Required: true, MaxLength: 254, Description: "The recipient: one email address."},
			{Name: "subject", Type: TString, Required: true, MaxLength: 200, Description: "The subject line, one line."},
			{Name: "html", Type: TString, Format: FormatHTML, Required: true, MaxLength: 100_000, Description: "The message as HTML; a plain-text part is derived from it."},
		},
		Cost: Cost{Data: 1}, Writes: "backlink_outreach", Run: runSendEmail},
	{Name: "run_grid_search", Description: "Runs a local grid search: the client's rank for a keyword at each point of a 5x5 grid around a location.",
		Fields: []Field{
			{Name: "keyword", Type: TString, Required: true, MaxLength: 100, Description: "The search to rank for."},
			{Name: "lat", Type: TNumber, Required: true, Min: num(-85), Max: num(85), Description: "Latitude of the grid's centre, in degrees (maps end at 85 north and south)."},
			{Name: "lng", Type: TNumber, Required: true, Min: num(-180), Max: num(180), Description: "Longitude of the grid's centre, in degrees."},
			{Name: "radius", Type: TNumber, Min: num(0.5), Max: num(50), Default: 5.0, Description: "Distance from the centre to the grid's edge, in kilometres."},
		},
		Cost: Cost{Data: 3}, Writes: "grid_searches", Run: runGridSearch},
	{Name: "run_llm_visibility", Description: "Runs an answer-engine visibility check: asks the configured language model the prompt and records whether, and how prominently, the brand and its competitors are mentioned.",
		Fields: []Field{
			{Name: "prompt", Type: TString, Required: true, MaxLength: 2000, Description: "The question a customer would ask an answer engine."},
			{Name: "brand_name", Type: TString, Required: true, MaxLength: 100, Description: "The brand to look for in the answer."},
			{Name: "competitors", Type: TArray, MaxItems: 10, MaxLength: 100, Description: "Competitor brands to look for too."},
		},
		Cost: Cost{AI: 2}, Writes: "llm_reports", Run: runLLMVisibility},
	{Name: "score_call", Description: "Scores a call transcript: lead grade (A to D: how likely the caller is to buy), quality grade (A to D: how well the call was handled), a 0-100 score, the signals found and a summary.",
		Fields: []Field{
			{Name: "transcript", Type: TString, Required: true, MaxLength: 200_000, Description: "The call's transcript, speakers on their own lines if known."},
			{Name: "call_id", Type: TString, MaxLength: 100, Description: "The call in the client's call tracker, to link the score to."},
		},
		Cost: Cost{AI: 1}, Writes: "call_scores", Run: runScoreCall},
}

var byName = func() map[string]*Action {
	m := make(map[string]*Action, len(catalog))
	for _, a := range catalog {
		m[a.Name] = a
	}
	return m
}()

// Catalog returns every action, in the spec's order.
func Catalog() []*Action { return catalog }

// LookupAction returns the action called name.
func LookupAction(name string) (*Action, bool) {
	a, ok := byName[name]
	return a, ok
}

// ActionNames lists the action names in the spec's order.
func ActionNames() []string {
	out := make([]string, len(catalog))
	for i, a := range catalog {
		out[i] = a.Name
	}
	return out
}

func list(names []string) string { return strings.Join(names, ", ") }
