package atrium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Field is a field the items of a collection carry.
type Field struct {
	Key       string   `json:"key"`
	Type      string   `json:"type"`
	Required  bool     `json:"required"`
	Options   []string `json:"options"`
	Target    string   `json:"target,omitempty"`
	MaxLength int      `json:"max_length,omitempty"`
	// Localized fields hold a value per locale of the site (ItemQuery.Locale).
	Localized bool `json:"localized,omitempty"`
}

// Collection is a content collection of the site.
type Collection struct {
	Name     string  `json:"name"`
	Slug     string  `json:"slug"`
	Fields   []Field `json:"fields"`
	IsSystem bool    `json:"is_system"`
}

// Item is an item of a collection: its system properties and its fields,
// which the collection defines.
type Item struct {
	ID          string
	IsPublished bool
	// PublishAt and UnpublishAt are the pending scheduled changes, nil for
	// none.
	PublishAt, UnpublishAt *time.Time
	CreatedAt              time.Time
	UpdatedAt              time.Time
	// Fields are the collection's fields (null ones included), as JSON
	// decodes them: strings, float64 numbers, bools, nil, []any, and
	// map[string]any.
	Fields map[string]any
	// ETag is the item's version, for If-Match (set by Get and the
	// writes).
	ETag string
	// Locale is the locale the item was read in, when the read named one
	// (ItemQuery.Locale, ItemGet.Locale); LocaleFallbacks names, for each
	// localized field whose value came from another locale of the chain
	// (de-AT → de → the site's default), that locale. Both are empty for a
	// read without a locale, and for a collection whose own fields are
	// named locale or locale_fallbacks (the fields win, in Fields).
	Locale          string
	LocaleFallbacks map[string]string
}

var itemSystem = []string{"id", "is_published", "publish_at", "unpublish_at", "created_at", "updated_at"}

// UnmarshalJSON reads an item object.
func (it *Item) UnmarshalJSON(b []byte) error {
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	it.ID, _ = raw["id"].(string)
	it.IsPublished, _ = raw["is_published"].(bool)
	for _, f := range []struct {
		key string
		dst *time.Time
	}{{"created_at", &it.CreatedAt}, {"updated_at", &it.UpdatedAt}} {
		if s, ok := raw[f.key].(string); ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return fmt.Errorf("item %s: %s: %w", it.ID, f.key, err)
			}
			*f.dst = t
		}
	}
	for _, f := range []struct {
		key string
		dst **time.Time
	}{{"publish_at", &it.PublishAt}, {"unpublish_at", &it.UnpublishAt}} {
		if s, ok := raw[f.key].(string); ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return fmt.Errorf("item %s: %s: %w", it.ID, f.key, err)
			}
			*f.dst = &t
		}
	}
	for _, k := range itemSystem {
		delete(raw, k)
	}
	it.Fields = raw
	return nil
}

// takeLocale moves the properties a read in a locale adds from the item's
// fields to Locale and LocaleFallbacks, unless the collection has fields
// of those names (the API then leaves the properties out). fields are the
// collection's field names, or nil when the answer does not say them (a
// single item's read): then the properties are recognised by their shape.
func (it *Item) takeLocale(fields []Field) {
	has := func(name string) bool {
		for _, f := range fields {
			if f.Key == name {
				return true
			}
		}
		return false
	}
	locale, ok := it.Fields["locale"].(string)
	fallbacks, okf := it.Fields["locale_fallbacks"].(map[string]any)
	if !ok || !okf || has("locale") || has("locale_fallbacks") {
		return
	}
	it.Locale, it.LocaleFallbacks = locale, make(map[string]string, len(fallbacks))
	for k, v := range fallbacks {
		it.LocaleFallbacks[k], _ = v.(string)
	}
	delete(it.Fields, "locale")
	delete(it.Fields, "locale_fallbacks")
}

// MarshalJSON writes the item as the API shows it.
func (it Item) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(it.Fields)+6)
	for k, v := range it.Fields {
		m[k] = v
	}
	m["id"], m["is_published"], m["created_at"], m["updated_at"] = it.ID, it.IsPublished, it.CreatedAt, it.UpdatedAt
	m["publish_at"], m["unpublish_at"] = it.PublishAt, it.UnpublishAt
	if it.Locale != "" {
		m["locale"], m["locale_fallbacks"] = it.Locale, it.LocaleFallbacks
	}
	return json.Marshal(m)
}

