package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Authentication over HTTP: keys, scopes, bindings, expiry and revocation.

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

	// Expiry: a key works until its expires_at, then is refused. The key
	// lives a quarter of a second; a machine too busy to use it in that
	// time tries again with a key that lives twice as long.
	for life := 250 * time.Millisecond; ; life *= 2 {
		exp := time.Now().Add(life)
		short := s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": tn.agency, "expires_at": exp.UTC().Format(time.RFC3339Nano)})
		r := call(t, "GET", url, short, nil)
		if r.status == http.StatusUnauthorized && time.Now().After(exp) && life < 8*time.Second {
			continue
		}
		wantStatus(t, r, http.StatusOK)
		// The gateway, in this process or another, reads the same clock.
		time.Sleep(time.Until(exp) + 5*time.Millisecond) // why sleep: expiry is the gateway's wall clock, not something a test can signal
		wantError(t, call(t, "GET", url, short, nil), http.StatusUnauthorized, "expired")
		break
	}

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
	wantError(t, call(t, "POST", s.admin+"/admin/v1/agencies", tn.write, map[string]any{"name": "x"}), http.StatusUnauthorized, "invalid admin token", "looks like an API key")
	// The admin token on the public API: told what it is and where it
	// belongs, the same whether or not it is this deployment's.
	for _, token := range []string{testAdminToken, "adm_" + strings.Repeat("0", 48)} {
		wantError(t, call(t, "GET", url, token, nil), http.StatusUnauthorized, "this is an admin token", "admin listener", "API key")
	}
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

func testRevocationIsPrompt(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	k := s.createKeyWithID(t, tn)
	url := s.api + "/api/v1/prospects"
	wantStatus(t, call(t, "GET", url, k.secret, nil), http.StatusOK) // now cached for a minute
	wantStatus(t, s.adminCall(t, "DELETE", "/admin/v1/keys/"+k.id, nil), http.StatusOK)
	eventually(t, 10*time.Second, func() bool { return call(t, "GET", url, k.secret, nil).status == http.StatusUnauthorized })
}
