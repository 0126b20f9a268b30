package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/internal/browsertest"
)

// testStudioReports: a client's reports in the Studio (issue 27). A
// manager finds the report made for the client on the client's page, with
// its web page and PDF, makes a share link (shown once, with a copy
// button), which opens without a key; the link is listed live, and once
// revoked answers 410. A viewer reads the reports and the links without
// the controls; a client member finds their reports on their results
// page, with no share control, and a forced POST changes nothing. Another
// agency's link cannot be revoked from here. axe-core checks each page.
func testStudioReports(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	s.grant(t, w.cms.agency, 50, 50)
	rep := s.act(t, w.cms.write, map[string]any{"action": "generate_report", "client_id": w.client, "period": "last_month", "title": "Bakery monthly report"})
	data := wantAction(t, rep, "generate_report", w.client, "success")
	htmlURL, _ := data["html_url"].(string)
	// The run made a link of its own (share_url): the client has one live.
	auto := call(t, "GET", s.api+"/api/v1/report-shares?client_id="+w.client, w.cms.read, nil)
	wantStatus(t, auto, http.StatusOK)
	runID, _ := auto.json["shares"].([]any)[0].(map[string]any)["run_id"].(string)
	liveLinks := `document.querySelectorAll("#reports form[action$='/revoke']").length`

	manager, mgr := w.invitePerson(t, "manager", nil)
	p := w.signIn(t, manager)
	p.Go(w.agencyPath("clients/" + w.client))
	p.WaitText("#reports", "Bakery monthly report", 10*time.Second)
	if got := browsertest.Eval[string](p, `document.querySelector("#reports .report-files a").getAttribute("href")`); got != htmlURL {
		t.Fatalf("the report's web page link is %q; want the run's html_url %q", got, htmlURL)
	}
	if !browsertest.Eval[bool](p, `!!document.querySelector("#reports .report-files a[href$='.pdf']")`) {
		t.Fatal("the report has no PDF link")
	}
	checkPage(t, p)

	// A link for 0 days is refused by the form, which keeps what was typed.
	browsertest.Eval[bool](p, `document.querySelector("#reports form.share-form").noValidate = true; true`)
	p.Fill("#reports form.share-form input[name=expires_in_days]", "0")
	p.Submit("#reports form.share-form")
	p.WaitVisible("#share-error")
	if p.Status() != http.StatusBadRequest || !strings.Contains(p.Text("#share-error"), "1 to 365") {
		t.Fatalf("a 0-day link answered %d: %q", p.Status(), p.Text("#share-error"))
	}
	checkPage(t, p)

	// A link for 30 days, shown once.
	p.Fill("#reports form.share-form input[name=expires_in_days]", "30")
	p.Submit("#reports form.share-form")
	p.WaitVisible("#share-url")
	shareURL := strings.TrimSpace(p.Text("#share-url"))
	if !strings.HasPrefix(shareURL, s.api+"/r/") || !browsertest.Eval[bool](p, `!!document.querySelector("button[data-copy='#share-url']")`) {
		t.Fatalf("the share link page shows %q", shareURL)
	}
	checkPage(t, p)
	if shared := fetchFile(t, shareURL); !strings.Contains(string(shared.body), "Bakery monthly report") {
		t.Fatalf("the share link opens %.200s", shared.body)
	}

	// Listed live on the client's page, then revoked.
	p.Go(w.agencyPath("clients/" + w.client))
	p.WaitVisible("#reports form[action$='/revoke']")
	if n := browsertest.Eval[int](p, liveLinks); n != 2 {
		t.Fatalf("%d live links listed; want the run's and the new one", n)
	}
	screenshot(t, p, "client-reports")
	confirmAll(p)
	p.Submit("#reports form[action$='/revoke']") // the first: the newest, the one just made
	p.WaitVisible("main [role=status], main .flash")
	if n := browsertest.Eval[int](p, liveLinks); n != 1 {
		t.Fatalf("%d live links listed after the revoke; want 1", n)
	}
	checkPage(t, p)
	resp, err := http.Get(shareURL) //nolint:gosec // G107: the link the page under test gave
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGone {
		t.Fatalf("the revoked link answered %d; want 410", resp.StatusCode)
	}

	// A viewer reads the reports and the links, without the controls.
	shareID, _ := auto.json["shares"].([]any)[0].(map[string]any)["id"].(string)
	viewerEmail, _ := w.invitePerson(t, "viewer", nil)
	pv := w.signIn(t, viewerEmail)
	pv.Go(w.agencyPath("clients/" + w.client))
	pv.WaitText("#reports", "Live share links", 10*time.Second)
	if browsertest.Eval[bool](pv, `!!document.querySelector("#reports form")`) {
		t.Fatal("a viewer is shown the share link controls")
	}
	checkPage(t, pv)

	// A client member: their reports on their results, no share control.
	clientEmail, member := w.invitePerson(t, "client", map[string]any{"client_id": w.client})
	pc := w.signIn(t, clientEmail)
	pc.Go(w.agencyPath("results"))
	pc.WaitText("#reports", "Bakery monthly report", 10*time.Second)
	if browsertest.Eval[bool](pc, `!!document.querySelector("#reports form, #links-h")`) {
		t.Fatal("a client member is shown the share links")
	}
	checkPage(t, pc)
	cookie := "atrium_session=" + member.cookie
	for _, path := range []string{"clients/" + w.client + "/reports/" + runID + "/shares", "clients/" + w.client + "/report-shares/" + shareID + "/revoke"} {
		forced := studioCall(t, "POST", w.agencyPath(path), url.Values{"csrf_token": {member.csrf}, "expires_in_days": {"30"}}, "Cookie", cookie, "Origin", s.api)
		if forced.status != http.StatusForbidden {
			t.Fatalf("a client member's forced POST %s answered %d", path, forced.status)
		}
	}
	list := call(t, "GET", s.api+"/api/v1/report-shares?client_id="+w.client, w.cms.read, nil)
	if n := strings.Count(string(list.body), `"active"`); n != 1 {
		t.Fatalf("after the forced POSTs the client has %d live links; want 1: %s", n, list.body)
	}

	// Another agency's link, through this agency's address: not found.
	other := s.newTenant(t)
	otherClient := s.newClient(t, other, true)
	s.grant(t, other.agency, 10, 10)
	theirs := wantAction(t, s.act(t, other.write, map[string]any{"action": "generate_report", "client_id": otherClient, "period": "last_week"}), "generate_report", otherClient, "success")
	theirShares := call(t, "GET", s.api+"/api/v1/report-shares", other.read, nil)
	theirID, _ := theirShares.json["shares"].([]any)[0].(map[string]any)["id"].(string)
	forced := studioCall(t, "POST", w.agencyPath("clients/"+w.client+"/report-shares/"+theirID+"/revoke"), url.Values{"csrf_token": {mgr.csrf}}, "Cookie", "atrium_session="+mgr.cookie, "Origin", s.api)
	if forced.status != http.StatusNotFound {
		t.Fatalf("revoking another agency's link answered %d; want 404", forced.status)
	}
	if got := fetchFile(t, theirs["share_url"].(string)); len(got.body) == 0 {
		t.Fatal("another agency's link stopped working")
	}
}
