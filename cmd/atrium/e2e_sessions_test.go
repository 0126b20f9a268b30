package main

// People signed in with sessions, over HTTP as a browser would: an
// operator invites an agency's owner, who accepts and invites an editor of
// one site, a viewer and a client member; each signs in and is tried on
// every interface, with the CSRF and cross-origin rules of the cookie.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// sessionPassword is long enough and not a common password.
const sessionPassword = "correct horse battery staple 42"

// person is someone signed in: their cookie and CSRF token.
type person struct {
	s      *stack
	cookie string
	csrf   string
}

// do calls the public API with the person's cookie, and their CSRF token
// on unsafe methods; headers are name, value pairs.
func (p person) do(t *testing.T, method, path string, body any, headers ...string) response {
	t.Helper()
	hs := []string{"Cookie", "atrium_session=" + p.cookie}
	if method != http.MethodGet {
		hs = append(hs, "X-CSRF-Token", p.csrf)
	}
	return call(t, method, p.s.api+path, "", body, append(hs, headers...)...)
}

// signedIn reads the cookie a sign-in set, checking its attributes.
func signedIn(t *testing.T, s *stack, r response) person {
	t.Helper()
	var c *http.Cookie
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == "atrium_session" {
			c = ck
		}
	}
	if c == nil || c.Value == "" {
		t.Fatalf("no session cookie in %v; body %s", r.header.Values("Set-Cookie"), r.body)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Expires.Before(time.Now()) || c.Secure {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Lax, Path=/, a future expiry, not Secure over plain HTTP", c)
	}
	if strings.Contains(string(r.body), c.Value) {
		t.Fatalf("the session secret is in the body: %s", r.body)
	}
	csrf, _ := r.json["csrf_token"].(string)
	if csrf == "" {
		t.Fatalf("no csrf_token in %s", r.body)
	}
	return person{s: s, cookie: c.Value, csrf: csrf}
}

// invitationToken is the token of an answer carrying an invitation.
func invitationToken(t *testing.T, r response) string {
	t.Helper()
	inv, _ := r.json["invitation"].(map[string]any)
	token, _ := inv["token"].(string)
	if token == "" {
		t.Fatalf("no invitation token in %s", r.body)
	}
	return token
}

func (s *stack) accept(t *testing.T, token, name string) person {
	t.Helper()
	r := call(t, "POST", s.api+"/api/v1/invitations/"+url.PathEscape(token)+"/accept", "", map[string]any{"password": sessionPassword, "name": name})
	wantStatus(t, r, http.StatusOK)
	return signedIn(t, s, r)
}

