// Code generated from services/data/internal/app/catalog.go by go generate ./services/data/internal/app; DO NOT EDIT.

package datasets

// Field types of dataset rows, as the data service checks them.
const (
	TString    = "string"
	TNumber    = "number"
	TInteger   = "integer"
	TBoolean   = "boolean"
	TDate      = "date"
	TTimestamp = "timestamp"
	TURL       = "url"
	TUUID      = "uuid"
	TJSON      = "json"
)

// Clients is the dataset clients: Clients the key can reach. Read from the CRM, never written.
var Clients = struct {
	Resource   string
	ID         string // uuid
	Name       string // string, required
	Domain     string // string, required
	Status     string // string, required
	AutoDeploy string // boolean, required
	CreatedAt  string // timestamp
	UpdatedAt  string // timestamp
}{
	Resource:   "clients",
	ID:         "id",
	Name:       "name",
	Domain:     "domain",
	Status:     "status",
	AutoDeploy: "auto_deploy",
	CreatedAt:  "created_at",
	UpdatedAt:  "updated_at",
}

// Keywords is the dataset keywords: Tracked keyword rankings over time.
var Keywords = struct {
	Resource     string
	ID           string // uuid
	Keyword      string // string, required
	Position     string // number
	URL          string // url
	SearchVolume string // integer
	Difficulty   string // number
	Status       string // string
	TrackedAt    string // timestamp
	Location     string // string
	CPC          string // number
	Intent       string // string
	Source       string // string
	CreatedAt    string // date
	UpdatedAt    string // timestamp
}{
	Resource:     "keywords",
	ID:           "id",
	Keyword:      "keyword",
	Position:     "position",
	URL:          "url",
	SearchVolume: "search_volume",
	Difficulty:   "difficulty",
	Status:       "status",
	TrackedAt:    "tracked_at",
	Location:     "location",
	CPC:          "cpc",
	Intent:       "intent",
	Source:       "source",
	CreatedAt:    "created_at",
	UpdatedAt:    "updated_at",
}

// SEOTasks is the dataset seo_tasks: SEO tasks with priority, status and category.
var SEOTasks = struct {
	Resource    string
	ID          string // uuid
	Title       string // string, required
	Description string // string
	Priority    string // string
	Status      string // string
	CategoryID  string // string
	URL         string // url
	SourceID    string // string
	Check       string // string
	CreatedAt   string // timestamp
	UpdatedAt   string // timestamp
}{
	Resource:    "seo_tasks",
	ID:          "id",
	Title:       "title",
	Description: "description",
	Priority:    "priority",
	Status:      "status",
	CategoryID:  "category_id",
	URL:         "url",
	SourceID:    "source_id",
	Check:       "check",
	CreatedAt:   "created_at",
	UpdatedAt:   "updated_at",
}

// SEOReports is the dataset seo_reports: Audit reports.
var SEOReports = struct {
	Resource     string
	ID           string // uuid
	URL          string // url, required
	Score        string // number
	IssuesFound  string // integer
	Summary      string // string
	Issues       string // json
	ChecksPassed string // integer
	StatusCode   string // integer
	FetchedAt    string // timestamp
	Title        string // string
	CreatedAt    string // timestamp
	UpdatedAt    string // timestamp
}{
	Resource:     "seo_reports",
	ID:           "id",
	URL:          "url",
	Score:        "score",
	IssuesFound:  "issues_found",
	Summary:      "summary",
	Issues:       "issues",
	ChecksPassed: "checks_passed",
	StatusCode:   "status_code",
	FetchedAt:    "fetched_at",
	Title:        "title",
	CreatedAt:    "created_at",
	UpdatedAt:    "updated_at",
}

// Blogs is the dataset blogs: Blog articles, drafts and published.
var Blogs = struct {
	Resource         string
	ID               string // uuid
	PostTitle        string // string, required
	Slug             string // string
	Content          string // string
	Status           string // string
	Published        string // boolean
	CategoryID       string // string
	AuthorID         string // string
	PublishedAt      string // timestamp
	MetaDescription  string // string
	Keyword          string // string
	WordCount        string // integer
	FeaturedImageURL string // url
	CreatedAt        string // timestamp
	UpdatedAt        string // timestamp
}{
	Resource:         "blogs",
	ID:               "id",
	PostTitle:        "post_title",
	Slug:             "slug",
	Content:          "content",
	Status:           "status",
	Published:        "published",
	CategoryID:       "category_id",
	AuthorID:         "author_id",
	PublishedAt:      "published_at",
	MetaDescription:  "meta_description",
	Keyword:          "keyword",
	WordCount:        "word_count",
	FeaturedImageURL: "featured_image_url",
	CreatedAt:        "created_at",
	UpdatedAt:        "updated_at",
}

