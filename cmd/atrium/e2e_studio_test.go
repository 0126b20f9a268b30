package main

// Atrium Studio, the console, in a real browser: Debian's Chromium driven
// through internal/browsertest, with axe-core judging every page. The
// journeys are the people's own: each signs in through the sign-in form
// and works only with what the pages show.

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/atrium-hq/atrium/internal/browsertest"
)

// studioWorld is an agency ready for the console: a site with authors,
// posts and pages (newCMS), a client with keyword rows, and its owner
// signed in over the API (for setting things up quickly); people are
// invited by the owner and sign in through the console.
type studioWorld struct {
	s          *stack
	cms        cmsTenant
	client     string
	owner      person
	ownerEmail string
	b          *browsertest.Browser
}

func newStudioWorld(t *testing.T, s *stack) *studioWorld {
	t.Helper()
	w := &studioWorld{s: s, cms: s.newCMS(t)}
	w.client = s.newClient(t, w.cms.tenant, true)
	w.ownerEmail = w.email("owner")
	r := s.adminCall(t, "POST", "/admin/v1/agencies/"+w.cms.agency+"/members", map[string]any{"email": w.ownerEmail, "name": "Olive Owner", "role": "owner"})
	wantStatus(t, r, http.StatusCreated)
	w.owner = s.accept(t, invitationToken(t, r), "Olive Owner")
	// At most two browsers at once: the suite runs its tests in parallel,
	// on two cores.
	studioBrowsers <- struct{}{}
	t.Cleanup(func() { <-studioBrowsers })
	w.b = browsertest.Start(t)
	return w
}

// studioBrowsers bounds the Chromiums the suite runs at once.
var studioBrowsers = make(chan struct{}, 2)

// email is a unique address for who in this world's agency.
func (w *studioWorld) email(who string) string { return who + "-" + w.cms.agency + "@example.com" }

// studio is the console's address on the stack.
func (w *studioWorld) studio(path string) string {
	return w.s.api + "/studio/" + strings.TrimPrefix(path, "/")
}

// agencyPath is a page of the world's agency.
func (w *studioWorld) agencyPath(path string) string {
	return w.studio("a/" + w.cms.agency + "/" + strings.TrimPrefix(path, "/"))
}

// signIn opens a browser tab of its own (its own cookies) and signs email
// in through the sign-in form; the tab is then on the agency's start page.
func (w *studioWorld) signIn(t *testing.T, email string) *browsertest.Page {
	t.Helper()
	p := w.b.NewPage(t, browsertest.OwnCookies())
	p.Go(w.studio("sign-in"))
	p.Fill("#email", email)
	p.Fill("#password", sessionPassword)
	p.Submit("form[action='/studio/sign-in']")
	p.WaitVisible("nav.sections")
	if !strings.Contains(p.URL(), "/studio/a/") {
		t.Fatalf("signing in %s ended at %s: %s", email, p.URL(), p.Text("main"))
	}
	return p
}

// checkPage holds a page to the console's quality bar: no serious or
// critical axe-core violation, no console error (a CSP violation is one).
//
// A page the console answered with an error status on purpose (a wrong
// password's 401, another agency's 404) is logged by the browser as a
// failed resource; only its static files' failures count.
func checkPage(t *testing.T, p *browsertest.Page) {
	t.Helper()
	p.AssertAccessible(t)
	checkedMu.Lock()
	errs := p.ConsoleErrors()
	seen := checked[p]
	checked[p] = len(errs)
	checkedMu.Unlock()
	var bad []string
	for _, e := range errs[min(seen, len(errs)):] {
		if strings.Contains(e, "Failed to load resource: the server responded with a status of 4") && !strings.Contains(e, "/studio/static/") {
			continue
		}
		bad = append(bad, e)
	}
	if len(bad) > 0 {
		t.Errorf("the page %s logged errors: %s", p.URL(), strings.Join(bad, "; "))
	}
}

// widestElement names the elements wider than the viewport when the page
// scrolls sideways ("" when it does not).
const widestElement = `(() => {
  const vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= vw + 2) return "";
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.right > vw + 2 || r.left + el.scrollWidth > vw + 2) out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + el.className : "") + " right=" + Math.round(r.right));
  }
  return "scrollWidth " + document.documentElement.scrollWidth + " > " + vw + ": " + out.slice(0, 8).join(", ");
})()`

// checked is how many of each page's console errors were already judged.
var (
	checkedMu sync.Mutex
	checked   = map[*browsertest.Page]int{}
)

// screenshot writes the page's picture into docs/studio/ for
// docs/studio.md, when the run is asked to (ATRIUM_UPDATE_DOCS=1): a
// normal run leaves the checkout as it was.
func screenshot(t *testing.T, p *browsertest.Page, name string) {
	t.Helper()
	if os.Getenv("ATRIUM_UPDATE_DOCS") != "1" {
		return
	}
	dir := filepath.Join("..", "..", "docs", "studio")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	p.Screenshot(filepath.Join(dir, name+".png"))
}

