package principal

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"
)

// MetadataKey is the gRPC metadata key that carries a signed principal.
const MetadataKey = "x-atrium-principal"

// MinSecretLen is the shortest shared secret a Signer accepts.
const MinSecretLen = 32

// tokenTTL bounds how long a captured token can be replayed. Tokens are
// minted per call, so this only needs to cover clock skew and slow calls.
const tokenTTL = 2 * time.Minute

// Signer signs and verifies principals with a secret shared by all Atrium
// processes of one deployment.
//
// Both directions are cached: Token reuses a principal's token while it has
// most of its lifetime left, and Verify remembers tokens it has verified
// until they expire. A caller then sends the same header on every call,
// which HTTP/2 header compression sends as an index, and a service checks
// each distinct token once.
type Signer struct {
	secret []byte
	now    func() time.Time

	mu       sync.Mutex
	signed   map[tokenKey]signedToken
	verified map[string]verifiedToken
}

// cacheSize bounds each cache. Past it, arbitrary entries are dropped: the
// caches only save work, and a flood of distinct principals must not grow
// them without bound.
const cacheSize = 10_000

// tokenKey identifies a principal for the token cache.
type tokenKey struct {
	kind                  Kind
	subject, site, agency string
	scopes                uint8 // bit i: Scopes[i]
	// publishedOnly is part of the principal's access (Authorize): a
	// token cached for the same subject without it would open every read.
	publishedOnly bool
	// A person's role, client, membership and session are part of their
	// access too (and of what the audit trail records).
	role                    Role
	client, member, session string
}

type signedToken struct {
	token   string
	renewAt time.Time
}

type verifiedToken struct {
	p   Principal
	exp int64
}

// NewSigner returns a Signer for secret, which must be at least MinSecretLen
// bytes.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("internal secret must be at least %d bytes, got %d", MinSecretLen, len(secret))
	}
	return &Signer{secret: bytes.Clone(secret), now: time.Now,
		signed: map[tokenKey]signedToken{}, verified: map[string]verifiedToken{}}, nil
}

type claims struct {
	Principal
	Exp int64 `json:"exp"`
}

// Token returns a token for p: one signed earlier for the same principal
// while more than half of its lifetime is left, otherwise a fresh one.
func (s *Signer) Token(p Principal) string {
	k, ok := keyOf(p)
	if !ok {
		return s.Sign(p)
	}
	now := s.now()
	s.mu.Lock()
	t, hit := s.signed[k]
	s.mu.Unlock()
	if hit && now.Before(t.renewAt) {
		return t.token
	}
	token := s.Sign(p)
	s.mu.Lock()
	if len(s.signed) >= cacheSize {
		for k := range s.signed {
			delete(s.signed, k)
			if len(s.signed) < cacheSize*9/10 {
				break
			}
		}
	}
	s.signed[k] = signedToken{token: token, renewAt: now.Add(tokenTTL / 2)}
	s.mu.Unlock()
	return token
}

func keyOf(p Principal) (tokenKey, bool) {
	k := tokenKey{kind: p.Kind, subject: p.Subject, site: p.SiteID, agency: p.AgencyID, publishedOnly: p.PublishedOnly,
		role: p.Role, client: p.ClientID, member: p.MemberID, session: p.SessionID}
	for _, sc := range p.Scopes {
		i := slices.Index(Scopes, sc)
		if i < 0 {
			return tokenKey{}, false
		}
		k.scopes |= 1 << i
	}
	return k, true
}

// Sign returns a fresh token for p, valid for a short time.
func (s *Signer) Sign(p Principal) string { return s.SignFor(p, tokenTTL) }

// SignFor returns a fresh token for p valid for ttl: for a person who
// calls a service by hand (atrium principal), where a two-minute token
// would not last a session.
func (s *Signer) SignFor(p Principal, ttl time.Duration) string {
	body, err := json.Marshal(claims{Principal: p, Exp: s.now().Add(ttl).Unix()})
	if err != nil {
		// A Principal always marshals; reaching this is a programming error.
		panic(fmt.Sprintf("principal: marshal: %v", err))
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

func (s *Signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

var (
	errMalformed = errors.New("malformed principal token")
	errSignature = errors.New("principal token signature does not verify")
	errExpired   = errors.New("principal token expired")
)

// Verify checks token's signature and expiry and returns the principal.
func (s *Signer) Verify(token string) (Principal, error) {
	now := s.now().Unix()
	s.mu.Lock()
	v, hit := s.verified[token]
	s.mu.Unlock()
	if hit {
		if now > v.exp {
			return Principal{}, errExpired
		}
		return v.p, nil
	}
	c, err := s.verify(token)
	if err != nil {
		return Principal{}, err
	}
	if now > c.Exp {
		return Principal{}, errExpired
	}
	s.mu.Lock()
	if len(s.verified) >= cacheSize {
		for k := range s.verified {
			delete(s.verified, k)
			if len(s.verified) < cacheSize*9/10 {
				break
			}
		}
	}
	s.verified[token] = verifiedToken{p: c.Principal, exp: c.Exp}
	s.mu.Unlock()
	return c.Principal, nil
}

func (s *Signer) verify(token string) (claims, error) {
	payload, sig, ok := strings.Cut(token, ".")
	if !ok {
		return claims{}, errMalformed
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return claims{}, errMalformed
	}
	if !hmac.Equal(got, s.mac(payload)) {
		return claims{}, errSignature
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return claims{}, errMalformed
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil {
		return claims{}, errMalformed
	}
	return c, nil
}

// OutgoingContext returns ctx with p signed into the outgoing gRPC metadata,
// replacing any principal already there.
func (s *Signer) OutgoingContext(ctx context.Context, p Principal) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set(MetadataKey, s.Token(p))
	return metadata.NewOutgoingContext(ctx, md)
}

// Credentials returns per-RPC credentials that sign p into every call made
// on a connection, for service-to-service clients.
func (s *Signer) Credentials(p Principal) Credentials {
	return Credentials{signer: s, principal: p}
}

// Credentials implements grpc/credentials.PerRPCCredentials.
type Credentials struct {
	signer    *Signer
	principal Principal
}

// GetRequestMetadata attaches the principal's token (see Signer.Token).
func (c Credentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{MetadataKey: c.signer.Token(c.principal)}, nil
}

// RequireTransportSecurity is false: Atrium's processes talk over loopback or
// a cluster network; the HMAC, not the transport, authenticates the caller.
func (Credentials) RequireTransportSecurity() bool { return false }