// BlogCategories is the dataset blog_categories: Blog taxonomy.
var BlogCategories = struct {
	Resource  string
	ID        string // uuid
	Name      string // string, required
	Slug      string // string
	CreatedAt string // timestamp
	UpdatedAt string // timestamp
}{
	Resource:  "blog_categories",
	ID:        "id",
	Name:      "name",
	Slug:      "slug",
	CreatedAt: "created_at",
	UpdatedAt: "updated_at",
}

// BlogAuthors is the dataset blog_authors: Blog authors.
var BlogAuthors = struct {
	Resource  string
	ID        string // uuid
	Name      string // string, required
	Bio       string // string
	CreatedAt string // timestamp
	UpdatedAt string // timestamp
}{
	Resource:  "blog_authors",
	ID:        "id",
	Name:      "name",
	Bio:       "bio",
	CreatedAt: "created_at",
	UpdatedAt: "updated_at",
}

// GeoArticles is the dataset geo_articles: Geo-targeted articles.
var GeoArticles = struct {
	Resource        string
	ID              string // uuid
	Title           string // string, required
	Location        string // string
	Content         string // string
	Status          string // string
	Keyword         string // string
	City            string // string
	State           string // string
	MetaDescription string // string
	CategoryID      string // string
	Published       string // boolean
	CreatedAt       string // timestamp
	UpdatedAt       string // timestamp
}{
	Resource:        "geo_articles",
	ID:              "id",
	Title:           "title",
	Location:        "location",
	Content:         "content",
	Status:          "status",
	Keyword:         "keyword",
	City:            "city",
	State:           "state",
	MetaDescription: "meta_description",
	CategoryID:      "category_id",
	Published:       "published",
	CreatedAt:       "created_at",
	UpdatedAt:       "updated_at",
}

// TopicalMaps is the dataset topical_maps: Topical authority maps.
var TopicalMaps = struct {
	Resource    string
	ID          string // uuid
	Topic       string // string, required
	PillarCount string // integer
	Summary     string // string
	Depth       string // integer
	Pillars     string // json
	CreatedAt   string // timestamp
	UpdatedAt   string // timestamp
}{
	Resource:    "topical_maps",
	ID:          "id",
	Topic:       "topic",
	PillarCount: "pillar_count",
	Summary:     "summary",
	Depth:       "depth",
	Pillars:     "pillars",
	CreatedAt:   "created_at",
	UpdatedAt:   "updated_at",
}

// PressReleases is the dataset press_releases: Generated press releases.
var PressReleases = struct {
	Resource      string
	ID            string // uuid
	Title         string // string, required
	Body          string // string
	Status        string // string
	DistributedAt string // timestamp
	CreatedAt     string // timestamp
	UpdatedAt     string // timestamp
}{
	Resource:      "press_releases",
	ID:            "id",
	Title:         "title",
	Body:          "body",
	Status:        "status",
	DistributedAt: "distributed_at",
	CreatedAt:     "created_at",
	UpdatedAt:     "updated_at",
}

// Backlinks is the dataset backlinks: Individual backlinks with anchor and source authority.
var Backlinks = struct {
	Resource        string
	ID              string // uuid
	SourceURL       string // url, required
	TargetURL       string // url, required
	AnchorText      string // string
	SourceType      string // string
	SourceID        string // string
	DomainAuthority string // number
	ExternalPages   string // integer
	LinkingDomains  string // integer
	FirstSeen       string // date
	SourceDomain    string // string
	Nofollow        string // boolean
	Source          string // string
	CreatedAt       string // timestamp
	UpdatedAt       string // timestamp
}{
	Resource:        "backlinks",
	ID:              "id",
	SourceURL:       "source_url",
	TargetURL:       "target_url",
	AnchorText:      "anchor_text",
	SourceType:      "source_type",
	SourceID:        "source_id",
	DomainAuthority: "domain_authority",
	ExternalPages:   "external_pages",
	LinkingDomains:  "linking_domains",
	FirstSeen:       "first_seen",
	SourceDomain:    "source_domain",
	Nofollow:        "nofollow",
	Source:          "source",
	CreatedAt:       "created_at",
	UpdatedAt:       "updated_at",
}