// studioCall makes a request of the console as a browser's form would:
// form is sent urlencoded when not nil; headers are name, value pairs. It
// does not follow redirects.
func studioCall(t *testing.T, method, u string, form url.Values, headers ...string) response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the page: %v", method, u, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// testStudioSignIn: the sign-in page, a wrong password, the start page of
// the agency with its clients and credits, the security headers, a form
// posted without its token, and signing out.
func testStudioSignIn(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)

	// The console's headers: a strict CSP without inline script.
	r := studioCall(t, "GET", w.studio("sign-in"), nil)
	if r.status != http.StatusOK {
		t.Fatalf("the sign-in page answered %d", r.status)
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
		!strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("Content-Security-Policy = %q", csp)
	}
	// Signed out, an agency's page leads to the sign-in form and back.
	p := w.b.NewPage(t, browsertest.OwnCookies())
	p.Go(w.agencyPath(""))
	if !strings.Contains(p.URL(), "/studio/sign-in?next=") {
		t.Fatalf("signed out, the start page went to %s", p.URL())
	}
	checkPage(t, p)
	screenshot(t, p, "sign-in")
	p.Fill("#email", w.ownerEmail)
	p.Fill("#password", "not the password at all")
	p.Submit("form[action='/studio/sign-in']")
	p.WaitText("[role=alert]", "do not match", 10*time.Second)
	if p.Status() != http.StatusUnauthorized {
		t.Fatalf("a wrong password answered %d", p.Status())
	}
	// The owner is also a viewer of a second agency: the header offers
	// to switch.
	second := s.newTenant(t)
	r = s.adminCall(t, "POST", "/admin/v1/agencies/"+second.agency+"/members", map[string]any{"email": w.ownerEmail, "name": "Olive Owner", "role": "viewer"})
	wantStatus(t, r, http.StatusCreated)
	s.accept(t, invitationToken(t, r), "Olive Owner")
	p.Fill("#password", sessionPassword)
	p.Submit("form[action='/studio/sign-in']")
	p.WaitVisible("nav.sections")
	if got := p.URL(); !strings.Contains(got, "/studio/a/"+w.cms.agency+"/") && !strings.Contains(got, "/studio/a/"+second.agency+"/") {
		t.Fatalf("after signing in: %s, want one of the person's agencies' start page", got)
	}
	p.Go(w.agencyPath(""))
	p.Click(".switcher summary")
	p.Click(".switcher a[href*='" + second.agency + "']")
	p.WaitText(".role", "viewer", 10*time.Second)
	if txt := p.Text("nav.sections"); strings.Contains(txt, "Members") || strings.Contains(txt, "API keys") {
		t.Fatalf("as a viewer of the second agency the menu offers %q", txt)
	}
	checkPage(t, p)
	p.Go(w.agencyPath(""))
	p.WaitText(".role", "owner", 10*time.Second)
	if txt := p.Text("main"); !strings.Contains(txt, "Credits") || !strings.Contains(txt, "Clients") {
		t.Fatalf("the owner's start page lacks credits or clients: %s", txt)
	}
	checkPage(t, p)
	screenshot(t, p, "home")
	// On a phone, the page still has no horizontal scrolling.
	p.SetViewport(360, 740)
	if wide := browsertest.Eval[string](p, widestElement); wide != "" {
		t.Errorf("the start page scrolls sideways at 360 px: %s", wide)
	}
	p.SetViewport(1280, 800)

	// A form posted without the session's token changes nothing.
	cookie := "atrium_session=" + w.owner.cookie
	r = studioCall(t, "POST", w.studio("sign-out"), url.Values{}, "Cookie", cookie)
	if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "security token") {
		t.Fatalf("sign-out without the CSRF token: %d %s", r.status, r.body)
	}
	wantStatus(t, w.owner.do(t, "GET", "/api/v1/sessions/current", nil), http.StatusOK)
	// Another agency's pages are not there, by link either.
	other := s.newTenant(t)
	if other.agency == second.agency {
		t.Fatal("newTenant made the same agency twice")
	}
	p.Go(w.studio("a/" + other.agency + "/"))
	if p.Status() != http.StatusNotFound {
		t.Fatalf("another agency's start page answered %d", p.Status())
	}

	// With the keyboard alone: the first Tab stop is the skip link, which
	// moves the focus to the content; Tab and typing sign a person in.
	kp := w.b.NewPage(t, browsertest.OwnCookies())
	kp.Go(w.studio("sign-in"))
	kp.Keyboard(kb.Tab)
	if got := browsertest.Eval[string](kp, "document.activeElement.className"); got != "skip" {
		t.Fatalf("the first Tab stop is %q, want the skip link", got)
	}
	kp.Keyboard(kb.Enter)
	for range 10 {
		if browsertest.Eval[string](kp, "document.activeElement.id") == "email" {
			break
		}
		kp.Keyboard(kb.Tab)
	}
	if got := browsertest.Eval[string](kp, "document.activeElement.id"); got != "email" {
		t.Fatalf("Tab from the content never reached the email field (focus on %q)", got)
	}
	kp.Keyboard(w.ownerEmail)
	kp.Keyboard(kb.Tab)
	kp.Keyboard(sessionPassword)
	kp.Keyboard(kb.Enter)
	kp.WaitVisible("nav.sections")
	// Every link and button of the start page can be reached by Tab.
	reached := browsertest.Eval[bool](kp, `[...document.querySelectorAll("a[href], button, input, select, textarea, summary")].every(el => el.tabIndex >= 0)`)
	if !reached {
		t.Error("a control of the start page is out of the Tab order")
	}

	// Signing out ends the session: the start page asks to sign in again.
	p.Go(w.agencyPath(""))
	p.Submit("form.signout")
	p.WaitVisible("#email")
	p.Go(w.agencyPath(""))
	if !strings.Contains(p.URL(), "/studio/sign-in") {
		t.Fatalf("after signing out the start page is at %s", p.URL())
	}
}

