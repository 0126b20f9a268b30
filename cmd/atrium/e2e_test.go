package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The same end-to-end suite runs on the embedded defaults (memory store,
// embedded NATS) and on the production adapters (PostgreSQL, external
// NATS), driven over HTTP only, as a user would.

func TestEndToEndMemory(t *testing.T) {
	runSuite(t, func(t *testing.T, extra ...string) *stack { return startStack(t, extra...) })
}

func TestEndToEndPostgres(t *testing.T) {
	natsURL := natstest.URL(t)
	runSuite(t, func(t *testing.T, extra ...string) *stack {
		return startStack(t, append([]string{"--database-url=" + migratedDatabase(t), "--nats-url=" + natsURL}, extra...)...)
	})
}

func runSuite(t *testing.T, start func(t *testing.T, extra ...string) *stack) {
	s := start(t)
	tests := []struct {
		name string
		fn   func(*testing.T, *stack)
	}{
		{"CRMListShapes", testCRMListShapes},
		{"CRMOrderingAndPaging", testCRMOrderingAndPaging},
		{"CRMLimits", testCRMLimits},
		{"CRMTenancy", testCRMTenancy},
		{"Authentication", testAuthentication},
		{"ErrorContract", testErrorContract},
		{"AdminProvisioning", testAdminProvisioning},
		{"AdminValidation", testAdminValidation},
		{"EventsReachNATS", testEventsReachNATS},
		{"Probes", testProbes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, s)
		})
	}
	t.Run("RevocationIsPrompt", func(t *testing.T) {
		t.Parallel()
		// A long cache TTL: only the revocation event can make this prompt.
		testRevocationIsPrompt(t, start(t, "--key-cache-ttl=1m"))
	})
}

// tenant is an agency with a member, a site and keys, made through the
// admin API.
type tenant struct {
	agency, member, site string
	read, write          string // API keys
}

func (s *stack) adminCall(t testing.TB, method, path string, body any) response {
	t.Helper()
	return call(t, method, s.admin+path, testAdminToken, body)
}

// create POSTs to the admin API and returns the object under key.
func (s *stack) create(t testing.TB, path, key string, body any) map[string]any {
	t.Helper()
	r := s.adminCall(t, "POST", path, body)
	wantStatus(t, r, http.StatusCreated)
	obj, ok := r.json[key].(map[string]any)
	if !ok {
		t.Fatalf("POST %s: no %q object in %s", path, key, r.body)
	}
	return obj
}

func (s *stack) newKey(t testing.TB, body map[string]any) string {
	t.Helper()
	body["name"] = "test key"
	return s.create(t, "/admin/v1/keys", "key", body)["secret"].(string)
}

func (s *stack) newTenant(t testing.TB) tenant {
	t.Helper()
	var tn tenant
	tn.agency = s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Agency " + t.Name()})["id"].(string)
	tn.member = s.create(t, "/admin/v1/agencies/"+tn.agency+"/members", "member", map[string]any{"name": "Ana", "email": "ana@example.com"})["id"].(string)
	tn.site = s.create(t, "/admin/v1/sites", "site", map[string]any{"name": "Site"})["id"].(string)
	tn.read = s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": tn.agency, "site_id": tn.site})
	tn.write = s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency, "site_id": tn.site})
	return tn
}

func (s *stack) newProspect(t testing.TB, tn tenant, name string) map[string]any {
	t.Helper()
	return s.create(t, "/admin/v1/agencies/"+tn.agency+"/prospects", "prospect", map[string]any{
		"business_name": name, "website_url": "https://" + strings.ToLower(strings.ReplaceAll(name, " ", "-")) + ".example/home",
	})
}

func (s *stack) list(t *testing.T, path, key string) []map[string]any {
	t.Helper()
	r := call(t, "GET", s.api+path, key, nil)
	wantStatus(t, r, http.StatusOK)
	if len(r.json) != 1 {
		t.Fatalf("GET %s: top-level keys %v, want only data", path, slices.Collect(maps.Keys(r.json)))
	}
	raw, ok := r.json["data"].([]any)
	if !ok {
		t.Fatalf("GET %s: data is not an array: %s", path, r.body)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

func ids(rows []map[string]any) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r["id"].(string))
	}
	return out
}