// AnchorTexts is the dataset anchor_texts: Anchor text distribution.
var AnchorTexts = struct {
	Resource   string
	ID         string // uuid
	Anchor     string // string, required
	Count      string // integer
	Percentage string // number
	SourceID   string // string
	CreatedAt  string // timestamp
	UpdatedAt  string // timestamp
}{
	Resource:   "anchor_texts",
	ID:         "id",
	Anchor:     "anchor",
	Count:      "count",
	Percentage: "percentage",
	SourceID:   "source_id",
	CreatedAt:  "created_at",
	UpdatedAt:  "updated_at",
}

// TopLinkedPages is the dataset top_linked_pages: Most-linked pages.
var TopLinkedPages = struct {
	Resource       string
	ID             string // uuid
	URL            string // url, required
	LinkingDomains string // integer
	ExternalPages  string // integer
	CreatedAt      string // timestamp
	UpdatedAt      string // timestamp
}{
	Resource:       "top_linked_pages",
	ID:             "id",
	URL:            "url",
	LinkingDomains: "linking_domains",
	ExternalPages:  "external_pages",
	CreatedAt:      "created_at",
	UpdatedAt:      "updated_at",
}

// DomainMetrics is the dataset domain_metrics: Domain authority, page authority, spam score.
var DomainMetrics = struct {
	Resource        string
	ID              string // uuid
	Domain          string // string, required
	DomainAuthority string // number
	PageAuthority   string // number
	SpamScore       string // number
	FetchedAt       string // timestamp
	Backlinks       string // integer
	LinkingDomains  string // integer
	Source          string // string
	CreatedAt       string // timestamp
	UpdatedAt       string // timestamp
}{
	Resource:        "domain_metrics",
	ID:              "id",
	Domain:          "domain",
	DomainAuthority: "domain_authority",
	PageAuthority:   "page_authority",
	SpamScore:       "spam_score",
	FetchedAt:       "fetched_at",
	Backlinks:       "backlinks",
	LinkingDomains:  "linking_domains",
	Source:          "source",
	CreatedAt:       "created_at",
	UpdatedAt:       "updated_at",
}

// BacklinkOutreach is the dataset backlink_outreach: Outreach pipeline.
var BacklinkOutreach = struct {
	Resource     string
	ID           string // uuid
	TargetDomain string // string, required
	ContactEmail string // string
	Status       string // string
	Notes        string // string
	ProspectURL  string // url
	Subject      string // string
	Body         string // string
	SentAt       string // timestamp
	MessageID    string // string
	CreatedAt    string // timestamp
	UpdatedAt    string // timestamp
}{
	Resource:     "backlink_outreach",
	ID:           "id",
	TargetDomain: "target_domain",
	ContactEmail: "contact_email",
	Status:       "status",
	Notes:        "notes",
	ProspectURL:  "prospect_url",
	Subject:      "subject",
	Body:         "body",
	SentAt:       "sent_at",
	MessageID:    "message_id",
	CreatedAt:    "created_at",
	UpdatedAt:    "updated_at",
}

// BacklinkSummaries is the dataset backlink_summaries: AI summaries of backlinks.
var BacklinkSummaries = struct {
	Resource  string
	ID        string // uuid
	Summary   string // string, required
	Status    string // string
	SourceID  string // string
	CreatedAt string // timestamp
	UpdatedAt string // timestamp
}{
	Resource:  "backlink_summaries",
	ID:        "id",
	Summary:   "summary",
	Status:    "status",
	SourceID:  "source_id",
	CreatedAt: "created_at",
	UpdatedAt: "updated_at",
}

// Citations is the dataset citations: Directory listings and status.
var Citations = struct {
	Resource   string
	ID         string // uuid
	Directory  string // string, required
	ListingURL string // url
	Status     string // string
	CreatedAt  string // timestamp
	UpdatedAt  string // timestamp
}{
	Resource:   "citations",
	ID:         "id",
	Directory:  "directory",
	ListingURL: "listing_url",
	Status:     "status",
	CreatedAt:  "created_at",
	UpdatedAt:  "updated_at",
}

