package app

import (
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/value"
)

// Field types of dataset rows: the value kinds every interface shares,
// checked and worded by platform/value.
const (
	TString    = value.String
	TNumber    = value.Number
	TInteger   = value.Integer
	TBoolean   = value.Boolean
	TDate      = value.Date
	TTimestamp = value.Timestamp
	TURL       = value.URL
	TUUID      = value.UUID
	// TJSON is any JSON value (object, array, string, number, boolean),
	// stored and returned as given: the structured parts of the records
	// actions create (an audit's issues, a map's pillars). Never an order
	// or filter key.
	TJSON = value.JSON
)

// maxText bounds a string value; maxJSON a json value, encoded.
const (
	maxText = 100_000
	maxJSON = 200_000
)

// Field is one property of a resource's rows.
type Field struct {
	Name     string
	Type     value.Kind
	Required bool
}

// rule is what the field accepts.
func (fd Field) rule() value.Rule {
	switch fd.Type {
	case TString:
		return value.Rule{Kind: value.String, Max: maxText}
	case TJSON:
		return value.Rule{Kind: value.JSON, Max: maxJSON}
	}
	return value.Rule{Kind: fd.Type}
}

// Resource is a dataset: the shape of its rows. Every row also has id,
// created_at and updated_at (SystemFields); which of the spec's order and
// filter fields a resource offers follows from the fields it has.
type Resource struct {
	Name        string
	Description string
	Fields      []Field
	// CreatedAtDate makes created_at a date (YYYY-MM-DD) rather than a
	// timestamp, as the spec's keyword rows have it.
	CreatedAtDate bool
	// BeyondSpec marks a resource Atrium adds to the spec's 31: the
	// records of the actions that have no dataset of their own.
	BeyondSpec bool
	// ByAgency marks a resource whose rows are an agency's, not the
	// client's: each names its agency in agency_id, and a read returns
	// only the caller's agency's rows (a client linked to two agencies is
	// a client of two tenants). A row without agency_id is no agency's.
	ByAgency bool
}

// OrderFields and FilterFields are the spec's lists, in its order; the
// error messages quote them exactly.
var (
	OrderFields  = []string{"created_at", "updated_at", "id", "fetched_at", "tracked_at", "external_pages", "linking_domains", "appearances", "scored_at"}
	FilterFields = []string{"id", "status", "source_type", "source_id", "category_id", "published", "lead_grade", "quality_grade", "sentiment"}
)

// ClientsResource is the one resource read from the CRM rather than
// stored: the clients the key's agency can reach.
const ClientsResource = "clients"

func f(name string, typ value.Kind) Field   { return Field{Name: name, Type: typ} }
func req(name string, typ value.Kind) Field { return Field{Name: name, Type: typ, Required: true} }

