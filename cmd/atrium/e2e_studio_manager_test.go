package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/internal/browsertest"
)

// mainScrollsSideways reports whether the page's content is wider than
// its box.
const mainScrollsSideways = `(() => { const m = document.querySelector("main"); return m.scrollWidth > m.clientWidth + 1 })()`

// invitePerson is w.invite that also keeps the member's API session (its
// cookie and CSRF token), for the raw requests a page would never send.
func (w *studioWorld) invitePerson(t *testing.T, role string, body map[string]any) (string, person) {
	t.Helper()
	email := w.email(role) // short: an address's local part is at most 64 characters
	if body == nil {
		body = map[string]any{}
	}
	body["email"], body["role"], body["name"] = email, role, strings.ToUpper(role[:1])+role[1:]+" Person"
	r := w.owner.do(t, "POST", "/api/v1/members", body)
	wantStatus(t, r, http.StatusCreated)
	return email, w.s.accept(t, invitationToken(t, r), body["name"].(string))
}

// testStudioManager: an account manager opens a client's results (a
// keyword chart drawn on the server, with its numbers), runs an audit from
// its form and watches the run page go from queued or running to success
// without reloading, with the credits after; adds a webhook and sends it
// a test. A viewer sees it all without the controls, and a forced POST is
// 403; a client member reaches only their client's runs; another agency's
// client and run are not found.
func testStudioManager(t *testing.T, s *stack, aw *actionWorld) {
	w := newStudioWorld(t, s)
	s.grant(t, w.cms.agency, 50, 50)
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	var rows []map[string]any
	for i, kw := range []string{"rye bread", "sourdough starter", "bakery near me"} {
		for d := range 3 {
			rows = append(rows, map[string]any{"keyword": kw, "position": 12 - 3*d + i, "search_volume": 1000 * (i + 1),
				"status": "active", "tracked_at": day.AddDate(0, 0, d).Add(8 * time.Hour).Format(time.RFC3339)})
		}
	}
	s.loadRows(t, w.client, "keywords", rows...)
	s.loadRows(t, w.client, "seo_reports", map[string]any{"url": "https://client.example/", "score": 72, "issues_found": 3},
		map[string]any{"url": "https://client.example/menu", "score": 41, "issues_found": 9})

	manager, mgr := w.invitePerson(t, "manager", nil)
	p := w.signIn(t, manager)

	// The clients, and the client's results as charts with their numbers.
	p.Go(w.agencyPath("clients"))
	p.WaitText("main", "Client "+t.Name(), 10*time.Second)
	checkPage(t, p)
	p.Click("main table a[href$='/clients/" + w.client + "']")
	p.WaitVisible("#keywords svg[role=img]")
	if !strings.HasSuffix(p.URL(), "/clients/"+w.client) {
		t.Fatalf("the client's link went to %s", p.URL())
	}
	if n := browsertest.Eval[int](p, `document.querySelectorAll("#keywords svg[role=img] path.chart-line, #keywords svg[role=img] polyline, #keywords svg[role=img] path").length`); n == 0 {
		t.Fatalf("the keyword chart draws nothing")
	}
	numbers := browsertest.Eval[string](p, `document.querySelector("#keywords details table").textContent`)
	for _, kw := range []string{"rye bread", "sourdough starter", "bakery near me"} {
		if !strings.Contains(numbers, kw) {
			t.Fatalf("the chart's table lacks %q: %s", kw, numbers)
		}
	}
	if txt := p.Text("#keywords table[aria-labelledby='keywords-rows']"); !strings.Contains(txt, "sourdough starter") {
		t.Fatalf("the keywords' rows lack a keyword: %s", txt)
	}
	p.WaitVisible("#seo_reports svg[role=img]")
	checkPage(t, p)
	screenshot(t, p, "client-charts")
	// On a phone the charts shrink and the tables scroll inside their
	// boxes: the page's content does not scroll sideways. (The shared
	// header is the layout's: a long agency name without spaces, such as
	// the test's, widens it by a few pixels.)
	p.SetViewport(360, 740)
	if wide := browsertest.Eval[bool](p, mainScrollsSideways); wide {
		t.Errorf("the client's page scrolls sideways at 360 px: %s", browsertest.Eval[string](p, widestElement))
	}
	p.SetViewport(1280, 800)

	// The actions, and an audit's form with its cost.
	p.Go(w.agencyPath("actions?client=" + w.client))
	p.WaitText("main table", "seo_audit", 10*time.Second)
	checkPage(t, p)
	p.Click("main table a[href*='/actions/seo_audit']")
	p.WaitVisible("#run-action")
	if cost := p.Text("#action-cost"); !strings.Contains(cost, "1 data") {
		t.Fatalf("the audit's cost shows %q, want 1 data credit", cost)
	}
	if got := browsertest.Eval[string](p, `document.querySelector("#client_id").value`); got != w.client {
		t.Fatalf("the client chosen is %q, want the client the page came from", got)
	}
	if browsertest.Eval[bool](p, `!!document.querySelector("form.action-form [name=client_id]:not(#client_id)")`) {
		t.Fatal("the schema's client_id is a field of the form besides the client select")
	}
	checkPage(t, p)
	// A form error is said by the field (the browser's own checks set
	// aside, as a browser without them would send it).
	browsertest.Eval[bool](p, `document.querySelector("form.action-form").noValidate = true; true`)
	p.Fill("#sf-url", "not an address")
	p.Submit("form.action-form")
	p.WaitVisible("#sf-url[aria-invalid=true]")
	if p.Status() != http.StatusBadRequest {
		t.Fatalf("a bad URL answered %d", p.Status())
	}
	checkPage(t, p)
	screenshot(t, p, "action-form")

	// The run: the provider's page is held, so the run stays running
	// until the test lets it finish; the page follows it live.
	held, h, release := aw.hold(t)
	p.Fill("#sf-url", held)
	p.Submit("form.action-form")
	p.WaitVisible("#run-state-text")
	runURL := p.URL()
	if !strings.Contains(runURL, "/runs/") {
		t.Fatalf("running the audit went to %s: %s", runURL, p.Text("main"))
	}
	runID := runURL[strings.LastIndex(runURL, "/")+1:]
	select {
	case <-h.fetched:
	case <-time.After(30 * time.Second):
		t.Fatal("the audit never fetched its page")
	}
	if st := p.Text("#run-state-text"); st != "queued" && st != "running" {
		t.Fatalf("the run's state before the page is released: %q", st)
	}
	p.WaitVisible("#cancel-run")
	browsertest.Eval[bool](p, `window.studioMarker = "same page"; true`)
	release()
	p.WaitText("#run-state-text", "success", 60*time.Second)
	if p.URL() != runURL || browsertest.Eval[string](p, `window.studioMarker || ""`) != "same page" {
		t.Fatalf("the page was reloaded to show the outcome (at %s)", p.URL())
	}
	p.WaitVisible("#balance-after")
	if browsertest.Eval[bool](p, `!!document.querySelector("#cancel-run")`) {
		t.Fatal("the finished run still offers to cancel it")
	}
	if txt := p.Text("#balance-after"); !strings.Contains(txt, "49 data") {
		t.Fatalf("the balance after the run: %q, want 49 data credits", txt)
	}
	if txt := p.Text("main"); !strings.Contains(txt, "issues_found") || !strings.Contains(txt, "1 data") {
		t.Fatalf("the finished run lacks its result or its spend: %s", txt)
	}
	checkPage(t, p)
	screenshot(t, p, "run-live")
	p.SetViewport(360, 740)
	if wide := browsertest.Eval[bool](p, mainScrollsSideways); wide {
		t.Errorf("the run's page scrolls sideways at 360 px")
	}
	p.SetViewport(1280, 800)
	// The run's event stream ends once the run has finished.
	rs := studioCall(t, "GET", runURL+"/events", nil, "Cookie", "atrium_session="+w.owner.cookie, "Accept", "text/event-stream")
	if rs.status != http.StatusOK || !strings.Contains(string(rs.body), "event: run") || !strings.Contains(string(rs.body), "event: done") {
		t.Fatalf("the finished run's events: %d %s", rs.status, rs.body)
	}

	// The runs, filtered.
	p.Go(w.agencyPath("runs?state=success&client=" + w.client))
	p.WaitText("main table", "seo_audit", 10*time.Second)
	checkPage(t, p)
	p.Go(w.agencyPath("runs?state=queued"))
	if txt := p.Text("main"); strings.Contains(txt, runID) || !strings.Contains(txt, "No runs match") {
		t.Fatalf("the queued runs list the finished run: %s", txt)
	}

	// Webhooks: add one, send it a test.
	rcv := newHookReceiver(t)
	p.Go(w.agencyPath("webhooks"))
	p.WaitVisible("#wh-url")
	checkPage(t, p)
	p.Fill("#wh-url", rcv.URL+"/atrium")
	p.Fill("#wh-desc", "The client's CRM")
	p.Click(".event-choices input[value='action_run.*']")
	p.Submit("form[action$='/webhooks']")
	p.WaitVisible("#webhook-secret")
	if sec := p.Text("#webhook-secret"); !strings.HasPrefix(sec, "whsec_") {
		t.Fatalf("the new webhook's secret: %q", sec)
	}
	checkPage(t, p)
	p.Submit("form[action$='/test']")
	p.WaitText("[role=status]", "Test event sent", 10*time.Second)
	select {
	case <-rcv.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the test event never reached the receiver")
	}
	if browsertest.Eval[bool](p, `!!document.querySelector("#webhook-secret")`) {
		t.Fatal("the secret is shown again after the test")
	}
	p.Go(p.URL())
	p.WaitText("#deliveries-h + .table-wrap", "webhook.test", 10*time.Second)
	checkPage(t, p)
	screenshot(t, p, "webhooks")
	hookURL := p.URL()
	// Disabled and enabled again; a bad address is said by the form.
	p.Submit("form[action$='/disable']")
	p.WaitText("#webhook-state", "disabled", 10*time.Second)
	p.Submit("form[action$='/enable']")
	p.WaitText("#webhook-state", "enabled", 10*time.Second)
	browsertest.Eval[bool](p, `document.querySelector("section[aria-labelledby=settings-h] form").noValidate = true; true`)
	p.Fill("#wh-url", "ftp://files.example/in")
	p.Submit("section[aria-labelledby=settings-h] form")
	p.WaitVisible("#settings-error")
	if p.Status() != http.StatusBadRequest || browsertest.Eval[string](p, `document.querySelector("#wh-url").value`) != "ftp://files.example/in" {
		t.Fatalf("a bad address answered %d, the form showing %q", p.Status(), browsertest.Eval[string](p, `document.querySelector("#wh-url").value`))
	}
	checkPage(t, p)
	if got := w.owner.do(t, "GET", "/api/v1/webhooks", nil); strings.Contains(string(got.body), "ftp://") {
		t.Fatalf("the refused address was saved: %s", got.body)
	}

	// A viewer reads it all, without the controls; a forced POST is 403.
	viewerEmail, viewer := w.invitePerson(t, "viewer", nil)
	pv := w.signIn(t, viewerEmail)
	pv.Go(w.agencyPath("actions/seo_audit"))
	pv.WaitVisible("#action-cost")
	if browsertest.Eval[bool](pv, `!!document.querySelector("#run-action, form.action-form")`) {
		t.Fatal("a viewer is shown the Run button")
	}
	checkPage(t, pv)
	pv.Go(runURL)
	pv.WaitText("#run-state-text", "success", 10*time.Second)
	checkPage(t, pv)
	pv.Go(hookURL)
	pv.WaitVisible("#deliveries-h")
	if browsertest.Eval[bool](pv, `!!document.querySelector("main form")`) {
		t.Fatal("a viewer is shown a webhook's controls")
	}
	checkPage(t, pv)
	pv.Go(w.agencyPath("clients/" + w.client))
	pv.WaitVisible("#keywords svg[role=img]")
	checkPage(t, pv)
	cookie := "atrium_session=" + viewer.cookie
	forced := studioCall(t, "POST", w.agencyPath("actions/seo_audit"), url.Values{"csrf_token": {viewer.csrf}, "client_id": {w.client},
		"url": {aw.site.URL + "/home"}, "idempotency_key": {"viewer-forced"}}, "Cookie", cookie, "Origin", s.api)
	if forced.status != http.StatusForbidden {
		t.Fatalf("a viewer's forced run answered %d", forced.status)
	}
	if _, data := s.credits(t, w.cms.agency); data != 49 {
		t.Fatalf("data credits after the viewer's forced run: %v, want 49", data)
	}
	if forced = studioCall(t, "POST", runURL+"/cancel", url.Values{"csrf_token": {viewer.csrf}}, "Cookie", cookie, "Origin", s.api); forced.status != http.StatusForbidden {
		t.Fatalf("a viewer's forced cancel answered %d", forced.status)
	}
	forced = studioCall(t, "POST", w.agencyPath("webhooks"), url.Values{"csrf_token": {viewer.csrf}, "url": {rcv.URL + "/viewer"},
		"events": {"*"}}, "Cookie", cookie, "Origin", s.api)
	if forced.status != http.StatusForbidden {
		t.Fatalf("a viewer's forced webhook answered %d", forced.status)
	}
	if hooks := w.owner.do(t, "GET", "/api/v1/webhooks", nil); strings.Contains(string(hooks.body), "/viewer") {
		t.Fatalf("the viewer's forced webhook was made: %s", hooks.body)
	}

	// A form sent twice (a double click, a resend after a lost answer)
	// runs the action once: both answers lead to the same run.
	twice := url.Values{"csrf_token": {mgr.csrf}, "client_id": {w.client}, "url": {aw.site.URL + "/home"}, "idempotency_key": {"studio-double-submit"}}
	first := studioCall(t, "POST", w.agencyPath("actions/seo_audit"), twice, "Cookie", "atrium_session="+mgr.cookie, "Origin", s.api)
	second := studioCall(t, "POST", w.agencyPath("actions/seo_audit"), twice, "Cookie", "atrium_session="+mgr.cookie, "Origin", s.api)
	if first.status != http.StatusSeeOther || second.status != http.StatusSeeOther || first.header.Get("Location") != second.header.Get("Location") ||
		!strings.Contains(first.header.Get("Location"), "/runs/") {
		t.Fatalf("a form sent twice: %d %s, then %d %s", first.status, first.header.Get("Location"), second.status, second.header.Get("Location"))
	}
	if runs := mgr.do(t, "GET", "/api/v1/runs?client_id="+w.client+"&action=seo_audit", nil); strings.Count(string(runs.body), "studio-double-submit") != 1 {
		t.Fatalf("a form sent twice made runs: %s", runs.body)
	}

	// A client member reaches their client's run, not the manager's pages.
	clientEmail, _ := w.invitePerson(t, "client", map[string]any{"client_id": w.client})
	pc := w.signIn(t, clientEmail)
	for _, path := range []string{"clients", "clients/" + w.client, "actions", "webhooks"} {
		pc.Go(w.agencyPath(path))
		if pc.Status() != http.StatusForbidden && pc.Status() != http.StatusNotFound {
			t.Fatalf("a client member opened %s: %d", path, pc.Status())
		}
	}
	pc.Go(runURL)
	pc.WaitText("#run-state-text", "success", 10*time.Second)
	checkPage(t, pc)
	// Their runs list is their client's, whatever the address asks.
	otherOfOurs := s.newClient(t, w.cms.tenant, true)
	s.grant(t, w.cms.agency, 0, 1)
	wantAccepted(t, s.act(t, w.cms.write, map[string]any{"action": "seo_audit", "client_id": otherOfOurs, "url": aw.site.URL + "/home"},
		"Prefer", "respond-async"), "seo_audit", otherOfOurs)
	pc.Go(w.agencyPath("runs?client=" + otherOfOurs))
	pc.WaitText("main", "seo_audit", 10*time.Second)
	if n := browsertest.Eval[int](pc, `document.querySelectorAll("main tbody tr").length`); n != 2 {
		t.Fatalf("the client member's runs list has %d runs, want their client's 2: %s", n, pc.Text("main"))
	}
	checkPage(t, pc)

	// Another agency's client and run by link: not found, nothing shown.
	other := s.newTenant(t)
	otherClient := s.newClient(t, other, true)
	s.grant(t, other.agency, 5, 5)
	otherRun := wantAccepted(t, s.act(t, other.write, map[string]any{"action": "seo_audit", "client_id": otherClient, "url": aw.site.URL + "/home"},
		"Prefer", "respond-async"), "seo_audit", otherClient)
	for _, path := range []string{"clients/" + otherClient, "runs/" + otherRun, "runs/" + otherRun + "/events", "actions/seo_audit?client=" + otherClient} {
		p.Go(w.agencyPath(path))
		if path == "actions/seo_audit?client="+otherClient {
			if got := browsertest.Eval[string](p, `document.querySelector("#client_id").value`); got == otherClient {
				t.Fatalf("the form offers another agency's client")
			}
			continue
		}
		if p.Status() != http.StatusNotFound {
			t.Fatalf("another agency's %s answered %d", path, p.Status())
		}
		if txt := p.Text("main"); strings.Contains(txt, otherClient) && !strings.Contains(txt, fmt.Sprintf("%q", otherClient)) {
			t.Fatalf("another agency's page shows its data: %s", txt)
		}
	}
}