// GBPProfiles is the dataset gbp_profiles: Business-profile data.
var GBPProfiles = struct {
	Resource    string
	ID          string // uuid
	Name        string // string, required
	Address     string // string
	Phone       string // string
	Rating      string // number
	ReviewCount string // integer
	Status      string // string
	CreatedAt   string // timestamp
	UpdatedAt   string // timestamp
}{
	Resource:    "gbp_profiles",
	ID:          "id",
	Name:        "name",
	Address:     "address",
	Phone:       "phone",
	Rating:      "rating",
	ReviewCount: "review_count",
	Status:      "status",
	CreatedAt:   "created_at",
	UpdatedAt:   "updated_at",
}

// GBPPosts is the dataset gbp_posts: Business-profile posts.
var GBPPosts = struct {
	Resource  string
	ID        string // uuid
	Title     string // string, required
	Body      string // string
	Status    string // string
	PostedAt  string // timestamp
	CTA       string // string
	CreatedAt string // timestamp
	UpdatedAt string // timestamp
}{
	Resource:  "gbp_posts",
	ID:        "id",
	Title:     "title",
	Body:      "body",
	Status:    "status",
	PostedAt:  "posted_at",
	CTA:       "cta",
	CreatedAt: "created_at",
	UpdatedAt: "updated_at",
}

// Reviews is the dataset reviews: Customer reviews.
var Reviews = struct {
	Resource  string
	ID        string // uuid
	Author    string // string
	Rating    string // number, required
	Text      string // string
	Sentiment string // string
	Source    string // string
	CreatedAt string // timestamp
	UpdatedAt string // timestamp
}{
	Resource:  "reviews",
	ID:        "id",
	Author:    "author",
	Rating:    "rating",
	Text:      "text",
	Sentiment: "sentiment",
	Source:    "source",
	CreatedAt: "created_at",
	UpdatedAt: "updated_at",
}

// Locations is the dataset locations: Client business locations.
var Locations = struct {
	Resource  string
	ID        string // uuid
	Name      string // string, required
	Address   string // string
	City      string // string
	Country   string // string
	Lat       string // number
	Lng       string // number
	CreatedAt string // timestamp
	UpdatedAt string // timestamp
}{
	Resource:  "locations",
	ID:        "id",
	Name:      "name",
	Address:   "address",
	City:      "city",
	Country:   "country",
	Lat:       "lat",
	Lng:       "lng",
	CreatedAt: "created_at",
	UpdatedAt: "updated_at",
}

// GridSearches is the dataset grid_searches: Local grid search results.
var GridSearches = struct {
	Resource    string
	ID          string // uuid
	Keyword     string // string, required
	GridSize    string // integer
	AverageRank string // number
	TrackedAt   string // timestamp
	Lat         string // number
	Lng         string // number
	RadiusKm    string // number
	Points      string // json
	Competitors string // json
	Source      string // string
	CreatedAt   string // timestamp
	UpdatedAt   string // timestamp
}{
	Resource:    "grid_searches",
	ID:          "id",
	Keyword:     "keyword",
	GridSize:    "grid_size",
	AverageRank: "average_rank",
	TrackedAt:   "tracked_at",
	Lat:         "lat",
	Lng:         "lng",
	RadiusKm:    "radius_km",
	Points:      "points",
	Competitors: "competitors",
	Source:      "source",
	CreatedAt:   "created_at",
	UpdatedAt:   "updated_at",
}

// Competitors is the dataset competitors: Competitor appearances.
var Competitors = struct {
	Resource        string
	ID              string // uuid
	Domain          string // string, required
	Appearances     string // integer
	AveragePosition string // number
	CreatedAt       string // timestamp
	UpdatedAt       string // timestamp
}{
	Resource:        "competitors",
	ID:              "id",
	Domain:          "domain",
	Appearances:     "appearances",
	AveragePosition: "average_position",
	CreatedAt:       "created_at",
	UpdatedAt:       "updated_at",
}

