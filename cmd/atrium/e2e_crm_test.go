package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The CRM lists over HTTP: shapes, ordering, paging, limits and tenancy.

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
	}{{"", 50}, {"?limit=7", 7}, {"?limit=200", 200}, {"?limit=201", 200}, {"?limit=100000", 200}, {"?limit=99999999999", 200},
		{"?limit=200&offset=200", 5}, {"?offset=500", 0}, {"?offset=99999999999", 0}} {
		if got := len(s.list(t, "/api/v1/prospects"+tc.query, tn.read)); got != tc.want {
			t.Errorf("GET /api/v1/prospects%s returned %d records, want %d", tc.query, got, tc.want)
		}
	}
	for _, q := range []string{"limit=0", "limit=-1", "limit=abc", "limit=1.5", "limit=", "limit=-99999999999", "offset=-1", "offset=x", "offset=-99999999999"} {
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
