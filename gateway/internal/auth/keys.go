package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// KeyPrefix starts every API key secret.
const KeyPrefix = "atr_"

// keyBodyLen is the length of a secret after the prefix: 32 random bytes in
// unpadded base64url.
const keyBodyLen = 43

// gatewayPrincipal is who the gateway is when it asks the CRM about a key.
var gatewayPrincipal = principal.Principal{Kind: principal.KindService, Subject: "gateway"}

// Keys authenticates API keys. Lookups are cached for a short TTL, so a
// revoked key stops working within that time even if the revocation event
// is missed; an event evicts the key at once.
type Keys struct {
	client  crmv1.APIKeyServiceClient
	signer  *principal.Signer
	ttl     time.Duration
	maxSize int
	now     func() time.Time
	group   singleflight.Group

	mu      sync.Mutex
	entries map[[sha256.Size]byte]entry
	byID    map[string][sha256.Size]byte
}

type entry struct {
	key   *crmv1.APIKey // nil: no such key
	until time.Time
}

// NewKeys returns an authenticator asking client, caching up to maxSize
// lookups for ttl each.
func NewKeys(client crmv1.APIKeyServiceClient, signer *principal.Signer, ttl time.Duration, maxSize int) *Keys {
	return &Keys{
		client: client, signer: signer, ttl: ttl, maxSize: maxSize, now: time.Now,
		entries: map[[sha256.Size]byte]entry{}, byID: map[string][sha256.Size]byte{},
	}
}

// Bearer extracts the credential of an Authorization header value.
func Bearer(header string) (string, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", status.Error(codes.Unauthenticated, `missing API key: send the header "Authorization: Bearer <API key>"`)
	}
	scheme, cred, ok := strings.Cut(header, " ")
	cred = strings.TrimSpace(cred)
	if !ok || !strings.EqualFold(scheme, "Bearer") || cred == "" {
		return "", status.Error(codes.Unauthenticated, `malformed Authorization header: expected "Bearer <API key>"`)
	}
	return cred, nil
}

// Authenticate resolves the Authorization header to a principal, or returns
// a status error: Unauthenticated for a missing, malformed, unknown,
// expired or revoked key; Unavailable when the CRM cannot be asked.
func (k *Keys) Authenticate(ctx context.Context, header string) (principal.Principal, error) {
	secret, err := Bearer(header)
	if err != nil {
		return principal.Principal{}, err
	}
	if !wellFormed(secret) {
		return principal.Principal{}, status.Errorf(codes.Unauthenticated,
			"malformed API key: Atrium keys are %q followed by %d characters", KeyPrefix, keyBodyLen)
	}
	digest := sha256.Sum256([]byte(secret))
	key, err := k.lookup(ctx, digest)
	if err != nil {
		return principal.Principal{}, err
	}
	// Lookups go by the digest of a 256-bit random secret: timing differences
	// in finding it reveal nothing usable about any secret. The CRM compares
	// the stored digest in constant time before answering.
	if key == nil {
		return principal.Principal{}, status.Error(codes.Unauthenticated, "invalid API key: no such key")
	}
	now := k.now()
	if key.RevokedAt != nil {
		return principal.Principal{}, status.Error(codes.Unauthenticated, "API key was revoked; ask your administrator for a new key")
	}
	if exp := key.ExpiresAt; exp != nil && !now.Before(exp.AsTime()) {
		return principal.Principal{}, status.Errorf(codes.Unauthenticated, "API key expired at %s; ask your administrator for a new key",
			exp.AsTime().UTC().Format(time.RFC3339))
	}
	p := principal.Principal{Kind: principal.KindKey, Subject: key.Id, SiteID: key.SiteId.GetValue(), AgencyID: key.AgencyId.GetValue()}
	for _, s := range key.Scopes {
		p.Scopes = append(p.Scopes, principal.Scope(s))
	}
	return p, nil
}

func wellFormed(secret string) bool {
	body, ok := strings.CutPrefix(secret, KeyPrefix)
	if !ok || len(body) != keyBodyLen {
		return false
	}
	for _, c := range body {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (k *Keys) lookup(ctx context.Context, digest [sha256.Size]byte) (*crmv1.APIKey, error) {
	now := k.now()
	k.mu.Lock()
	e, ok := k.entries[digest]
	k.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.key, nil
	}
	// Concurrent requests with the same key share one CRM call. It runs
	// detached from any one request, so one caller going away does not fail
	// the others.
	v, err, _ := k.group.Do(string(digest[:]), func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		resp, err := k.client.VerifyAPIKey(k.signer.OutgoingContext(cctx, gatewayPrincipal),
			&crmv1.VerifyAPIKeyRequest{SecretSha256: digest[:]})
		var key *crmv1.APIKey
		switch status.Code(err) {
		case codes.OK:
			key = resp.Key
		case codes.NotFound:
		default:
			return nil, status.Error(codes.Unavailable, fmt.Sprintf("cannot verify the API key right now: %v", err))
		}
		k.store(digest, key)
		return key, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*crmv1.APIKey), nil
}

func (k *Keys) store(digest [sha256.Size]byte, key *crmv1.APIKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.entries) >= k.maxSize {
		// Random eviction (map order) is enough: the cache only saves CRM
		// calls, and a flood of unknown keys must not grow it without bound.
		for d, e := range k.entries {
			delete(k.entries, d)
			if e.key != nil {
				delete(k.byID, e.key.Id)
			}
			if len(k.entries) < k.maxSize*9/10 {
				break
			}
		}
	}
	k.entries[digest] = entry{key: key, until: k.now().Add(k.ttl)}
	if key != nil {
		k.byID[key.Id] = digest
	}
}

// Evict forgets a key, so its next use asks the CRM again. The gateway
// calls it when a key revocation event arrives.
func (k *Keys) Evict(keyID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if d, ok := k.byID[keyID]; ok {
		delete(k.entries, d)
		delete(k.byID, keyID)
	}
}

// Len is the number of cached lookups.
func (k *Keys) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.entries)
}