// LLMReports is the dataset llm_reports: Answer-engine visibility reports.
var LLMReports = struct {
	Resource    string
	ID          string // uuid
	Engine      string // string, required
	Prompt      string // string
	Visibility  string // number
	ScoredAt    string // timestamp
	BrandName   string // string
	Mentioned   string // boolean
	Position    string // integer
	Competitors string // json
	Answer      string // string
	CreatedAt   string // timestamp
	UpdatedAt   string // timestamp
}{
	Resource:    "llm_reports",
	ID:          "id",
	Engine:      "engine",
	Prompt:      "prompt",
	Visibility:  "visibility",
	ScoredAt:    "scored_at",
	BrandName:   "brand_name",
	Mentioned:   "mentioned",
	Position:    "position",
	Competitors: "competitors",
	Answer:      "answer",
	CreatedAt:   "created_at",
	UpdatedAt:   "updated_at",
}

// AISummaries is the dataset ai_summaries: Generated summaries.
var AISummaries = struct {
	Resource  string
	ID        string // uuid
	Summary   string // string, required
	SourceID  string // string
	CreatedAt string // timestamp
	UpdatedAt string // timestamp
}{
	Resource:  "ai_summaries",
	ID:        "id",
	Summary:   "summary",
	SourceID:  "source_id",
	CreatedAt: "created_at",
	UpdatedAt: "updated_at",
}

// AITraining is the dataset ai_training: Knowledge base.
var AITraining = struct {
	Resource  string
	ID        string // uuid
	Title     string // string, required
	Content   string // string
	SourceID  string // string
	CreatedAt string // timestamp
	UpdatedAt string // timestamp
}{
	Resource:  "ai_training",
	ID:        "id",
	Title:     "title",
	Content:   "content",
	SourceID:  "source_id",
	CreatedAt: "created_at",
	UpdatedAt: "updated_at",
}

// CallTrackingCalls is the dataset call_tracking_calls: Calls.
var CallTrackingCalls = struct {
	Resource        string
	ID              string // uuid
	CallerNumber    string // string
	DurationSeconds string // integer
	Status          string // string
	RecordingURL    string // url
	CreatedAt       string // timestamp
	UpdatedAt       string // timestamp
}{
	Resource:        "call_tracking_calls",
	ID:              "id",
	CallerNumber:    "caller_number",
	DurationSeconds: "duration_seconds",
	Status:          "status",
	RecordingURL:    "recording_url",
	CreatedAt:       "created_at",
	UpdatedAt:       "updated_at",
}

// ThirdpartyCalls is the dataset thirdparty_calls: Calls from a third-party call tracker.
var ThirdpartyCalls = struct {
	Resource        string
	ID              string // uuid
	Provider        string // string, required
	CallerNumber    string // string
	DurationSeconds string // integer
	Status          string // string
	CreatedAt       string // timestamp
	UpdatedAt       string // timestamp
}{
	Resource:        "thirdparty_calls",
	ID:              "id",
	Provider:        "provider",
	CallerNumber:    "caller_number",
	DurationSeconds: "duration_seconds",
	Status:          "status",
	CreatedAt:       "created_at",
	UpdatedAt:       "updated_at",
}

// CallScores is the dataset call_scores: Lead scoring.
var CallScores = struct {
	Resource     string
	ID           string // uuid
	CallID       string // string
	LeadGrade    string // string
	QualityGrade string // string
	Score        string // number
	Summary      string // string
	Signals      string // json
	CreatedAt    string // timestamp
	UpdatedAt    string // timestamp
}{
	Resource:     "call_scores",
	ID:           "id",
	CallID:       "call_id",
	LeadGrade:    "lead_grade",
	QualityGrade: "quality_grade",
	Score:        "score",
	Summary:      "summary",
	Signals:      "signals",
	CreatedAt:    "created_at",
	UpdatedAt:    "updated_at",
}

// CallTranscriptions is the dataset call_transcriptions: Call transcripts.
var CallTranscriptions = struct {
	Resource     string
	ID           string // uuid
	CallID       string // string
	Transcript   string // string, required
	LeadGrade    string // string
	QualityGrade string // string
	CreatedAt    string // timestamp
	UpdatedAt    string // timestamp
}{
	Resource:     "call_transcriptions",
	ID:           "id",
	CallID:       "call_id",
	Transcript:   "transcript",
	LeadGrade:    "lead_grade",
	QualityGrade: "quality_grade",
	CreatedAt:    "created_at",
	UpdatedAt:    "updated_at",
}