// Catalog is every resource: the spec's 31 in its order, then Atrium's own
// (BeyondSpec). It is the one statement of each row shape: validation,
// ordering, filtering, the PostgreSQL indexes and docs/datasets.md all
// follow it. The optional fields beyond the spec's descriptions are those
// of the records the actions write (docs/actions.md).
var Catalog = []Resource{
	{Name: ClientsResource, Description: "Clients the key can reach", Fields: []Field{
		req("name", TString), req("domain", TString), req("status", TString), req("auto_deploy", TBoolean)}},
	{Name: "keywords", Description: "Tracked keyword rankings over time", CreatedAtDate: true, Fields: []Field{
		req("keyword", TString), f("position", TNumber), f("url", TURL), f("search_volume", TInteger),
		f("difficulty", TNumber), f("status", TString), f("tracked_at", TTimestamp),
		f("location", TString), f("cpc", TNumber), f("intent", TString), f("source", TString)}},
	{Name: "seo_tasks", Description: "SEO tasks with priority, status and category", Fields: []Field{
		req("title", TString), f("description", TString), f("priority", TString), f("status", TString), f("category_id", TString),
		f("url", TURL), f("source_id", TString), f("check", TString)}},
	{Name: "seo_reports", Description: "Audit reports", Fields: []Field{
		req("url", TURL), f("score", TNumber), f("issues_found", TInteger), f("summary", TString),
		f("issues", TJSON), f("checks_passed", TInteger), f("status_code", TInteger), f("fetched_at", TTimestamp), f("title", TString)}},
	{Name: "blogs", Description: "Blog articles, drafts and published", Fields: []Field{
		req("post_title", TString), f("slug", TString), f("content", TString), f("status", TString), f("published", TBoolean),
		f("category_id", TString), f("author_id", TString), f("published_at", TTimestamp),
		f("meta_description", TString), f("keyword", TString), f("word_count", TInteger), f("featured_image_url", TURL)}},
	{Name: "blog_categories", Description: "Blog taxonomy", Fields: []Field{req("name", TString), f("slug", TString)}},
	{Name: "blog_authors", Description: "Blog authors", Fields: []Field{req("name", TString), f("bio", TString)}},
	{Name: "geo_articles", Description: "Geo-targeted articles", Fields: []Field{
		req("title", TString), f("location", TString), f("content", TString), f("status", TString),
		f("keyword", TString), f("city", TString), f("state", TString), f("meta_description", TString),
		f("category_id", TString), f("published", TBoolean)}},
	{Name: "topical_maps", Description: "Topical authority maps", Fields: []Field{
		req("topic", TString), f("pillar_count", TInteger), f("summary", TString), f("depth", TInteger), f("pillars", TJSON)}},
	{Name: "press_releases", Description: "Generated press releases", Fields: []Field{
		req("title", TString), f("body", TString), f("status", TString), f("distributed_at", TTimestamp)}},
	{Name: "backlinks", Description: "Individual backlinks with anchor and source authority", Fields: []Field{
		req("source_url", TURL), req("target_url", TURL), f("anchor_text", TString), f("source_type", TString), f("source_id", TString),
		f("domain_authority", TNumber), f("external_pages", TInteger), f("linking_domains", TInteger), f("first_seen", TDate),
		f("source_domain", TString), f("nofollow", TBoolean)}},
	{Name: "anchor_texts", Description: "Anchor text distribution", Fields: []Field{
		req("anchor", TString), f("count", TInteger), f("percentage", TNumber), f("source_id", TString)}},
	{Name: "top_linked_pages", Description: "Most-linked pages", Fields: []Field{
		req("url", TURL), f("linking_domains", TInteger), f("external_pages", TInteger)}},
	{Name: "domain_metrics", Description: "Domain authority, page authority, spam score", Fields: []Field{
		req("domain", TString), f("domain_authority", TNumber), f("page_authority", TNumber), f("spam_score", TNumber), f("fetched_at", TTimestamp),
		f("backlinks", TInteger), f("linking_domains", TInteger)}},
	{Name: "backlink_outreach", Description: "Outreach pipeline", Fields: []Field{
		req("target_domain", TString), f("contact_email", TString), f("status", TString), f("notes", TString),
		f("prospect_url", TURL), f("subject", TString), f("body", TString), f("sent_at", TTimestamp), f("message_id", TString)}},
	{Name: "backlink_summaries", Description: "AI summaries of backlinks", Fields: []Field{
		req("summary", TString), f("status", TString), f("source_id", TString)}},
	{Name: "citations", Description: "Directory listings and status", Fields: []Field{
		req("directory", TString), f("listing_url", TURL), f("status", TString)}},
	{Name: "gbp_profiles", Description: "Business-profile data", Fields: []Field{
		req("name", TString), f("address", TString), f("phone", TString), f("rating", TNumber), f("review_count", TInteger), f("status", TString)}},
	{Name: "gbp_posts", Description: "Business-profile posts", Fields: []Field{
		req("title", TString), f("body", TString), f("status", TString), f("posted_at", TTimestamp), f("cta", TString)}},
	{Name: "reviews", Description: "Customer reviews", Fields: []Field{
		f("author", TString), req("rating", TNumber), f("text", TString), f("sentiment", TString), f("source", TString)}},
	{Name: "locations", Description: "Client business locations", Fields: []Field{
		req("name", TString), f("address", TString), f("city", TString), f("country", TString), f("lat", TNumber), f("lng", TNumber)}},
	{Name: "grid_searches", Description: "Local grid search results", Fields: []Field{
		req("keyword", TString), f("grid_size", TInteger), f("average_rank", TNumber), f("tracked_at", TTimestamp),
		f("lat", TNumber), f("lng", TNumber), f("radius_km", TNumber), f("points", TJSON), f("competitors", TJSON), f("source", TString)}},
	{Name: "competitors", Description: "Competitor appearances", Fields: []Field{
		req("domain", TString), f("appearances", TInteger), f("average_position", TNumber)}},
	{Name: "llm_reports", Description: "Answer-engine visibility reports", Fields: []Field{
		req("engine", TString), f("prompt", TString), f("visibility", TNumber), f("scored_at", TTimestamp),
		f("brand_name", TString), f("mentioned", TBoolean), f("position", TInteger), f("competitors", TJSON), f("answer", TString)}},
	{Name: "ai_summaries", Description: "Generated summaries", Fields: []Field{req("summary", TString), f("source_id", TString)}},
	{Name: "ai_training", Description: "Knowledge base", Fields: []Field{
		req("title", TString), f("content", TString), f("source_id", TString)}},
	{Name: "call_tracking_calls", Description: "Calls", Fields: []Field{
		f("caller_number", TString), f("duration_seconds", TInteger), f("status", TString), f("recording_url", TURL)}},
	{Name: "thirdparty_calls", Description: "Calls from a third-party call tracker", Fields: []Field{
		req("provider", TString), f("caller_number", TString), f("duration_seconds", TInteger), f("status", TString)}},
	{Name: "call_scores", Description: "Lead scoring", Fields: []Field{
		f("call_id", TString), f("lead_grade", TString), f("quality_grade", TString), f("score", TNumber),
		f("summary", TString), f("signals", TJSON)}},
	{Name: "call_transcriptions", Description: "Call transcripts", Fields: []Field{
		f("call_id", TString), req("transcript", TString), f("lead_grade", TString), f("quality_grade", TString)}},
	{Name: "integrations", Description: "Connected integrations and status", Fields: []Field{
		req("name", TString), f("provider", TString), f("status", TString), f("connected_at", TTimestamp), f("config", TJSON)}},

	{Name: "action_runs", Description: "Runs of actions, successful or not", BeyondSpec: true, ByAgency: true, Fields: []Field{
		req("action", TString), f("status", TString), f("status_code", TInteger), f("agency_id", TString),
		f("credits_ai", TInteger), f("credits_data", TInteger), f("record_id", TString), f("record_resource", TString),
		f("error", TString), f("data", TJSON), f("started_at", TTimestamp), f("finished_at", TTimestamp)}},
	{Name: "blog_images", Description: "Generated featured images", BeyondSpec: true, Fields: []Field{
		req("title", TString), f("style", TString), req("url", TURL), f("width", TInteger), f("height", TInteger),
		f("bytes", TInteger), f("content_type", TString)}},
}

