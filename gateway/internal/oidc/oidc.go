package oidc

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Config is the provider and this deployment's registration with it.
type Config struct {
	// Issuer is the provider's issuer URL; its discovery document is read
	// from Issuer + "/.well-known/openid-configuration".
	Issuer string
	// ClientID and ClientSecret are Atrium's registration at the provider.
	ClientID, ClientSecret string
	// RedirectURL is where the provider sends the browser back: the public
	// listener's CallbackPath, as the provider knows it.
	RedirectURL string
	// Secure marks the flow's cookie Secure (served over TLS).
	Secure bool
	// HTTPClient asks the provider; nil is http.DefaultClient.
	HTTPClient *http.Client
}

// The public routes of the flow, on the gateway's public listener.
const (
	StartPath    = "/api/v1/sessions/oidc/start"
	CallbackPath = "/api/v1/sessions/oidc/callback"
	// cookieName holds the flow's state between the start and the
	// callback, in the browser that started it.
	cookieName = "atrium_oidc"
	// flowTTL is how long a started sign-in may take at the provider.
	flowTTL = 10 * time.Minute
	// DefaultReturnTo is where a signed-in browser goes when the start
	// named nowhere.
	DefaultReturnTo = "/studio/"
)

// Identity is who the provider says signed in, with a verified email.
type Identity struct {
	Email, Name, Subject string
}

// RelyingParty runs the authorization code flow with PKCE. The provider's
// discovery document is read on first use and again after a failure, so
// that Atrium starts (and answers everything else) while the provider is
// down.
type RelyingParty struct {
	cfg Config

	mu       sync.Mutex
	provider *gooidc.Provider
	oauth    *oauth2.Config
	verifier *gooidc.IDTokenVerifier
}

// New returns a relying party for cfg. It asks the provider nothing yet.
func New(cfg Config) *RelyingParty { return &RelyingParty{cfg: cfg} }

// flow is what the browser keeps between start and callback. The browser
// holds it in an HttpOnly cookie scoped to the callback: the state ties the
// callback to this browser (login CSRF), the nonce the ID token to this
// flow, the verifier the code to this flow (PKCE).
type flow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	ReturnTo string `json:"r"`
	Expires  int64  `json:"e"`
}

func (rp *RelyingParty) setup(ctx context.Context) (*oauth2.Config, *gooidc.IDTokenVerifier, error) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.oauth != nil {
		return rp.oauth, rp.verifier, nil
	}
	if rp.cfg.HTTPClient != nil {
		ctx = gooidc.ClientContext(ctx, rp.cfg.HTTPClient)
	}
	provider, err := gooidc.NewProvider(ctx, rp.cfg.Issuer)
	if err != nil {
		return nil, nil, status.Errorf(codes.Unavailable, "the single sign-on provider %s cannot be reached; try again shortly, or sign in with your password", rp.cfg.Issuer)
	}
	rp.provider = provider
	rp.oauth = &oauth2.Config{
		ClientID: rp.cfg.ClientID, ClientSecret: rp.cfg.ClientSecret,
		RedirectURL: rp.cfg.RedirectURL, Endpoint: provider.Endpoint(),
		Scopes: []string{gooidc.ScopeOpenID, "email", "profile"},
	}
	rp.verifier = provider.Verifier(&gooidc.Config{ClientID: rp.cfg.ClientID})
	return rp.oauth, rp.verifier, nil
}