// Integrations is the dataset integrations: Connected integrations and status.
var Integrations = struct {
	Resource    string
	ID          string // uuid
	Name        string // string, required
	Provider    string // string
	Status      string // string
	ConnectedAt string // timestamp
	Config      string // json
	CreatedAt   string // timestamp
	UpdatedAt   string // timestamp
}{
	Resource:    "integrations",
	ID:          "id",
	Name:        "name",
	Provider:    "provider",
	Status:      "status",
	ConnectedAt: "connected_at",
	Config:      "config",
	CreatedAt:   "created_at",
	UpdatedAt:   "updated_at",
}

// ActionRuns is the dataset action_runs: Runs of actions: queued, running, and how they ended (success, error, canceled).
var ActionRuns = struct {
	Resource       string
	ID             string // uuid
	Action         string // string, required
	Status         string // string
	StatusCode     string // integer
	AgencyID       string // string
	CreditsAI      string // integer
	CreditsData    string // integer
	RecordID       string // string
	RecordResource string // string
	Error          string // string
	Data           string // json
	StartedAt      string // timestamp
	FinishedAt     string // timestamp
	ProviderCost   string // number
	Cached         string // boolean
	CreatedAt      string // timestamp
	UpdatedAt      string // timestamp
}{
	Resource:       "action_runs",
	ID:             "id",
	Action:         "action",
	Status:         "status",
	StatusCode:     "status_code",
	AgencyID:       "agency_id",
	CreditsAI:      "credits_ai",
	CreditsData:    "credits_data",
	RecordID:       "record_id",
	RecordResource: "record_resource",
	Error:          "error",
	Data:           "data",
	StartedAt:      "started_at",
	FinishedAt:     "finished_at",
	ProviderCost:   "provider_cost",
	Cached:         "cached",
	CreatedAt:      "created_at",
	UpdatedAt:      "updated_at",
}

// BlogImages is the dataset blog_images: Generated featured images.
var BlogImages = struct {
	Resource    string
	ID          string // uuid
	Title       string // string, required
	Style       string // string
	URL         string // url, required
	Width       string // integer
	Height      string // integer
	Bytes       string // integer
	ContentType string // string
	CreatedAt   string // timestamp
	UpdatedAt   string // timestamp
}{
	Resource:    "blog_images",
	ID:          "id",
	Title:       "title",
	Style:       "style",
	URL:         "url",
	Width:       "width",
	Height:      "height",
	Bytes:       "bytes",
	ContentType: "content_type",
	CreatedAt:   "created_at",
	UpdatedAt:   "updated_at",
}

