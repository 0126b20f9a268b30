package oidc_test

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
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/oidc"
)

// The provider is zitadel/oidc's example OpenID provider, a certified
// implementation's own example, started in the test: Atrium talks to it
// over HTTP exactly as to any provider.
const (
	clientID, clientSecret = "atrium", "atrium-secret"
	password               = "verysecure"
)

// startProvider starts the provider with a verified and an unverified
// user, and registers Atrium as a web client redirecting to redirectURL.
func startProvider(t *testing.T, redirectURL string) (issuer string) {
	t.Helper()
	users := `{
	  "u1": {"ID": "u1", "Username": "ada", "Password": "verysecure", "FirstName": "Ada", "LastName": "Lovelace",
	         "Email": "ada@example.com", "EmailVerified": true, "PreferredLanguage": "en"},
	  "u2": {"ID": "u2", "Username": "eve", "Password": "verysecure", "FirstName": "Eve", "LastName": "Unverified",
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
	// The example keeps its clients in a package variable; a later
	// registration of the same id replaces the earlier one.
	storage.RegisterClients(storage.WebClient(clientID, clientSecret, redirectURL))
	var h http.Handler
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	issuer = "http://" + srv.Listener.Addr().String() + "/"
	h = exampleop.SetupServer(issuer, storage.NewStorage(store), nil, false)
	srv.Start()
	t.Cleanup(srv.Close)
	return issuer
}

// relyingParty serves the flow's two routes as the gateway does, the
// callback answering the identity as JSON (or the error's message).
func relyingParty(t *testing.T) (rpURL string, setIssuer func(string)) {
	t.Helper()
	var rp *oidc.RelyingParty
	mux := http.NewServeMux()
	mux.HandleFunc(oidc.StartPath, func(w http.ResponseWriter, r *http.Request) {
		if err := rp.Start(w, r); err != nil {
			http.Error(w, status.Convert(err).Message(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc(oidc.CallbackPath, func(w http.ResponseWriter, r *http.Request) {
		id, returnTo, err := rp.Finish(w, r)
		if err != nil {
			http.Error(w, status.Convert(err).Code().String()+": "+status.Convert(err).Message(), http.StatusForbidden)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"email": id.Email, "name": id.Name, "return_to": returnTo})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, func(issuer string) {
		rp = oidc.New(oidc.Config{Issuer: issuer, ClientID: clientID, ClientSecret: clientSecret, RedirectURL: srv.URL + oidc.CallbackPath})
	}
}

// signIn runs the browser's part: start, the provider's login form, and
// back to the callback; it answers the callback's status and body.
func signIn(t *testing.T, c *http.Client, rpURL, issuer, username string) (int, string) {
	t.Helper()
	resp, err := c.Get(rpURL + oidc.StartPath + "?return_to=/studio/items")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// The browser is on the provider's login page now.
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("the start did not lead to the provider's login page: ended at %s (%d)", resp.Request.URL, resp.StatusCode)
	}
	resp, err = c.PostForm(issuer+"login/username", url.Values{"id": {id}, "username": {username}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// TestSignInWithAProvider: a person signs in at a real OpenID provider and
// comes back with their verified email and name, to where they started;
// an unverified email is refused; a callback replayed, or from a browser
// that did not start the flow, is refused.
func TestSignInWithAProvider(t *testing.T) {
	rpURL, setIssuer := relyingParty(t)
	issuer := startProvider(t, rpURL+oidc.CallbackPath)
	setIssuer(issuer)

	t.Run("verified email", func(t *testing.T) {
		code, body := signIn(t, browser(t), rpURL, issuer, "ada")
		if code != http.StatusOK {
			t.Fatalf("callback = %d %s, want 200", code, body)
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		if got["email"] != "ada@example.com" || got["name"] != "Ada Lovelace" || got["return_to"] != "/studio/items" {
			t.Fatalf("identity = %v, want ada@example.com, Ada Lovelace, back to /studio/items", got)
		}
	})

	t.Run("unverified email", func(t *testing.T) {
		code, body := signIn(t, browser(t), rpURL, issuer, "eve")
		if code != http.StatusForbidden || !strings.Contains(body, "has not verified the email eve@example.com") {
			t.Fatalf("callback = %d %s, want 403 saying the email is not verified", code, body)
		}
	})

	t.Run("callback from another browser", func(t *testing.T) {
		// The victim's browser lands on a callback the attacker started:
		// it holds no flow cookie, so nothing signs in.
		noRedirect := browser(t)
		noRedirect.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), rpURL+oidc.CallbackPath) {
				return http.ErrUseLastResponse
			}
			return nil
		}
		_, _ = signIn(t, noRedirect, rpURL, issuer, "ada")
		// signIn stopped before the callback: replay its URL in a fresh
		// browser.
		resp, err := browser(t).Get(rpURL + oidc.CallbackPath + "?code=x&state=y")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "not started in this browser") {
			t.Fatalf("callback without the flow's cookie = %d %s, want refused", resp.StatusCode, body)
		}
	})

	t.Run("state mismatch", func(t *testing.T) {
		c := browser(t)
		var callback string
		c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), rpURL+oidc.CallbackPath) {
				callback = req.URL.String()
				return http.ErrUseLastResponse
			}
			return nil
		}
		_, _ = signIn(t, c, rpURL, issuer, "ada")
		if callback == "" {
			t.Fatal("the provider never sent the browser back")
		}
		u, _ := url.Parse(callback)
		q := u.Query()
		q.Set("state", "forged")
		u.RawQuery = q.Encode()
		resp, err := c.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "state does not match") {
			t.Fatalf("callback with another state = %d %s, want refused", resp.StatusCode, body)
		}
	})
}

// TestReturnToStaysOnThisSite: the start refuses to send a signed-in
// browser to another origin.
func TestReturnToStaysOnThisSite(t *testing.T) {
	for _, s := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "studio", "/a\r\nSet-Cookie: x=y"} {
		if _, err := oidc.CheckReturnTo(s); err == nil {
			t.Errorf("return_to %q accepted", s)
		}
	}
	for _, s := range []string{"", "/studio/", "/studio/items?collection=posts#top"} {
		if _, err := oidc.CheckReturnTo(s); err != nil {
			t.Errorf("return_to %q refused: %v", s, err)
		}
	}
}
