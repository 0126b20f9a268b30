package catalog

import (
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/handlers"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/report"
)

func num(v float64) *float64 { return &v }

// Tones of generated writing.
var Tones = []string{"professional", "friendly", "casual", "authoritative", "playful"}

// CTAs of business-profile posts, as Google Business Profile names its
// call-to-action buttons.
var CTAs = []string{"book", "order", "shop", "learn_more", "sign_up", "call"}

// catalog is every action, in the spec's order. A new action appears in
// discovery, validation and the docs by being declared here.
var catalog = []*action.Action{
	{Name: "seo_audit", Description: "Runs an on-page SEO audit of a URL: fetches the page, checks title, meta description, headings, image alt texts, canonical, status, links and more, and records the score and the issues found. Re-running it for the same URL updates the same report and tasks.",
		Fields: []action.Field{
			{Name: "url", Type: action.TString, Format: action.FormatURL, Required: true, MaxLength: 2048, Fetched: true, Description: "The page to audit: an absolute http or https URL on a public address."},
		},
		Cost: action.Cost{Data: 1}, Writes: datasets.SEOReports.Resource, Refreshes: true, TypicalSeconds: 5, Example: map[string]any{"url": "https://example.com/services/emergency-plumbing"},
		Run: handlers.SEOAudit},
	{Name: "optimize_page", Description: "Generates on-page optimisations for a URL: audits the page, checks where the keyword appears, and suggests a title, a meta description and fixes, recorded as SEO tasks.",
		Fields: []action.Field{
			{Name: "url", Type: action.TString, Format: action.FormatURL, Required: true, MaxLength: 2048, Fetched: true, Description: "The page to optimise: an absolute http or https URL on a public address."},
			{Name: "keyword", Type: action.TString, MaxLength: 100, Description: "The keyword the page should rank for."},
		},
		Cost: action.Cost{AI: 1, Data: 1}, Writes: datasets.SEOTasks.Resource, TypicalSeconds: 15, Example: map[string]any{"url": "https://example.com/services/emergency-plumbing", "keyword": "emergency plumber austin"},
		Run: handlers.OptimizePage},
	{Name: "generate_keywords", Description: "Generates keyword ideas with search volume, difficulty, cost per click and intent, recorded as suggested keywords. Without a seed, the client's name is the seed.",
		Fields: []action.Field{
			{Name: "seed", Type: action.TString, MaxLength: 80, Description: "The topic or keyword to grow ideas from; default: the client's name."},
			{Name: "location", Type: action.TString, MaxLength: 100, Known: handlers.KnownLocation,
				Description: "Where the searches are counted. With DataForSEO a country, by name or ISO code (United Kingdom, GB), default the deployment's; with the built-in provider any place, such as a city."},
		},
		Cost: action.Cost{Data: 2}, Writes: datasets.Keywords.Resource, TypicalSeconds: 6, Example: map[string]any{"seed": "emergency plumber", "location": "United States"},
		Run: handlers.GenerateKeywords},
	{Name: "generate_topical_map", Description: "Builds a topical authority map: pillar topics and the cluster articles under each.",
		Fields: []action.Field{
			{Name: "topic", Type: action.TString, Required: true, MaxLength: 200, Description: "The topic to map."},
			{Name: "depth", Type: action.TInteger, Min: num(1), Max: num(3), Default: 2.0, Description: "How deep the map goes: clusters per pillar grow with it (1: 2, 2: 4, 3: 6)."},
		},
		Cost: action.Cost{AI: 2}, Writes: datasets.TopicalMaps.Resource, TypicalSeconds: 25, Example: map[string]any{"topic": "home plumbing maintenance", "depth": 2.0},
		Run: handlers.GenerateTopicalMap},
	{Name: "generate_blog", Description: "Drafts a blog article (title, meta description, HTML body) for a keyword. It is a draft unless the client has auto_deploy on, in which case it is published.",
		Fields: []action.Field{
			{Name: "keyword", Type: action.TString, Required: true, MaxLength: 100, Description: "The keyword the article targets."},
			{Name: "category_id", Type: action.TString, MaxLength: 100, Description: "The blog category to file it under."},
			{Name: "tone", Type: action.TString, Enum: Tones, Default: "professional", Description: "The voice of the writing."},
		},
		Cost: action.Cost{AI: 2}, Writes: datasets.Blogs.Resource, TypicalSeconds: 45, Example: map[string]any{"keyword": "how to fix a leaking tap", "tone": "friendly"},
		Run: handlers.GenerateBlog},
	{Name: "generate_blog_image", Description: "Generates a featured image (a 1200x630 PNG with the title on a styled background) and returns its URL.",
		Fields: []action.Field{
			{Name: "title", Type: action.TString, Required: true, MaxLength: 200, Description: "The text on the image, usually the post's title."},
			{Name: "style", Type: action.TString, Enum: provider.ImageStyles, Default: provider.StyleGradient, Description: "The look of the background."},
		},
		Cost: action.Cost{AI: 1}, Writes: datasets.BlogImages.Resource, TypicalSeconds: 3, Example: map[string]any{"title": "How to fix a leaking tap in ten minutes", "style": "gradient"},
		Run: handlers.GenerateBlogImage},
	{Name: "generate_geo_article", Description: "Drafts a geo-targeted article about a keyword in a city. A draft unless the client has auto_deploy on.",
		Fields: []action.Field{
			{Name: "keyword", Type: action.TString, Required: true, MaxLength: 100, Description: "The service or topic, such as \"emergency plumber\"."},
			{Name: "city", Type: action.TString, Required: true, MaxLength: 100, Description: "The city the article targets."},
			{Name: "state", Type: action.TString, Required: true, MaxLength: 100, Description: "The state, region or province of the city."},
			{Name: "category_id", Type: action.TString, MaxLength: 100, Description: "The blog category to file it under."},
		},
		Cost: action.Cost{AI: 2}, Writes: datasets.GeoArticles.Resource, TypicalSeconds: 45, Example: map[string]any{"keyword": "emergency plumber", "city": "Austin", "state": "Texas"},
		Run: handlers.GenerateGeoArticle},
	{Name: "generate_press_release", Description: "Drafts a press release from a headline and key points.",
		Fields: []action.Field{
			{Name: "headline", Type: action.TString, Required: true, MaxLength: 200, Description: "The news in one line."},
			{Name: "body_points", Type: action.TArray, MaxItems: 10, MaxLength: 500, Description: "Facts the release must cover, one per item."},
		},
		Cost: action.Cost{AI: 1}, Writes: datasets.PressReleases.Resource, TypicalSeconds: 20, Example: map[string]any{"headline": "Rye & Co. opens its second bakery in Leeds", "body_points": []any{"Opens 1 March on Briggate", "Twelve new jobs"}},
		Run: handlers.GeneratePressRelease},
	{Name: "generate_gbp_post", Description: "Drafts a Google Business Profile post. A draft unless the client has auto_deploy on.",
		Fields: []action.Field{
			{Name: "topic", Type: action.TString, Required: true, MaxLength: 200, Description: "What the post is about."},
			{Name: "cta", Type: action.TString, Enum: CTAs, Description: "The call-to-action button of the post."},
		},
		Cost: action.Cost{AI: 1}, Writes: datasets.GBPPosts.Resource, TypicalSeconds: 10, Example: map[string]any{"topic": "Spring boiler service offer: 20% off until April", "cta": "book"},
		Run: handlers.GenerateGBPPost},
	{Name: "deploy_blog", Description: "Deploys the blog widget for the client's site and returns its embed code; with post_id, also publishes that post.",
		Fields: []action.Field{
			{Name: "post_id", Type: action.TString, Format: action.FormatUUID, Description: "A blog post (blogs resource id) to publish."},
		},
		Writes: datasets.Integrations.Resource, TypicalSeconds: 1, Example: map[string]any{},
		Run: handlers.DeployBlog},
	{Name: "index_url", Description: "Submits a URL to search engines for indexing over the IndexNow protocol.",
		Fields: []action.Field{
			{Name: "url", Type: action.TString, Format: action.FormatURL, Required: true, MaxLength: 2048, Description: "The page to submit: an absolute http or https URL."},
		},
		Cost: action.Cost{Data: 1}, Writes: datasets.SEOTasks.Resource, TypicalSeconds: 2, Example: map[string]any{"url": "https://example.com/blog/how-to-fix-a-leaking-tap"},
		Run: handlers.IndexURL},
	{Name: "fetch_backlinks", Description: "Refreshes the client's backlink profile: backlinks, anchor texts, most-linked pages and domain metrics. Re-running it updates the same records.",
		Cost: action.Cost{Data: 2}, Writes: datasets.Backlinks.Resource, Refreshes: true, TypicalSeconds: 10, Example: map[string]any{},
		Run: handlers.FetchBacklinks},
	{Name: "generate_outreach_email", Description: "Drafts an outreach email to a prospect site, recorded in the outreach pipeline.",
		Fields: []action.Field{
			{Name: "prospectUrl", Type: action.TString, Format: action.FormatURL, Required: true, MaxLength: 2048, Description: "The prospect's site: an absolute http or https URL."},
			{Name: "tone", Type: action.TString, Enum: Tones, Default: "friendly", Description: "The voice of the email."},
		},
		Cost: action.Cost{AI: 1}, Writes: datasets.BacklinkOutreach.Resource, TypicalSeconds: 10, Example: map[string]any{"prospectUrl": "https://homeimprovementblog.example.org", "tone": "friendly"},
		Run: handlers.GenerateOutreachEmail},
	{Name: "send_prospect_email", Description: "Sends an email to a prospect over the configured SMTP server, recorded in the outreach pipeline.",
		Fields: []action.Field{
			{Name: "to", Type: action.TString, Format: action.FormatEmail, Required: true, MaxLength: 254, Description: "The recipient: one email address."},
			{Name: "subject", Type: action.TString, Required: true, MaxLength: 200, Description: "The subject line, one line."},
			{Name: "html", Type: action.TString, Format: action.FormatHTML, Required: true, MaxLength: 100_000, Multiline: true, Description: "The message as HTML; a plain-text part is derived from it."},
		},
		Cost: action.Cost{Data: 1}, Writes: datasets.BacklinkOutreach.Resource, TypicalSeconds: 2, Example: map[string]any{"to": "editor@homeimprovementblog.example.org", "subject": "A guest post on winter pipe care", "html": "<p>Hello,</p><p>Would your readers like a guide to winter pipe care?</p>"},
		Run: handlers.SendProspectEmail},
	{Name: "run_grid_search", Description: "Runs a local grid search: the client's rank for a keyword at each point of a 5x5 grid around a location.",
		Fields: []action.Field{
			{Name: "keyword", Type: action.TString, Required: true, MaxLength: GridKeywordMaxLength, Description: "The search to rank for."},
			{Name: "lat", Type: action.TNumber, Required: true, Min: num(-GridMaxLatitude), Max: num(GridMaxLatitude), Description: "Latitude of the grid's centre, in degrees (maps end at 85 north and south)."},
			{Name: "lng", Type: action.TNumber, Required: true, Min: num(-180), Max: num(180), Description: "Longitude of the grid's centre, in degrees."},
			{Name: "radius", Type: action.TNumber, Min: num(GridMinRadiusKm), Max: num(GridMaxRadiusKm), Default: 5.0, Description: "Distance from the centre to the grid's edge, in kilometres."},
		},
		Cost: action.Cost{Data: 3}, Writes: datasets.GridSearches.Resource, TypicalSeconds: 20, Example: map[string]any{"keyword": "plumber near me", "lat": 30.2672, "lng": -97.7431, "radius": 5.0},
		Run: handlers.RunGridSearch},
	{Name: "run_llm_visibility", Description: "Runs an answer-engine visibility check: asks the configured language model the prompt and records whether, and how prominently, the brand and its competitors are mentioned.",
		Fields: []action.Field{
			{Name: "prompt", Type: action.TString, Required: true, MaxLength: 2000, Multiline: true, Description: "The question a customer would ask an answer engine."},
			{Name: "brand_name", Type: action.TString, Required: true, MaxLength: 100, Description: "The brand to look for in the answer."},
			{Name: "competitors", Type: action.TArray, MaxItems: 10, MaxLength: 100, Description: "Competitor brands to look for too."},
		},
		Cost: action.Cost{AI: 2}, Writes: datasets.LLMReports.Resource, TypicalSeconds: 30, Example: map[string]any{"prompt": "Who is the best emergency plumber in Austin?", "brand_name": "Rye Plumbing", "competitors": []any{"Roto-Rooter", "Mr. Rooter"}},
		Run: handlers.RunLLMVisibility},
	{Name: "generate_report", Description: "Generates the client's branded report for a period: ranking changes (winners and losers), audit scores, backlinks, Google Business Profile posts, answer-engine visibility, the work done (actions run) and a short narrative written from those figures, as an HTML page with SVG charts and a PDF. Returns both URLs and the headline figures.",
		Fields: []action.Field{
			{Name: "period", Type: action.TPeriod, Required: true, Check: report.CheckPeriod, Schema: report.PeriodSchema(),
				Description: `The period: "last_month" (the calendar month before today's), "last_week" (Monday to Sunday before this week's) or {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}, both days included, from before to, at most 366 days apart.`},
			{Name: "sections", Type: action.TArray, Enum: report.Sections, MaxItems: len(report.Sections), Description: "The sections to include, in any order (they are shown in the order listed here); default: all."},
			{Name: "title", Type: action.TString, MaxLength: 200, Description: "The report's title; default: the client's name and the period."},
			{Name: "timezone", Type: action.TString, MaxLength: 64, Default: "UTC", Check: report.CheckTimezone, Description: "The IANA time zone the period's days are read in, such as Europe/London."},
			{Name: "share_ttl_days", Type: action.TInteger, Min: num(1), Max: num(365), Default: 90.0, Description: "Days the report's share link (share_url: the report without a key, for the client) works before it expires."},
			{Name: "email_to", Type: action.TArray, Format: action.FormatEmail, MaxItems: handlers.MaxReportRecipients, MaxLength: 254, Description: "Addresses the report is emailed to once it is made (its share link and its PDF's address), one message each; a schedule of generate_report that names them delivers every report. Needs the mail server (--smtp-addr); a report that cannot be sent is a failed run, not charged."},
		},
		Cost: action.Cost{AI: 1, Data: 2}, Writes: datasets.ActionRuns.Resource, TypicalSeconds: 4, Example: map[string]any{"period": map[string]any{"from": "2026-10-01", "to": "2026-10-31"}, "timezone": "Europe/London", "share_ttl_days": 30},
		Run: handlers.GenerateReport},
	{Name: "score_call", Description: "Scores a call transcript: lead grade (A to D: how likely the caller is to buy), quality grade (A to D: how well the call was handled), a 0-100 score, the signals found and a summary.",
		Fields: []action.Field{
			{Name: "transcript", Type: action.TString, Required: true, MaxLength: 200_000, Multiline: true, Description: "The call's transcript, speakers on their own lines if known."},
			{Name: "call_id", Type: action.TString, MaxLength: 100, Description: "The call in the client's call tracker, to link the score to."},
		},
		Cost: action.Cost{AI: 1}, Writes: datasets.CallScores.Resource, TypicalSeconds: 15, Example: map[string]any{"transcript": "Caller: Hi, my water heater is leaking, can someone come today?\nAgent: Yes, we have a slot at 3 pm.", "call_id": "call-4821"},
		Run: handlers.ScoreCall},
}

var byName = func() map[string]*action.Action {
	m := make(map[string]*action.Action, len(catalog))
	for _, a := range catalog {
		m[a.Name] = a
	}
	return m
}()

// All returns every action, in the spec's order.
func All() []*action.Action { return catalog }

// Lookup returns the action called name.
func Lookup(name string) (*action.Action, bool) {
	a, ok := byName[name]
	return a, ok
}

// Names lists the action names in the spec's order.
func Names() []string {
	out := make([]string, len(catalog))
	for i, a := range catalog {
		out[i] = a.Name
	}
	return out
}

func list(names []string) string { return strings.Join(names, ", ") }