// CollectionsService lists the site's collections.
type CollectionsService struct{ t *transport }

// List returns every collection of the site, with its fields.
func (s *CollectionsService) List(ctx context.Context) ([]Collection, error) {
	var out struct {
		Collections []Collection `json:"collections"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/public/v1/collections", idempotent: true}, &out)
	return out.Collections, err
}

// ItemQuery selects items of a collection; zero values are the API's
// defaults (100 newest first, drafts included).
type ItemQuery struct {
	Limit, Offset int
	// IsPublished keeps only published (true) or draft (false) items.
	IsPublished *bool
	// FilterField and FilterValue keep the items whose field has the value.
	FilterField, FilterValue string
	// Order is created_at, updated_at, a sortable field of the
	// collection, or relevance (with Q); Direction asc or desc.
	Order, Direction string
	// Q keeps the items whose text and rich_text fields hold every word
	// of it (full-text search, at most 200 characters).
	Q string
	// Expand names reference and asset fields whose ids the answer
	// replaces with the objects they name; dots follow references further
	// ("author.avatar", at most 3 levels).
	Expand []string
	// Locale reads the localized fields in a locale of the site (a BCP 47
	// tag such as "de-AT"), each from the first locale of its chain that
	// has a value (de-AT, de, the site's default), or "*" for every
	// locale's values ({locale: value} per localized field).
	// Fallback "none" keeps only the locale's own values.
	Locale, Fallback string
}

func (q *ItemQuery) values() url.Values {
	v := url.Values{}
	if q == nil {
		return v
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	if q.IsPublished != nil {
		v.Set("is_published", strconv.FormatBool(*q.IsPublished))
	}
	for k, s := range map[string]string{"filter_field": q.FilterField, "filter_value": q.FilterValue, "order": q.Order, "direction": q.Direction,
		"q": q.Q, "expand": strings.Join(q.Expand, ","), "locale": q.Locale, "fallback": q.Fallback} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// ItemPage is a page of items with their collection.
type ItemPage struct {
	Collection Collection `json:"collection"`
	Items      []Item     `json:"items"`
	Limit      int        `json:"limit"`
	Offset     int        `json:"offset"`
}

// ItemsService reads and writes the items of the site's collections.
type ItemsService struct{ t *transport }

// List returns a page of a collection's items.
func (s *ItemsService) List(ctx context.Context, collection string, q *ItemQuery) (*ItemPage, error) {
	var out ItemPage
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/public/v1/collections" + path(collection), query: q.values(), idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	if q != nil && q.Locale != "" {
		for i := range out.Items {
			out.Items[i].takeLocale(out.Collection.Fields)
		}
	}
	return &out, nil
}

// itemPage is the largest page of items.
const itemPage = 1000

// All walks the collection's items the query selects, from its offset.
func (s *ItemsService) All(ctx context.Context, collection string, q *ItemQuery) iter.Seq2[Item, error] {
	base := ItemQuery{}
	if q != nil {
		base = *q
	}
	start := base.Offset
	return offsetPages(ctx, itemPage, func(ctx context.Context, limit, offset int) ([]Item, error) {
		pq := base
		pq.Limit, pq.Offset = limit, start+offset
		page, err := s.List(ctx, collection, &pq)
		if err != nil {
			return nil, err
		}
		return page.Items, nil
	})
}

// Get returns one item (drafts included), with its ETag. expand names
// reference and asset fields to replace with the objects they name, as
// ItemQuery.Expand does.
func (s *ItemsService) Get(ctx context.Context, collection, id string, expand ...string) (*Item, error) {
	var out struct {
		Item Item `json:"item"`
	}
	var query url.Values
	if len(expand) > 0 {
		query = url.Values{"expand": {strings.Join(expand, ",")}}
	}
	resp, err := s.t.do(ctx, request{method: "GET", path: "/api/public/v1/collections" + path(collection, id), query: query, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	out.Item.ETag = etag(resp.header)
	return &out.Item, nil
}

// ItemGet reads one item: Expand, Locale and Fallback as ItemQuery's.
type ItemGet struct {
	Expand           []string
	Locale, Fallback string
}

// GetWith returns one item (drafts included), with its ETag, read as q
// says (in a locale, with fields expanded).
func (s *ItemsService) GetWith(ctx context.Context, collection, id string, q ItemGet) (*Item, error) {
	var out struct {
		Item Item `json:"item"`
	}
	query := url.Values{}
	for k, v := range map[string]string{"expand": strings.Join(q.Expand, ","), "locale": q.Locale, "fallback": q.Fallback} {
		if v != "" {
			query.Set(k, v)
		}
	}
	resp, err := s.t.do(ctx, request{method: "GET", path: "/api/public/v1/collections" + path(collection, id), query: query, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	out.Item.ETag = etag(resp.header)
	if q.Locale != "" {
		out.Item.takeLocale(nil)
	}
	return &out.Item, nil
}

// ItemWrite is the body of a create or an update: the fields to set (an
// update keeps the others), and optionally whether it is published and
// when to publish or unpublish it (a time in the future). An update that
// sets IsPublished cancels the pending scheduled changes it does not give
// anew.
type ItemWrite struct {
	// Locale, on an update, writes the localized fields' values of that
	// locale of the site (only localized fields may be given then); empty
	// is the site's default locale. Items are created in the default
	// locale.
	Locale      string         `json:"locale,omitempty"`
	Data        map[string]any `json:"data"`
	IsPublished *bool          `json:"is_published,omitempty"`
	PublishAt   *time.Time     `json:"publish_at,omitempty"`
	UnpublishAt *time.Time     `json:"unpublish_at,omitempty"`
}

// Create adds an item to a collection. A create is not retried unless it
// cannot have reached the data (see the package documentation).
func (s *ItemsService) Create(ctx context.Context, collection string, w ItemWrite) (*Item, error) {
	if w.Data == nil {
		w.Data = map[string]any{}
	}
	var out struct {
		Item Item `json:"item"`
	}
	resp, err := s.t.do(ctx, request{method: "POST", path: "/api/public/v1/collections" + path(collection), body: w}, &out)
	if err != nil {
		return nil, err
	}
	out.Item.ETag = etag(resp.header)
	return &out.Item, nil
}

// WriteOption conditions a write.
type WriteOption func(http.Header)

// IfMatch applies the write only while the object's ETag is etag (412
// otherwise): the item was not changed by someone else since it was read.
func IfMatch(etag string) WriteOption {
	return func(h http.Header) {
		if !strings.HasPrefix(etag, `"`) && etag != "*" {
			etag = `"` + etag + `"`
		}
		h.Set("If-Match", etag)
	}
}

