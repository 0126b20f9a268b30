package main

// The collections interface over HTTP: definitions through the admin API,
// the six public routes, validation, system collections, paging, ETags,
// filters and isolation between sites.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// postsFields is a collection using every field type.
var postsFields = []map[string]any{
	{"key": "title", "type": "text", "required": true, "max_length": 80},
	{"key": "body", "type": "rich_text"},
	{"key": "rating", "type": "number"},
	{"key": "views", "type": "integer"},
	{"key": "featured", "type": "boolean"},
	{"key": "publish_on", "type": "date"},
	{"key": "edited_at", "type": "datetime"},
	{"key": "contact", "type": "email"},
	{"key": "source", "type": "url"},
	{"key": "category", "type": "select", "options": []string{"news", "recipes"}},
	{"key": "tags", "type": "multi_select", "options": []string{"bread", "cake", "vegan"}},
	{"key": "extra", "type": "json"},
	{"key": "author", "type": "reference", "target": "authors"},
}

// cmsTenant is a site with an authors and a posts collection, a system
// collection, and keys bound to the site.
type cmsTenant struct {
	tenant
	base string // the public collections URL
}

func (s *stack) newCMS(t *testing.T) cmsTenant {
	t.Helper()
	tn := s.newTenant(t)
	site := "/admin/v1/sites/" + tn.site + "/collections"
	s.create(t, site, "collection", map[string]any{"name": "Authors", "slug": "authors",
		"fields": []map[string]any{{"key": "name", "type": "text", "required": true}}})
	s.create(t, site, "collection", map[string]any{"name": "Posts", "slug": "posts", "fields": postsFields})
	s.create(t, site, "collection", map[string]any{"name": "Pages", "slug": "pages", "is_system": true,
		"fields": []map[string]any{{"key": "title", "type": "text", "required": true}}})
	return cmsTenant{tenant: tn, base: s.api + "/api/public/v1/collections"}
}

func (c cmsTenant) createItem(t *testing.T, slug string, body any) map[string]any {
	t.Helper()
	r := call(t, "POST", c.base+"/"+slug, c.write, body)
	wantStatus(t, r, http.StatusCreated)
	return r.json["item"].(map[string]any)
}

