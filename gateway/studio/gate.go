package studio

import (
	"context"
	"io"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// Gate is what the Studio asks of the gateway it is mounted in. The
// gateway's implementation is the JSON API's own authentication, so that a
// person is the same person, with the same rights, on both.
type Gate interface {
	// Session is the session of the request's cookie, or a status error:
	// Unauthenticated when there is none or it has ended.
	Session(r *http.Request) (*auth.Session, error)
	// Principal is the principal session s acts as when it calls the RPC
	// fullMethod for agency and site (either may be ""), as the JSON API
	// would make it for the RPC's route; the refusal (PermissionDenied)
	// when the membership or site cannot be used.
	Principal(ctx context.Context, s *auth.Session, agency, site, fullMethod string) (principal.Principal, error)
	// Outgoing is ctx carrying p, signed, and what the audit trail records
	// of r (its user agent), for a call to a service.
	Outgoing(ctx context.Context, r *http.Request, p principal.Principal) context.Context
	// OpenedCookie is the session cookie of a session the CRM has just
	// opened, from its response header metadata.
	OpenedCookie(r *http.Request, header metadata.MD) (*http.Cookie, error)
	// ClearedCookie clears the session cookie; EvictSession forgets the
	// session in this gateway at once (the others hear the CRM's event).
	ClearedCookie(r *http.Request) *http.Cookie
	EvictSession(id string)
	// AllowSignIn applies the sign-in attempt limits of the JSON API's
	// sign-in routes (per client address and per email); ok false with how
	// long to wait when the attempt is refused.
	AllowSignIn(r *http.Request, email string) (ok bool, wait time.Duration)
	// RateLimit charges the person's bucket of --rate-limit, which their
	// JSON API requests share (ok false, with how long to wait, over it).
	RateLimit(s *auth.Session) (ok bool, wait time.Duration)
	// SameOrigin refuses a request made from another origin's page.
	SameOrigin(r *http.Request) error
	// Upload creates an asset of the site p acts for from file, through the
	// JSON API's own upload path (POST /api/public/v1/assets): the file is
	// streamed to AssetsService.CreateAsset in chunks as it is read, under
	// the same bounds, and refused for the same reasons (a kind not
	// allowed, too large, a bad file name), as a status error. head is what
	// the form said of the file: its name, declared type, size (-1 when
	// unknown) and alt text.
	Upload(ctx context.Context, r *http.Request, p principal.Principal, head *collectionsv1.AssetUpload, file io.Reader) (*collectionsv1.Asset, error)
	// UploadBody is the body of an upload form (IsUpload), which the
	// gateway passes on unread, as it does the JSON API's upload: bounded
	// as that upload's is (each read within --request-timeout, then at
	// least --min-transfer-rate on average) and to at most limit bytes.
	UploadBody(w http.ResponseWriter, r *http.Request, limit int64) io.ReadCloser
	// OperatorSignIn checks the admin token an operator typed and returns
	// the cookie of their console's session; Operator is the admin
	// principal of the request's operator cookie with the CSRF token its
	// forms carry; OperatorSignOut clears the cookie. The operator's
	// console is served on the admin listener only.
	OperatorSignIn(r *http.Request, token string) (*http.Cookie, error)
	Operator(r *http.Request) (p principal.Principal, csrf string, err error)
	OperatorSignOut(r *http.Request) *http.Cookie
	// SingleSignOn is the path that starts single sign-on, and whether it
	// is configured (--oidc-issuer).
	SingleSignOn() (start string, ok bool)
}

// Conns are the services' connections, by the gateway's names for them
// (collections, crm, data, actions, webhooks, audit).
type Conns map[string]grpc.ClientConnInterface
