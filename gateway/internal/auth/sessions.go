package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/sync/singleflight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// CookieName is the session cookie's name.
const CookieName = "atrium_session"

// CSRFHeader is the header an unsafe request made with the session cookie
// repeats the session's CSRF token in.
const CSRFHeader = "X-CSRF-Token"

// maxSecretLen bounds a session cookie's value: a longer one is no session
// the CRM issued, and is refused before anything is hashed or cached.
const maxSecretLen = 256

// Session is a signed-in person's session as the CRM resolved it.
type Session struct {
	ID          string
	UserID      string
	ExpiresAt   time.Time
	Memberships []*crmv1.Membership
	// Name and Email are the user's, for the console's pages.
	Name, Email string
	csrf        [sha256.Size]byte
	// csrfToken is the token itself, which the console puts in its forms
	// (the JSON API's pages get it from GET /api/v1/sessions/current).
	csrfToken string
}

// CSRFToken is the session's CSRF token, for a form the console renders:
// only a page read with the session cookie ever holds it.
func (s *Session) CSRFToken() string { return s.csrfToken }

// CheckCSRF compares a request's X-CSRF-Token with the session's token,
// through their SHA-256 digests so that the comparison takes the same time
// whatever the token sent.
func (s *Session) CheckCSRF(token string) error {
	if token == "" {
		return status.Error(codes.PermissionDenied, "missing "+CSRFHeader+" header: a POST, PUT, PATCH or DELETE made with the session cookie must repeat the session's csrf_token in the "+
			CSRFHeader+" header (the csrf_token of POST /api/v1/sessions, or of GET /api/v1/sessions/current)")
	}
	d := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(d[:], s.csrf[:]) != 1 {
		return status.Error(codes.PermissionDenied, "wrong "+CSRFHeader+" header: it must be this session's csrf_token (GET /api/v1/sessions/current answers it)")
	}
	return nil
}

// Sessions authenticates session cookies. Lookups are cached for a short
// TTL, as Keys caches keys: a session that ends stops working within that
// time even if its event is missed; the events of a sign-out or of a
// change of the member evict it at once.
type Sessions struct {
	client  crmv1.SessionAuthServiceClient
	signer  *principal.Signer
	ttl     time.Duration
	maxSize int
	now     func() time.Time
	group   singleflight.Group

	mu      sync.Mutex
	entries map[[sha256.Size]byte]sessionEntry
	byID    map[string][sha256.Size]byte
	// byUser are the cached sessions of each user, which a change of one
	// of their memberships evicts.
	byUser map[string]map[[sha256.Size]byte]bool

	hits, misses int64
	metrics      metric.Registration
}

type sessionEntry struct {
	s     *Session // nil: no such session
	until time.Time
}

// NewSessions returns an authenticator asking client, caching up to
// maxSize lookups for ttl each. Its cache reports to mp:
//
//	atrium.gateway.session_cache.lookups{result=hit|miss}  lookups answered from the cache or by the CRM
//	atrium.gateway.session_cache.size                      cached lookups
func NewSessions(client crmv1.SessionAuthServiceClient, signer *principal.Signer, ttl time.Duration, maxSize int, mp metric.MeterProvider) *Sessions {
	s := &Sessions{
		client: client, signer: signer, ttl: ttl, maxSize: maxSize, now: time.Now,
		entries: map[[sha256.Size]byte]sessionEntry{}, byID: map[string][sha256.Size]byte{},
		byUser: map[string]map[[sha256.Size]byte]bool{},
	}
	m := mp.Meter("github.com/atrium-hq/atrium/gateway")
	lookups, err1 := m.Int64ObservableCounter("atrium.gateway.session_cache.lookups", metric.WithUnit("{lookup}"),
		metric.WithDescription("Session cookie lookups by the gateway, answered from its cache (result=hit) or by asking the CRM (result=miss)."))
	size, err2 := m.Int64ObservableUpDownCounter("atrium.gateway.session_cache.size", metric.WithUnit("{session}"),
		metric.WithDescription("Session lookups held in the gateway's cache, unknown sessions included."))
	if err1 == nil && err2 == nil {
		hit := metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "hit")))
		miss := metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "miss")))
		s.metrics, _ = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			s.mu.Lock()
			hits, misses, n := s.hits, s.misses, len(s.entries)
			s.mu.Unlock()
			o.ObserveInt64(lookups, hits, hit)
			o.ObserveInt64(lookups, misses, miss)
			o.ObserveInt64(size, int64(n))
			return nil
		}, lookups, size)
	}
	return s
}

// Close stops reporting the cache's metrics.
func (s *Sessions) Close() {
	if s.metrics != nil {
		_ = s.metrics.Unregister()
	}
}