func testCollectionsEndpoints(t *testing.T, s *stack) {
	c := s.newCMS(t)
	// List collections: every collection of the site with its fields.
	r := call(t, "GET", c.base, c.read, nil)
	wantStatus(t, r, http.StatusOK)
	var slugs []string
	for _, col := range r.json["collections"].([]any) {
		col := col.(map[string]any)
		wantKeys(t, col, "name", "slug", "fields", "is_system")
		slugs = append(slugs, col["slug"].(string))
		if col["slug"] == "pages" && col["is_system"] != true {
			t.Fatalf("pages is_system = %v", col["is_system"])
		}
	}
	if !slices.Equal(slugs, []string{"authors", "pages", "posts"}) {
		t.Fatalf("collections = %v", slugs)
	}

	author := c.createItem(t, "authors", map[string]any{"data": map[string]any{"name": "Ana"}, "is_published": true})
	created := c.createItem(t, "posts", map[string]any{"data": map[string]any{
		"title": "Sourdough basics", "rating": 4.5, "views": 10, "featured": true, "publish_on": "2026-12-01",
		"edited_at": "2026-11-20T10:00:00+02:00", "contact": "ana@example.com", "source": "https://example.com/a",
		"category": "recipes", "tags": []string{"bread", "vegan"}, "extra": map[string]any{"any": []int{1, 2}},
		"author": author["id"],
	}})
	wantKeys(t, created, "id", "is_published", "publish_at", "unpublish_at", "created_at", "updated_at", "title", "body", "rating", "views", "featured",
		"publish_on", "edited_at", "contact", "source", "category", "tags", "extra", "author")
	wantTimestamp(t, created, "created_at")
	if created["is_published"] != false || created["body"] != nil || created["edited_at"] != "2026-11-20T08:00:00Z" {
		t.Fatalf("created = %v; want a draft, unset fields null, datetimes in UTC", created)
	}
	id := created["id"].(string)

	// Get one item, with its ETag.
	r = call(t, "GET", c.base+"/posts/"+id, c.read, nil)
	wantStatus(t, r, http.StatusOK)
	etag := r.header.Get("ETag")
	if etag == "" || r.json["item"].(map[string]any)["title"] != "Sourdough basics" {
		t.Fatalf("get = %s, ETag %q", r, etag)
	}

	// PATCH merges: given fields change, the others stay.
	r = call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{"title": "Sourdough, basics", "rating": nil}, "is_published": true})
	wantStatus(t, r, http.StatusOK)
	item := r.json["item"].(map[string]any)
	if item["title"] != "Sourdough, basics" || item["rating"] != nil || item["views"] != float64(10) || item["is_published"] != true {
		t.Fatalf("patched = %v", item)
	}
	if r.header.Get("ETag") == etag || r.header.Get("ETag") == "" {
		t.Fatalf("ETag after a write = %q, want a new one (was %q)", r.header.Get("ETag"), etag)
	}

	// If-Match: a stale ETag changes nothing; the current one applies.
	stale := call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{"title": "Lost"}}, "If-Match", etag)
	wantError(t, stale, http.StatusPreconditionFailed, "changed", "If-Match")
	fresh := call(t, "GET", c.base+"/posts/"+id, c.read, nil)
	if fresh.json["item"].(map[string]any)["title"] != "Sourdough, basics" {
		t.Fatalf("a 412 changed the item: %s", fresh)
	}
	// An If-Match the gateway could not pass on as sent (a curly quote, say)
	// is refused, not dropped: dropped, the write would skip its check.
	wantError(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{"title": "Lost"}}, "If-Match", "\u201c"+etag+"\u201d"),
		http.StatusBadRequest, "If-Match header must be printable ASCII")
	// Data after the JSON object is refused, not ignored.
	wantError(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, `{"data": {"title": "Lost"}} {"data": {}}`),
		http.StatusBadRequest, "request body must be one JSON object with nothing after it", "column 29")
	if got := call(t, "GET", c.base+"/posts/"+id, c.read, nil); got.json["item"].(map[string]any)["title"] != "Sourdough, basics" || got.header.Get("ETag") != fresh.header.Get("ETag") {
		t.Fatalf("a refused PATCH changed the item: %s (ETag %s)", got, got.header.Get("ETag"))
	}
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{}}, "If-Match", fresh.header.Get("ETag")), http.StatusOK)
	wantError(t, call(t, "DELETE", c.base+"/posts/"+id, c.write, nil, "If-Match", fresh.header.Get("ETag")), http.StatusPreconditionFailed)

	// List: collection, items (drafts included), limit and offset used.
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Draft"}})
	r = call(t, "GET", c.base+"/posts", c.read, nil)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r.json, "collection", "items", "limit", "offset")
	items := r.json["items"].([]any)
	if len(items) != 2 || r.json["limit"] != float64(100) || r.json["offset"] != float64(0) {
		t.Fatalf("list = %s; want 2 items, limit 100, offset 0", r)
	}
	if items[0].(map[string]any)["title"] != "Draft" {
		t.Fatalf("list order: first is %v, want the newest", items[0])
	}
	r = call(t, "GET", c.base+"/posts?limit=5000&offset=1", c.read, nil)
	if r.json["limit"] != float64(1000) || len(r.json["items"].([]any)) != 1 {
		t.Fatalf("limit=5000&offset=1 = %s; want limit 1000 reported and one item", r)
	}
	// Beyond the spec: only published, and an exact filter.
	r = call(t, "GET", c.base+"/posts?is_published=true", c.read, nil)
	if n := len(r.json["items"].([]any)); n != 1 {
		t.Fatalf("is_published=true gave %d items, want 1", n)
	}
	r = call(t, "GET", c.base+"/posts?filter_field=category&filter_value=recipes", c.read, nil)
	if n := len(r.json["items"].([]any)); n != 1 {
		t.Fatalf("filter category=recipes gave %d items, want 1", n)
	}
	r = call(t, "GET", c.base+"/posts?order=title&direction=asc", c.read, nil)
	if items := r.json["items"].([]any); len(items) != 2 || items[0].(map[string]any)["title"] != "Draft" {
		t.Fatalf("order=title asc = %s; want Draft before Sourdough", r)
	}

	// Delete answers {"ok": true}; the item is gone.
	r = call(t, "DELETE", c.base+"/posts/"+id, c.write, nil)
	wantStatus(t, r, http.StatusOK)
	if r.json["ok"] != true || len(r.json) != 1 {
		t.Fatalf("delete = %s, want {\"ok\": true}", r)
	}
	wantError(t, call(t, "GET", c.base+"/posts/"+id, c.read, nil), http.StatusNotFound, "not found")
}

