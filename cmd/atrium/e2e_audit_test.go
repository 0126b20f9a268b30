package main

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// signedInOwner invites an owner of the agency through the admin API and
// signs them in by accepting the invitation.
func (s *stack) signedInOwner(t *testing.T, agency string) person {
	t.Helper()
	r := s.adminCall(t, "POST", "/admin/v1/agencies/"+agency+"/members", map[string]any{"email": "owner-" + agency + "@audit.example", "name": "Owner", "role": "owner"})
	wantStatus(t, r, http.StatusCreated)
	return s.accept(t, invitationToken(t, r), "Owner")
}

// trail is the person's GET /api/v1/audit-events?query.
func (p person) trail(t *testing.T, query string) response {
	t.Helper()
	return p.do(t, "GET", "/api/v1/audit-events?"+query, nil)
}

// auditTenant is newTenant without a member: an agency, its site and its
// keys.
func (s *stack) auditTenant(t *testing.T) tenant {
	t.Helper()
	var tn tenant
	tn.agency = s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Agency " + t.Name()})["id"].(string)
	tn.site = s.create(t, "/admin/v1/sites", "site", map[string]any{"name": "Site", "agency_id": tn.agency})["id"].(string)
	tn.read = s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": tn.agency, "site_id": tn.site})
	tn.write = s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency, "site_id": tn.site})
	return tn
}

// auditEvents returns the audit_events of a trail's page as JSON objects.
func auditEvents(t *testing.T, r response) []map[string]any {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	raw, ok := r.json["audit_events"].([]any)
	if !ok {
		t.Fatalf("no audit_events array in %s", r.body)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

func auditActions(evs []map[string]any) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e["action"].(string))
	}
	return out
}

