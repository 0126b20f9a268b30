package main

// The data read interface over HTTP: datasets loaded through the admin
// API, read with every parameter rule, paged through, and guarded by the
// live link between the key's agency and the client.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// newClient creates a client and, when link is set, links it to the
// tenant's agency.
func (s *stack) newClient(t *testing.T, tn tenant, link bool) string {
	t.Helper()
	id := s.create(t, "/admin/v1/clients", "client", map[string]any{"name": "Client " + t.Name(), "domain": "client.example"})["id"].(string)
	if link {
		wantStatus(t, s.adminCall(t, "PUT", "/admin/v1/agencies/"+tn.agency+"/clients/"+id, nil), http.StatusOK)
	}
	return id
}

func (s *stack) loadRows(t *testing.T, client, resource string, rows ...map[string]any) {
	t.Helper()
	r := s.adminCall(t, "POST", "/admin/v1/clients/"+client+"/datasets/"+resource, map[string]any{"rows": rows})
	wantStatus(t, r, http.StatusCreated)
	if r.json["inserted"] != float64(len(rows)) {
		t.Fatalf("insert answered %s, want inserted %d", r, len(rows))
	}
}

func (s *stack) read(t *testing.T, key string, q url.Values) response {
	t.Helper()
	return call(t, "GET", s.api+"/api/v1/data?"+q.Encode(), key, nil)
}

func params(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func testDataRead(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.loadRows(t, client, "keywords",
		map[string]any{"keyword": "sourdough bread", "position": 3, "url": "https://bakery.example/bread", "search_volume": 1900, "difficulty": 41.5, "status": "active", "tracked_at": "2026-11-20T08:00:00Z"},
		map[string]any{"keyword": "rye", "position": 12.5, "status": "paused", "created_at": "2026-11-01"},
	)
	r := s.read(t, tn.read, params("resource", "keywords", "client_id", client))
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r.json, "resource", "client_id", "data", "pagination")
	p := r.json["pagination"].(map[string]any)
	if r.json["resource"] != "keywords" || r.json["client_id"] != client || p["total"] != float64(2) || p["limit"] != float64(100) ||
		p["offset"] != float64(0) || p["has_more"] != false {
		t.Fatalf("read = %s", r)
	}
	row := r.json["data"].([]any)[0].(map[string]any)
	wantKeys(t, row, "id", "keyword", "position", "url", "search_volume", "difficulty", "status", "tracked_at",
		"location", "cpc", "intent", "source", "created_at", "updated_at")
	if !dateRE.MatchString(row["created_at"].(string)) {
		t.Fatalf("keyword created_at = %v, want a date", row["created_at"])
	}
	wantTimestamp(t, row, "updated_at")

	// Filters read the value as the field's type, exactly and case-sensitively.
	r = s.read(t, tn.read, params("resource", "keywords", "client_id", client, "filter_field", "status", "filter_value", "active"))
	if got := r.json["pagination"].(map[string]any)["total"]; got != float64(1) {
		t.Fatalf("status=active total = %v", got)
	}
	r = s.read(t, tn.read, params("resource", "keywords", "client_id", client, "filter_field", "status", "filter_value", "Active"))
	if got := r.json["pagination"].(map[string]any)["total"]; got != float64(0) {
		t.Fatalf("status=Active total = %v, want 0 (case-sensitive)", got)
	}
	s.loadRows(t, client, "blogs", map[string]any{"post_title": "Live", "published": true}, map[string]any{"post_title": "Draft", "published": false})
	r = s.read(t, tn.read, params("resource", "blogs", "client_id", client, "filter_field", "published", "filter_value", "true"))
	if d := r.json["data"].([]any); len(d) != 1 || d[0].(map[string]any)["post_title"] != "Live" {
		t.Fatalf("published=true = %s", r)
	}
	// Every resource name answers.
	for _, res := range []string{"keywords", "seo_tasks", "seo_reports", "blogs", "blog_categories", "blog_authors", "geo_articles",
		"topical_maps", "press_releases", "backlinks", "anchor_texts", "top_linked_pages", "domain_metrics", "backlink_outreach",
		"backlink_summaries", "citations", "gbp_profiles", "gbp_posts", "reviews", "locations", "grid_searches", "competitors",
		"llm_reports", "ai_summaries", "ai_training", "call_tracking_calls", "thirdparty_calls", "call_scores",
		"call_transcriptions", "integrations", "action_runs", "blog_images"} {
		wantStatus(t, s.read(t, tn.read, params("resource", res, "client_id", client)), http.StatusOK)
	}
	wantStatus(t, s.read(t, tn.read, params("resource", "clients")), http.StatusOK)
}