func testCollectionsValidation(t *testing.T, s *stack) {
	c := s.newCMS(t)
	post := func(body any) response { return call(t, "POST", c.base+"/posts", c.write, body) }
	data := func(kv ...any) map[string]any {
		d := map[string]any{"title": "T"}
		for i := 0; i+1 < len(kv); i += 2 {
			d[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"data": d}
	}
	for name, tc := range map[string]struct {
		body  any
		words []string
	}{
		"no data":            {map[string]any{"is_published": true}, []string{"data is required"}},
		"data not an object": {map[string]any{"data": []int{1}}, []string{"data"}},
		"missing required":   {map[string]any{"data": map[string]any{"rating": 1}}, []string{"data.title is required"}},
		"null required":      {data("title", nil), []string{"data.title is required: a string of at most 80 characters"}},
		"empty required":     {data("title", ""), []string{"data.title is required: a string of at most 80 characters"}},
		"blank required":     {data("title", "  "), []string{"data.title is required"}},
		// Text PostgreSQL cannot hold is refused before it is written.
		"NUL in text":        {data("title", "a\x00b"), []string{"data.title must be a string", `got "a\x00b"`}},
		"NUL in rich_text":   {data("body", "<p>\x00</p>"), []string{"data.body must be a string of at most 500,000 characters, without NUL characters (U+0000)"}},
		"NUL in json":        {data("extra", map[string]any{"k": []any{"\x00"}}), []string{"data.extra must be any JSON value without NUL characters (U+0000)"}},
		"NUL in json key":    {data("extra", map[string]any{"\x00": 1}), []string{"data.extra must be any JSON value without NUL"}},
		"non-ASCII email":    {data("contact", "josé@example.com"), []string{"data.contact must be an email address", "ASCII"}},
		"address literal":    {data("contact", "bob@[127.0.0.1]"), []string{"data.contact must be an email address", "at a domain name"}},
		"unknown field":      {data("colour", "red"), []string{"data.colour is not a field", "title, body"}},
		"too long":           {data("title", strings.Repeat("x", 81)), []string{"data.title", "at most 80"}},
		"number":             {data("rating", "high"), []string{"data.rating must be a number", `"high"`}},
		"integer":            {data("views", 1.5), []string{"data.views must be an integer"}},
		"boolean":            {data("featured", "yes"), []string{"data.featured must be true or false"}},
		"date":               {data("publish_on", "2026-02-30"), []string{"data.publish_on must be a date"}},
		"datetime":           {data("edited_at", "yesterday"), []string{"data.edited_at must be an RFC 3339"}},
		"email":              {data("contact", "Ana <ana@example.com>"), []string{"data.contact must be an email"}},
		"url":                {data("source", "ftp://x.example"), []string{"data.source must be an absolute http or https URL"}},
		"select":             {data("category", "sport"), []string{"data.category must be one of: news, recipes"}},
		"multi_select":       {data("tags", []string{"bread", "bread"}), []string{"data.tags must be an array of distinct values"}},
		"reference":          {data("author", "01a20a25-01a4-78fc-a7f2-443c2935f15b"), []string{"data.author", "no item"}},
		"reference not uuid": {data("author", "ana"), []string{"data.author must be the id (a UUID)"}},
	} {
		t.Run(name, func(t *testing.T) { wantError(t, post(tc.body), http.StatusBadRequest, tc.words...) })
	}
	r := call(t, "GET", c.base+"/posts", c.read, nil)
	if n := len(r.json["items"].([]any)); n != 0 {
		t.Fatalf("refused creates left %d items", n)
	}
	for q, words := range map[string][]string{
		"limit=0":                               {"limit must be an integer of at least 1"},
		"limit=abc":                             {"limit must be an integer"},
		"offset=-1":                             {"offset must be an integer of 0 or more"},
		"order=body":                            {"Invalid order field. Allowed: created_at, updated_at, title, rating, views, featured, publish_on, edited_at, contact, source, category"},
		"direction=up":                          {"direction must be asc or desc"},
		"filter_field=category":                 {"filter_field and filter_value go together"},
		"filter_field=nope&filter_value=1":      {"Invalid filter field. Allowed: title"},
		"filter_field=views&filter_value=many":  {"filter_value for views must be an integer"},
		"filter_field=title&filter_value=a%00b": {"filter_value for title must be a string"},
	} {
		wantError(t, call(t, "GET", c.base+"/posts?"+q, c.read, nil), http.StatusBadRequest, words...)
	}
	wantError(t, call(t, "GET", c.base+"/nope", c.read, nil), http.StatusNotFound, `collection "nope" not found`)
	// An id that is not a UUID names no item: 404, as for any path id.
	wantError(t, call(t, "GET", c.base+"/posts/not-a-uuid", c.read, nil), http.StatusNotFound, `item "not-a-uuid" not found in collection "posts"`)
	wantError(t, call(t, "DELETE", c.base+"/posts/not-a-uuid", c.write, nil), http.StatusNotFound, `item "not-a-uuid" not found`)
	wantError(t, call(t, "GET", c.base+"/posts%00", c.read, nil), http.StatusNotFound, "not found")
	wantError(t, s.adminCall(t, "PATCH", "/admin/v1/sites/"+c.site+"/collections/posts%00", map[string]any{"name": "X"}), http.StatusNotFound, "not found")
	wantError(t, call(t, "GET", c.base+"/posts/01a20a25-01a4-78fc-a7f2-443c2935f15b", c.read, nil), http.StatusNotFound, "not found")
	wantError(t, call(t, "PATCH", c.base+"/posts/01a20a25-01a4-78fc-a7f2-443c2935f15b", c.write, map[string]any{}), http.StatusBadRequest, "data is required")

	// Scopes: reads need read, writes need write.
	wantStatus(t, post(data()), http.StatusCreated)
	wantError(t, call(t, "POST", c.base+"/posts", c.read, data()), http.StatusForbidden, "write")
}

func testCollectionsSystem(t *testing.T, s *stack) {
	c := s.newCMS(t)
	page := s.create(t, "/admin/v1/sites/"+c.site+"/collections/pages/items", "item", map[string]any{"data": map[string]any{"title": "About"}, "is_published": true})
	r := call(t, "GET", c.base+"/pages", c.read, nil)
	if len(r.json["items"].([]any)) != 1 {
		t.Fatalf("system collection list = %s", r)
	}
	path := c.base + "/pages/" + page["id"].(string)
	for _, w := range []response{
		call(t, "POST", c.base+"/pages", c.write, map[string]any{"data": map[string]any{"title": "X"}}),
		call(t, "PATCH", path, c.write, map[string]any{"data": map[string]any{"title": "X"}}),
		call(t, "DELETE", path, c.write, nil),
	} {
		wantError(t, w, http.StatusForbidden, `"pages" is a system collection and read-only`)
	}
	if got := call(t, "GET", path, c.read, nil); got.json["item"].(map[string]any)["title"] != "About" {
		t.Fatalf("a refused write changed the system item: %s", got)
	}
}

func testCollectionsTenancy(t *testing.T, s *stack) {
	a, b := s.newCMS(t), s.newCMS(t)
	item := a.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Mine"}})
	path := "/posts/" + item["id"].(string)
	wantError(t, call(t, "GET", b.base+path, b.read, nil), http.StatusNotFound)
	wantError(t, call(t, "PATCH", b.base+path, b.write, map[string]any{"data": map[string]any{"title": "Theirs"}}), http.StatusNotFound)
	wantError(t, call(t, "DELETE", b.base+path, b.write, nil), http.StatusNotFound)
	s.create(t, "/admin/v1/sites/"+a.site+"/collections", "collection", map[string]any{"name": "Secret", "slug": "secret"})
	wantError(t, call(t, "GET", b.base+"/secret", b.read, nil), http.StatusNotFound)
	if r := call(t, "GET", b.base+"/posts", b.read, nil); len(r.json["items"].([]any)) != 0 {
		t.Fatalf("site b sees site a's items: %s", r)
	}
	if got := call(t, "GET", a.base+path, a.read, nil); got.json["item"].(map[string]any)["title"] != "Mine" {
		t.Fatalf("site b's refused write changed site a's item: %s", got)
	}
	// A key bound to no site is refused.
	agencyOnly := s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": a.agency})
	wantError(t, call(t, "GET", a.base, agencyOnly, nil), http.StatusForbidden, "site")
}

// testCollectionsPaging pages through a collection whose items share
// creation times in bursts: every item is read exactly once.
func testCollectionsPaging(t *testing.T, s *stack) {
	c := s.newCMS(t)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.createItem(t, "authors", map[string]any{"data": map[string]any{"name": fmt.Sprint("A", i)}})
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for off := 0; off < 40; off += 7 {
		r := call(t, "GET", fmt.Sprintf("%s/authors?limit=7&offset=%d", c.base, off), c.read, nil)
		for _, it := range r.json["items"].([]any) {
			seen[it.(map[string]any)["id"].(string)]++
		}
	}
	if len(seen) != 30 {
		t.Fatalf("paging read %d distinct items, want 30", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("item %s read %d times", id, n)
		}
	}
}

// testCollectionsConcurrentMerge races PATCHes of different fields of one
// item: every one survives.
func testCollectionsConcurrentMerge(t *testing.T, s *stack) {
	c := s.newCMS(t)
	var fields []map[string]any
	for i := range 12 {
		fields = append(fields, map[string]any{"key": fmt.Sprintf("f%d", i), "type": "integer"})
	}
	s.create(t, "/admin/v1/sites/"+c.site+"/collections", "collection", map[string]any{"name": "Wide", "slug": "wide", "fields": fields})
	id := c.createItem(t, "wide", map[string]any{"data": map[string]any{}})["id"].(string)
	var wg sync.WaitGroup
	for i := range fields {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := call(t, "PATCH", c.base+"/wide/"+id, c.write, map[string]any{"data": map[string]any{fmt.Sprintf("f%d", i): i}})
			if r.status != http.StatusOK {
				t.Errorf("patch f%d: %s", i, r)
			}
		}()
	}
	wg.Wait()
	item := call(t, "GET", c.base+"/wide/"+id, c.read, nil).json["item"].(map[string]any)
	for i := range fields {
		if item[fmt.Sprintf("f%d", i)] != float64(i) {
			t.Fatalf("after concurrent patches f%d = %v; every write must survive: %v", i, item[fmt.Sprintf("f%d", i)], item)
		}
	}
}

