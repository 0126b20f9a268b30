package main

// Atrium Studio's owner pages (members, API keys, credits, the audit
// trail) and a client member's results, in a real browser: the owner
// invites an editor who joins in a second tab, makes them a viewer, makes
// and revokes a key; the lesser roles are refused by link and by a forced
// form; a client member reads their charts and nothing else.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/internal/browsertest"
)

// reloadUntil opens u until its main text contains want: the audit trail
// and key revocations reach the pages through events, a moment after the
// change.
func reloadUntil(t *testing.T, p *browsertest.Page, u, want string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p.Go(u)
		txt := p.Text("main")
		if strings.Contains(txt, want) {
			return txt
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q; it shows: %s", u, want, txt)
		}
		time.Sleep(200 * time.Millisecond) // why sleep: polls the page, which the change reaches through an event the service consumes asynchronously
	}
}

// memberID is the id of the agency's member with email, read over the API.
func (w *studioWorld) memberID(t *testing.T, email string) string {
	t.Helper()
	r := w.owner.do(t, "GET", "/api/v1/members?limit=200", nil)
	wantStatus(t, r, http.StatusOK)
	ms, _ := r.json["members"].([]any)
	for _, m := range ms {
		if m := m.(map[string]any); m["email"] == strings.ToLower(email) {
			return m["id"].(string)
		}
	}
	t.Fatalf("no member %s in %s", email, r.body)
	return ""
}

// apiSignIn signs email in over the API: their cookie and CSRF token, for
// forms forced past the pages.
func (w *studioWorld) apiSignIn(t *testing.T, email string) person {
	t.Helper()
	r := call(t, "POST", w.s.api+"/api/v1/sessions", "", map[string]any{"email": email, "password": sessionPassword})
	wantStatus(t, r, http.StatusCreated)
	return signedIn(t, w.s, r)
}

// onPhone checks that the page does not scroll sideways at 360 px.
func onPhone(t *testing.T, p *browsertest.Page) {
	t.Helper()
	p.SetViewport(360, 740)
	if wide := browsertest.Eval[string](p, widestElement); wide != "" {
		t.Errorf("%s scrolls sideways at 360 px: %s", p.URL(), wide)
	}
	p.SetViewport(1280, 800)
}

// confirmAll makes the page's confirmation questions (data-confirm)
// answer yes, as a person clicking OK would.
func confirmAll(p *browsertest.Page) {
	browsertest.Eval[bool](p, "(window.confirm = () => true, true)")
}