// testAuditTrail: writes through the public API with a key and through
// the admin API are read back from the trail, by the operator and by the
// agency's owner, with filters and paging; another agency never sees them;
// a key is refused the trail whatever its scopes; no secret reaches it.
func testAuditTrail(t *testing.T, s *stack) {
	a, b := s.auditTenant(t), s.auditTenant(t)
	key := s.create(t, "/admin/v1/keys", "key", map[string]any{"name": "audited", "scopes": []string{"read", "write"}, "agency_id": a.agency})
	keyID, keySecret := key["id"].(string), key["secret"].(string)
	// A key bound to the site alone names no agency: the trail gives its
	// writes the site's owner.
	siteKey := s.create(t, "/admin/v1/keys", "key", map[string]any{"name": "site", "scopes": []string{"read", "write"}, "site_id": a.site})
	siteKeyID := siteKey["id"].(string)

	// With the key, through the public API: a webhook made, changed, its
	// secret rotated, deleted.
	r := call(t, "POST", s.api+"/api/v1/webhooks", keySecret, map[string]any{"url": "https://hooks.example.com/audit", "events": []string{"deal.*"}})
	wantStatus(t, r, http.StatusCreated)
	hook := r.json["webhook"].(map[string]any)
	hookID, hookSecret := hook["id"].(string), hook["secret"].(string)
	wantStatus(t, call(t, "PATCH", s.api+"/api/v1/webhooks/"+hookID, keySecret, map[string]any{"description": "the CRM's"}), http.StatusOK)
	r = call(t, "POST", s.api+"/api/v1/webhooks/"+hookID+"/rotate-secret", keySecret, map[string]any{})
	wantStatus(t, r, http.StatusOK)
	rotated := r.json["webhook"].(map[string]any)["secret"].(string)
	wantStatus(t, call(t, "DELETE", s.api+"/api/v1/webhooks/"+hookID, keySecret, nil), http.StatusOK)
	r = call(t, "POST", s.api+"/api/v1/webhooks", siteKey["secret"].(string), map[string]any{"url": "https://hooks.example.com/site", "events": []string{"item.*"}})
	wantStatus(t, r, http.StatusCreated)
	siteHookID := r.json["webhook"].(map[string]any)["id"].(string)
	// A User-Agent beyond ASCII: the write goes through, the trail keeps
	// its printable ASCII.
	wantStatus(t, call(t, "PATCH", s.api+"/api/v1/webhooks/"+siteHookID, siteKey["secret"].(string), map[string]any{"enabled": false},
		"User-Agent", "Tést ☃ agent/2.0"), http.StatusOK)

	// With the admin token: a prospect made and changed, credits, a client
	// linked and its dataset written.
	prospect := s.newProspect(t, a, "Audit Bakery")["id"].(string)
	wantStatus(t, s.adminCall(t, "PATCH", "/admin/v1/agencies/"+a.agency+"/prospects/"+prospect, map[string]any{"industry": "bakery"}), http.StatusOK)
	wantStatus(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+a.agency+"/credits", map[string]any{"ai": 5, "data": 5}), http.StatusOK)
	client := s.newClient(t, a, true)
	s.loadRows(t, client, "keywords", map[string]any{"keyword": "rye", "position": 3})
	// An action run with the agency's other key: the run and the records
	// the actions service writes for it.
	wantStatus(t, s.act(t, a.write, map[string]any{"action": "generate_keywords", "client_id": client, "seed": "rye bread"}), http.StatusOK)
	// Agency b's own write, which a's trail must never show.
	s.newProspect(t, b, "Other Bakery")

	// The trail is filled from the audit stream: wait for the last write.
	trail := func(query string) []map[string]any {
		return auditEvents(t, s.adminCall(t, "GET", "/admin/v1/audit-events?"+query, nil))
	}
	want := []string{"agency.created", "webhook.created", "webhook.updated", "webhook.secret_rotated", "webhook.deleted",
		"webhook.created", "webhook.updated", "prospect.created", "prospect.updated", "credits.changed", "client.linked", "run.started"}
	hasAll := func(got []string) bool {
		for _, w := range want {
			i := slices.Index(got, w)
			if i < 0 {
				return false
			}
			got = slices.Delete(slices.Clone(got), i, i+1)
		}
		return true
	}
	eventually(t, 30*time.Second, func() bool {
		return len(trail("resource_id="+url.QueryEscape(client+"/keywords")+"&actor=admin")) == 1 && hasAll(auditActions(trail("agency_id="+a.agency)))
	})

	// The operator's view of agency a: every write of it, newest first.
	all := trail("agency_id=" + a.agency)
	for i := 1; i < len(all); i++ {
		if all[i-1]["at"].(string) < all[i]["at"].(string) {
			t.Fatalf("the trail is not newest first: %v then %v", all[i-1]["at"], all[i]["at"])
		}
	}
	body := string(s.adminCall(t, "GET", "/admin/v1/audit-events?agency_id="+a.agency, nil).body)
	for _, secret := range []string{hookSecret, rotated, keySecret, "whsec_"} {
		if strings.Contains(body, secret) {
			t.Fatalf("the trail carries a secret (%.10s…)", secret)
		}
	}

	// What the key did: named by its id, with where it came from.
	byKey := trail("agency_id=" + a.agency + "&actor=" + keyID)
	if got := auditActions(byKey); !slices.Equal(got, []string{"webhook.deleted", "webhook.secret_rotated", "webhook.updated", "webhook.created"}) {
		t.Fatalf("the key's writes: %v", got)
	}
	updated := byKey[2]
	actor := updated["actor"].(map[string]any)
	if actor["kind"] != "key" || actor["id"] != keyID || updated["resource_type"] != "webhook" || updated["resource_id"] != hookID ||
		updated["service"] != "webhooks" || updated["method"] != "/atrium.webhooks.v1.WebhooksService/UpdateWebhook" {
		t.Fatalf("webhook.updated recorded as %v", updated)
	}
	if f := updated["fields"].([]any); len(f) != 1 || f[0] != "description" {
		t.Fatalf("webhook.updated fields %v, want [description]", f)
	}
	if updated["client_address"] != "127.0.0.1" || !strings.HasPrefix(updated["user_agent"].(string), "Go-http-client") ||
		len(updated["trace_id"].(string)) != 32 || updated["agency_id"] != a.agency {
		t.Fatalf("webhook.updated's origin: %v", updated)
	}
	if f := byKey[1]["fields"].([]any); len(f) != 1 || f[0] != "secret" {
		t.Fatalf("the rotation records %v, want the secret's name only", f)
	}

	// The site key's write reached the agency's trail, with its site.
	bySiteKey := trail("agency_id=" + a.agency + "&actor=" + siteKeyID)
	if len(bySiteKey) != 2 || bySiteKey[1]["resource_id"] != siteHookID || bySiteKey[1]["site_id"] != a.site || bySiteKey[1]["agency_id"] != a.agency {
		t.Fatalf("the site key's writes in the agency's trail: %v", bySiteKey)
	}
	if ua := bySiteKey[0]["user_agent"]; ua != "Tst  agent/2.0" {
		t.Fatalf("a User-Agent beyond ASCII recorded as %q, want its printable ASCII", ua)
	}
	if got := trail("site_id=" + a.site + "&resource_type=webhook"); len(got) != 2 || got[1]["resource_id"] != siteHookID {
		t.Fatalf("the site's webhook writes: %v", auditActions(got))
	}

	// The operator's writes, and the data service's.
	if got := auditActions(trail("agency_id=" + a.agency + "&actor=admin&resource_type=prospect")); !slices.Equal(got, []string{"prospect.updated", "prospect.created"}) {
		t.Fatalf("the operator's prospect writes: %v", got)
	}
	rows := trail("resource_id=" + url.QueryEscape(client+"/keywords") + "&actor=admin")
	if rows[0]["action"] != "rows.inserted" || rows[0]["service"] != "data" || rows[0]["actor"].(map[string]any)["kind"] != "admin" {
		t.Fatalf("the dataset write: %v", rows[0])
	}
	runs := trail("agency_id=" + a.agency + "&resource_type=run")
	if len(runs) != 1 || runs[0]["action"] != "run.started" || runs[0]["service"] != "actions" || runs[0]["actor"].(map[string]any)["kind"] != "key" ||
		!slices.Equal(runs[0]["fields"].([]any), []any{"action", "client_id", "seed"}) {
		t.Fatalf("the run: %v", runs)
	}

	// Paging: pages of 3 hold the whole trail once, in order.
	var paged []string
	next := ""
	for range 10 {
		r := s.adminCall(t, "GET", "/admin/v1/audit-events?limit=3&agency_id="+a.agency+next, nil)
		page := auditEvents(t, r)
		for _, e := range page {
			paged = append(paged, e["id"].(string))
		}
		c, ok := r.json["next_cursor"].(string)
		if !ok {
			break
		}
		next = "&cursor=" + url.QueryEscape(c)
	}
	if len(paged) != len(all) {
		t.Fatalf("paged %d events, the trail has %d", len(paged), len(all))
	}
	for i, e := range all {
		if paged[i] != e["id"] {
			t.Fatalf("page order differs at %d", i)
		}
	}
	// A window: since the rotation, until the deletion.
	since, until := byKey[1]["at"].(string), byKey[0]["at"].(string)
	if got := auditActions(trail("agency_id=" + a.agency + "&actor=" + keyID + "&since=" + url.QueryEscape(since) + "&until=" + url.QueryEscape(until))); !slices.Equal(got, []string{"webhook.secret_rotated"}) {
		t.Fatalf("since the rotation until the deletion: %v", got)
	}

	// The owner of a, signed in, reads the same trail; b's owner sees none
	// of it.
	ownerA, ownerB := s.signedInOwner(t, a.agency), s.signedInOwner(t, b.agency)
	r = ownerA.trail(t, "actor="+keyID+"&limit=2")
	page := auditEvents(t, r)
	if len(page) != 2 || page[0]["action"] != "webhook.deleted" || r.json["next_cursor"] == nil {
		t.Fatalf("the owner's first page of the key's writes: %s", r.body)
	}
	r = ownerA.trail(t, "actor="+keyID+"&limit=2&cursor="+url.QueryEscape(r.json["next_cursor"].(string)))
	if page := auditEvents(t, r); len(page) != 2 || page[1]["action"] != "webhook.created" || r.json["next_cursor"] != nil {
		t.Fatalf("the owner's second page: %s", r.body)
	}
	for _, e := range auditEvents(t, ownerB.trail(t, "limit=200")) {
		if e["agency_id"] != b.agency || e["resource_id"] == hookID || e["resource_id"] == prospect {
			t.Fatalf("agency b's (%s) owner sees %v", b.agency, e)
		}
	}
	if got := auditEvents(t, ownerB.trail(t, "resource_id="+hookID)); len(got) != 0 {
		t.Fatalf("agency b's owner finds a's webhook by its id: %v", got)
	}
	if got := trail("agency_id=" + b.agency); slices.ContainsFunc(got, func(e map[string]any) bool { return e["agency_id"] != b.agency }) {
		t.Fatalf("agency b's trail holds another's events: %v", got)
	}
	// A cursor of a's trail is refused for b's.
	all2 := s.adminCall(t, "GET", "/admin/v1/audit-events?limit=1&agency_id="+a.agency, nil)
	wantError(t, ownerB.trail(t, "cursor="+url.QueryEscape(all2.json["next_cursor"].(string))), http.StatusBadRequest, "cursor")
	// A person's write names the person, their membership and session.
	r = ownerA.do(t, "POST", "/api/v1/webhooks", map[string]any{"url": "https://hooks.example.com/by-a-person", "events": []string{"deal.*"}})
	wantStatus(t, r, http.StatusCreated)
	personHook := r.json["webhook"].(map[string]any)["id"].(string)
	var byPerson map[string]any
	eventually(t, 10*time.Second, func() bool {
		got := auditEvents(t, ownerA.trail(t, "resource_id="+personHook))
		if len(got) == 1 {
			byPerson = got[0]
		}
		return byPerson != nil
	})
	actor, _ = byPerson["actor"].(map[string]any)
	if actor["kind"] != "user" || actor["id"] == nil || actor["id"] == "" || actor["member_id"] == nil || actor["session_id"] == nil {
		t.Fatalf("a person's write is recorded as %v", byPerson)
	}

	// No key reads the trail, whatever its scopes and bindings.
	for _, k := range []string{keySecret, a.write, a.read} {
		wantError(t, call(t, "GET", s.api+"/api/v1/audit-events", k, nil), http.StatusForbidden)
	}
	wantStatus(t, call(t, "GET", s.api+"/api/v1/audit-events", "", nil), http.StatusUnauthorized)

	// Bad parameters: a 400 naming what is wrong.
	for q, words := range map[string][]string{
		"since=yesterday": {"since must be"},
		"since=2026-11-29T10:00:00Z&until=2026-11-29T09:00:00Z": {"since must be before until"},
		"limit=0":           {"limit must be an integer from 1 to 200"},
		"limit=201":         {"limit must be an integer from 1 to 200"},
		"agency_id=acme":    {"agency_id must be"},
		"cursor=nonsense!!": {"cursor is malformed"},
	} {
		wantError(t, s.adminCall(t, "GET", "/admin/v1/audit-events?"+q, nil), http.StatusBadRequest, words...)
	}
	// No update or delete: the trail is append-only.
	id := all[0]["id"].(string)
	for _, m := range []string{"DELETE", "PATCH", "PUT"} {
		if r := s.adminCall(t, m, "/admin/v1/audit-events/"+id, nil); r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
			t.Fatalf("%s of an audit event: %s, want 404 or 405", m, r)
		}
	}
}