// All is every dataset with every field of its rows, system fields
// included, in the catalog's order.
var All = []Dataset{
	{Resource: "clients", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "name", Type: TString, Required: true},
		{Name: "domain", Type: TString, Required: true},
		{Name: "status", Type: TString, Required: true},
		{Name: "auto_deploy", Type: TBoolean, Required: true},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "keywords", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "keyword", Type: TString, Required: true},
		{Name: "position", Type: TNumber, Required: false},
		{Name: "url", Type: TURL, Required: false},
		{Name: "search_volume", Type: TInteger, Required: false},
		{Name: "difficulty", Type: TNumber, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "tracked_at", Type: TTimestamp, Required: false},
		{Name: "location", Type: TString, Required: false},
		{Name: "cpc", Type: TNumber, Required: false},
		{Name: "intent", Type: TString, Required: false},
		{Name: "source", Type: TString, Required: false},
		{Name: "created_at", Type: TDate, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "seo_tasks", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "title", Type: TString, Required: true},
		{Name: "description", Type: TString, Required: false},
		{Name: "priority", Type: TString, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "category_id", Type: TString, Required: false},
		{Name: "url", Type: TURL, Required: false},
		{Name: "source_id", Type: TString, Required: false},
		{Name: "check", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "seo_reports", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "url", Type: TURL, Required: true},
		{Name: "score", Type: TNumber, Required: false},
		{Name: "issues_found", Type: TInteger, Required: false},
		{Name: "summary", Type: TString, Required: false},
		{Name: "issues", Type: TJSON, Required: false},
		{Name: "checks_passed", Type: TInteger, Required: false},
		{Name: "status_code", Type: TInteger, Required: false},
		{Name: "fetched_at", Type: TTimestamp, Required: false},
		{Name: "title", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "blogs", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "post_title", Type: TString, Required: true},
		{Name: "slug", Type: TString, Required: false},
		{Name: "content", Type: TString, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "published", Type: TBoolean, Required: false},
		{Name: "category_id", Type: TString, Required: false},
		{Name: "author_id", Type: TString, Required: false},
		{Name: "published_at", Type: TTimestamp, Required: false},
		{Name: "meta_description", Type: TString, Required: false},
		{Name: "keyword", Type: TString, Required: false},
		{Name: "word_count", Type: TInteger, Required: false},
		{Name: "featured_image_url", Type: TURL, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "blog_categories", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "name", Type: TString, Required: true},
		{Name: "slug", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "blog_authors", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "name", Type: TString, Required: true},
		{Name: "bio", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "geo_articles", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "title", Type: TString, Required: true},
		{Name: "location", Type: TString, Required: false},
		{Name: "content", Type: TString, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "keyword", Type: TString, Required: false},
		{Name: "city", Type: TString, Required: false},
		{Name: "state", Type: TString, Required: false},
		{Name: "meta_description", Type: TString, Required: false},
		{Name: "category_id", Type: TString, Required: false},
		{Name: "published", Type: TBoolean, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "topical_maps", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "topic", Type: TString, Required: true},
		{Name: "pillar_count", Type: TInteger, Required: false},
		{Name: "summary", Type: TString, Required: false},
		{Name: "depth", Type: TInteger, Required: false},
		{Name: "pillars", Type: TJSON, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "press_releases", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "title", Type: TString, Required: true},
		{Name: "body", Type: TString, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "distributed_at", Type: TTimestamp, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "backlinks", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "source_url", Type: TURL, Required: true},
		{Name: "target_url", Type: TURL, Required: true},
		{Name: "anchor_text", Type: TString, Required: false},
		{Name: "source_type", Type: TString, Required: false},
		{Name: "source_id", Type: TString, Required: false},
		{Name: "domain_authority", Type: TNumber, Required: false},
		{Name: "external_pages", Type: TInteger, Required: false},
		{Name: "linking_domains", Type: TInteger, Required: false},
		{Name: "first_seen", Type: TDate, Required: false},
		{Name: "source_domain", Type: TString, Required: false},
		{Name: "nofollow", Type: TBoolean, Required: false},
		{Name: "source", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "anchor_texts", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "anchor", Type: TString, Required: true},
		{Name: "count", Type: TInteger, Required: false},
		{Name: "percentage", Type: TNumber, Required: false},
		{Name: "source_id", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "top_linked_pages", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "url", Type: TURL, Required: true},
		{Name: "linking_domains", Type: TInteger, Required: false},
		{Name: "external_pages", Type: TInteger, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "domain_metrics", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "domain", Type: TString, Required: true},
		{Name: "domain_authority", Type: TNumber, Required: false},
		{Name: "page_authority", Type: TNumber, Required: false},
		{Name: "spam_score", Type: TNumber, Required: false},
		{Name: "fetched_at", Type: TTimestamp, Required: false},
		{Name: "backlinks", Type: TInteger, Required: false},
		{Name: "linking_domains", Type: TInteger, Required: false},
		{Name: "source", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "backlink_outreach", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "target_domain", Type: TString, Required: true},
		{Name: "contact_email", Type: TString, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "notes", Type: TString, Required: false},
		{Name: "prospect_url", Type: TURL, Required: false},
		{Name: "subject", Type: TString, Required: false},
		{Name: "body", Type: TString, Required: false},
		{Name: "sent_at", Type: TTimestamp, Required: false},
		{Name: "message_id", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "backlink_summaries", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "summary", Type: TString, Required: true},
		{Name: "status", Type: TString, Required: false},
		{Name: "source_id", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "citations", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "directory", Type: TString, Required: true},
		{Name: "listing_url", Type: TURL, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "gbp_profiles", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "name", Type: TString, Required: true},
		{Name: "address", Type: TString, Required: false},
		{Name: "phone", Type: TString, Required: false},
		{Name: "rating", Type: TNumber, Required: false},
		{Name: "review_count", Type: TInteger, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "gbp_posts", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "title", Type: TString, Required: true},
		{Name: "body", Type: TString, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "posted_at", Type: TTimestamp, Required: false},
		{Name: "cta", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "reviews", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "author", Type: TString, Required: false},
		{Name: "rating", Type: TNumber, Required: true},
		{Name: "text", Type: TString, Required: false},
		{Name: "sentiment", Type: TString, Required: false},
		{Name: "source", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "locations", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "name", Type: TString, Required: true},
		{Name: "address", Type: TString, Required: false},
		{Name: "city", Type: TString, Required: false},
		{Name: "country", Type: TString, Required: false},
		{Name: "lat", Type: TNumber, Required: false},
		{Name: "lng", Type: TNumber, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "grid_searches", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "keyword", Type: TString, Required: true},
		{Name: "grid_size", Type: TInteger, Required: false},
		{Name: "average_rank", Type: TNumber, Required: false},
		{Name: "tracked_at", Type: TTimestamp, Required: false},
		{Name: "lat", Type: TNumber, Required: false},
		{Name: "lng", Type: TNumber, Required: false},
		{Name: "radius_km", Type: TNumber, Required: false},
		{Name: "points", Type: TJSON, Required: false},
		{Name: "competitors", Type: TJSON, Required: false},
		{Name: "source", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "competitors", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "domain", Type: TString, Required: true},
		{Name: "appearances", Type: TInteger, Required: false},
		{Name: "average_position", Type: TNumber, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "llm_reports", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "engine", Type: TString, Required: true},
		{Name: "prompt", Type: TString, Required: false},
		{Name: "visibility", Type: TNumber, Required: false},
		{Name: "scored_at", Type: TTimestamp, Required: false},
		{Name: "brand_name", Type: TString, Required: false},
		{Name: "mentioned", Type: TBoolean, Required: false},
		{Name: "position", Type: TInteger, Required: false},
		{Name: "competitors", Type: TJSON, Required: false},
		{Name: "answer", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "ai_summaries", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "summary", Type: TString, Required: true},
		{Name: "source_id", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "ai_training", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "title", Type: TString, Required: true},
		{Name: "content", Type: TString, Required: false},
		{Name: "source_id", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "call_tracking_calls", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "caller_number", Type: TString, Required: false},
		{Name: "duration_seconds", Type: TInteger, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "recording_url", Type: TURL, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "thirdparty_calls", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "provider", Type: TString, Required: true},
		{Name: "caller_number", Type: TString, Required: false},
		{Name: "duration_seconds", Type: TInteger, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "call_scores", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "call_id", Type: TString, Required: false},
		{Name: "lead_grade", Type: TString, Required: false},
		{Name: "quality_grade", Type: TString, Required: false},
		{Name: "score", Type: TNumber, Required: false},
		{Name: "summary", Type: TString, Required: false},
		{Name: "signals", Type: TJSON, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "call_transcriptions", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "call_id", Type: TString, Required: false},
		{Name: "transcript", Type: TString, Required: true},
		{Name: "lead_grade", Type: TString, Required: false},
		{Name: "quality_grade", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "integrations", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "name", Type: TString, Required: true},
		{Name: "provider", Type: TString, Required: false},
		{Name: "status", Type: TString, Required: false},
		{Name: "connected_at", Type: TTimestamp, Required: false},
		{Name: "config", Type: TJSON, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "action_runs", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "action", Type: TString, Required: true},
		{Name: "status", Type: TString, Required: false},
		{Name: "status_code", Type: TInteger, Required: false},
		{Name: "agency_id", Type: TString, Required: false},
		{Name: "credits_ai", Type: TInteger, Required: false},
		{Name: "credits_data", Type: TInteger, Required: false},
		{Name: "record_id", Type: TString, Required: false},
		{Name: "record_resource", Type: TString, Required: false},
		{Name: "error", Type: TString, Required: false},
		{Name: "data", Type: TJSON, Required: false},
		{Name: "started_at", Type: TTimestamp, Required: false},
		{Name: "finished_at", Type: TTimestamp, Required: false},
		{Name: "provider_cost", Type: TNumber, Required: false},
		{Name: "cached", Type: TBoolean, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
	{Resource: "blog_images", Fields: []Field{
		{Name: "id", Type: TUUID, Required: false},
		{Name: "title", Type: TString, Required: true},
		{Name: "style", Type: TString, Required: false},
		{Name: "url", Type: TURL, Required: true},
		{Name: "width", Type: TInteger, Required: false},
		{Name: "height", Type: TInteger, Required: false},
		{Name: "bytes", Type: TInteger, Required: false},
		{Name: "content_type", Type: TString, Required: false},
		{Name: "created_at", Type: TTimestamp, Required: false},
		{Name: "updated_at", Type: TTimestamp, Required: false},
	}},
}