func testStudioOwner(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	// A run that spent credits, for the credits page.
	s.grant(t, w.cms.agency, 20, 20)
	wantAction(t, s.act(t, w.cms.write, map[string]any{"action": "generate_blog", "client_id": w.client, "keyword": "rye"}), "generate_blog", w.client, "success")

	owner := w.signIn(t, w.ownerEmail)
	for _, section := range []string{"Members", "API keys", "Credits", "Audit trail"} {
		if !strings.Contains(owner.Text("nav.sections"), section) {
			t.Fatalf("the owner's navigation lacks %s: %s", section, owner.Text("nav.sections"))
		}
	}

	// The owner invites an editor of the agency's site through the form.
	owner.Go(w.agencyPath("members"))
	if owner.Status() != http.StatusOK || !strings.Contains(owner.Text("main"), "Olive Owner") {
		t.Fatalf("members answered %d: %s", owner.Status(), owner.Text("main"))
	}
	checkPage(t, owner)
	onPhone(t, owner)
	screenshot(t, owner, "members")
	editorEmail := w.email("eddie")
	owner.Fill("#invite-email", editorEmail)
	owner.Fill("#invite-name", "Eddie Editor")
	owner.Fill("#invite-role", "editor")
	owner.Click("#invite-site-" + w.cms.site)
	owner.Submit("#invite-form")
	owner.WaitVisible("#invitation-url")
	link := strings.TrimSpace(owner.Text("#invitation-url"))
	if !strings.Contains(link, "/studio/invitations/atr_inv_") || !strings.Contains(owner.Text("main"), "shown once") {
		t.Fatalf("the invitation page shows %q: %s", link, owner.Text("main"))
	}
	if !browsertest.Eval[bool](owner, `!!document.querySelector("button[data-copy='#invitation-url']")`) {
		t.Fatal("the invitation link has no copy button")
	}
	checkPage(t, owner)
	// A second invitation of the same email is refused on the form.
	owner.Go(w.agencyPath("members"))
	owner.Fill("#invite-email", strings.ToUpper(editorEmail))
	owner.Fill("#invite-role", "viewer")
	owner.Submit("#invite-form")
	owner.WaitText("#invite-error", "already has a member", 10*time.Second)
	if owner.Status() != http.StatusConflict {
		t.Fatalf("a second invitation of one email answered %d", owner.Status())
	}
	checkPage(t, owner)

	// The editor accepts in a tab of their own and lands on the start page.
	ed := w.b.NewPage(t, browsertest.OwnCookies())
	ed.Go(link)
	checkPage(t, ed)
	ed.Fill("#name", "Eddie Editor")
	ed.Fill("#password", sessionPassword)
	ed.Fill("#confirm", sessionPassword)
	ed.Submit("#password")
	ed.WaitVisible("nav.sections")
	if got := strings.TrimSuffix(ed.URL(), "/"); got != strings.TrimSuffix(w.agencyPath(""), "/") {
		t.Fatalf("after accepting, the editor is at %s", got)
	}
	// The owner's list shows the invitation accepted.
	editorID := w.memberID(t, editorEmail)
	owner.Go(w.agencyPath("members"))
	if txt := owner.Text("main"); !strings.Contains(txt, "Eddie Editor") || !strings.Contains(txt, "accepted") {
		t.Fatalf("the members list after the editor joined: %s", txt)
	}

	// The owner makes the editor a viewer.
	owner.Go(w.agencyPath("members/" + editorID))
	checkPage(t, owner)
	owner.Fill("#member-role", "viewer")
	owner.Submit("#member-form")
	owner.WaitText(".flash", "Saved", 10*time.Second)
	if txt := owner.Text("main"); !strings.Contains(txt, "viewer") {
		t.Fatalf("after the change, the member's page shows: %s", txt)
	}
	// The last owner stays: taking their role is refused on their page.
	ownerID := w.memberID(t, w.ownerEmail)
	owner.Go(w.agencyPath("members/" + ownerID))
	owner.Fill("#member-role", "manager")
	owner.Submit("#member-form")
	owner.WaitText("#member-error", "last owner", 10*time.Second)
	if owner.Status() != http.StatusConflict {
		t.Fatalf("demoting the last owner answered %d", owner.Status())
	}
	checkPage(t, owner)

	// The viewer sees no owner sections and no form that writes; the
	// owner's pages are refused by link.
	ed.Go(w.agencyPath(""))
	for _, section := range []string{"Members", "API keys", "Audit trail"} {
		if strings.Contains(ed.Text("nav.sections"), section) {
			t.Fatalf("the viewer's navigation shows %s: %s", section, ed.Text("nav.sections"))
		}
	}
	if n := browsertest.Eval[int](ed, `document.querySelectorAll("main form[method=post]").length`); n != 0 {
		t.Fatalf("the viewer's start page has %d forms that write", n)
	}
	for _, page := range []string{"members", "members/" + ownerID, "keys", "audit"} {
		ed.Go(w.agencyPath(page))
		if ed.Status() != http.StatusForbidden {
			t.Fatalf("the viewer opened %s: %d", page, ed.Status())
		}
		checkPage(t, ed)
	}
	// A form forced past the pages, with a valid token, changes nothing.
	viewer := w.apiSignIn(t, editorEmail)
	cookie := "atrium_session=" + viewer.cookie
	forced := w.email("forced")
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"members", url.Values{"email": {forced}, "role": {"owner"}}},
		{"members/" + ownerID, url.Values{"role": {"viewer"}}},
		{"members/" + ownerID + "/delete", url.Values{}},
		{"keys", url.Values{"name": {"forced"}, "scopes": {"read", "write"}}},
	} {
		post.form.Set("csrf_token", viewer.csrf)
		if r := studioCall(t, "POST", w.agencyPath(post.path), post.form, "Cookie", cookie); r.status != http.StatusForbidden {
			t.Fatalf("the viewer's forced POST %s answered %d: %s", post.path, r.status, r.body)
		}
	}
	if r := w.owner.do(t, "GET", "/api/v1/members?limit=200", nil); strings.Contains(string(r.body), forced) || !strings.Contains(string(r.body), `"owner"`) {
		t.Fatalf("the forced forms changed the members: %s", r.body)
	}
	if r := w.owner.do(t, "GET", "/api/v1/keys", nil); strings.Contains(string(r.body), "forced") {
		t.Fatalf("the forced form made a key: %s", r.body)
	}

	// The owner makes a key: its secret is shown once, and it works.
	owner.Go(w.agencyPath("keys"))
	checkPage(t, owner)
	// A key the CRM refuses (published only, without a site) comes back
	// with its reason and what was typed.
	owner.Fill("#key-name", "Web page")
	owner.Click("#key-published")
	owner.Submit("#key-form")
	owner.WaitVisible("#key-error")
	if owner.Status() != http.StatusBadRequest || !strings.Contains(owner.Text("#key-error"), "site") ||
		!browsertest.Eval[bool](owner, `document.querySelector("#key-name").value === "Web page" && document.querySelector("#key-published").checked`) {
		t.Fatalf("a refused key answered %d: %s", owner.Status(), owner.Text("main"))
	}
	checkPage(t, owner)
	owner.Click("#key-published")
	owner.Fill("#key-name", "Reporting script")
	owner.Submit("#key-form")
	owner.WaitVisible("#key-secret")
	secret := strings.TrimSpace(owner.Text("#key-secret"))
	if !strings.HasPrefix(secret, "atr_") || !strings.Contains(owner.Text("main"), "shown only this once") {
		t.Fatalf("the new key's page: %s", owner.Text("main"))
	}
	checkPage(t, owner)
	wantStatus(t, call(t, "GET", s.api+"/api/v1/credits", secret, nil), http.StatusOK)
	owner.Go(w.agencyPath("keys"))
	if txt := owner.Text("main"); strings.Contains(txt, secret) || !strings.Contains(txt, "Reporting script") {
		t.Fatalf("the keys page after making one: %s", txt)
	}
	onPhone(t, owner)
	screenshot(t, owner, "keys")
	// Revoked (after the confirmation), it gets 401.
	confirmAll(owner)
	owner.Click("form[data-confirm] button.danger")
	owner.WaitText(".flash", "Revoked the key Reporting script", 10*time.Second)
	checkPage(t, owner)
	deadline := time.Now().Add(10 * time.Second)
	for call(t, "GET", s.api+"/api/v1/credits", secret, nil).status != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the revoked key still works")
		}
		time.Sleep(100 * time.Millisecond) // why sleep: polls the API, which the revocation reaches by an event
	}

	// Credits: the balance and the run's spending by action and client.
	owner.Go(w.agencyPath("credits"))
	if txt := owner.Text("main"); !strings.Contains(txt, "generate_blog") || !strings.Contains(txt, "Per client") || owner.Status() != http.StatusOK {
		t.Fatalf("the credits page: %s", txt)
	}
	if !browsertest.Eval[bool](owner, `!!document.querySelector(".owner-chart svg[role=img]")`) {
		t.Fatal("the credits page has no chart")
	}
	checkPage(t, owner)
	onPhone(t, owner)
	screenshot(t, owner, "credits")

	// The audit trail has the invitation and the key, and filters by kind.
	reloadUntil(t, owner, w.agencyPath("audit"), "key.revoked")
	txt := reloadUntil(t, owner, w.agencyPath("audit"), "invitation.created")
	if !strings.Contains(txt, "key.created") || !strings.Contains(txt, "Olive Owner") {
		t.Fatalf("the audit trail: %s", txt)
	}
	checkPage(t, owner)
	onPhone(t, owner)
	screenshot(t, owner, "audit")
	owner.Fill("#audit-type", "key")
	browsertest.Eval[bool](owner, `(document.body.dataset.before = "1", true)`)
	owner.Submit("#audit-type")
	owner.WaitVisible("body:not([data-before]) table.audit")
	if txt := owner.Text("table.audit"); strings.Contains(txt, "member.created") || !strings.Contains(owner.URL(), "resource_type=key") {
		t.Fatalf("the audit trail filtered by key: %s", txt)
	}
	owner.Go(w.agencyPath("audit?since=yesterday"))
	if owner.Status() != http.StatusBadRequest || !strings.Contains(owner.Text("main"), "2026-11-01") {
		t.Fatalf("a bad date answered %d: %s", owner.Status(), owner.Text("main"))
	}

	// A pending invitation is sent again: the new link works, the old
	// one does not.
	owner.Go(w.agencyPath("members"))
	patEmail := w.email("pat")
	owner.Fill("#invite-email", patEmail)
	owner.Fill("#invite-role", "viewer")
	owner.Submit("#invite-form")
	owner.WaitVisible("#invitation-url")
	oldLink := strings.TrimSpace(owner.Text("#invitation-url"))
	owner.Go(w.agencyPath("members/" + w.memberID(t, patEmail)))
	if txt := owner.Text("main"); !strings.Contains(txt, "pending") || strings.Contains(txt, "Sign them out everywhere") {
		t.Fatalf("a pending member's page: %s", txt)
	}
	owner.Submit("form[action$='/invitation'] button")
	owner.WaitVisible("#invitation-url")
	newLink := strings.TrimSpace(owner.Text("#invitation-url"))
	if newLink == oldLink || !strings.Contains(owner.Text("main"), "replaces the earlier ones") {
		t.Fatalf("the new invitation link %q (old %q): %s", newLink, oldLink, owner.Text("main"))
	}
	pat := w.b.NewPage(t, browsertest.OwnCookies())
	pat.Go(oldLink)
	pat.Fill("#password", sessionPassword)
	pat.Fill("#confirm", sessionPassword)
	pat.Submit("#password")
	pat.WaitText("main", "not valid any more", 10*time.Second)

	// The owner signs the viewer out everywhere, then removes them.
	owner.Go(w.agencyPath("members/" + editorID))
	confirmAll(owner)
	owner.Submit("form[action$='/end-sessions'] button")
	owner.WaitText(".flash", "signed out everywhere", 10*time.Second)
	checkPage(t, owner)
	ed.Go(w.agencyPath(""))
	if !strings.Contains(ed.URL(), "/studio/sign-in") {
		t.Fatalf("after their sessions ended, the viewer is at %s", ed.URL())
	}
	confirmAll(owner)
	owner.Submit("form[action$='/delete'] button")
	owner.WaitText(".flash", "Removed Eddie Editor", 10*time.Second)
	if strings.Contains(owner.Text("main"), editorEmail) || !strings.HasSuffix(owner.URL(), "/members") {
		t.Fatalf("after removing the viewer, %s shows: %s", owner.URL(), owner.Text("main"))
	}
	checkPage(t, owner)

	// Another agency's member, by link, is not there.
	other := s.newTenant(t)
	owner.Go(w.agencyPath("members/" + other.member))
	if owner.Status() != http.StatusNotFound || strings.Contains(owner.Text("main"), "ana@example.com") {
		t.Fatalf("another agency's member answered %d: %s", owner.Status(), owner.Text("main"))
	}
	checkPage(t, owner)
}