func testDataRules(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	kw := func(kv ...string) url.Values {
		return params(append([]string{"resource", "keywords", "client_id", client}, kv...)...)
	}
	for name, tc := range map[string]struct {
		q     url.Values
		words []string
	}{
		"no resource":            {params("client_id", client), []string{"resource is required", "keywords", "integrations"}},
		"unknown resource":       {params("resource", "kw", "client_id", client), []string{`unknown resource "kw"`, "clients, keywords, seo_tasks"}},
		"no client_id":           {params("resource", "keywords"), []string{"client_id is required"}},
		"limit 0":                {kw("limit", "0"), []string{"limit must be an integer of at least 1"}},
		"limit abc":              {kw("limit", "abc"), []string{"limit must be an integer"}},
		"offset -1":              {kw("offset", "-1"), []string{"offset must be an integer of 0 or more"}},
		"direction":              {kw("direction", "up"), []string{"direction must be asc or desc"}},
		"filter without value":   {kw("filter_field", "status"), []string{"filter_field and filter_value go together"}},
		"value without filter":   {kw("filter_value", "x"), []string{"filter_field and filter_value go together"}},
		"order not listed":       {kw("order", "keyword"), []string{"Invalid order field. Allowed: created_at, updated_at, id, fetched_at, tracked_at, external_pages, linking_domains, appearances, scored_at"}},
		"filter not listed":      {kw("filter_field", "keyword", "filter_value", "x"), []string{"Invalid filter field. Allowed: id, status, source_type, source_id, category_id, published, lead_grade, quality_grade, sentiment"}},
		"order not of resource":  {kw("order", "scored_at"), []string{"resource keywords has no field scored_at", "created_at, updated_at, id, tracked_at"}},
		"filter not of resource": {kw("filter_field", "sentiment", "filter_value", "x"), []string{"resource keywords has no field sentiment", "id, status"}},
		"filter type":            {params("resource", "blogs", "client_id", client, "filter_field", "published", "filter_value", "yes"), []string{"filter_value for published must be true or false"}},
		"filter uuid":            {kw("filter_field", "id", "filter_value", "42"), []string{"filter_value for id must be a UUID"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := s.read(t, tn.read, tc.q)
			wantError(t, r, http.StatusBadRequest, tc.words...)
			if strings.Contains(tc.words[0], "Invalid") && r.json["error"] != tc.words[0] {
				t.Fatalf("message = %q, want exactly %q", r.json["error"], tc.words[0])
			}
		})
	}
	r := s.read(t, tn.read, kw("limit", "5000"))
	if r.json["pagination"].(map[string]any)["limit"] != float64(1000) {
		t.Fatalf("limit=5000 = %s, want limit 1000 reported", r)
	}
	wantError(t, call(t, "DELETE", s.api+"/api/v1/data", tn.read, nil), http.StatusMethodNotAllowed, "GET, POST")

	// A bad row refuses the whole request, naming the row, field and type.
	for _, tc := range []struct {
		row   map[string]any
		words []string
	}{
		{map[string]any{"keyword": "x", "position": "first"}, []string{"rows[1].position must be a number", `"first"`}},
		{map[string]any{"position": 1}, []string{"rows[1].keyword is required"}},
		{map[string]any{"keyword": "x", "position": 1, "colour": "red"}, []string{"rows[1].colour is not a field of keywords"}},
		{map[string]any{"keyword": "x", "position": 1, "tracked_at": "yesterday"}, []string{"rows[1].tracked_at must be an RFC 3339 timestamp"}},
		{map[string]any{"keyword": "x", "position": 1, "created_at": "2026-11-01T00:00:00Z"}, []string{"rows[1].created_at must be a date"}},
	} {
		r := s.adminCall(t, "POST", "/admin/v1/clients/"+client+"/datasets/keywords", map[string]any{"rows": []any{
			map[string]any{"keyword": "fine", "position": 1}, tc.row}})
		wantError(t, r, http.StatusBadRequest, tc.words...)
	}
	if total := s.read(t, tn.read, kw()).json["pagination"].(map[string]any)["total"]; total != float64(0) {
		t.Fatalf("refused loads wrote %v rows", total)
	}
	wantError(t, s.adminCall(t, "POST", "/admin/v1/clients/"+client+"/datasets/nope", map[string]any{"rows": []any{map[string]any{}}}), http.StatusNotFound, "unknown dataset")
}

