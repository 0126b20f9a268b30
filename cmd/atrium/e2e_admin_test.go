package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }

func testAdminProvisioning(t *testing.T, s *stack) {
	site := s.create(t, "/admin/v1/sites", "site", map[string]any{"name": "  Bakery blog  "})
	wantKeys(t, site, "id", "name", "created_at", "updated_at", "allowed_origins", "agency_id", "client_id", "default_locale", "locales")
	if site["agency_id"] != nil || site["client_id"] != nil {
		t.Fatalf("a site created without an owner: agency_id %v, client_id %v, want null", site["agency_id"], site["client_id"])
	}
	if site["name"] != "Bakery blog" {
		t.Fatalf("site name = %q, want trimmed", site["name"])
	}
	got := s.adminCall(t, "GET", "/admin/v1/sites/"+site["id"].(string), nil)
	wantStatus(t, got, http.StatusOK)

	agency := s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Northwind"})
	wantKeys(t, agency, "id", "name", "created_at", "updated_at")
	aid := agency["id"].(string)

	member := s.create(t, "/admin/v1/agencies/"+aid+"/members", "member", map[string]any{"name": "Ana", "email": "Ana@Example.com"})
	wantKeys(t, member, "id", "agency_id", "name", "email", "created_at", "updated_at", "role", "site_ids", "client_id", "status", "user_id")
	// Without a role, a member is a deals' owner who does not sign in.
	if member["email"] != "ana@example.com" || member["agency_id"] != aid || member["role"] != nil || member["status"] != "none" {
		t.Fatalf("member = %v", member)
	}
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+aid+"/members", map[string]any{"name": "Ana 2", "email": "ana@example.com"}),
		http.StatusConflict, "ana@example.com")

	client := s.create(t, "/admin/v1/clients", "client", map[string]any{"name": "Sunrise Bakery", "domain": "Sunrise-Bakery.example"})
	wantKeys(t, client, "id", "name", "domain", "status", "auto_deploy", "created_at", "updated_at")
	if client["status"] != "active" || client["domain"] != "sunrise-bakery.example" || client["auto_deploy"] != false {
		t.Fatalf("client = %v", client)
	}
	cid := client["id"].(string)
	link := s.adminCall(t, "PUT", "/admin/v1/agencies/"+aid+"/clients/"+cid, nil)
	wantStatus(t, link, http.StatusOK)
	again := s.adminCall(t, "PUT", "/admin/v1/agencies/"+aid+"/clients/"+cid, nil)
	wantStatus(t, again, http.StatusOK)
	if link.json["link"].(map[string]any)["created_at"] != again.json["link"].(map[string]any)["created_at"] {
		t.Fatal("linking twice changed the link")
	}
	unlink := s.adminCall(t, "DELETE", "/admin/v1/agencies/"+aid+"/clients/"+cid, nil)
	wantStatus(t, unlink, http.StatusOK)
	if unlink.json["ok"] != true {
		t.Fatalf("unlink = %s", unlink.body)
	}
	wantError(t, s.adminCall(t, "DELETE", "/admin/v1/agencies/"+aid+"/clients/"+cid, nil), http.StatusNotFound, "not linked")

	key := s.create(t, "/admin/v1/keys", "key", map[string]any{"name": "ci", "scopes": []string{"write", "read", "read"}, "agency_id": aid})
	wantKeys(t, key, "id", "name", "prefix", "scopes", "site_id", "agency_id", "expires_at", "revoked_at", "created_at", "secret")
	secret := key["secret"].(string)
	if !strings.HasPrefix(secret, "atr_") || len(secret) != 47 || !strings.HasPrefix(secret, key["prefix"].(string)) {
		t.Fatalf("secret %q / prefix %q", secret, key["prefix"])
	}
	if sc := key["scopes"].([]any); len(sc) != 2 || sc[0] != "read" || sc[1] != "write" {
		t.Fatalf("scopes = %v, want [read write]", sc)
	}
	if key["site_id"] != nil || key["expires_at"] != nil || key["revoked_at"] != nil {
		t.Fatalf("unset key fields must be null: %v", key)
	}
	list := s.adminCall(t, "GET", "/admin/v1/keys?agency_id="+aid, nil)
	wantStatus(t, list, http.StatusOK)
	keys := list.json["keys"].([]any)
	if len(keys) != 1 {
		t.Fatalf("keys of agency = %d, want 1", len(keys))
	}
	if _, shown := keys[0].(map[string]any)["secret"]; shown || strings.Contains(string(list.body), secret) {
		t.Fatal("key list shows the secret")
	}
	revoked := s.adminCall(t, "DELETE", "/admin/v1/keys/"+key["id"].(string), nil)
	wantStatus(t, revoked, http.StatusOK)
	again = s.adminCall(t, "DELETE", "/admin/v1/keys/"+key["id"].(string), nil)
	wantStatus(t, again, http.StatusOK)
	if revoked.json["key"].(map[string]any)["revoked_at"] != again.json["key"].(map[string]any)["revoked_at"] {
		t.Fatal("revoking twice changed revoked_at")
	}

	p := s.create(t, "/admin/v1/agencies/"+aid+"/prospects", "prospect", map[string]any{"business_name": "Peak Fitness", "website_url": "http://peak.example:8080/x"})
	if p["domain"] != "peak.example" || p["pipeline_stage"] != "new" || p["health_score"] != 0.0 {
		t.Fatalf("prospect defaults = %v", p)
	}
	d := s.create(t, "/admin/v1/agencies/"+aid+"/deals", "deal", map[string]any{
		"owner_member_id": member["id"], "title": "Retainer", "stage": "won", "value": 10, "currency": "gbp",
		"expected_close_date": "2026-01-15", "closed_at": "2026-01-10T12:00:00Z",
	})
	if d["closed_at"] != "2026-01-10T12:00:00Z" || d["currency"] != "GBP" {
		t.Fatalf("deal = %v", d)
	}
}