func testStudioClientResults(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	day := func(n int) string { return time.Now().UTC().AddDate(0, 0, -n).Format(time.RFC3339) }
	s.loadRows(t, w.client, "keywords",
		map[string]any{"keyword": "sourdough", "position": 9, "tracked_at": day(3), "status": "active"},
		map[string]any{"keyword": "sourdough", "position": 4, "tracked_at": day(1), "status": "active"},
		map[string]any{"keyword": "rye bread", "position": 12, "tracked_at": day(3), "status": "active"},
		map[string]any{"keyword": "rye bread", "position": 7, "tracked_at": day(1), "status": "active"})
	s.loadRows(t, w.client, "seo_reports",
		map[string]any{"url": "https://client.example/", "score": 82},
		map[string]any{"url": "https://client.example/menu", "score": 64})
	// Another client of the agency, whose rows the member must not see.
	otherClient := s.newClient(t, w.cms.tenant, true)
	s.loadRows(t, otherClient, "keywords", map[string]any{"keyword": "not theirs", "position": 1, "status": "active"})
	s.grant(t, w.cms.agency, 10, 10)
	wantAction(t, s.act(t, w.cms.write, map[string]any{"action": "generate_blog", "client_id": w.client, "keyword": "rye"}), "generate_blog", w.client, "success")

	// (w.invite's address, with the test's name, is too long for an
	// email's local part under this test's name.)
	email := w.email("client")
	r := w.owner.do(t, "POST", "/api/v1/members", map[string]any{"email": email, "name": "Cleo Client", "role": "client", "client_id": w.client})
	wantStatus(t, r, http.StatusCreated)
	w.s.accept(t, invitationToken(t, r), "Cleo Client")
	p := w.signIn(t, email)
	if nav := p.Text("nav.sections"); !strings.Contains(nav, "Results") || strings.Contains(nav, "Members") || strings.Contains(nav, "Content") {
		t.Fatalf("the client member's navigation: %s", nav)
	}
	checkPage(t, p)
	p.Go(w.agencyPath("results"))
	txt := p.Text("main")
	if p.Status() != http.StatusOK || !strings.Contains(txt, "Keyword positions") || !strings.Contains(txt, "Audit reports") ||
		!strings.Contains(txt, "generate_blog") || strings.Contains(txt, "not theirs") {
		t.Fatalf("the client's results answered %d: %s", p.Status(), txt)
	}
	if !browsertest.Eval[bool](p, `!!document.querySelector(".owner-chart svg[role=img]")`) {
		t.Fatal("the results have no chart")
	}
	checkPage(t, p)
	onPhone(t, p)
	screenshot(t, p, "client-results")
	p.Click("a[href$='/results/seo_reports']")
	p.WaitText("h1", "Audit reports", 10*time.Second)
	if txt := p.Text("main"); !strings.Contains(txt, "https://client.example/menu") || !strings.Contains(txt, "Scores") {
		t.Fatalf("the audit reports page: %s", txt)
	}
	checkPage(t, p)

	// Nothing else of the agency's, by link or by a forced form. (The
	// runs are open to them, their client's only: StudioManager.)
	item := w.cms.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "A post"}})["id"].(string)
	for _, page := range []string{"sites", "sites/" + w.cms.site + "/", "members", "clients", "clients/" + w.client, "keys", "credits", "audit",
		"webhooks", "sites/" + w.cms.site + "/collections/posts/items/" + item, "results/clients", "results/nonsense"} {
		p.Go(w.agencyPath(page))
		if p.Status() < 400 {
			t.Fatalf("the client member opened %s: %d %s", page, p.Status(), p.Text("main"))
		}
		if txt := p.Text("main"); strings.Contains(txt, "A post") || strings.Contains(txt, "Olive Owner") {
			t.Fatalf("the client member's refusal of %s shows: %s", page, txt)
		}
	}
	checkPage(t, p)
	member := w.apiSignIn(t, email)
	r = studioCall(t, "POST", w.agencyPath("keys"), url.Values{"csrf_token": {member.csrf}, "name": {"mine"}, "scopes": {"read"}},
		"Cookie", "atrium_session="+member.cookie)
	if r.status != http.StatusForbidden {
		t.Fatalf("the client member's forced key answered %d", r.status)
	}

	// The agency's people have no results page: it is a client's view.
	owner := w.signIn(t, w.ownerEmail)
	if strings.Contains(owner.Text("nav.sections"), "Results") {
		t.Fatalf("the owner's navigation shows Results: %s", owner.Text("nav.sections"))
	}
	owner.Go(w.agencyPath("results"))
	if owner.Status() != http.StatusNotFound {
		t.Fatalf("the owner's results answered %d", owner.Status())
	}
}