// testDataPaging walks a dataset with ties in every order and filter: each
// row exactly once.
func testDataPaging(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	var rows []map[string]any
	for i := range 37 {
		rows = append(rows, map[string]any{"keyword": fmt.Sprint("k", i), "position": i % 4, "status": []string{"active", "paused"}[i%2],
			"tracked_at": fmt.Sprintf("2026-11-%02dT00:00:00Z", 1+i%3), "created_at": fmt.Sprintf("2026-10-%02d", 1+i%5)})
	}
	s.loadRows(t, client, "keywords", rows...)
	for _, extra := range [][]string{
		{}, {"order", "tracked_at"}, {"order", "tracked_at", "direction", "asc"}, {"order", "id"},
		{"filter_field", "status", "filter_value", "active", "order", "tracked_at"},
	} {
		seen := map[string]int{}
		want := -1
		for off := 0; ; off += 5 {
			q := params(append([]string{"resource", "keywords", "client_id", client, "limit", "5", "offset", fmt.Sprint(off)}, extra...)...)
			r := s.read(t, tn.read, q)
			wantStatus(t, r, http.StatusOK)
			p := r.json["pagination"].(map[string]any)
			want = int(p["total"].(float64))
			for _, d := range r.json["data"].([]any) {
				seen[d.(map[string]any)["id"].(string)]++
			}
			if p["has_more"] == false {
				break
			}
		}
		if len(seen) != want {
			t.Fatalf("%v: walk read %d distinct rows, total says %d", extra, len(seen), want)
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("%v: row %s read %d times", extra, id, n)
			}
		}
	}
}

// testDataClientAccess: links apply at once with the same key; unknown
// and unlinked clients get the same 403; clients lists what the key reaches.
func testDataClientAccess(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	linked := s.newClient(t, tn, true)
	later := s.newClient(t, tn, false)
	s.loadRows(t, later, "reviews", map[string]any{"rating": 5, "sentiment": "positive"})
	r1 := s.read(t, tn.read, params("resource", "reviews", "client_id", later))
	r2 := s.read(t, tn.read, params("resource", "reviews", "client_id", "01a20a25-01a4-78fc-a7f2-443c2935f15b"))
	wantError(t, r1, http.StatusForbidden, "not linked")
	wantError(t, r2, http.StatusForbidden, "not linked")
	if strings.ReplaceAll(r1.json["error"].(string), later, "X") != strings.ReplaceAll(r2.json["error"].(string), "01a20a25-01a4-78fc-a7f2-443c2935f15b", "X") {
		t.Fatalf("unlinked and unknown clients answer differently: %q vs %q", r1.json["error"], r2.json["error"])
	}
	wantStatus(t, s.adminCall(t, "PUT", "/admin/v1/agencies/"+tn.agency+"/clients/"+later, nil), http.StatusOK)
	wantStatus(t, s.read(t, tn.read, params("resource", "reviews", "client_id", later)), http.StatusOK)

	r := s.read(t, tn.read, params("resource", "clients"))
	wantStatus(t, r, http.StatusOK)
	if _, ok := r.json["client_id"]; ok {
		t.Fatalf("clients answers with a client_id: %s", r)
	}
	var got []string
	for _, c := range r.json["data"].([]any) {
		got = append(got, c.(map[string]any)["id"].(string))
	}
	if len(got) != 2 || !strings.Contains(strings.Join(got, ","), linked) || !strings.Contains(strings.Join(got, ","), later) {
		t.Fatalf("clients = %v, want exactly %s and %s", got, linked, later)
	}
	r = s.read(t, tn.read, params("resource", "clients", "filter_field", "id", "filter_value", linked))
	if n := r.json["pagination"].(map[string]any)["total"]; n != float64(1) {
		t.Fatalf("clients filtered by id: total %v", n)
	}

	wantStatus(t, s.adminCall(t, "DELETE", "/admin/v1/agencies/"+tn.agency+"/clients/"+later, nil), http.StatusOK)
	wantError(t, s.read(t, tn.read, params("resource", "reviews", "client_id", later)), http.StatusForbidden, "not linked")

	// Another agency's key never reads this agency's clients.
	other := s.newTenant(t)
	wantError(t, s.read(t, other.read, params("resource", "reviews", "client_id", linked)), http.StatusForbidden, "not linked")
	if r := s.read(t, other.read, params("resource", "clients")); len(r.json["data"].([]any)) != 0 {
		t.Fatalf("another agency sees clients: %s", r)
	}
	// A key bound to a site only is refused.
	siteOnly := s.newKey(t, map[string]any{"scopes": []string{"read"}, "site_id": tn.site})
	wantError(t, s.read(t, siteOnly, params("resource", "clients")), http.StatusForbidden, "agency")
}