func writeHeader(opts []WriteOption) http.Header {
	h := http.Header{}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Update changes an item's given fields (and is_published, if set). With
// IfMatch it is sent again on a failure like a read (the condition makes
// a second application harmless).
func (s *ItemsService) Update(ctx context.Context, collection, id string, w ItemWrite, opts ...WriteOption) (*Item, error) {
	if w.Data == nil {
		w.Data = map[string]any{}
	}
	h := writeHeader(opts)
	var out struct {
		Item Item `json:"item"`
	}
	resp, err := s.t.do(ctx, request{method: "PATCH", path: "/api/public/v1/collections" + path(collection, id), body: w, header: h,
		idempotent: h.Get("If-Match") != ""}, &out)
	if err != nil {
		return nil, err
	}
	out.Item.ETag = etag(resp.header)
	if w.Locale != "" {
		out.Item.takeLocale(nil)
	}
	return &out.Item, nil
}

// Delete deletes an item. A delete retried after a lost answer that finds
// the item gone took effect the first time, and is a success.
func (s *ItemsService) Delete(ctx context.Context, collection, id string, opts ...WriteOption) error {
	_, err := s.t.do(ctx, request{method: "DELETE", path: "/api/public/v1/collections" + path(collection, id), header: writeHeader(opts), idempotent: true}, nil)
	return goneOnRetry(err)
}

// goneOnRetry is nil for a 404 answered to a retried delete.
func goneOnRetry(err error) error {
	var e *Error
	if errors.As(err, &e) && e.StatusCode == http.StatusNotFound && e.Attempts > 1 {
		return nil
	}
	return err
}

func etag(h http.Header) string { return strings.Trim(h.Get("ETag"), `"`) }
