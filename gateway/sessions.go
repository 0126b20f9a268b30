package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/platform/principal"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// Sessions: a person signs in (POST /api/v1/sessions, or by accepting an
// invitation) and the CRM hands the gateway the session's secret in the
// response metadata, which the gateway sets as the HttpOnly session cookie
// and never forwards. The cookie then authenticates the routes an API key
// does, with the person's role (docs/authentication.md):
//
//   - an Authorization header wins over the cookie;
//   - a cookie is never accepted from another origin (the Origin header, or
//     Sec-Fetch-Site: cross-site), nor are the sign-in routes called from
//     one (login CSRF);
//   - every unsafe method with the cookie repeats the session's CSRF token
//     in X-CSRF-Token;
//   - Atrium-Agency and Atrium-Site pick the membership and the site
//     (auth.Session.Principal).

// The response metadata in which the CRM gives a new session's secret and
// expiry (the contract of crmv1.SessionService).
const (
	sessionMetadata        = auth.SessionMetadata
	sessionExpiresMetadata = auth.SessionExpiresMetadata
)

// The RPCs whose answers set or clear the cookie, and those limited by the
// sign-in attempts.
var (
	createSession        = "/" + crmv1.SessionService_ServiceDesc.ServiceName + "/CreateSession"
	acceptInvitation     = "/" + crmv1.SessionService_ServiceDesc.ServiceName + "/AcceptInvitation"
	deleteCurrentSession = "/" + crmv1.SessionService_ServiceDesc.ServiceName + "/DeleteCurrentSession"
	requestPasswordReset = "/" + crmv1.SessionService_ServiceDesc.ServiceName + "/RequestPasswordReset"
	sessionServicePrefix = "/" + crmv1.SessionService_ServiceDesc.ServiceName + "/"
)

// unsafe reports whether a method changes something: those need the CSRF
// token with a cookie.
func unsafe(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// authenticatePublic authenticates a request on the public listener: the
// API key of its Authorization header, or else its session cookie.
func (g *Gateway) authenticatePublic(r *http.Request, rt *route) (principal.Principal, error) {
	if r.Header.Get("Authorization") != "" {
		return g.authenticateKey(r)
	}
	c, err := r.Cookie(auth.CookieName)
	if err != nil {
		if rt.access.Caller == accessv1.Caller_CALLER_PERSON {
			return principal.Principal{}, status.Error(codes.Unauthenticated,
				"not signed in: "+rt.name+" needs the session cookie "+auth.CookieName+", which POST /api/v1/sessions sets")
		}
		return g.authenticateKey(r)
	}
	if err := checkSameOrigin(r); err != nil {
		return principal.Principal{}, err
	}
	s, err := g.sessions.Authenticate(r.Context(), c.Value)
	if err != nil {
		return principal.Principal{}, err
	}
	if unsafe(r.Method) {
		if err := s.CheckCSRF(r.Header.Get(auth.CSRFHeader)); err != nil {
			return principal.Principal{}, err
		}
	}
	return s.Principal(r.Context(), auth.Choice{
		Agency: r.Header.Get(auth.AgencyHeader), Site: r.Header.Get(auth.SiteHeader), Access: rt.access,
	}, g.siteOwners)
}

// checkSameOrigin refuses a request made from a page of another origin:
// its Origin header names another host than the request's own (or is
// "null"), or the browser says Sec-Fetch-Site: cross-site. Such a request
// carries the cookie only because a browser attached it.
func checkSameOrigin(r *http.Request) error {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return status.Error(codes.PermissionDenied, "the session cookie is not accepted from another site (Sec-Fetch-Site: cross-site): "+
			"sign in on this API's own origin, or call it with an API key (Authorization: Bearer <API key>)")
	}
	origin := r.Header.Get("Origin")
	if origin == "" || sameOrigin(origin, r.Host) {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "the session cookie is not accepted from another origin (Origin %s; this API is at %s): "+
		"sign in on this API's own origin, or call it with an API key (Authorization: Bearer <API key>)", clipHeader(origin), clipHeader(r.Host))
}

// sameOrigin reports whether origin names host, the request's Host. The
// scheme is not compared: behind a proxy that terminates TLS the gateway
// does not know it, and both are the same server.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" and the like
	}
	port := map[string]string{"http": ":80", "https": ":443"}[u.Scheme]
	return strings.EqualFold(strings.TrimSuffix(u.Host, port), strings.TrimSuffix(host, port))
}