var (
	timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$`)
	dateRE      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

func wantKeys(t *testing.T, obj map[string]any, keys ...string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(obj))
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Fatalf("fields = %v, want exactly %v", got, keys)
	}
}

func wantTimestamp(t *testing.T, obj map[string]any, field string) {
	t.Helper()
	if s, ok := obj[field].(string); !ok || !timestampRE.MatchString(s) {
		t.Fatalf("%s = %#v, want an ISO 8601 UTC timestamp ending in Z", field, obj[field])
	}
}

func testCRMListShapes(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	created := s.create(t, "/admin/v1/agencies/"+tn.agency+"/prospects", "prospect", map[string]any{
		"business_name": "Green Leaf Cafe", "website_url": "https://www.GreenLeaf.example/menu", "industry": "restaurants",
		"health_score": 64.5, "lead_score": 81, "pipeline_stage": "qualified",
	})
	ps := s.list(t, "/api/v1/prospects", tn.read)
	if len(ps) != 1 {
		t.Fatalf("prospects = %d, want 1", len(ps))
	}
	p := ps[0]
	wantKeys(t, p, "id", "business_name", "website_url", "domain", "industry", "health_score", "lead_score", "pipeline_stage", "created_at", "updated_at")
	want := map[string]any{
		"id": created["id"], "business_name": "Green Leaf Cafe", "website_url": "https://www.GreenLeaf.example/menu",
		"domain": "www.greenleaf.example", "industry": "restaurants", "health_score": 64.5, "lead_score": 81.0, "pipeline_stage": "qualified",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("prospect %s = %#v, want %#v", k, p[k], v)
		}
	}
	wantTimestamp(t, p, "created_at")
	wantTimestamp(t, p, "updated_at")

	s.create(t, "/admin/v1/agencies/"+tn.agency+"/deals", "deal", map[string]any{
		"owner_member_id": tn.member, "title": "Local SEO retainer", "stage": "proposal", "value": 1800.25,
		"currency": "usd", "expected_close_date": "2027-01-31",
	})
	s.create(t, "/admin/v1/agencies/"+tn.agency+"/deals", "deal", map[string]any{
		"owner_member_id": tn.member, "title": "Audit", "stage": "won", "value": 650, "currency": "EUR", "expected_close_date": "2026-10-01",
	})
	ds := s.list(t, "/api/v1/deals", tn.read)
	if len(ds) != 2 {
		t.Fatalf("deals = %d, want 2", len(ds))
	}
	for _, d := range ds {
		wantKeys(t, d, "id", "title", "stage", "value", "currency", "expected_close_date", "closed_at", "created_at", "updated_at")
		wantTimestamp(t, d, "created_at")
		if !dateRE.MatchString(d["expected_close_date"].(string)) {
			t.Errorf("expected_close_date = %v, want YYYY-MM-DD", d["expected_close_date"])
		}
	}
	won, open := ds[0], ds[1] // most recently updated first
	if won["title"] != "Audit" || won["value"] != 650.0 || won["currency"] != "EUR" {
		t.Errorf("won deal = %v", won)
	}
	wantTimestamp(t, won, "closed_at")
	if v, present := open["closed_at"]; !present || v != nil {
		t.Errorf("open deal closed_at = %#v (present %v), want null", v, present)
	}
	if open["value"] != 1800.25 || open["currency"] != "USD" || open["expected_close_date"] != "2027-01-31" {
		t.Errorf("open deal = %v", open)
	}
}

func testCRMOrderingAndPaging(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	var made []string
	for i := range 5 {
		made = append(made, s.newProspect(t, tn, fmt.Sprint("Prospect ", i))["id"].(string))
	}
	// Newest update first: creation order reversed.
	want := slices.Clone(made)
	slices.Reverse(want)
	if got := ids(s.list(t, "/api/v1/prospects", tn.read)); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	// Updating the oldest moves it to the front.
	r := s.adminCall(t, "PATCH", "/admin/v1/agencies/"+tn.agency+"/prospects/"+made[0], map[string]any{"pipeline_stage": "contacted"})
	wantStatus(t, r, http.StatusOK)
	if r.json["prospect"].(map[string]any)["pipeline_stage"] != "contacted" {
		t.Fatalf("PATCH response = %s", r.body)
	}
	want = append([]string{made[0]}, want[:4]...)
	full := ids(s.list(t, "/api/v1/prospects", tn.read))
	if !slices.Equal(full, want) {
		t.Fatalf("order after update = %v, want %v", full, want)
	}
	// Pages of two, walked by offset, give the full list exactly once.
	var paged []string
	for off := 0; ; off += 2 {
		page := ids(s.list(t, fmt.Sprintf("/api/v1/prospects?limit=2&offset=%d", off), tn.read))
		paged = append(paged, page...)
		if len(page) < 2 {
			break
		}
	}
	if !slices.Equal(paged, full) {
		t.Fatalf("paged = %v, want %v", paged, full)
	}

	// Deals too: an update moves a deal first, and closing it sets closed_at.
	d1 := s.create(t, "/admin/v1/agencies/"+tn.agency+"/deals", "deal", map[string]any{"owner_member_id": tn.member, "title": "A", "currency": "USD", "expected_close_date": "2027-01-01"})
	d2 := s.create(t, "/admin/v1/agencies/"+tn.agency+"/deals", "deal", map[string]any{"owner_member_id": tn.member, "title": "B", "currency": "USD", "expected_close_date": "2027-01-01"})
	if got := ids(s.list(t, "/api/v1/deals", tn.read)); !slices.Equal(got, []string{d2["id"].(string), d1["id"].(string)}) {
		t.Fatalf("deal order = %v", got)
	}
	r = s.adminCall(t, "PATCH", "/admin/v1/agencies/"+tn.agency+"/deals/"+d1["id"].(string), map[string]any{"stage": "lost"})
	wantStatus(t, r, http.StatusOK)
	ds := s.list(t, "/api/v1/deals", tn.read)
	if ds[0]["id"] != d1["id"] || ds[0]["stage"] != "lost" || ds[0]["closed_at"] == nil {
		t.Fatalf("after closing, deals = %v", ds)
	}
	r = s.adminCall(t, "PATCH", "/admin/v1/agencies/"+tn.agency+"/deals/"+d1["id"].(string), map[string]any{"stage": "negotiation"})
	wantStatus(t, r, http.StatusOK)
	if v := r.json["deal"].(map[string]any)["closed_at"]; v != nil {
		t.Fatalf("reopened deal closed_at = %v, want null", v)
	}
}

func testCRMLimits(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	for i := range 205 {
		s.newProspect(t, tn, fmt.Sprint("P ", i))
	}
	for _, tc := range []struct {
		query string
		want  int
	}{{"", 50}, {"?limit=7", 7}, {"?limit=200", 200}, {"?limit=201", 200}, {"?limit=100000", 200}, {"?limit=200&offset=200", 5}, {"?offset=500", 0}} {
		if got := len(s.list(t, "/api/v1/prospects"+tc.query, tn.read)); got != tc.want {
			t.Errorf("GET /api/v1/prospects%s returned %d records, want %d", tc.query, got, tc.want)
		}
	}
	for _, q := range []string{"limit=0", "limit=-1", "limit=abc", "limit=1.5", "limit=", "limit=99999999999", "offset=-1", "offset=x"} {
		for _, path := range []string{"/api/v1/prospects?", "/api/v1/deals?"} {
			name := strings.Split(q, "=")[0]
			wantError(t, call(t, "GET", s.api+path+q, tn.read, nil), http.StatusBadRequest, name)
		}
	}
	wantError(t, call(t, "GET", s.api+"/api/v1/deals?limit=1&limit=2", tn.read, nil), http.StatusBadRequest, "limit")
	wantError(t, call(t, "GET", s.api+"/api/v1/deals?limt=5", tn.read, nil), http.StatusBadRequest, "limt", "allowed: limit, offset")
}

func testCRMTenancy(t *testing.T, s *stack) {
	a, b := s.newTenant(t), s.newTenant(t)
	pa := s.newProspect(t, a, "Alpha Co")
	pb := s.newProspect(t, b, "Beta Co")
	s.create(t, "/admin/v1/agencies/"+a.agency+"/deals", "deal", map[string]any{"owner_member_id": a.member, "title": "A deal", "currency": "USD", "expected_close_date": "2027-01-01"})

	if got := ids(s.list(t, "/api/v1/prospects", a.read)); !slices.Equal(got, []string{pa["id"].(string)}) {
		t.Fatalf("agency A sees prospects %v", got)
	}
	if got := ids(s.list(t, "/api/v1/prospects", b.read)); !slices.Equal(got, []string{pb["id"].(string)}) {
		t.Fatalf("agency B sees prospects %v", got)
	}
	if got := s.list(t, "/api/v1/deals", b.read); len(got) != 0 {
		t.Fatalf("agency B sees agency A's deals: %v", got)
	}
	// Another tenant's ids through the admin paths of the wrong agency.
	wantError(t, s.adminCall(t, "PATCH", "/admin/v1/agencies/"+b.agency+"/prospects/"+pa["id"].(string), map[string]any{"lead_score": 1}), http.StatusNotFound, "not found")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+b.agency+"/deals", map[string]any{
		"owner_member_id": a.member, "title": "Poach", "currency": "USD", "expected_close_date": "2027-01-01",
	}), http.StatusBadRequest, "owner_member_id", "not a member")
	// A client-sent principal header is not forwarded: B's key still reads
	// B's data, and no gRPC metadata comes back.
	req, _ := http.NewRequest("GET", s.api+"/api/v1/prospects", nil)
	req.Header.Set("Authorization", "Bearer "+b.read)
	req.Header.Set("Grpc-Metadata-X-Atrium-Principal", `{"kind":"key","agency_id":"`+a.agency+`"}`)
	req.Header.Set("Grpc-Metadata-Authorization", "Bearer "+a.read)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Data []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("spoofed request: %d %v", resp.StatusCode, err)
	}
	if got := ids(body.Data); !slices.Equal(got, []string{pb["id"].(string)}) {
		t.Fatalf("spoofed principal header changed the tenant: got %v", got)
	}
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "grpc-") {
			t.Fatalf("response carries gRPC header %s", k)
		}
	}
}

func testAuthentication(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	url := s.api + "/api/v1/prospects"
	get := func(header string) response {
		req, _ := http.NewRequest("GET", url, nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r response
		r.status, r.header = resp.StatusCode, resp.Header
		_ = json.NewDecoder(resp.Body).Decode(&r.json)
		r.body, _ = json.Marshal(r.json)
		return r
	}
	wantError(t, get(""), http.StatusUnauthorized, "missing API key")
	wantError(t, get("Basic dXNlcjpwYXNz"), http.StatusUnauthorized, "Bearer")
	wantError(t, get("Bearer"), http.StatusUnauthorized, "Bearer")
	wantError(t, get("Bearer not-a-key"), http.StatusUnauthorized, "malformed API key")
	wantError(t, get("Bearer atr_"+strings.Repeat("A", 43)), http.StatusUnauthorized, "invalid API key")
	if r := get("Bearer " + tn.read); r.status != 200 {
		t.Fatalf("valid key: %s", r)
	}
	if r := get("bearer " + tn.read); r.status != 200 {
		t.Fatalf("scheme is case-insensitive, got %s", r)
	}
	if r := get(""); r.header.Get("WWW-Authenticate") == "" {
		t.Fatal("401 without WWW-Authenticate")
	}

	// Scope: GET needs read.
	writeOnly := s.newKey(t, map[string]any{"scopes": []string{"write"}, "agency_id": tn.agency})
	wantError(t, call(t, "GET", url, writeOnly, nil), http.StatusForbidden, "read scope")
	// Binding: the CRM needs an agency-bound key.
	siteOnly := s.newKey(t, map[string]any{"scopes": []string{"read"}, "site_id": tn.site})
	wantError(t, call(t, "GET", url, siteOnly, nil), http.StatusForbidden, "agency")

	// Expiry.
	exp := time.Now().Add(3 * time.Second)
	short := s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": tn.agency, "expires_at": exp.UTC().Format(time.RFC3339Nano)})
	wantStatus(t, call(t, "GET", url, short, nil), http.StatusOK)
	time.Sleep(time.Until(exp) + 100*time.Millisecond)
	wantError(t, call(t, "GET", url, short, nil), http.StatusUnauthorized, "expired")

	// Revocation (the default cache TTL is seconds; poll until it applies).
	doomed := s.createKeyWithID(t, tn)
	wantStatus(t, call(t, "GET", url, doomed.secret, nil), http.StatusOK)
	r := s.adminCall(t, "DELETE", "/admin/v1/keys/"+doomed.id, nil)
	wantStatus(t, r, http.StatusOK)
	if r.json["key"].(map[string]any)["revoked_at"] == nil {
		t.Fatalf("revoke response has no revoked_at: %s", r.body)
	}
	eventually(t, 10*time.Second, func() bool { return call(t, "GET", url, doomed.secret, nil).status == http.StatusUnauthorized })
	wantError(t, call(t, "GET", url, doomed.secret, nil), http.StatusUnauthorized, "revoked")

	// Admin token.
	wantError(t, call(t, "POST", s.admin+"/admin/v1/agencies", "", map[string]any{"name": "x"}), http.StatusUnauthorized, "admin token")
	wantError(t, call(t, "POST", s.admin+"/admin/v1/agencies", "wrong-token-wrong-token", map[string]any{"name": "x"}), http.StatusUnauthorized, "invalid admin token")
	wantError(t, call(t, "POST", s.admin+"/admin/v1/agencies", tn.write, map[string]any{"name": "x"}), http.StatusUnauthorized, "invalid admin token")
	// The admin API is not on the public listener, and API keys do not
	// reach it there either.
	wantError(t, call(t, "POST", s.api+"/admin/v1/agencies", testAdminToken, map[string]any{"name": "x"}), http.StatusNotFound)
	wantError(t, call(t, "GET", s.admin+"/api/v1/prospects", tn.read, nil), http.StatusNotFound)
}

type issuedKey struct{ id, secret string }

func (s *stack) createKeyWithID(t *testing.T, tn tenant) issuedKey {
	t.Helper()
	k := s.create(t, "/admin/v1/keys", "key", map[string]any{"name": "doomed", "scopes": []string{"read"}, "agency_id": tn.agency})
	return issuedKey{id: k["id"].(string), secret: k["secret"].(string)}
}

func eventually(t *testing.T, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func testRevocationIsPrompt(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	k := s.createKeyWithID(t, tn)
	url := s.api + "/api/v1/prospects"
	wantStatus(t, call(t, "GET", url, k.secret, nil), http.StatusOK) // now cached for a minute
	wantStatus(t, s.adminCall(t, "DELETE", "/admin/v1/keys/"+k.id, nil), http.StatusOK)
	eventually(t, 10*time.Second, func() bool { return call(t, "GET", url, k.secret, nil).status == http.StatusUnauthorized })
}

func testErrorContract(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	wantError(t, call(t, "GET", s.api+"/api/v1/nothing-here", tn.read, nil), http.StatusNotFound, "no route", "/api/v1/nothing-here")
	wantError(t, call(t, "GET", s.api+"/", tn.read, nil), http.StatusNotFound)
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		r := call(t, m, s.api+"/api/v1/prospects", tn.write, nil)
		wantError(t, r, http.StatusMethodNotAllowed, m, "allowed: GET")
		if r.header.Get("Allow") != "GET" {
			t.Fatalf("%s: Allow = %q, want GET", m, r.header.Get("Allow"))
		}
	}
	wantError(t, call(t, "DELETE", s.api+"/api/v1/deals", "", nil), http.StatusMethodNotAllowed)
	wantError(t, s.adminCall(t, "GET", "/admin/v1/agencies", nil), http.StatusMethodNotAllowed, "allowed: POST")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `{"name": `), http.StatusBadRequest, "not valid JSON")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `["a"]`), http.StatusBadRequest, "request body")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `{"name": 42}`), http.StatusBadRequest, "name")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `{"nmae": "x"}`), http.StatusBadRequest, `unknown field "nmae"`, "allowed fields: name")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+tn.agency+"/members", `{"name":"x","email":"a@b.example","agency_id":"x","role":"y"}`), http.StatusBadRequest, `"role"`, "allowed fields: name, email")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", strings.Repeat(" ", 2<<20)), http.StatusRequestEntityTooLarge, "too large")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies?name=x", map[string]any{"name": "y"}), http.StatusBadRequest, "takes no query parameters")

	// net/http's own errors, raised before any handler, are JSON too.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.api, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/v1/%%zz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 400 || body["error"] == nil {
		t.Fatalf("bad escape: %d %v %v", resp.StatusCode, body, err)
	}

	// The OpenAPI documents: snake_case, and each listener shows only its own routes.
	doc := call(t, "GET", s.api+"/openapi.json", "", nil)
	wantStatus(t, doc, http.StatusOK)
	paths := doc.json["paths"].(map[string]any)
	if _, ok := paths["/api/v1/prospects"]; !ok {
		t.Fatalf("public OpenAPI lacks /api/v1/prospects: %v", slices.Collect(maps.Keys(paths)))
	}
	for p := range paths {
		if strings.HasPrefix(p, "/admin") {
			t.Fatalf("public OpenAPI shows admin route %s", p)
		}
	}
	if !strings.Contains(string(doc.body), `"business_name"`) || strings.Contains(string(doc.body), `"businessName"`) {
		t.Fatal("public OpenAPI does not use snake_case field names")
	}
	adminDoc := call(t, "GET", s.admin+"/openapi.json", "", nil)
	wantStatus(t, adminDoc, http.StatusOK)
	if _, ok := adminDoc.json["paths"].(map[string]any)["/admin/v1/keys"]; !ok {
		t.Fatal("admin OpenAPI lacks /admin/v1/keys")
	}
}

func testProbes(t *testing.T, s *stack) {
	wantStatus(t, call(t, "GET", s.admin+"/healthz", "", nil), http.StatusOK)
	r := call(t, "GET", s.admin+"/readyz", "", nil)
	wantStatus(t, r, http.StatusOK)
	checks := r.json["checks"].(map[string]any)
	for _, svc := range []string{"crm", "collections", "data", "actions"} {
		if checks[svc] != "SERVING" {
			t.Fatalf("readyz %s = %v", svc, checks[svc])
		}
	}
	// Probes live on the admin listener only.
	wantStatus(t, call(t, "GET", s.api+"/healthz", "", nil), http.StatusNotFound)
}

func testEventsReachNATS(t *testing.T, s *stack) {
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("atrium.crm.agency.created")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	id := s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Evented"})["id"].(string)
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("no agency.created event for %s: %v", id, err)
		}
		var ev struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(msg.Data, &ev) == nil && ev.ID == id {
			return
		}
	}
}

// TestServeMigratesOnlyWhenAsked starts on an empty database: without
// --migrate the start stops with advice, with it the schemas are created and
// the stack works; `atrium migrate` then has nothing left to do.
func TestServeMigratesOnlyWhenAsked(t *testing.T) {
	url := pgtest.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	natsURL := natstest.URL(t)
	cfg, err := parseServe([]string{"--http-addr=127.0.0.1:0", "--admin-addr=127.0.0.1:0",
		"--collections-grpc-addr=127.0.0.1:0", "--crm-grpc-addr=127.0.0.1:0", "--data-grpc-addr=127.0.0.1:0",
		"--actions-grpc-addr=127.0.0.1:0", "--database-url=" + url, "--nats-url=" + natsURL},
		func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = serve(t.Context(), *cfg, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "atrium migrate") || !strings.Contains(err.Error(), "--migrate") {
		t.Fatalf("serve on an unmigrated database = %v, want advice to run atrium migrate or pass --migrate", err)
	}

	s := startStack(t, "--database-url="+url, "--nats-url="+natsURL, "--migrate")
	tn := s.newTenant(t)
	s.newProspect(t, tn, "Migrated Co")
	if n := len(s.list(t, "/api/v1/prospects", tn.read)); n != 1 {
		t.Fatalf("prospects = %d", n)
	}
	var out strings.Builder
	if err := migrate(t.Context(), []string{"--database-url", url}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "schema crm") || !strings.Contains(out.String(), "applied now: []") {
		t.Fatalf("atrium migrate after --migrate printed:\n%s", out.String())
	}
}
