package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The error contract and the probes, as any client meets them.

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
	wantError(t, s.adminCall(t, "DELETE", "/admin/v1/agencies", nil), http.StatusMethodNotAllowed, "allowed: GET, POST")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `{"name": `), http.StatusBadRequest, "not valid JSON")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `["a"]`), http.StatusBadRequest, "request body")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `{"name": 42}`), http.StatusBadRequest, "name")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `{"nmae": "x"}`), http.StatusBadRequest, `unknown field "nmae"`, "allowed fields: name")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+tn.agency+"/members", `{"name":"x","email":"a@b.example","agency_id":"x","nickname":"y"}`), http.StatusBadRequest, `"nickname"`, "allowed fields: name, email, role, site_ids, client_id")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", strings.Repeat(" ", 2<<20)), http.StatusRequestEntityTooLarge, "too large")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies?name=x", map[string]any{"name": "y"}), http.StatusBadRequest, "takes no query parameters")

	// Invalid UTF-8, once percent-decoded, is refused before any service
	// sees it, with a 400 naming the parameter.
	wantError(t, s.adminCall(t, "GET", "/admin/v1/sites/%ff", nil), http.StatusBadRequest, "site_id", "UTF-8")
	wantError(t, s.adminCall(t, "GET", "/admin/v1/keys?site_id=%ff", nil), http.StatusBadRequest, "site_id", "UTF-8")
	wantError(t, s.adminCall(t, "GET", "/admin/v1/keys?agency_id=%c3%28", nil), http.StatusBadRequest, "agency_id", "UTF-8")
	wantStatus(t, call(t, "GET", s.api+"/api/v1/prospects?limit=99999999999999999999", tn.read, nil), http.StatusOK) // capped, like any large limit
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", `{"name":"\ud800"}`), http.StatusBadRequest, "surrogate", "line 1")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies", "{\"name\":\"\xff\"}"), http.StatusBadRequest, "request body")
	for _, r := range []response{
		s.adminCall(t, "POST", "/admin/v1/agencies", `{"name":"\ud800"}`),
		s.adminCall(t, "POST", "/admin/v1/agencies", `{"name": `),
	} {
		if strings.Contains(string(r.body), "proto:") || strings.Contains(string(r.body), "unexpected EOF") {
			t.Fatalf("error shows a library's wording: %s", r)
		}
	}

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
	defer resp.Body.Close()
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