// Start answers the redirect to the provider's sign-in, keeping the flow
// in the browser's cookie. returnTo is where the browser goes once signed
// in: a path on this origin only (anything else would make the gateway an
// open redirect).
func (rp *RelyingParty) Start(w http.ResponseWriter, r *http.Request) error {
	returnTo, err := CheckReturnTo(r.URL.Query().Get("return_to"))
	if err != nil {
		return err
	}
	oc, _, err := rp.setup(r.Context())
	if err != nil {
		return err
	}
	f := flow{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), ReturnTo: returnTo,
		Expires: time.Now().Add(flowTTL).Unix()}
	raw, _ := json.Marshal(f)       // a struct of strings and a number
	http.SetCookie(w, &http.Cookie{ //nolint:gosec // G124: Secure over TLS or with Config.Secure (--cookie-secure)
		Name: cookieName, Value: base64.RawURLEncoding.EncodeToString(raw), Path: CallbackPath,
		MaxAge: int(flowTTL / time.Second), HttpOnly: true, Secure: rp.cfg.Secure || r.TLS != nil,
		// Lax: the provider's redirect back is a top-level GET
		// navigation, on which Lax cookies are sent.
		SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, oc.AuthCodeURL(f.State, gooidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
	return nil
}

// Finish completes the flow at the callback: it checks the state against
// the browser's cookie, exchanges the code with the PKCE verifier, verifies
// the ID token (signature, issuer, audience, expiry, nonce) and answers the
// identity, whose email the provider must have verified.
func (rp *RelyingParty) Finish(w http.ResponseWriter, r *http.Request) (Identity, string, error) {
	q := r.URL.Query()
	// The flow's cookie is used once, whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: CallbackPath, MaxAge: -1, HttpOnly: true, //nolint:gosec // G124: Secure as the start's cookie
		Secure: rp.cfg.Secure || r.TLS != nil, SameSite: http.SameSiteLaxMode})
	if e := q.Get("error"); e != "" {
		return Identity{}, "", status.Errorf(codes.Unauthenticated, "the single sign-on provider refused the sign-in (%s: %s); start again, or sign in with your password", clip(e), clip(q.Get("error_description")))
	}
	c, err := r.Cookie(cookieName)
	if err != nil {
		return Identity{}, "", status.Error(codes.InvalidArgument, "this sign-in was not started in this browser, or took longer than 10 minutes: start it again from "+StartPath)
	}
	var f flow
	raw, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || json.Unmarshal(raw, &f) != nil || f.State == "" {
		return Identity{}, "", status.Error(codes.InvalidArgument, "this sign-in's cookie is damaged: start it again from "+StartPath)
	}
	if time.Now().Unix() > f.Expires {
		return Identity{}, "", status.Error(codes.InvalidArgument, "this sign-in took longer than 10 minutes: start it again from "+StartPath)
	}
	if q.Get("state") != f.State {
		return Identity{}, "", status.Error(codes.InvalidArgument, "this sign-in's state does not match the one this browser started: start it again from "+StartPath)
	}
	code := q.Get("code")
	if code == "" {
		return Identity{}, "", status.Error(codes.InvalidArgument, "the provider sent no code: start the sign-in again from "+StartPath)
	}
	oc, verifier, err := rp.setup(r.Context())
	if err != nil {
		return Identity{}, "", err
	}
	ctx := r.Context()
	if rp.cfg.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, rp.cfg.HTTPClient)
	}
	tok, err := oc.Exchange(ctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return Identity{}, "", status.Error(codes.Unauthenticated, "the single sign-on provider did not accept the sign-in's code; start again from "+StartPath)
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		return Identity{}, "", status.Error(codes.Unauthenticated, "the single sign-on provider answered no ID token; check that the client is registered for OpenID Connect")
	}
	idt, err := verifier.Verify(ctx, rawID)
	if err != nil {
		return Identity{}, "", status.Error(codes.Unauthenticated, "the single sign-on provider's ID token did not verify; start again from "+StartPath)
	}
	if idt.Nonce != f.Nonce {
		return Identity{}, "", status.Error(codes.Unauthenticated, "the ID token was not issued for this sign-in (nonce); start again from "+StartPath)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified *bool  `json:"email_verified"`
		Name          string `json:"name"`
	}
	if err := idt.Claims(&claims); err != nil {
		return Identity{}, "", status.Error(codes.Unauthenticated, "the ID token's claims cannot be read")
	}
	if claims.Email == "" || claims.EmailVerified == nil {
		// Some providers put the email only in the userinfo answer.
		rp.mu.Lock()
		provider := rp.provider
		rp.mu.Unlock()
		if ui, uerr := provider.UserInfo(gooidcCtx(ctx, rp.cfg.HTTPClient), oauth2.StaticTokenSource(tok)); uerr == nil {
			claims.Email = ui.Email
			v := ui.EmailVerified
			claims.EmailVerified = &v
			if claims.Name == "" {
				var extra struct {
					Name string `json:"name"`
				}
				_ = ui.Claims(&extra)
				claims.Name = extra.Name
			}
		}
	}
	if claims.Email == "" {
		return Identity{}, "", status.Error(codes.PermissionDenied, "the single sign-on provider gave no email address; Atrium matches people by their verified email")
	}
	if claims.EmailVerified == nil || !*claims.EmailVerified {
		return Identity{}, "", status.Errorf(codes.PermissionDenied, "the single sign-on provider has not verified the email %s; verify it there, or sign in with your password", claims.Email)
	}
	return Identity{Email: claims.Email, Name: claims.Name, Subject: idt.Subject}, f.ReturnTo, nil
}

func gooidcCtx(ctx context.Context, c *http.Client) context.Context {
	if c == nil {
		return ctx
	}
	return gooidc.ClientContext(ctx, c)
}

// CheckReturnTo accepts a path on this origin ("/studio/…"), never another
// origin: "//host" and "/\host" are other origins to a browser.
func CheckReturnTo(s string) (string, error) {
	if s == "" {
		return DefaultReturnTo, nil
	}
	bad := status.Errorf(codes.InvalidArgument, "return_to must be a path on this site starting with a single / (such as %s), at most 2,048 characters; got %q", DefaultReturnTo, clip(s))
	if len(s) > 2048 || !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") || strings.ContainsAny(s, "\r\n\t\\") {
		return "", bad
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "", bad
	}
	return s, nil
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// clip bounds what a provider's or client's text puts in a message.
func clip(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return strings.ToValidUTF8(s, "?")
}

// ErrNotConfigured is answered by the routes when no provider is set.
var ErrNotConfigured = errors.New("single sign-on is not configured on this deployment (--oidc-issuer): sign in with your email and password")

// String describes the configuration for logs, without the secret.
func (c Config) String() string {
	return fmt.Sprintf("issuer=%s client_id=%s redirect_url=%s", c.Issuer, c.ClientID, c.RedirectURL)
}