func testCollectionsEvents(t *testing.T, s *stack) {
	c := s.newCMS(t)
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("atrium.collections." + c.site + ".posts.item.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	id := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Evented"}})["id"].(string)
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{}, "is_published": true}), http.StatusOK)
	wantStatus(t, call(t, "DELETE", c.base+"/posts/"+id, c.write, nil), http.StatusOK)
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 4 {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("events so far %v: %v", got, err)
		}
		var ev struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(msg.Data, &ev) == nil && ev.ID == id {
			got = append(got, msg.Subject[strings.LastIndexByte(msg.Subject, '.')+1:])
		}
	}
	if !slices.Equal(got, []string{"created", "updated", "published", "deleted"}) {
		t.Fatalf("events = %v, want created, updated, published, deleted", got)
	}
}

// testCollectionsAdmin defines and changes collections through the admin
// API, and checks what a change does to existing items.
func testCollectionsAdmin(t *testing.T, s *stack) {
	c := s.newCMS(t)
	site := "/admin/v1/sites/" + c.site + "/collections"
	for _, tc := range []struct {
		body  map[string]any
		code  int
		words []string
	}{
		{map[string]any{"name": "Posts", "slug": "posts"}, http.StatusConflict, []string{`slug "posts"`}},
		{map[string]any{"name": "Bad", "slug": "Bad Slug"}, http.StatusBadRequest, []string{"slug must be 1 to 64 lower case"}},
		{map[string]any{"name": "X", "slug": "x", "fields": []map[string]any{{"key": "id", "type": "text"}}}, http.StatusBadRequest, []string{"reserved"}},
		{map[string]any{"name": "X", "slug": "x", "fields": []map[string]any{{"key": "a", "type": "reference", "target": "nope"}}}, http.StatusBadRequest, []string{`collection "nope"`}},
		{map[string]any{"name": "X", "slug": "x", "fields": []map[string]any{{"key": "a", "type": "colour"}}}, http.StatusBadRequest, []string{"fields[0].type must be one of"}},
	} {
		wantError(t, s.adminCall(t, "POST", site, tc.body), tc.code, tc.words...)
	}
	wantError(t, s.adminCall(t, "POST", "/admin/v1/sites/01a20a25-01a4-78fc-a7f2-443c2935f15b/collections", map[string]any{"name": "X", "slug": "x"}), http.StatusNotFound, "site")

	id := c.createItem(t, "authors", map[string]any{"data": map[string]any{"name": "Ana"}})["id"].(string)
	r := s.adminCall(t, "PATCH", site+"/authors", map[string]any{
		"name": "Writers", "add_fields": []map[string]any{{"key": "bio", "type": "text", "max_length": 10}},
	})
	wantStatus(t, r, http.StatusOK)
	item := call(t, "GET", c.base+"/authors/"+id, c.read, nil).json["item"].(map[string]any)
	if v, ok := item["bio"]; !ok || v != nil {
		t.Fatalf("an added field shows on existing items as null: %v", item)
	}
	wantError(t, call(t, "PATCH", c.base+"/authors/"+id, c.write, map[string]any{"data": map[string]any{"bio": "far too long a bio"}}), http.StatusBadRequest, "at most 10")
	wantStatus(t, call(t, "PATCH", c.base+"/authors/"+id, c.write, map[string]any{"data": map[string]any{"bio": "Baker"}}), http.StatusOK)

	wantError(t, s.adminCall(t, "PATCH", site+"/authors", map[string]any{"add_fields": []map[string]any{{"key": "email", "type": "email", "required": true}}}), http.StatusBadRequest, "cannot be required")
	wantError(t, s.adminCall(t, "PATCH", site+"/authors", map[string]any{"update_fields": []map[string]any{{"key": "bio", "type": "number"}}}), http.StatusBadRequest, "cannot become number")
	wantError(t, s.adminCall(t, "PATCH", site+"/authors", map[string]any{"remove_fields": []string{"nope"}}), http.StatusBadRequest, `no field "nope"`)
	wantStatus(t, s.adminCall(t, "PATCH", site+"/authors", map[string]any{"update_fields": []map[string]any{{"key": "bio", "type": "text", "max_length": 100}}}), http.StatusOK)

	wantStatus(t, s.adminCall(t, "PATCH", site+"/authors", map[string]any{"remove_fields": []string{"bio"}}), http.StatusOK)
	item = call(t, "GET", c.base+"/authors/"+id, c.read, nil).json["item"].(map[string]any)
	if _, ok := item["bio"]; ok {
		t.Fatalf("a removed field still shows: %v", item)
	}
	wantStatus(t, s.adminCall(t, "PATCH", site+"/authors", map[string]any{"add_fields": []map[string]any{{"key": "bio", "type": "text"}}}), http.StatusOK)
	item = call(t, "GET", c.base+"/authors/"+id, c.read, nil).json["item"].(map[string]any)
	if item["bio"] != nil {
		t.Fatalf("a re-added field starts empty; got %v", item["bio"])
	}
	list := s.adminCall(t, "GET", site, nil)
	wantStatus(t, list, http.StatusOK)
	if n := len(list.json["collections"].([]any)); n != 3 {
		t.Fatalf("admin list of collections: %d, want 3", n)
	}
}
