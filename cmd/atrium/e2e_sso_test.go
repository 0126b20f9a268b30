package main

// Single sign-on, end to end: a real OpenID provider (zitadel/oidc's
// example provider, started here) and an Atrium stack with --oidc-*. A
// browser (an http.Client with a cookie jar) starts at the gateway, logs
// in at the provider's form and comes back signed in with the same session
// cookie as a password sign-in, matched by its verified email to the
// member the operator invited.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

const (
	ssoClientID, ssoClientSecret = "atrium", "atrium-client-secret"
	ssoPassword                  = "verysecure"
)

// startOpenIDProvider starts the provider with its users (a verified
// invited one, a verified one nobody invited, an unverified invited one)
// and registers Atrium as a web client redirecting to redirectURL.
func startOpenIDProvider(t *testing.T, redirectURL string) (issuer string) {
	t.Helper()
	users := `{
	  "u1": {"ID": "u1", "Username": "ada", "Password": "verysecure", "FirstName": "Ada", "LastName": "Lovelace",
	         "Email": "ada@example.com", "EmailVerified": true, "PreferredLanguage": "en"},
	  "u2": {"ID": "u2", "Username": "mallory", "Password": "verysecure", "FirstName": "Mallory", "LastName": "Stranger",
	         "Email": "mallory@example.com", "EmailVerified": true, "PreferredLanguage": "en"},
	  "u3": {"ID": "u3", "Username": "eve", "Password": "verysecure", "FirstName": "Eve", "LastName": "Unverified",
	         "Email": "eve@example.com", "EmailVerified": false, "PreferredLanguage": "en"}
	}`
	file := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(file, []byte(users), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := storage.StoreFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	storage.RegisterClients(storage.WebClient(ssoClientID, ssoClientSecret, redirectURL))
	var h http.Handler
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	issuer = "http://" + srv.Listener.Addr().String() + "/"
	h = exampleop.SetupServer(issuer, storage.NewStorage(store), nil, false)
	srv.Start()
	t.Cleanup(srv.Close)
	return issuer
}

// ssoBrowser is a browser: it keeps cookies and follows redirects. Its
// requests bypass the contract check of the API's responses: the flow's
// pages are the provider's and the gateway's redirects.
func ssoBrowser(t *testing.T) (*http.Client, *cookiejar.Jar) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Transport: http.DefaultTransport.(*http.Transport).Clone()}, jar
}

// ssoSignIn runs the browser's part: the gateway's start, the provider's
// login form, and back through the callback to return_to. It answers the
// last response: the page at return_to, or the callback's refusal.
func ssoSignIn(t *testing.T, c *http.Client, api, issuer, username, returnTo string) response {
	t.Helper()
	resp, err := c.Get(api + "/api/v1/sessions/oidc/start?return_to=" + url.QueryEscape(returnTo))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("the start did not lead to the provider's login page: ended at %s (%d)", resp.Request.URL, resp.StatusCode)
	}
	resp, err = c.PostForm(issuer+"login/username", url.Values{"id": {id}, "username": {username}, "password": {ssoPassword}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: raw}
	if !strings.HasPrefix(resp.Request.URL.String(), api) {
		t.Fatalf("the provider did not send the browser back to Atrium: ended at %s (%d) %s", resp.Request.URL, resp.StatusCode, raw)
	}
	_ = json.Unmarshal(raw, &r.json) // a page, or the refusal's JSON
	return r
}