func testPeopleSessions(t *testing.T, s *stack) {
	a, b := s.newCMS(t), s.newCMS(t)
	// A second site of agency A, with its own posts.
	siteA2 := s.create(t, "/admin/v1/sites", "site", map[string]any{"name": "Second", "agency_id": a.agency})["id"].(string)
	s.create(t, "/admin/v1/sites/"+siteA2+"/collections", "collection", map[string]any{"name": "Posts", "slug": "posts",
		"fields": []map[string]any{{"key": "title", "type": "text", "required": true}}})
	bItem := b.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "B's"}})
	clientA := s.newClient(t, a.tenant, true)
	otherA := s.newClient(t, a.tenant, true)
	s.loadRows(t, clientA, "keywords", map[string]any{"keyword": "ours", "position": 1, "status": "active"})
	s.loadRows(t, otherA, "keywords", map[string]any{"keyword": "theirs", "position": 2, "status": "active"})
	clientB := s.newClient(t, b.tenant, true)
	tag := a.agency
	email := func(who string) string { return who + "-" + tag + "@example.com" }

	// The operator invites the owner; the owner accepts and is signed in.
	r := s.adminCall(t, "POST", "/admin/v1/agencies/"+a.agency+"/members", map[string]any{"email": email("owner"), "name": "Olive", "role": "owner"})
	wantStatus(t, r, http.StatusCreated)
	owner := s.accept(t, invitationToken(t, r), "Olive")
	r = owner.do(t, "GET", "/api/v1/sessions/current", nil)
	wantStatus(t, r, http.StatusOK)
	ms, _ := r.json["memberships"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["agency_id"] != a.agency || ms[0].(map[string]any)["role"] != "owner" || r.json["csrf_token"] != owner.csrf {
		t.Fatalf("current session: %s", r.body)
	}

	// The owner invites an editor of site A1, a viewer and a client
	// member; an invitation without the CSRF token is refused.
	wantError(t, call(t, "POST", s.api+"/api/v1/members", "", map[string]any{"email": email("x"), "role": "viewer"}, "Cookie", "atrium_session="+owner.cookie),
		http.StatusForbidden, "X-CSRF-Token")
	invite := func(body map[string]any) (string, string) {
		t.Helper()
		r := owner.do(t, "POST", "/api/v1/members", body)
		wantStatus(t, r, http.StatusCreated)
		return r.json["member"].(map[string]any)["id"].(string), invitationToken(t, r)
	}
	editorID, tok := invite(map[string]any{"email": email("editor"), "name": "Ed", "role": "editor", "site_ids": []string{a.site}})
	editor := s.accept(t, tok, "Ed")
	_, tok = invite(map[string]any{"email": email("viewer"), "role": "viewer"})
	viewer := s.accept(t, tok, "Vi")
	_, tok = invite(map[string]any{"email": email("client"), "role": "client", "client_id": clientA})
	s.accept(t, tok, "Cli")
	// Signing in with the password gives a session too.
	r = call(t, "POST", s.api+"/api/v1/sessions", "", map[string]any{"email": strings.ToUpper(email("client")), "password": sessionPassword})
	wantStatus(t, r, http.StatusCreated)
	client := signedIn(t, s, r)

	posts := "/api/public/v1/collections/posts"
	post := map[string]any{"data": map[string]any{"title": "By a person"}}
	// The owner: everything of agency A, nothing of B.
	wantStatus(t, owner.do(t, "GET", "/api/v1/prospects", nil), http.StatusOK)
	wantStatus(t, owner.do(t, "GET", "/api/v1/webhooks", nil), http.StatusOK)
	wantStatus(t, owner.do(t, "GET", "/api/v1/actions", nil), http.StatusOK)
	wantStatus(t, owner.do(t, "GET", "/api/v1/members", nil), http.StatusOK)
	wantStatus(t, owner.do(t, "POST", posts, post, "Atrium-Site", siteA2), http.StatusCreated)
	wantError(t, owner.do(t, "GET", posts, nil), http.StatusForbidden, "Atrium-Site")
	wantError(t, owner.do(t, "GET", "/api/v1/prospects", nil, "Atrium-Agency", b.agency), http.StatusForbidden, "Atrium-Agency", a.agency)
	wantError(t, owner.do(t, "GET", posts+"/"+bItem["id"].(string), nil, "Atrium-Site", b.site), http.StatusForbidden, "not a site of agency "+a.agency)
	wantError(t, owner.do(t, "GET", posts+"/"+bItem["id"].(string), nil, "Atrium-Site", a.site), http.StatusNotFound)
	if r := owner.do(t, "GET", "/api/v1/data?resource=keywords&client_id="+clientB, nil); r.status < 400 || r.status >= 500 {
		t.Fatalf("the owner of A reads B's client: %s", r)
	}

	// The editor: the posts of site A1 (their only site, without a
	// header), not those of A2, and nothing of the CRM.
	created := editor.do(t, "POST", posts, post)
	wantStatus(t, created, http.StatusCreated)
	wantStatus(t, editor.do(t, "PATCH", posts+"/"+created.json["item"].(map[string]any)["id"].(string), map[string]any{"data": map[string]any{"title": "Edited"}}), http.StatusOK)
	wantError(t, editor.do(t, "POST", posts, post, "Atrium-Site", siteA2), http.StatusForbidden, "you may use only the sites "+a.site)
	wantError(t, editor.do(t, "GET", "/api/v1/prospects", nil), http.StatusForbidden, "editor role")
	wantError(t, editor.do(t, "GET", "/api/v1/members", nil), http.StatusForbidden, "editor role")

	// The viewer reads everything of A and writes nothing.
	wantStatus(t, viewer.do(t, "GET", "/api/v1/prospects", nil), http.StatusOK)
	wantStatus(t, viewer.do(t, "GET", posts, nil, "Atrium-Site", siteA2), http.StatusOK)
	wantStatus(t, viewer.do(t, "GET", "/api/v1/data?resource=keywords&client_id="+otherA, nil), http.StatusOK)
	wantError(t, viewer.do(t, "POST", posts, post, "Atrium-Site", a.site), http.StatusForbidden, "viewer role")
	wantError(t, viewer.do(t, "POST", "/api/v1/webhooks", map[string]any{"url": "https://hooks.example/x", "events": []string{"item.created"}}), http.StatusForbidden, "viewer role")

	// The client member reads its client's dataset and nothing else.
	r = client.do(t, "GET", "/api/v1/data?resource=keywords&client_id="+clientA, nil)
	wantStatus(t, r, http.StatusOK)
	if rows, _ := r.json["data"].([]any); len(rows) != 1 || !strings.Contains(string(r.body), "ours") {
		t.Fatalf("the client member reads %s", r.body)
	}
	wantError(t, client.do(t, "GET", "/api/v1/data?resource=keywords&client_id="+otherA, nil), http.StatusForbidden, clientA)
	wantError(t, client.do(t, "GET", "/api/v1/prospects", nil), http.StatusForbidden, "client role")
	wantError(t, client.do(t, "GET", posts, nil, "Atrium-Site", a.site), http.StatusForbidden)

	// CSRF and other origins.
	wantError(t, call(t, "POST", s.api+posts, "", post, "Cookie", "atrium_session="+editor.cookie, "X-CSRF-Token", owner.csrf), http.StatusForbidden, "wrong X-CSRF-Token")
	wantError(t, owner.do(t, "GET", "/api/v1/members", nil, "Origin", "https://evil.example"), http.StatusForbidden, "another origin")
	wantError(t, owner.do(t, "DELETE", "/api/v1/sessions/current", nil, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden, "another site")
	wantError(t, call(t, "POST", s.api+"/api/v1/sessions", "", map[string]any{"email": email("owner"), "password": sessionPassword}, "Origin", "https://evil.example"),
		http.StatusForbidden, "another origin")
	wantStatus(t, owner.do(t, "GET", "/api/v1/members", nil, "Origin", s.api), http.StatusOK)

	// A wrong password and an unknown email: the same answer.
	wrong := call(t, "POST", s.api+"/api/v1/sessions", "", map[string]any{"email": email("owner"), "password": "not the password at all"})
	unknown := call(t, "POST", s.api+"/api/v1/sessions", "", map[string]any{"email": email("nobody"), "password": "not the password at all"})
	if wrong.status != http.StatusUnauthorized || wrong.status != unknown.status || string(wrong.body) != string(unknown.body) {
		t.Fatalf("wrong password %s, unknown email %s: want the same 401", wrong, unknown)
	}

	// Signing out ends the cookie.
	r = viewer.do(t, "DELETE", "/api/v1/sessions/current", nil)
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(strings.Join(r.header.Values("Set-Cookie"), "\n"), "atrium_session=;") {
		t.Fatalf("sign-out does not clear the cookie: %v", r.header.Values("Set-Cookie"))
	}
	wantError(t, viewer.do(t, "GET", "/api/v1/prospects", nil), http.StatusUnauthorized, "sign in again")

	// The owner removes the editor: the editor's next request fails.
	wantStatus(t, editor.do(t, "GET", posts, nil), http.StatusOK)
	wantStatus(t, owner.do(t, "DELETE", "/api/v1/members/"+editorID, nil), http.StatusOK)
	eventually(t, 10*time.Second, func() bool { return editor.do(t, "GET", posts, nil).status == http.StatusUnauthorized })
	wantError(t, editor.do(t, "GET", posts, nil), http.StatusUnauthorized, "sign in again")
}
