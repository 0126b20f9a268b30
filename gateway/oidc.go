package gateway

import (
	"fmt"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/oidc"
	"github.com/atrium-hq/atrium/gateway/internal/rest"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// Single sign-on (--oidc-issuer; docs/authentication.md): the public
// listener serves the two routes of the authorization code flow beside
// the route table, since they are redirects a browser follows, not JSON
// calls of a service:
//
//   - GET oidc.StartPath[?return_to=/path] redirects the browser to the
//     provider, keeping the flow's state, nonce and PKCE verifier in a
//     cookie of the callback's path;
//   - GET oidc.CallbackPath, where the provider sends it back, checks all
//     that and the ID token (oidc.RelyingParty.Finish), asks the CRM to
//     sign in the verified email (CreateVerifiedSession, as the gateway),
//     sets the same session cookie as a password sign-in, and redirects
//     to return_to.
//
// The callback counts against the sign-in attempts of the client's
// address. Neither route checks the Origin: the provider's redirect back
// is a cross-site navigation by design, and the flow's cookie (its state)
// is what ties the callback to the browser that started it (login CSRF).

// OIDCCallbackPath is the callback of single sign-on on the public
// listener: --oidc-redirect-url is its URL as browsers reach it.
const OIDCCallbackPath = oidc.CallbackPath

// providerTimeout bounds each call to the provider (discovery, the code's
// exchange, its keys), within the request's own deadline.
const providerTimeout = 10 * time.Second

// newRelyingParty is the flow of cfg's provider; nil without one.
func newRelyingParty(cfg Config) *oidc.RelyingParty {
	if cfg.OIDCIssuer == "" {
		return nil
	}
	return oidc.New(oidc.Config{Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID, ClientSecret: cfg.OIDCClientSecret,
		RedirectURL: cfg.OIDCRedirectURL, Secure: cfg.CookieSecure, HTTPClient: &http.Client{Timeout: providerTimeout}})
}

// withOIDC serves the single sign-on routes in front of next.
func (g *Gateway) withOIDC(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != oidc.StartPath && r.URL.Path != oidc.CallbackPath {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		nameRequest(ctx, r.Method+" "+r.URL.Path, g.metrics.named(r.Method, r.URL.Path))
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: fmt.Sprintf(
				"method %s is not allowed on %s; allowed: GET (a browser's navigation in the single sign-on flow)", r.Method, r.URL.Path)})
			return
		}
		if g.rp == nil {
			rest.WriteError(ctx, g.cfg.Logger, w, r, status.Error(codes.NotFound, oidc.ErrNotConfigured.Error()))
			return
		}
		// Nothing of the flow may be cached: each answer sets or clears
		// its cookie.
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == oidc.StartPath {
			if err := g.rp.Start(w, r); err != nil {
				rest.WriteError(ctx, g.cfg.Logger, w, r, err)
			}
			return
		}
		if ref := g.logins.allow("", clientAddress(r)); ref != nil {
			g.logins.write(w, ref)
			return
		}
		id, returnTo, err := g.rp.Finish(w, r)
		if err != nil {
			rest.WriteError(ctx, g.cfg.Logger, w, r, err)
			return
		}
		opened, err := g.sessions.CreateVerified(ctx, &crmv1.CreateVerifiedSessionRequest{Email: id.Email, Name: id.Name,
			Issuer: g.cfg.OIDCIssuer, Subject: id.Subject}, clientAddress(r), r.UserAgent())
		if err != nil {
			rest.WriteError(ctx, g.cfg.Logger, w, r, err)
			return
		}
		http.SetCookie(w, g.sessionCookie(ctx, opened))
		// returnTo passed CheckReturnTo at the start; it came back in the
		// flow's cookie, which the browser holds, so it is checked again
		// rather than trusted.
		if returnTo, err = oidc.CheckReturnTo(returnTo); err != nil {
			returnTo = oidc.DefaultReturnTo
		}
		http.Redirect(w, r, returnTo, http.StatusFound) //nolint:gosec // G710: a path on this site (CheckReturnTo)
	})
}