// testDataCursor walks with cursors: the same rows as offset paging, each
// once; a cursor is refused for another query.
func testDataCursor(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	var rows []map[string]any
	for i := range 29 {
		row := map[string]any{"keyword": fmt.Sprint("k", i), "position": i % 3, "status": []string{"active", "paused"}[i%2]}
		if i%6 != 0 {
			row["tracked_at"] = fmt.Sprintf("2026-11-%02dT00:00:00Z", 1+i%4)
		}
		rows = append(rows, row)
	}
	s.loadRows(t, client, "keywords", rows...)
	for _, extra := range [][]string{{"order", "tracked_at"}, {"order", "tracked_at", "direction", "asc"}, {"filter_field", "status", "filter_value", "active"}} {
		base := append([]string{"resource", "keywords", "client_id", client}, extra...)
		all := s.read(t, tn.read, params(append(base, "limit", "1000")...))
		var want []string
		for _, d := range all.json["data"].([]any) {
			want = append(want, d.(map[string]any)["id"].(string))
		}
		var got []string
		cursor := ""
		for range 20 {
			q := params(append(base, "limit", "4")...)
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			r := s.read(t, tn.read, q)
			wantStatus(t, r, http.StatusOK)
			for _, d := range r.json["data"].([]any) {
				got = append(got, d.(map[string]any)["id"].(string))
			}
			p := r.json["pagination"].(map[string]any)
			next, _ := p["next_cursor"].(string)
			if p["has_more"] == false {
				if next != "" {
					t.Fatalf("last page carries a next_cursor: %s", r)
				}
				break
			}
			cursor = next
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%v: cursor walk %v\nwant %v", extra, got, want)
		}
	}
	first := s.read(t, tn.read, params("resource", "keywords", "client_id", client, "order", "tracked_at", "limit", "2"))
	cursor := first.json["pagination"].(map[string]any)["next_cursor"].(string)
	wantError(t, s.read(t, tn.read, params("resource", "keywords", "client_id", client, "order", "created_at", "limit", "2", "cursor", cursor)), http.StatusBadRequest, "cursor belongs to another query")
	wantError(t, s.read(t, tn.read, params("resource", "keywords", "client_id", client, "order", "tracked_at", "cursor", "garbage!")), http.StatusBadRequest, "cursor is malformed")
	wantError(t, s.read(t, tn.read, params("resource", "keywords", "client_id", client, "order", "tracked_at", "offset", "4", "cursor", cursor)), http.StatusBadRequest, "cursor and offset cannot be combined")

	// A forged cursor bound to the right query is checked field by field
	// before the store sees it: an id that is not a UUID, a key that is
	// not a value of the order field. Each was a 500 with PostgreSQL's
	// refusal in the log.
	forge := func(order string, key map[string]any) string {
		tok := map[string]any{"r": "keywords", "c": client, "o": order, "i": "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"}
		for k, v := range key {
			tok[k] = v
		}
		b, _ := json.Marshal(tok)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	for name, tc := range map[string]struct {
		order string
		tok   map[string]any
	}{
		"id not a UUID":          {"tracked_at", map[string]any{"t": "t", "k": "2026-11-01T00:00:00Z", "i": "not-a-uuid"}},
		"id with a NUL":          {"tracked_at", map[string]any{"i": "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0\x00"}},
		"timestamp key a string": {"tracked_at", map[string]any{"t": "s", "k": "yesterday"}},
		"timestamp key garbled":  {"tracked_at", map[string]any{"t": "t", "k": "2026-13-45T99:00:00Z"}},
		"id key not a UUID":      {"id", map[string]any{"t": "s", "k": "not-a-uuid"}},
		"date key a number":      {"created_at", map[string]any{"t": "n", "k": "1e400"}},
		"unknown key type":       {"created_at", map[string]any{"t": "x", "k": "1"}},
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, s.read(t, tn.read, params("resource", "keywords", "client_id", client, "order", tc.order, "cursor", forge(tc.order, tc.tok))),
				http.StatusBadRequest, "cursor is malformed")
		})
	}
	// A well-formed position is still a position, forged or not.
	wantStatus(t, s.read(t, tn.read, params("resource", "keywords", "client_id", client, "order", "id",
		"cursor", forge("id", map[string]any{"t": "s", "k": "0190B7A8-3C1E-7D2F-9A4B-5C6D7E8F9A0B"}))), http.StatusOK)
}

