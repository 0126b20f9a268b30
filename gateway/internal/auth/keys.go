package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/sync/singleflight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/apikey"
	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

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

	// hits and misses count lookups for the metrics, which read them when
	// collected. They are counted under mu, which a lookup holds anyway, so
	// a request pays one increment.
	hits, misses int64
	metrics      metric.Registration
}

type entry struct {
	key   *crmv1.APIKey // nil: no such key
	p     principal.Principal
	until time.Time
}

// NewKeys returns an authenticator asking client, caching up to maxSize
// lookups for ttl each. Its cache reports to mp:
//
//	atrium.gateway.key_cache.lookups{result=hit|miss}  lookups answered from the cache or by the CRM
//	atrium.gateway.key_cache.size                      cached lookups
func NewKeys(client crmv1.APIKeyServiceClient, signer *principal.Signer, ttl time.Duration, maxSize int, mp metric.MeterProvider) *Keys {
	k := &Keys{
		client: client, signer: signer, ttl: ttl, maxSize: maxSize, now: time.Now,
		entries: map[[sha256.Size]byte]entry{}, byID: map[string][sha256.Size]byte{},
	}
	m := mp.Meter("github.com/atrium-hq/atrium/gateway")
	lookups, err1 := m.Int64ObservableCounter("atrium.gateway.key_cache.lookups", metric.WithUnit("{lookup}"),
		metric.WithDescription("API key lookups by the gateway, answered from its cache (result=hit) or by asking the CRM (result=miss)."))
	size, err2 := m.Int64ObservableUpDownCounter("atrium.gateway.key_cache.size", metric.WithUnit("{key}"),
		metric.WithDescription("Key lookups held in the gateway's cache, unknown keys included."))
	if err1 == nil && err2 == nil {
		hit := metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "hit")))
		miss := metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "miss")))
		// The names are fixed and valid: registration cannot fail.
		k.metrics, _ = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			k.mu.Lock()
			hits, misses, n := k.hits, k.misses, len(k.entries)
			k.mu.Unlock()
			o.ObserveInt64(lookups, hits, hit)
			o.ObserveInt64(lookups, misses, miss)
			o.ObserveInt64(size, int64(n))
			return nil
		}, lookups, size)
	}
	return k
}

// Close stops reporting the cache's metrics.
func (k *Keys) Close() {
	if k.metrics != nil {
		_ = k.metrics.Unregister()
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
	if strings.HasPrefix(secret, AdminTokenPrefix) {
		// Only the prefix is judged: the public listener must not tell
		// whether an admin token is valid.
		return principal.Principal{}, status.Error(codes.Unauthenticated, "this is an admin token (it starts with "+AdminTokenPrefix+
			"), which the public API does not take: it belongs on the admin API (the admin listener, --admin-addr, routes under /admin/v1); "+
			"the public API takes an API key: "+apikey.FormatHint())
	}
	if !apikey.WellFormed(secret) {
		return principal.Principal{}, status.Error(codes.Unauthenticated, "malformed API key: "+apikey.FormatHint())
	}
	e, err := k.lookup(ctx, apikey.Digest(secret))
	if err != nil {
		return principal.Principal{}, err
	}
	key := e.key
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
	return e.p, nil
}

func (k *Keys) lookup(ctx context.Context, digest [sha256.Size]byte) (entry, error) {
	now := k.now()
	k.mu.Lock()
	e, ok := k.entries[digest]
	fresh := ok && now.Before(e.until)
	if fresh {
		k.hits++
	} else {
		k.misses++
	}
	k.mu.Unlock()
	if fresh {
		return e, nil
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
		return k.store(digest, key), nil
	})
	if err != nil {
		return entry{}, err
	}
	return v.(entry), nil
}

func (k *Keys) store(digest [sha256.Size]byte, key *crmv1.APIKey) entry {
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
	e := entry{key: key, until: k.now().Add(k.ttl)}
	if key != nil {
		e.p = principal.Principal{Kind: principal.KindKey, Subject: key.Id, Scopes: principal.ScopesFrom(key.Scopes),
			SiteID: key.SiteId.GetValue(), AgencyID: key.AgencyId.GetValue(), PublishedOnly: key.GetPublishedOnly()}
		k.byID[key.Id] = digest
	}
	k.entries[digest] = e
	return e
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