// TestSingleSignOn: the operator invites Ada, who signs in at the provider
// and comes back an active owner with the session cookie (no password of
// her own), and again later as the same user; a verified email nobody
// invited and an invited email the provider has not verified are refused;
// the callback counts against the sign-in attempts.
func TestSingleSignOn(t *testing.T) {
	// The callback's URL is registered at the provider before the stack
	// starts: the gateway listens at an address chosen here.
	addr := freeAddr(t)
	api := "http://" + addr
	issuer := startOpenIDProvider(t, api+"/api/v1/sessions/oidc/callback")
	s := startStack(t, "--http-addr="+addr, "--oidc-issuer="+issuer, "--oidc-client-id="+ssoClientID,
		"--oidc-client-secret="+ssoClientSecret, "--oidc-redirect-url="+api+"/api/v1/sessions/oidc/callback",
		// The test's five sign-ins (four callbacks and a password), no
		// more, from its one address.
		"--login-attempts-per-address=5")
	agency := s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Acme"})["id"].(string)
	// The operator invites Ada as the owner, and Eve, whose email the
	// provider has not verified.
	for _, email := range []string{"Ada@Example.com", "eve@example.com"} {
		wantStatus(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+agency+"/members", map[string]any{"email": email, "name": "Invited", "role": "owner"}), http.StatusCreated)
	}

	// Ada signs in at the provider and lands where she started, signed
	// in: the session cookie is set, and it is a member's session.
	browser, jar := ssoBrowser(t)
	r := ssoSignIn(t, browser, api, issuer, "ada", "/api/v1/sessions/current")
	wantStatus(t, r, http.StatusOK)
	var cookie string
	for _, c := range jar.Cookies(&url.URL{Scheme: "http", Host: addr, Path: "/"}) {
		if c.Name == "atrium_session" {
			cookie = c.Value
		}
	}
	if cookie == "" {
		t.Fatal("no atrium_session cookie after signing in with the provider")
	}
	ada := person{s: s, cookie: cookie}
	r = ada.do(t, "GET", "/api/v1/sessions/current", nil)
	wantStatus(t, r, http.StatusOK)
	ada.csrf, _ = r.json["csrf_token"].(string)
	user, _ := r.json["user"].(map[string]any)
	ms, _ := r.json["memberships"].([]any)
	if user["email"] != "ada@example.com" || user["name"] != "Ada Lovelace" || len(ms) != 1 ||
		ms[0].(map[string]any)["agency_id"] != agency || ms[0].(map[string]any)["role"] != "owner" {
		t.Fatalf("Ada's session: %s", r.body)
	}
	r = ada.do(t, "GET", "/api/v1/members", nil)
	wantStatus(t, r, http.StatusOK)
	for _, m := range r.json["members"].([]any) {
		m := m.(map[string]any)
		if want := map[string]string{"ada@example.com": "active", "eve@example.com": "invited"}[m["email"].(string)]; m["status"] != want {
			t.Fatalf("member %v after Ada's single sign-on; want %s", m, want)
		}
	}
	// She has no password: signing in with one fails as any wrong one.
	wantError(t, call(t, "POST", s.api+"/api/v1/sessions", "", map[string]any{"email": "ada@example.com", "password": sessionPassword}),
		http.StatusUnauthorized, "the email or password is wrong")

	// Signing in again, in another browser, finds the same user.
	again, againJar := ssoBrowser(t)
	r = ssoSignIn(t, again, api, issuer, "ada", "/api/v1/sessions/current")
	wantStatus(t, r, http.StatusOK)
	if u, _ := r.json["user"].(map[string]any); u["id"] != user["id"] {
		t.Fatalf("second sign-in's user %v, want %v", r.json["user"], user["id"])
	}
	if len(againJar.Cookies(&url.URL{Scheme: "http", Host: addr, Path: "/"})) == 0 {
		t.Fatal("no cookie after the second sign-in")
	}

	// Mallory's email is verified but nobody invited it: refused, and
	// nothing signs in.
	stranger, strangerJar := ssoBrowser(t)
	r = ssoSignIn(t, stranger, api, issuer, "mallory", "/studio/")
	wantError(t, r, http.StatusForbidden, "no member of any agency has the email mallory@example.com", "ask an owner to invite you")
	for _, c := range strangerJar.Cookies(&url.URL{Scheme: "http", Host: addr, Path: "/"}) {
		if c.Name == "atrium_session" {
			t.Fatalf("a refused sign-in set the session cookie")
		}
	}
	// Eve was invited, but the provider has not verified her email.
	unverified, _ := ssoBrowser(t)
	r = ssoSignIn(t, unverified, api, issuer, "eve", "/studio/")
	wantError(t, r, http.StatusForbidden, "has not verified the email eve@example.com")

	// The start refuses to send a browser to another site afterwards.
	wantError(t, call(t, "GET", api+"/api/v1/sessions/oidc/start?return_to=https://evil.example/", "", nil), http.StatusBadRequest, "return_to")
	// The callback counts against the address's sign-in attempts, which
	// the five above have spent.
	r = call(t, "GET", api+"/api/v1/sessions/oidc/callback?code=x&state=y", "", nil)
	wantError(t, r, http.StatusTooManyRequests, "too many sign-in attempts from your address")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

// TestSingleSignOnNotConfigured: without --oidc-issuer the routes say so;
// they answer only GET.
func TestSingleSignOnNotConfigured(t *testing.T) {
	s := startStack(t)
	for _, p := range []string{"/api/v1/sessions/oidc/start", "/api/v1/sessions/oidc/callback?code=x&state=y"} {
		wantError(t, call(t, "GET", s.api+p, "", nil), http.StatusNotFound, "single sign-on is not configured", "--oidc-issuer")
	}
	r := call(t, "POST", s.api+"/api/v1/sessions/oidc/callback", "", nil)
	wantError(t, r, http.StatusMethodNotAllowed, "allowed: GET")
	if r.header.Get("Allow") != "GET" {
		t.Fatalf("Allow: %q, want GET", r.header.Get("Allow"))
	}
}
