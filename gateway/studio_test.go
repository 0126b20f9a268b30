package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// The operator's cookie is the admin principal signed by this gateway:
// a cookie forged with another secret, tampered with, carrying another
// kind of principal, or past its time is refused; each cookie has its own
// CSRF token.
func TestOperatorCookie(t *testing.T) {
	gw := newGatewayTo(t, map[string]string{"crm": closedAddr(t), "collections": closedAddr(t), "data": closedAddr(t),
		"actions": closedAddr(t), "webhooks": closedAddr(t), "audit": closedAddr(t)}, nil)
	g := studioGate{gw}
	withCookie := func(value string) *http.Request {
		r := httptest.NewRequest("GET", "/studio/", nil)
		r.AddCookie(&http.Cookie{Name: operatorCookie, Value: value}) //nolint:gosec // G124: a request's cookie, as a browser sends it
		return r
	}

	if _, err := g.OperatorSignIn(httptest.NewRequest("POST", "/studio/sign-in", nil), "not-the-admin-token-at-all"); err == nil {
		t.Fatal("a wrong admin token opened an operator session")
	}
	c, err := g.OperatorSignIn(httptest.NewRequest("POST", "/studio/sign-in", nil), "admin-token-0123456789")
	if err != nil {
		t.Fatalf("the admin token was refused: %v", err)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != StudioPath || strings.Contains(c.Value, "admin-token") {
		t.Fatalf("the operator's cookie: %+v", c)
	}
	p, csrf, err := g.Operator(withCookie(c.Value))
	if err != nil || p.Kind != principal.KindAdmin || len(csrf) < 32 {
		t.Fatalf("the operator's own cookie: %v %v %q", p, err, csrf)
	}

	forger, _ := principal.NewSigner([]byte("another-secret-another-secret-32b"))
	other := gw.signer.SignFor(principal.Principal{Kind: principal.KindAdmin, Subject: "x"}, time.Hour)
	tampered := []byte(c.Value)
	tampered[len(tampered)/3] ^= 1
	payload, sig, _ := strings.Cut(c.Value, ".")
	refused := map[string]string{
		"forged with another secret": forger.SignFor(p, time.Hour),
		"tampered":                   string(tampered),
		"without its signature":      payload,
		"signature only":             "." + sig,
		"another payload":            strings.Split(other, ".")[0] + "." + sig,
		"a user's principal":         gw.signer.SignFor(principal.Principal{Kind: principal.KindUser, Subject: "u1", AgencyID: "ag1", Role: principal.RoleOwner}, time.Hour),
		"an API key's principal":     gw.signer.SignFor(principal.Principal{Kind: principal.KindKey, Subject: "k1", AgencyID: "ag1", Scopes: []principal.Scope{principal.ScopeRead, principal.ScopeWrite}}, time.Hour),
		"an anonymous principal":     gw.signer.SignFor(principal.Principal{Kind: principal.KindAnonymous, Subject: "anonymous"}, time.Hour),
		"a service's principal":      gw.signer.SignFor(principal.Principal{Kind: principal.KindService, Subject: "collections"}, time.Hour),
		"expired":                    gw.signer.SignFor(p, -time.Minute),
		"empty":                      "",
		"garbage":                    "%00<script>",
		"too long":                   strings.Repeat("a", 5000) + "." + sig,
	}
	for what, value := range refused {
		if q, _, err := g.Operator(withCookie(value)); err == nil {
			t.Errorf("a cookie %s was accepted as %v", what, q)
		}
	}
	if _, _, err := g.Operator(httptest.NewRequest("GET", "/studio/", nil)); err == nil {
		t.Error("no cookie was accepted")
	}

	// Each cookie has its own token; none works with another cookie.
	c2 := gw.signer.SignFor(p, operatorTTL-time.Minute)
	_, csrf2, err := g.Operator(withCookie(c2))
	if err != nil {
		t.Fatal(err)
	}
	if c2 == c.Value || csrf2 == csrf {
		t.Fatalf("two cookies share the CSRF token %q", csrf)
	}
	if strings.Contains(c.Value, csrf) {
		t.Fatal("the CSRF token can be read from the cookie")
	}
}

// The operator's console over HTTP with a forged cookie: its pages send to
// the sign-in form, its forms answer 401, and nothing is done.
func TestOperatorConsoleRefusesAForgedCookie(t *testing.T) {
	r := startGateway(t, closedAddr(t), nil)
	admin := "http://" + r.gw.AdminAddr()
	forger, _ := principal.NewSigner([]byte("another-secret-another-secret-32b"))
	forged := forger.SignFor(principal.Principal{Kind: principal.KindAdmin, Subject: "admin"}, time.Hour)
	req, _ := http.NewRequest("GET", admin+"/studio/", nil)
	req.AddCookie(&http.Cookie{Name: operatorCookie, Value: forged}) //nolint:gosec // G124: a request's cookie
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/studio/sign-in" {
		t.Fatalf("a forged cookie's GET: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	a := call(t, "POST", admin+"/studio/agencies/ag1/credits", "", "", "Cookie: "+operatorCookie+"="+forged, "Content-Type: application/x-www-form-urlencoded")
	a.want(t, http.StatusUnauthorized, "operator session has ended")
}

// --studio=false: neither listener serves /studio/ (a JSON 404, as for any
// unknown path), and the API works as before.
func TestStudioOff(t *testing.T) {
	f := &fakeCRM{list: func(context.Context) (*crmv1.ListProspectsResponse, error) {
		return &crmv1.ListProspectsResponse{}, nil
	}}
	r := startGateway(t, startFakeCRM(t, f), func(c *Config) { c.StudioOff = true })
	if r.gw.studio != nil {
		t.Fatal("--studio=false built the console")
	}
	for _, base := range []string{"http://" + r.gw.HTTPAddr(), "http://" + r.gw.AdminAddr()} {
		for _, path := range []string{"/studio/", "/studio", "/studio/sign-in", "/studio/static/studio.css", "/studio/a/ag1/"} {
			a := call(t, "GET", base+path, "", "")
			if a.code != http.StatusNotFound {
				t.Errorf("%s%s with --studio=false: %d, want 404", base, path, a.code)
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(a.body), &body); err != nil || body["error"] == nil {
				t.Errorf("%s%s with --studio=false: not the API's JSON error: %s", base, path, a.body)
			}
		}
		a := call(t, "POST", base+"/studio/sign-in", "email=a&password=b", "", "Content-Type: application/x-www-form-urlencoded")
		if a.code != http.StatusNotFound && a.code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s/studio/sign-in with --studio=false: %d", base, a.code)
		}
	}
	if code, body := get(t, "http://"+r.gw.HTTPAddr()+"/api/v1/prospects"); code != http.StatusOK {
		t.Fatalf("the API with --studio=false: %d %v", code, body)
	}
}

// A form posted to the console that the gateway refuses before the Studio
// sees it (too large, too slow, cut short) is answered with the console's
// problem page, saying what happened and what to do, under the console's
// Content-Security-Policy.
func TestStudioRefusalsArePages(t *testing.T) {
	r := startGateway(t, closedAddr(t), func(c *Config) {
		c.MaxBodyBytes = 1024
		c.RequestTimeout = 500 * time.Millisecond
	})
	exchange := func(t *testing.T, req string, halfClose bool) (*http.Response, string) {
		t.Helper()
		c, err := net.Dial("tcp", r.gw.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		if halfClose {
			_ = c.(*net.TCPConn).CloseWrite()
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no response: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	form := func(length int, body string) string {
		return fmt.Sprintf("POST /studio/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", length, body)
	}
	for _, tc := range []struct {
		name      string
		req       string
		halfClose bool
		code      int
		says      []string
	}{
		{"declared over the limit", form(4096, strings.Repeat("x", 4096)), false, http.StatusRequestEntityTooLarge, []string{"1024 bytes", "Choose a smaller file"}},
		{"chunked over the limit", "POST /studio/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n" +
			fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", 2000, strings.Repeat("x", 2000)), false, http.StatusRequestEntityTooLarge, []string{"1024 bytes"}},
		{"stalled", form(100, "email="), false, http.StatusRequestTimeout, []string{"did not arrive", "Send the form again"}},
		{"cut short", form(100, "email="), true, http.StatusBadRequest, []string{"ended before it was complete"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := exchange(t, tc.req, tc.halfClose) //nolint:bodyclose // exchange read and closed it
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.code, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("Content-Type %q, want the console's page: %s", ct, body)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy %q, want the console's", csp)
			}
			for _, s := range tc.says {
				if !strings.Contains(body, s) {
					t.Errorf("the page does not say %q:\n%s", s, body)
				}
			}
		})
	}
	// The API's own routes keep their JSON errors:
	// TestChunkedBodyOverTheLimitIs413 and
	// TestBodyShorterThanDeclaredIsAnsweredWithinTheDeadline.
}