// Authenticate resolves a session cookie's value to its session, or
// returns a status error: Unauthenticated for a malformed, unknown, ended
// or expired session; Unavailable when the CRM cannot be asked.
func (s *Sessions) Authenticate(ctx context.Context, secret string) (*Session, error) {
	if secret == "" || len(secret) > maxSecretLen {
		return nil, status.Error(codes.Unauthenticated, "malformed session cookie "+CookieName+": sign in again (POST /api/v1/sessions)")
	}
	e, err := s.lookup(ctx, sha256.Sum256([]byte(secret)))
	if err != nil {
		return nil, err
	}
	if e.s == nil {
		return nil, status.Error(codes.Unauthenticated, "the session of cookie "+CookieName+" has ended or never existed: sign in again (POST /api/v1/sessions)")
	}
	if !e.s.ExpiresAt.IsZero() && !s.now().Before(e.s.ExpiresAt) {
		return nil, status.Errorf(codes.Unauthenticated, "the session expired at %s: sign in again (POST /api/v1/sessions)",
			e.s.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return e.s, nil
}

func (s *Sessions) lookup(ctx context.Context, digest [sha256.Size]byte) (sessionEntry, error) {
	now := s.now()
	s.mu.Lock()
	e, ok := s.entries[digest]
	fresh := ok && now.Before(e.until)
	if fresh {
		s.hits++
	} else {
		s.misses++
	}
	s.mu.Unlock()
	if fresh {
		return e, nil
	}
	// As for keys: concurrent requests with one cookie share one CRM call,
	// detached from any one request.
	v, err, _ := s.group.Do(string(digest[:]), func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		resp, err := s.client.VerifySession(s.signer.OutgoingContext(cctx, gatewayPrincipal),
			&crmv1.VerifySessionRequest{SecretSha256: digest[:]})
		var sess *Session
		switch status.Code(err) {
		case codes.OK:
			sess = &Session{ID: resp.GetSession().GetId(), UserID: resp.GetUser().GetId(), Memberships: resp.GetMemberships()}
			if resp.GetSession().GetUserId() != "" {
				sess.UserID = resp.GetSession().GetUserId()
			}
			if exp := resp.GetSession().GetExpiresAt(); exp != nil {
				sess.ExpiresAt = exp.AsTime()
			}
			copy(sess.csrf[:], resp.GetCsrfSha256())
			sess.csrfToken = resp.GetCsrfToken()
			sess.Name, sess.Email = resp.GetUser().GetName(), resp.GetUser().GetEmail()
			if sess.ID == "" || sess.UserID == "" || len(resp.GetCsrfSha256()) != sha256.Size {
				return nil, status.Error(codes.Unavailable, "cannot verify the session right now: the CRM's answer lacks the session, its user or its CSRF digest")
			}
		case codes.NotFound:
		default:
			return nil, status.Error(codes.Unavailable, fmt.Sprintf("cannot verify the session right now: %v", err))
		}
		return s.store(digest, sess), nil
	})
	if err != nil {
		return sessionEntry{}, err
	}
	return v.(sessionEntry), nil
}

func (s *Sessions) store(digest [sha256.Size]byte, sess *Session) sessionEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) >= s.maxSize {
		// Random eviction, as for keys: the cache only saves CRM calls.
		for d := range s.entries {
			s.forget(d)
			if len(s.entries) < s.maxSize*9/10 {
				break
			}
		}
	}
	e := sessionEntry{s: sess, until: s.now().Add(s.ttl)}
	if sess != nil {
		s.byID[sess.ID] = digest
		if s.byUser[sess.UserID] == nil {
			s.byUser[sess.UserID] = map[[sha256.Size]byte]bool{}
		}
		s.byUser[sess.UserID][digest] = true
	}
	s.entries[digest] = e
	return e
}

// forget drops one entry and its indexes; s.mu is held.
func (s *Sessions) forget(d [sha256.Size]byte) {
	e, ok := s.entries[d]
	if !ok {
		return
	}
	delete(s.entries, d)
	if e.s == nil {
		return
	}
	delete(s.byID, e.s.ID)
	if u := s.byUser[e.s.UserID]; u != nil {
		delete(u, d)
		if len(u) == 0 {
			delete(s.byUser, e.s.UserID)
		}
	}
}

// EvictSessions forgets sessions by id, so that their next use asks the
// CRM again (which answers that they have ended). The gateway calls it on
// atrium.crm.session.ended and on its own sign-outs.
func (s *Sessions) EvictSessions(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if d, ok := s.byID[id]; ok {
			s.forget(d)
		}
	}
}

// EvictUser forgets every session of a user, so that their next request
// is judged by their memberships as they are now. The gateway calls it on
// atrium.crm.member.updated.
func (s *Sessions) EvictUser(userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for d := range s.byUser[userID] {
		s.forget(d)
	}
}

// Len is the number of cached lookups.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Opened is a session the CRM just opened: the cookie's secret and when
// it expires.
type Opened struct {
	Secret  string
	Expires time.Time
}

// CreateVerified asks the CRM to sign in the person whose email a single
// sign-on provider verified (the caller checked the ID token), as the
// gateway. The client's address and user agent are recorded with the
// session, as a password sign-in's are. The CRM's refusal
// (PERMISSION_DENIED for an email nobody invited) comes back as it is.
func (s *Sessions) CreateVerified(ctx context.Context, req *crmv1.CreateVerifiedSessionRequest, clientAddress, userAgent string) (Opened, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, "x-forwarded-for", clientAddress, "grpcgateway-user-agent", userAgent)
	var header metadata.MD
	_, err := s.client.CreateVerifiedSession(s.signer.OutgoingContext(ctx, gatewayPrincipal), req, grpc.Header(&header))
	switch status.Code(err) {
	case codes.OK:
	case codes.Unauthenticated:
		return Opened{}, status.Errorf(codes.Internal, "the CRM refused the gateway's signed principal (%s): is --internal-secret the same in the gateway and the CRM?", status.Convert(err).Message())
	default:
		return Opened{}, err
	}
	secret, exp := header.Get(SessionMetadata), header.Get(SessionExpiresMetadata)
	if len(secret) != 1 || secret[0] == "" {
		return Opened{}, status.Error(codes.Internal, "the CRM signed the person in but gave no session secret (metadata "+SessionMetadata+")")
	}
	o := Opened{Secret: secret[0]}
	if len(exp) == 1 {
		o.Expires, _ = time.Parse(time.RFC3339, exp[0])
	}
	return o, nil
}

// The response metadata in which the CRM gives a new session's secret and
// expiry (the contract of crmv1.SessionService and SessionAuthService).
const (
	SessionMetadata        = "atrium-session"
	SessionExpiresMetadata = "atrium-session-expires"
)