func testAdminValidation(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	ag := "/admin/v1/agencies/" + tn.agency
	unknown := "01a201ca-0000-7000-8000-000000000000"
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	cases := []struct {
		method, path string
		body         any
		status       int
		words        []string
	}{
		{"POST", "/admin/v1/sites", map[string]any{}, 400, []string{"name is required"}},
		{"POST", "/admin/v1/sites", map[string]any{"name": strings.Repeat("x", 201)}, 400, []string{"at most 200"}},
		{"GET", "/admin/v1/sites/" + unknown, nil, 404, []string{"site"}},
		{"GET", "/admin/v1/sites/not-a-uuid", nil, 404, []string{"not-a-uuid"}},
		{"POST", "/admin/v1/agencies", map[string]any{"name": "  "}, 400, []string{"name is required"}},
		{"POST", "/admin/v1/agencies", map[string]any{"name": "a\x00b"}, 400, []string{"name must be a string of at most 200 characters, on one line without control characters"}},
		// Text PostgreSQL cannot hold (NUL) and what a mail relay cannot
		// take, in every kind of CRM write: 400 naming the field.
		{"POST", "/admin/v1/sites", map[string]any{"name": "a\x00b"}, 400, []string{"name must be a string"}},
		{"POST", ag + "/members", map[string]any{"name": "A\x00", "email": "a@b.example"}, 400, []string{"name must be a string"}},
		{"POST", ag + "/members", map[string]any{"name": "A", "email": "a\x00@b.example"}, 400, []string{"email must be an email address"}},
		{"POST", ag + "/members", map[string]any{"name": "A", "email": "josé@b.example"}, 400, []string{"email must be an email address", "ASCII"}},
		{"POST", ag + "/members", map[string]any{"name": "A", "email": "bob@[127.0.0.1]"}, 400, []string{"email must be an email address", "at a domain name"}},
		{"POST", "/admin/v1/clients", map[string]any{"name": "C", "domain": "c\x00.example"}, 400, []string{"domain must be a host name"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k\x00", "scopes": []string{"read"}, "agency_id": tn.agency}, 400, []string{"name must be a string"}},
		{"POST", ag + "/prospects", map[string]any{"business_name": "A\x00", "website_url": "https://a.example"}, 400, []string{"business_name must be a string"}},
		{"POST", ag + "/prospects", map[string]any{"business_name": "A", "website_url": "https://a.example/\x00"}, 400, []string{"website_url must be an absolute http or https URL"}},
		{"POST", ag + "/prospects", map[string]any{"business_name": "A", "website_url": "https://a.example", "industry": "\x00"}, 400, []string{"industry must be a string"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D\x00", "currency": "USD", "expected_close_date": "2027-01-01"}, 400, []string{"title must be a string"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D", "currency": "U\x00D", "expected_close_date": "2027-01-01"}, 400, []string{"currency"}},
		{"POST", "/admin/v1/agencies/" + unknown + "/members", map[string]any{"name": "A", "email": "a@b.example"}, 404, []string{"agency"}},
		{"POST", "/admin/v1/agencies/nope/members", map[string]any{"name": "A", "email": "a@b.example"}, 404, []string{"nope"}},
		{"POST", ag + "/members", map[string]any{"name": "A", "email": "not-an-email"}, 400, []string{"email"}},
		{"POST", "/admin/v1/clients", map[string]any{"name": "C", "domain": "no_tld"}, 400, []string{"domain"}},
		{"POST", "/admin/v1/clients", map[string]any{"name": "C", "domain": "c.example", "status": "gone"}, 400, []string{"status", "active, paused, archived"}},
		{"PUT", ag + "/clients/" + unknown, nil, 404, []string{"client"}},
		{"PUT", "/admin/v1/agencies/" + unknown + "/clients/" + unknown, nil, 404, []string{"agency"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}}, 400, []string{"site_id", "agency_id"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k", "agency_id": tn.agency}, 400, []string{"scopes is required", "read, write"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"admin"}, "agency_id": tn.agency}, 400, []string{"scopes", "read, write"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}, "agency_id": unknown}, 400, []string{"agency_id"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}, "site_id": unknown}, 400, []string{"site_id"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}, "site_id": "bad"}, 400, []string{"site_id must be a UUID"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}, "agency_id": tn.agency, "expires_at": "2020-01-01T00:00:00Z"}, 400, []string{"expires_at", "future"}},
		{"POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}, "agency_id": tn.agency, "expires_at": "tomorrow"}, 400, []string{"expires_at"}},
		{"DELETE", "/admin/v1/keys/" + unknown, nil, 404, []string{"key"}},
		{"GET", "/admin/v1/keys?limit=0", nil, 400, []string{"limit"}},
		{"GET", "/admin/v1/keys?agency_id=x", nil, 400, []string{"agency_id"}},
		{"POST", ag + "/prospects", map[string]any{"website_url": "https://a.example"}, 400, []string{"business_name"}},
		{"POST", ag + "/prospects", map[string]any{"business_name": "A", "website_url": "ftp://a.example"}, 400, []string{"website_url", "http"}},
		{"POST", ag + "/prospects", map[string]any{"business_name": "A", "website_url": "https://a.example", "health_score": 101}, 400, []string{"health_score", "0 to 100"}},
		{"POST", ag + "/prospects", map[string]any{"business_name": "A", "website_url": "https://a.example", "lead_score": "NaN"}, 400, []string{"lead_score"}},
		{"POST", ag + "/prospects", map[string]any{"business_name": "A", "website_url": "https://a.example", "pipeline_stage": "hot"}, 400, []string{"pipeline_stage", "new, contacted, qualified, proposal_sent, negotiation, won, lost"}},
		{"PATCH", ag + "/prospects/" + unknown, map[string]any{"lead_score": 5}, 404, []string{"prospect"}},
		{"POST", ag + "/deals", map[string]any{"title": "D", "currency": "USD", "expected_close_date": "2027-01-01"}, 400, []string{"owner_member_id is required"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D", "currency": "USD", "expected_close_date": "2027-01-01", "stage": "closed"}, 400, []string{"stage", "lead, qualified, proposal, negotiation, won, lost"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D", "currency": "US Dollar", "expected_close_date": "2027-01-01"}, 400, []string{"currency", "ISO 4217"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D", "currency": "USD", "expected_close_date": "2027-02-30"}, 400, []string{"expected_close_date", "YYYY-MM-DD"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D", "currency": "USD", "expected_close_date": "0000-01-01"}, 400, []string{"expected_close_date"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D", "currency": "USD", "expected_close_date": "2027-01-01", "value": -1}, 400, []string{"value"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D", "currency": "USD", "expected_close_date": "2027-01-01", "closed_at": "2026-01-01T00:00:00Z"}, 400, []string{"closed_at", "won or lost"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": tn.member, "title": "D", "currency": "USD", "expected_close_date": "2027-01-01", "stage": "won", "closed_at": future}, 400, []string{"closed_at", "future"}},
		{"POST", ag + "/deals", map[string]any{"owner_member_id": unknown, "title": "D", "currency": "USD", "expected_close_date": "2027-01-01"}, 400, []string{"not a member"}},
		{"PATCH", ag + "/deals/" + unknown, map[string]any{"stage": "won"}, 404, []string{"deal"}},
	}
	for _, c := range cases {
		r := s.adminCall(t, c.method, c.path, c.body)
		if r.status != c.status {
			t.Errorf("%s %s %v: status %d, want %d: %s", c.method, c.path, c.body, r.status, c.status, r.body)
			continue
		}
		wantError(t, r, c.status, c.words...)
	}
	// Nothing invalid was written: the tenant still has no prospects or deals.
	if n := len(s.list(t, "/api/v1/prospects", tn.read)); n != 0 {
		t.Fatalf("rejected writes left %d prospects", n)
	}
	if n := len(s.list(t, "/api/v1/deals", tn.read)); n != 0 {
		t.Fatalf("rejected writes left %d deals", n)
	}
}

// testAdminLists: an operator who lost an id finds it again through the
// admin API. The lists are newest first and paged like the key list; other
// tests create agencies, clients and sites at the same time, so the checks
// are on this test's own rows and on the order of the whole page.
func testAdminLists(t *testing.T, s *stack) {
	list := func(path, field string) []map[string]any {
		t.Helper()
		r := s.adminCall(t, "GET", path, nil)
		wantStatus(t, r, http.StatusOK)
		wantKeys(t, r.json, field)
		raw, ok := r.json[field].([]any)
		if !ok {
			t.Fatalf("GET %s: %s is not an array: %s", path, field, r.body)
		}
		out := make([]map[string]any, len(raw))
		for i, v := range raw {
			out[i] = v.(map[string]any)
		}
		return out
	}
	// newestFirst checks a whole page's order and returns where each of
	// mine is in it.
	newestFirst := func(rows []map[string]any, mine []string) []int {
		t.Helper()
		for i := 1; i < len(rows); i++ {
			a, b := rows[i-1]["created_at"].(string), rows[i]["created_at"].(string)
			ta, _ := time.Parse(time.RFC3339Nano, a)
			tb, _ := time.Parse(time.RFC3339Nano, b)
			if ta.Before(tb) || (ta.Equal(tb) && rows[i-1]["id"].(string) < rows[i]["id"].(string)) {
				t.Fatalf("rows %d and %d are not newest first: %v then %v", i-1, i, rows[i-1], rows[i])
			}
		}
		at := make([]int, len(mine))
		for j, id := range mine {
			at[j] = slices.IndexFunc(rows, func(r map[string]any) bool { return r["id"] == id })
			if at[j] < 0 {
				t.Fatalf("%s is not in the first page of %d", id, len(rows))
			}
		}
		return at
	}

	var agencies, clients, sites []string
	for i := range 3 {
		agencies = append(agencies, s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": fmt.Sprint("Listed agency ", i)})["id"].(string))
		sites = append(sites, s.create(t, "/admin/v1/sites", "site", map[string]any{"name": fmt.Sprint("Listed site ", i)})["id"].(string))
		clients = append(clients, s.create(t, "/admin/v1/clients", "client", map[string]any{"name": fmt.Sprint("Listed client ", i), "domain": "listed.example"})["id"].(string))
		wantStatus(t, s.adminCall(t, "PUT", "/admin/v1/agencies/"+agencies[0]+"/clients/"+clients[i], nil), http.StatusOK)
	}

	// Every list: newest first, mine in reverse order of creation, the
	// whole objects as the create answered them.
	for _, l := range []struct {
		path, field string
		mine        []string
		keys        []string
	}{
		{"/admin/v1/agencies?limit=200", "agencies", agencies, []string{"id", "name", "created_at", "updated_at"}},
		{"/admin/v1/clients?limit=200", "clients", clients, []string{"id", "name", "domain", "status", "auto_deploy", "created_at", "updated_at"}},
		{"/admin/v1/sites?limit=200", "sites", sites, []string{"id", "name", "created_at", "updated_at", "allowed_origins", "agency_id", "client_id", "default_locale", "locales"}},
	} {
		rows := list(l.path, l.field)
		at := newestFirst(rows, l.mine)
		if !(at[2] < at[1] && at[1] < at[0]) {
			t.Fatalf("GET %s: mine at %v, want the newest first", l.path, at)
		}
		wantKeys(t, rows[at[0]], l.keys...)
		if rows[at[0]]["name"] == nil || !strings.HasPrefix(rows[at[0]]["name"].(string), "Listed ") {
			t.Fatalf("GET %s: %v", l.path, rows[at[0]])
		}
		if n := len(list(strings.Replace(l.path, "limit=200", "limit=5000", 1), l.field)); n > 200 {
			t.Fatalf("GET %s with limit=5000 returned %d rows, want at most 200", l.path, n)
		}
	}

	// An agency's clients: exactly the linked ones, paged.
	base := "/admin/v1/clients?agency_id=" + agencies[0]
	if got := ids(list(base, "clients")); !slices.Equal(got, []string{clients[2], clients[1], clients[0]}) {
		t.Fatalf("the agency's clients = %v, want %v newest first", got, clients)
	}
	if got := ids(list(base+"&limit=2&offset=1", "clients")); !slices.Equal(got, []string{clients[1], clients[0]}) {
		t.Fatalf("limit=2&offset=1 = %v", got)
	}
	if got := list("/admin/v1/clients?agency_id="+agencies[1], "clients"); len(got) != 0 {
		t.Fatalf("an agency without clients lists %v", got)
	}
	if got := list("/admin/v1/clients?agency_id=00000000-0000-4000-8000-000000000000", "clients"); len(got) != 0 {
		t.Fatalf("an unknown agency lists %v", got)
	}
	if got := list("/admin/v1/agencies?limit=1&offset=0", "agencies"); len(got) != 1 {
		t.Fatalf("limit=1 returned %d agencies", len(got))
	}

	// Bad parameters: 400 saying what is allowed.
	wantError(t, s.adminCall(t, "GET", "/admin/v1/agencies?limit=0", nil), http.StatusBadRequest, "limit must be an integer of at least 1", "200")
	wantError(t, s.adminCall(t, "GET", "/admin/v1/sites?offset=-1", nil), http.StatusBadRequest, "offset must be an integer of 0 or more")
	wantError(t, s.adminCall(t, "GET", "/admin/v1/clients?agency_id=northwind", nil), http.StatusBadRequest, "agency_id must be a UUID")
	wantError(t, s.adminCall(t, "GET", "/admin/v1/agencies?name=x", nil), http.StatusBadRequest, `unknown query parameter "name"`)
	// Only the admin token lists them.
	tn := s.newTenant(t)
	wantError(t, call(t, "GET", s.admin+"/admin/v1/agencies", tn.read, nil), http.StatusUnauthorized)
	wantError(t, call(t, "GET", s.api+"/admin/v1/agencies", tn.read, nil), http.StatusNotFound)
}

// testSiteOwners: a site is created for an agency and its client, listed
// by agency, assigned, moved and cleared with PATCH; an unknown agency, a
// client the agency does not have and an unknown site are refused and
// change nothing; a key for an agency reaches only the agency's sites;
// every change is announced on atrium.collections.site.updated.
func testSiteOwners(t *testing.T, s *stack) {
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	updates, err := nc.SubscribeSync("atrium.collections.site.updated")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	agency := s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Owner A"})["id"].(string)
	other := s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Owner B"})["id"].(string)
	client := s.create(t, "/admin/v1/clients", "client", map[string]any{"name": "Linked", "domain": "linked.example"})["id"].(string)
	wantStatus(t, s.adminCall(t, "PUT", "/admin/v1/agencies/"+agency+"/clients/"+client, nil), http.StatusOK)
	unlinked := s.create(t, "/admin/v1/clients", "client", map[string]any{"name": "Unlinked", "domain": "unlinked.example"})["id"].(string)
	unknown := "01a201ca-0000-7000-8000-000000000000"

	owned := s.create(t, "/admin/v1/sites", "site", map[string]any{"name": "Owned", "agency_id": agency, "client_id": client})
	if owned["agency_id"] != agency || owned["client_id"] != client {
		t.Fatalf("created site's owner = %v/%v, want %s/%s", owned["agency_id"], owned["client_id"], agency, client)
	}
	site := owned["id"].(string)
	loose := s.create(t, "/admin/v1/sites", "site", map[string]any{"name": "Unowned"})["id"].(string)

	for _, tc := range []struct {
		method, path string
		body         map[string]any
		status       int
		words        []string
	}{
		{"POST", "/admin/v1/sites", map[string]any{"name": "X", "agency_id": unknown}, 400, []string{"agency_id", unknown, "does not name an existing agency"}},
		{"POST", "/admin/v1/sites", map[string]any{"name": "X", "agency_id": "acme"}, 400, []string{"agency_id must be a UUID"}},
		{"POST", "/admin/v1/sites", map[string]any{"name": "X", "client_id": client}, 400, []string{"client_id needs agency_id"}},
		{"POST", "/admin/v1/sites", map[string]any{"name": "X", "agency_id": agency, "client_id": unlinked}, 400, []string{"client_id", unlinked, "not a client linked to agency"}},
		{"PATCH", "/admin/v1/sites/" + site, map[string]any{"agency_id": unknown}, 400, []string{"agency_id", "does not name an existing agency"}},
		// The site's client is not the new agency's: it must be named.
		{"PATCH", "/admin/v1/sites/" + site, map[string]any{"agency_id": other}, 400, []string{"client_id", client, other, "remove"}},
		{"PATCH", "/admin/v1/sites/" + site, map[string]any{"client_id": unlinked}, 400, []string{"client_id", unlinked}},
		{"PATCH", "/admin/v1/sites/" + loose, map[string]any{"client_id": client}, 400, []string{"client_id needs agency_id"}},
		{"PATCH", "/admin/v1/sites/" + site, map[string]any{"name": ""}, 400, []string{"name"}},
		{"PATCH", "/admin/v1/sites/" + unknown, map[string]any{"agency_id": agency}, 404, []string{unknown}},
		{"GET", "/admin/v1/sites?agency_id=acme", nil, 400, []string{"agency_id must be a UUID"}},
	} {
		var body any
		if tc.body != nil {
			body = tc.body
		}
		r := s.adminCall(t, tc.method, tc.path, body)
		wantError(t, r, tc.status, tc.words...)
	}
	// Refused changes changed nothing.
	got := s.adminCall(t, "GET", "/admin/v1/sites/"+site, nil)
	wantStatus(t, got, http.StatusOK)
	if st := got.json["site"].(map[string]any); st["agency_id"] != agency || st["client_id"] != client || st["name"] != "Owned" {
		t.Fatalf("after refused changes the site is %v", st)
	}

	// Keys: an agency's key reaches only the agency's sites.
	s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": agency, "site_id": site})
	wantError(t, s.adminCall(t, "POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}, "agency_id": other, "site_id": site}),
		http.StatusBadRequest, "site_id", site, "agency_id", other, "another agency")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}, "agency_id": agency, "site_id": loose}),
		http.StatusBadRequest, "site_id", loose, "agency_id", agency, "belongs to no agency")
	// An unowned site stays reachable by keys bound to it alone.
	s.newKey(t, map[string]any{"scopes": []string{"read"}, "site_id": loose})

	patch := func(id string, body map[string]any) map[string]any {
		t.Helper()
		r := s.adminCall(t, "PATCH", "/admin/v1/sites/"+id, body)
		wantStatus(t, r, http.StatusOK)
		return r.json["site"].(map[string]any)
	}
	// Assign the unowned site; move the owned one to the other agency,
	// dropping its client; clear it.
	if st := patch(loose, map[string]any{"agency_id": agency}); st["agency_id"] != agency || st["client_id"] != nil || st["name"] != "Unowned" {
		t.Fatalf("assigned site = %v", st)
	}
	if st := patch(site, map[string]any{"agency_id": other, "client_id": "", "name": "Moved"}); st["agency_id"] != other || st["client_id"] != nil || st["name"] != "Moved" {
		t.Fatalf("moved site = %v", st)
	}
	listed := func(agency string) []string {
		t.Helper()
		r := s.adminCall(t, "GET", "/admin/v1/sites?limit=200&agency_id="+agency, nil)
		wantStatus(t, r, http.StatusOK)
		out := []string{}
		for _, v := range r.json["sites"].([]any) {
			out = append(out, v.(map[string]any)["id"].(string))
		}
		return out
	}
	if got := listed(agency); !slices.Equal(got, []string{loose}) {
		t.Fatalf("sites of agency A = %v, want [%s]", got, loose)
	}
	if got := listed(other); !slices.Equal(got, []string{site}) {
		t.Fatalf("sites of agency B = %v, want [%s]", got, site)
	}
	// A key for the old agency is refused now, for the new one issued.
	wantError(t, s.adminCall(t, "POST", "/admin/v1/keys", map[string]any{"name": "k", "scopes": []string{"read"}, "agency_id": agency, "site_id": site}),
		http.StatusBadRequest, "another agency")
	s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": other, "site_id": site})
	// The clear goes through the Go SDK, as an operator's tool would.
	none := ""
	cleared, err := atrium.NewAdmin(s.admin, testAdminToken).UpdateSite(t.Context(), site, atrium.SiteChange{AgencyID: &none})
	if err != nil || cleared.AgencyID != nil || cleared.ClientID != nil || cleared.Name != "Moved" {
		t.Fatalf("cleared site = %+v, %v", cleared, err)
	}
	if got := listed(other); len(got) != 0 {
		t.Fatalf("sites of agency B after the clear = %v, want none", got)
	}

	// Each PATCH announced the owner it left: assign, move, clear.
	want := []string{loose + " " + agency, site + " " + other, site + " "}
	var seen []string
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < len(want) {
		msg, err := updates.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("site.updated events %v, want %v: %v", seen, want, err)
		}
		var ev struct {
			ID       string `json:"id"`
			AgencyID string `json:"agency_id"`
		}
		if err := json.Unmarshal(msg.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.ID == site || ev.ID == loose {
			seen = append(seen, ev.ID+" "+ev.AgencyID)
		}
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("site.updated events %v, want %v", seen, want)
	}
}