var byName = func() map[string]*Resource {
	m := make(map[string]*Resource, len(Catalog))
	for i := range Catalog {
		m[Catalog[i].Name] = &Catalog[i]
	}
	return m
}()

// ResourceNames lists the resource names in the catalog's order.
func ResourceNames() []string {
	out := make([]string, len(Catalog))
	for i, r := range Catalog {
		out[i] = r.Name
	}
	return out
}

// Lookup returns the resource named name.
func Lookup(name string) (*Resource, bool) {
	r, ok := byName[name]
	return r, ok
}

// Field returns the row field called name, system fields included.
func (r *Resource) Field(name string) (Field, bool) {
	switch name {
	case "id":
		return Field{Name: "id", Type: TUUID}, true
	case "created_at":
		if r.CreatedAtDate {
			return Field{Name: "created_at", Type: TDate}, true
		}
		return Field{Name: "created_at", Type: TTimestamp}, true
	case "updated_at":
		return Field{Name: "updated_at", Type: TTimestamp}, true
	}
	i := slices.IndexFunc(r.Fields, func(f Field) bool { return f.Name == name })
	if i < 0 {
		return Field{}, false
	}
	return r.Fields[i], true
}

// Orders lists the order fields this resource offers.
func (r *Resource) Orders() []string { return r.offered(OrderFields) }

// Filters lists the filter fields this resource offers.
func (r *Resource) Filters() []string { return r.offered(FilterFields) }

func (r *Resource) offered(universe []string) []string {
	var out []string
	for _, name := range universe {
		if _, ok := r.Field(name); ok {
			out = append(out, name)
		}
	}
	return out
}

// AllFields lists every field of the resource's rows, system ones first.
func (r *Resource) AllFields() []Field {
	out := []Field{{Name: "id", Type: TUUID}}
	for _, f := range r.Fields {
		out = append(out, f)
	}
	cf, _ := r.Field("created_at")
	return append(out, cf, Field{Name: "updated_at", Type: TTimestamp})
}

func list(names []string) string { return strings.Join(names, ", ") }