func clipHeader(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// limitSignIn applies the sign-in attempt limits to a request of the
// session routes open to anyone, before the CRM is asked: per client
// address for all of them, and per email for a sign-in or a password
// reset. It answers a refused request itself and returns false.
func (g *Gateway) limitSignIn(w http.ResponseWriter, r *http.Request, rt *route) bool {
	if !strings.HasPrefix(rt.rpc, sessionServicePrefix) || rt.access.Caller != accessv1.Caller_CALLER_ANYONE {
		return true
	}
	email := ""
	if rt.rpc == createSession || rt.rpc == requestPasswordReset {
		email = requestEmail(r)
	}
	if ref := g.logins.allow(email, clientAddress(r)); ref != nil {
		g.logins.write(w, ref)
		return false
	}
	return true
}

// requestEmail is the email of a JSON body, normalised as the CRM compares
// it (case-insensitively); "" when there is none. The body was read whole
// by serve, so it is read again here and put back.
func requestEmail(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	var in struct {
		Email string `json:"email"`
	}
	if json.Unmarshal(body, &in) != nil {
		return ""
	}
	e := strings.ToLower(strings.TrimSpace(in.Email))
	if len(e) > 320 {
		e = e[:320]
	}
	return e
}

// clientAddress is the address the request came from: the TCP peer, or
// the client a trusted proxy names (serve has put it in RemoteAddr). A
// client's own X-Forwarded-For is never read (serve drops it).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// sessionCookies is a forward-response option: it turns a new session's
// secret, from the CRM's response metadata, into the session cookie, and
// clears the cookie on sign-out. It runs before the headers are written.
func (g *Gateway) sessionCookies(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
	method, _ := runtime.RPCMethod(ctx)
	switch method {
	case createSession, acceptInvitation:
		md, ok := runtime.ServerMetadataFromContext(ctx)
		if !ok {
			return nil
		}
		secret, exp := md.HeaderMD.Get(sessionMetadata), md.HeaderMD.Get(sessionExpiresMetadata)
		if len(secret) != 1 || secret[0] == "" {
			return status.Error(codes.Internal, "the CRM signed the person in but gave no session secret (metadata "+sessionMetadata+")")
		}
		o := auth.Opened{Secret: secret[0]}
		if len(exp) == 1 {
			o.Expires, _ = time.Parse(time.RFC3339, exp[0])
		}
		w.Header().Add("Set-Cookie", g.sessionCookie(ctx, o).String())
	case deleteCurrentSession:
		if p, ok := principal.FromContext(ctx); ok && p.SessionID != "" {
			// This gateway forgets the session at once; the others on
			// the CRM's event.
			g.sessions.EvictSessions(p.SessionID)
		}
		c := &http.Cookie{Name: auth.CookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, //nolint:gosec // G124: Secure over TLS or with --cookie-secure (secureCookies)
			Secure: g.secureCookies(ctx), MaxAge: -1}
		w.Header().Add("Set-Cookie", c.String())
	}
	return nil
}

// sessionCookie is the session cookie of a session just opened, by a
// password (sessionCookies) or by single sign-on (oidc.go) alike.
func (g *Gateway) sessionCookie(ctx context.Context, o auth.Opened) *http.Cookie {
	return &http.Cookie{Name: auth.CookieName, Value: o.Secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, //nolint:gosec // G124: Secure over TLS or with --cookie-secure (secureCookies)
		Secure: g.secureCookies(ctx), Expires: o.Expires}
}

// secureCookies reports whether the request of ctx came over TLS or the
// gateway is told that its clients always use TLS (--cookie-secure).
func (g *Gateway) secureCookies(ctx context.Context) bool {
	if g.cfg.CookieSecure {
		return true
	}
	st, _ := ctx.Value(stateKey{}).(*requestState)
	return st != nil && st.tls
}

// forwardedClient is the RemoteAddr of a request as the services and the
// limits see it: the TCP peer, unless the peer is a trusted proxy
// (--trusted-proxies), when it is the last address of X-Forwarded-For that
// is not one (the proxies append the address they heard from, so
// everything to the left of that is the client's word).
func forwardedClient(r *http.Request, trusted []netip.Prefix) string {
	host, port, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil || len(trusted) == 0 {
		return r.RemoteAddr
	}
	isTrusted := func(s string) (netip.Addr, bool) {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			if ap, perr := netip.ParseAddrPort(strings.TrimSpace(s)); perr == nil {
				a, err = ap.Addr(), nil
			}
		}
		if err != nil {
			return netip.Addr{}, false
		}
		a = a.Unmap()
		for _, p := range trusted {
			if p.Contains(a) {
				return a, true
			}
		}
		return a, false
	}
	if _, ok := isTrusted(host); !ok {
		return r.RemoteAddr
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := host
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := isTrusted(hops[i])
		if !a.IsValid() {
			break // not an address: what is left of it is nobody's word
		}
		client = a.String()
		if !ok {
			break
		}
	}
	return net.JoinHostPort(client, port)
}