// testDataRowValues loads rows whose values a store cannot hold or that
// miss a required value: 400 naming the row and field, nothing written,
// through the admin API and the bulk loader alike.
func testDataRowValues(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	for name, tc := range map[string]struct {
		resource string
		row      map[string]any
		words    []string
	}{
		"NUL in a string": {"keywords", map[string]any{"keyword": "sour\x00dough"},
			[]string{"rows[0].keyword must be a string of at most 100,000 characters, without NUL characters (U+0000)"}},
		"NUL in json": {"seo_reports", map[string]any{"url": "https://bakery.example/", "issues": []any{map[string]any{"title": "\x00"}}},
			[]string{"rows[0].issues must be a JSON value of at most 200,000 bytes encoded, without NUL characters (U+0000)"}},
		"NUL in a filter key": {"keywords", map[string]any{"keyword": "k", "status": "a\x00"}, []string{"rows[0].status must be a string"}},
		"empty required":      {"keywords", map[string]any{"keyword": ""}, []string{"rows[0].keyword is required: a string"}},
		"blank required":      {"keywords", map[string]any{"keyword": "  "}, []string{"rows[0].keyword is required"}},
		"url with a space":    {"keywords", map[string]any{"keyword": "k", "url": "https://bakery.example/a b"}, []string{"rows[0].url must be an absolute http or https URL"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := s.adminCall(t, "POST", "/admin/v1/clients/"+client+"/datasets/"+tc.resource, map[string]any{"rows": []any{tc.row}})
			wantError(t, r, http.StatusBadRequest, tc.words...)
		})
	}
	path := t.TempDir() + "/rows.ndjson"
	if err := os.WriteFile(path, []byte(`{"keyword": "fine"}`+"\n"+`{"keyword": "sour\u0000dough"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	err := loadRows(t.Context(), []string{"--data-addr", s.dataAddr, "--client", client, "--resource", "keywords", path},
		func(k string) (string, bool) { return testInternalSecret, k == "ATRIUM_INTERNAL_SECRET" }, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "line 2: keyword must be a string") || !strings.Contains(err.Error(), "without NUL") {
		t.Fatalf("load-rows of a NUL: %v", err)
	}
	for _, res := range []string{"keywords", "seo_reports"} {
		if n := s.read(t, tn.read, params("resource", res, "client_id", client)).json["pagination"].(map[string]any)["total"]; n != float64(0) {
			t.Fatalf("refused loads left %v %s rows", n, res)
		}
	}
}

func testDataLoadUnknownClient(t *testing.T, s *stack) {
	wantError(t, s.adminCall(t, "POST", "/admin/v1/clients/01a20a25-01a4-78fc-a7f2-443c2935f15b/datasets/keywords",
		map[string]any{"rows": []any{map[string]any{"keyword": "x", "position": 1}}}), http.StatusNotFound, "client")
}

// testClientSettings changes a client's settings through the admin API and
// reads them back through resource=clients.
func testClientSettings(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	r := s.adminCall(t, "PATCH", "/admin/v1/clients/"+client, map[string]any{"status": "paused", "auto_deploy": true})
	wantStatus(t, r, http.StatusOK)
	c := r.json["client"].(map[string]any)
	if c["status"] != "paused" || c["auto_deploy"] != true || c["name"] == "" {
		t.Fatalf("updated client = %v", c)
	}
	wantError(t, s.adminCall(t, "PATCH", "/admin/v1/clients/"+client, map[string]any{"status": "gone"}), http.StatusBadRequest, "status must be one of: active, paused, archived")
	wantError(t, s.adminCall(t, "PATCH", "/admin/v1/clients/01a20a25-01a4-78fc-a7f2-443c2935f15b", map[string]any{"status": "paused"}), http.StatusNotFound, "client")
	r = s.read(t, tn.read, params("resource", "clients", "filter_field", "status", "filter_value", "paused"))
	d := r.json["data"].([]any)
	if len(d) != 1 || d[0].(map[string]any)["auto_deploy"] != true {
		t.Fatalf("clients with status=paused = %s", r)
	}
	// Settings kept when not given.
	r = s.adminCall(t, "PATCH", "/admin/v1/clients/"+client, map[string]any{"status": "active"})
	if c := r.json["client"].(map[string]any); c["auto_deploy"] != true || c["status"] != "active" {
		t.Fatalf("a status change reset auto_deploy: %v", c)
	}
}

// testBulkLoad streams NDJSON through `atrium load-rows`: batches commit
// as they fill, a bad line stops the load and says what was committed.
func testBulkLoad(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	write := func(n int, bad int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if i == bad {
				b.WriteString(`{"keyword": "broken", "position": "first"}` + "\n")
				continue
			}
			fmt.Fprintf(&b, `{"keyword": "kw %d", "position": %d, "status": "active", "tracked_at": "2026-11-20T08:00:00Z"}`+"\n", i, i%100)
		}
		path := t.TempDir() + "/rows.ndjson"
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	load := func(path string) (string, error) {
		var out, errOut strings.Builder
		err := loadRows(t.Context(), []string{"--data-addr", s.dataAddr, "--client", client, "--resource", "keywords", path},
			func(k string) (string, bool) {
				if k == "ATRIUM_INTERNAL_SECRET" {
					return testInternalSecret, true
				}
				return "", false
			}, &out, &errOut)
		return out.String(), err
	}
	out, err := load(write(12_000, 0))
	if err != nil || !strings.Contains(out, "loaded 12000 keywords rows") {
		t.Fatalf("load-rows = %q, %v", out, err)
	}
	total := func() float64 {
		return s.read(t, tn.read, params("resource", "keywords", "client_id", client)).json["pagination"].(map[string]any)["total"].(float64)
	}
	if n := total(); n != 12_000 {
		t.Fatalf("after the load, total %v", n)
	}
	_, err = load(write(7_000, 6_001))
	if err == nil || !strings.Contains(err.Error(), "line 6001") || !strings.Contains(err.Error(), "5000 rows committed before it") ||
		!strings.Contains(err.Error(), "position must be a number") {
		t.Fatalf("a bad line: %v", err)
	}
	if n := total(); n != 17_000 {
		t.Fatalf("after the stopped load, total %v; want the first load and the committed batch", n)
	}
}
