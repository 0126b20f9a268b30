package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/gateway/internal/oidc"
	"github.com/atrium-hq/atrium/gateway/studio"
	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// Atrium Studio, the console (gateway/studio), is served at /studio/ of
// the public listener unless --studio=false. The gateway gives it the JSON
// API's own authentication (studioGate): the session cookie, the choice of
// membership and site, the signed principal, the sign-in limits.

// StudioPath is where the console is served.
const StudioPath = studio.Prefix

// newStudio builds the console over the gateway's connections.
func (g *Gateway) newStudio() (*studio.Studio, error) {
	conns := studio.Conns{}
	for _, c := range g.conns {
		conns[c.name] = c.conn
	}
	return studio.New(studio.Config{Gate: studioGate{g}, Conns: conns, Version: g.cfg.Version, Logger: g.cfg.Logger, Now: g.cfg.now})
}

// withStudio serves /studio/ (and /studio, redirected) of the public
// listener with the console.
func (g *Gateway) withStudio(next http.Handler) http.Handler {
	if g.studio == nil {
		return next
	}
	return g.mountStudio(next, g.studio)
}

// withOperatorStudio serves the operator's console at /studio/ of the
// admin listener.
func (g *Gateway) withOperatorStudio(next http.Handler) http.Handler {
	if g.studio == nil {
		return next
	}
	return g.mountStudio(next, g.studio.OperatorHandler())
}

// mountStudio serves the paths under StudioPath with console (and
// /studio, redirected there), the others with next.
func (g *Gateway) mountStudio(next, console http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/studio" {
			http.Redirect(w, r, StudioPath, http.StatusMovedPermanently)
			return
		}
		if !strings.HasPrefix(r.URL.Path, StudioPath) {
			next.ServeHTTP(w, r)
			return
		}
		nameRequest(r.Context(), r.Method+" "+StudioPath, g.metrics.named(r.Method, StudioPath))
		console.ServeHTTP(w, r)
	})
}

// studioGate is the Studio's Gate: the gateway's own authentication.
type studioGate struct{ g *Gateway }

func (s studioGate) Session(r *http.Request) (*auth.Session, error) {
	c, err := r.Cookie(auth.CookieName)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, "not signed in")
	}
	return s.g.sessions.Authenticate(r.Context(), c.Value)
}

func (s studioGate) Principal(ctx context.Context, sess *auth.Session, agency, site, fullMethod string) (principal.Principal, error) {
	a, ok := principal.AccessOf(fullMethod)
	if !ok {
		return principal.Principal{}, status.Errorf(codes.PermissionDenied, "%s declares no access rule, so nobody may call it", fullMethod)
	}
	return sess.Principal(ctx, auth.Choice{Agency: agency, Site: site, Access: a}, s.g.siteOwners)
}

func (s studioGate) Outgoing(ctx context.Context, r *http.Request, p principal.Principal) context.Context {
	md := metadata.MD{principal.MetadataKey: []string{s.g.signer.Token(p)}}
	if ua := auditUserAgent(r.Header.Get("User-Agent")); ua != "" {
		md["grpcgateway-user-agent"] = []string{ua}
	}
	md["x-forwarded-for"] = []string{clientAddress(r)}
	return metadata.NewOutgoingContext(ctx, md)
}

func (s studioGate) OpenedCookie(r *http.Request, header metadata.MD) (*http.Cookie, error) {
	secret, exp := header.Get(sessionMetadata), header.Get(sessionExpiresMetadata)
	if len(secret) != 1 || secret[0] == "" {
		return nil, status.Error(codes.Internal, "the CRM signed the person in but gave no session secret (metadata "+sessionMetadata+")")
	}
	o := auth.Opened{Secret: secret[0]}
	if len(exp) == 1 {
		o.Expires, _ = time.Parse(time.RFC3339, exp[0])
	}
	return s.g.sessionCookie(r.Context(), o), nil
}

func (s studioGate) ClearedCookie(r *http.Request) *http.Cookie {
	return &http.Cookie{Name: auth.CookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, //nolint:gosec // G124: Secure over TLS or with --cookie-secure (secureCookies)
		Secure: s.g.secureCookies(r.Context()), MaxAge: -1}
}

func (s studioGate) EvictSession(id string) { s.g.sessions.EvictSessions(id) }

func (s studioGate) AllowSignIn(r *http.Request, email string) (bool, time.Duration) {
	if ref := s.g.logins.allow(email, clientAddress(r)); ref != nil {
		return false, ref.wait
	}
	return true, 0
}

func (s studioGate) SameOrigin(r *http.Request) error { return checkSameOrigin(r) }