// testStudioOperator: the operator's console on the admin listener, signed
// in with the admin token: the agencies with their credits, an agency's
// sites and keys, credits added, a key revoked (and refused by the API at
// once after), and none of it on the public listener.
func testStudioOperator(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	op := func(path string) string { return s.admin + "/studio/" + strings.TrimPrefix(path, "/") }
	p := w.b.NewPage(t, browsertest.OwnCookies())
	p.Go(op(""))
	if !strings.HasSuffix(p.URL(), "/studio/sign-in") {
		t.Fatalf("signed out, the operator's console went to %s", p.URL())
	}
	checkPage(t, p)
	p.Fill("#token", "adm_not-the-token-at-all-000000")
	p.Submit("form[action='/studio/sign-in']")
	p.WaitText("[role=alert]", "not this deployment's admin token", 10*time.Second)
	p.Fill("#token", testAdminToken)
	p.Submit("form[action='/studio/sign-in']")
	p.WaitText("h1", "Agencies", 10*time.Second)
	checkPage(t, p)

	// The agency's page, reached from the list (the world's agency may be
	// on a later page of a busy stack: opened by its address).
	p.Go(op("agencies/" + w.cms.agency))
	p.WaitText("h2#sites-h", "Sites", 10*time.Second)
	if txt := p.Text("main"); !strings.Contains(txt, w.cms.site) {
		t.Fatalf("the agency's page lacks its site %s: %s", w.cms.site, txt)
	}
	checkPage(t, p)
	screenshot(t, p, "operator-agency")
	before := p.Text("#credits-ai")
	p.Fill("#ai", "25")
	p.Submit("form[action$='/credits']")
	p.WaitText("[role=status]", "Credits added", 10*time.Second)
	if after := p.Text("#credits-ai"); after == before {
		t.Fatalf("AI credits stayed %s after adding 25", after)
	}
	// A bad amount is explained, and changes nothing.
	p.Fill("#ai", "lots")
	r := studioCall(t, "POST", op("agencies/"+w.cms.agency+"/credits"), url.Values{"ai": {"lots"}})
	if r.status != http.StatusUnauthorized {
		t.Fatalf("adding credits without the operator's cookie: %d", r.status)
	}

	// Revoking the tenant's read key: the API refuses it at once after.
	wantStatus(t, call(t, "GET", s.api+"/api/public/v1/collections", w.cms.read, nil), http.StatusOK)
	p.Go(op("agencies/" + w.cms.agency))
	n := browsertest.Eval[int](p, `document.querySelectorAll("form[action$='/revoke']").length`)
	if n == 0 {
		t.Fatalf("no key to revoke on the agency's page: %s", p.Text("main"))
	}
	// Revoke every key of the agency (the world's keys are its only ones).
	for range n {
		p.Go(op("agencies/" + w.cms.agency))
		if browsertest.Eval[int](p, `document.querySelectorAll("form[action$='/revoke']").length`) == 0 {
			break
		}
		browsertest.Eval[bool](p, `(document.querySelector("form[action$='/revoke']").removeAttribute("data-confirm"), true)`)
		p.Submit("form[action$='/revoke']")
		p.WaitText("[role=status]", "revoked", 10*time.Second)
	}
	deadline := time.Now().Add(10 * time.Second)
	for call(t, "GET", s.api+"/api/public/v1/collections", w.cms.read, nil).status != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the revoked key still works after 10 s")
		}
		time.Sleep(50 * time.Millisecond) // why sleep: polls the API, which the revocation reaches by an event
	}

	// The public listener has no operator's console.
	if r := studioCall(t, "GET", w.studio("agencies/"+w.cms.agency), nil); r.status != http.StatusSeeOther && r.status != http.StatusNotFound {
		t.Fatalf("the operator's page on the public listener answered %d", r.status)
	}
	// Signing out ends the operator's session.
	p.Go(op(""))
	p.Submit("form.signout")
	p.WaitVisible("#token")
}