func (s studioGate) RateLimit(sess *auth.Session) (bool, time.Duration) {
	if s.g.limiter == nil {
		return true, 0
	}
	return s.g.limiter.allow(rateKey(principal.Principal{Kind: principal.KindUser, Subject: sess.UserID}))
}

// Upload is the Studio's upload form on the JSON API's path (upload.go):
// the same checks of the header's text, the same stream of chunks with the
// same waits on the service, so that an asset has one way in. The form
// has been received whole by then (the Studio parses it to check its CSRF
// token before anything else), so the body's own bounds are the server's
// (ReadTimeout); head.Size is then known, and a file over the service's
// limit is refused before a byte of it is sent.
func (s studioGate) Upload(ctx context.Context, r *http.Request, p principal.Principal, head *collectionsv1.AssetUpload, file io.Reader) (*collectionsv1.Asset, error) {
	if err := checkText(head, "the file's name", "the file's type", "the alt text"); err != nil {
		return nil, err
	}
	conn := s.g.conn("collections")
	if conn == nil {
		return nil, status.Error(codes.Unavailable, "the gateway has no connection to the collections service")
	}
	sctx, cancel := context.WithCancel(s.Outgoing(ctx, r, p))
	defer cancel()
	stream, err := collectionsv1.NewAssetsServiceClient(conn).CreateAsset(sctx)
	if err != nil {
		return nil, err
	}
	// No ResponseWriter: the progress's read deadlines are not supported
	// (the server's ReadTimeout bounds the form instead), and it reports
	// the file's read errors as the API's upload would.
	u := &upload{g: s.g, r: r}
	u.body = newProgress(file, http.NewResponseController(nil), s.g.cfg.RequestTimeout, s.g.cfg.MinTransferRate)
	resp, err := u.send(stream, cancel, head, u.body, func() (*string, error) { return nil, nil }, u.body)
	var aborted *abortedError
	if errors.As(err, &aborted) {
		err = aborted.err
	}
	if err != nil {
		return nil, err
	}
	return resp.GetAsset(), nil
}

func (s studioGate) UploadBody(w http.ResponseWriter, r *http.Request, limit int64) io.ReadCloser {
	body := http.MaxBytesReader(w, r.Body, limit)
	p := newProgress(body, http.NewResponseController(w), s.g.cfg.RequestTimeout, s.g.cfg.MinTransferRate)
	return struct {
		io.Reader
		io.Closer
	}{p, body}
}

// operatorCookie is the operator console's cookie: the admin principal,
// signed by the gateway for operatorTTL, so that the admin token itself is
// typed once and never stored in the browser.
const (
	operatorCookie = "atrium_operator"
	operatorTTL    = 8 * time.Hour
)

func (s studioGate) OperatorSignIn(r *http.Request, token string) (*http.Cookie, error) {
	p, err := s.g.admin.Authenticate("Bearer " + token)
	if err != nil {
		return nil, err
	}
	return &http.Cookie{Name: operatorCookie, Value: s.g.signer.SignFor(p, operatorTTL), Path: StudioPath, HttpOnly: true, //nolint:gosec // G124: Secure over TLS or with --cookie-secure (secureCookies)
		SameSite: http.SameSiteStrictMode, Secure: s.g.secureCookies(r.Context()), MaxAge: int(operatorTTL.Seconds())}, nil
}

func (s studioGate) Operator(r *http.Request) (principal.Principal, string, error) {
	c, err := r.Cookie(operatorCookie)
	if err != nil || len(c.Value) > 4096 {
		return principal.Principal{}, "", status.Error(codes.Unauthenticated, "not signed in as the operator")
	}
	p, err := s.g.signer.Verify(c.Value)
	if err != nil || p.Kind != principal.KindAdmin {
		return principal.Principal{}, "", status.Error(codes.Unauthenticated, "the operator's session has ended")
	}
	// The forms' token: bound to this cookie, which another site's page
	// can neither read nor make.
	d := sha256.Sum256([]byte("atrium operator csrf\x00" + c.Value))
	return p, hex.EncodeToString(d[:16]), nil
}

func (s studioGate) OperatorSignOut(r *http.Request) *http.Cookie {
	return &http.Cookie{Name: operatorCookie, Value: "", Path: StudioPath, HttpOnly: true, SameSite: http.SameSiteStrictMode, //nolint:gosec // G124: Secure over TLS or with --cookie-secure (secureCookies)
		Secure: s.g.secureCookies(r.Context()), MaxAge: -1}
}

func (s studioGate) SingleSignOn() (string, bool) { return oidc.StartPath, s.g.rp != nil }
