package auth

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

const secretKey = "atr_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"

// countingCRM answers VerifyAPIKey for one key and counts the calls.
type countingCRM struct {
	calls atomic.Int32
	key   *crmv1.APIKey
	delay time.Duration
	fail  error
}

func (c *countingCRM) VerifyAPIKey(_ context.Context, in *crmv1.VerifyAPIKeyRequest, _ ...grpc.CallOption) (*crmv1.VerifyAPIKeyResponse, error) {
	c.calls.Add(1)
	time.Sleep(c.delay) // why sleep: the CRM takes time to answer; the tests that set a delay run on synctest's fake clock
	if c.fail != nil {
		return nil, c.fail
	}
	d := sha256.Sum256([]byte(secretKey))
	if string(in.SecretSha256) != string(d[:]) {
		return nil, status.Error(codes.NotFound, "unknown")
	}
	return &crmv1.VerifyAPIKeyResponse{Key: c.key}, nil
}

func newKeys(t testing.TB, crm *countingCRM, ttl time.Duration) (*Keys, *time.Time) {
	signer, err := principal.NewSigner([]byte(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	// A real meter provider, so that what the cache counts is in what its
	// tests and benchmark measure.
	k := NewKeys(crm, signer, ttl, 1000, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	k.now = func() time.Time { return now }
	return k, &now
}

func activeKey() *crmv1.APIKey {
	return &crmv1.APIKey{Id: "k1", Scopes: []string{"read", "write"}, AgencyId: wrapperspb.String("a1"), SiteId: wrapperspb.String("s1")}
}

func TestAuthenticateCachesForTTL(t *testing.T) {
	crm := &countingCRM{key: activeKey()}
	k, now := newKeys(t, crm, 5*time.Second)
	for range 10 {
		p, err := k.Authenticate(t.Context(), "Bearer "+secretKey)
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != principal.KindKey || p.AgencyID != "a1" || p.SiteID != "s1" || !p.HasScope(principal.ScopeWrite) {
			t.Fatalf("principal = %+v", p)
		}
	}
	if n := crm.calls.Load(); n != 1 {
		t.Fatalf("CRM calls = %d, want 1 within the TTL", n)
	}
	*now = now.Add(6 * time.Second)
	if _, err := k.Authenticate(t.Context(), "Bearer "+secretKey); err != nil {
		t.Fatal(err)
	}
	if n := crm.calls.Load(); n != 2 {
		t.Fatalf("CRM calls = %d, want 2 after the TTL", n)
	}
	k.Evict("k1")
	if _, err := k.Authenticate(t.Context(), "Bearer "+secretKey); err != nil {
		t.Fatal(err)
	}
	if n := crm.calls.Load(); n != 3 {
		t.Fatalf("CRM calls = %d, want 3 after an eviction", n)
	}
}

// TestCacheHitsAndMissesAreCounted: an operator reads the key cache's hit
// rate from atrium.gateway.key_cache.lookups{result}.
func TestCacheHitsAndMissesAreCounted(t *testing.T) {
	crm := &countingCRM{key: activeKey()}
	signer, _ := principal.NewSigner([]byte(strings.Repeat("s", 32)))
	reader := sdkmetric.NewManualReader()
	k := NewKeys(crm, signer, time.Minute, 10, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	for range 4 {
		if _, err := k.Authenticate(t.Context(), "Bearer "+secretKey); err != nil {
			t.Fatal(err)
		}
	}
	// A malformed key never reaches the cache: not a lookup.
	_, _ = k.Authenticate(t.Context(), "Bearer nope")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "atrium.gateway.key_cache.lookups" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if !m.Data.(metricdata.Sum[int64]).IsMonotonic {
					t.Fatal("lookups is not a counter")
				}
				v, _ := dp.Attributes.Value(attribute.Key("result"))
				got[v.AsString()] += dp.Value
			}
		}
	}
	if got["hit"] != 3 || got["miss"] != 1 || len(got) != 2 {
		t.Fatalf("key cache lookups = %v, want 3 hits and 1 miss", got)
	}
}

// Twenty requests with one uncached key, all arriving while the CRM is
// answering the first: one CRM call serves them all. In the bubble the
// CRM's delay ends only once every request is waiting.
func TestConcurrentLookupsShareOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		crm := &countingCRM{key: activeKey(), delay: 50 * time.Millisecond}
		k, _ := newKeys(t, crm, time.Second)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if _, err := k.Authenticate(t.Context(), "Bearer "+secretKey); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := crm.calls.Load(); n != 1 {
			t.Fatalf("CRM calls = %d, want 1 for 20 concurrent requests", n)
		}
	})
}

func TestAuthenticateRejections(t *testing.T) {
	revoked := activeKey()
	revoked.RevokedAt = timestamppb.Now()
	expired := activeKey()
	expired.ExpiresAt = timestamppb.New(time.Date(2026, 10, 31, 23, 59, 59, 0, time.UTC))
	for name, tc := range map[string]struct {
		key    *crmv1.APIKey
		header string
		want   string
	}{
		"missing":     {activeKey(), "", "missing API key"},
		"basic":       {activeKey(), "Basic abc", "Bearer"},
		"malformed":   {activeKey(), "Bearer atr_short", "malformed API key"},
		"bad charset": {activeKey(), "Bearer atr_" + strings.Repeat("!", 43), "malformed API key"},
		"unknown":     {activeKey(), "Bearer atr_" + strings.Repeat("z", 43), "invalid API key"},
		"revoked":     {revoked, "Bearer " + secretKey, "revoked"},
		"expired":     {expired, "Bearer " + secretKey, "expired at 2026-10-31T23:59:59Z"},
	} {
		t.Run(name, func(t *testing.T) {
			k, _ := newKeys(t, &countingCRM{key: tc.key}, time.Second)
			_, err := k.Authenticate(t.Context(), tc.header)
			if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("error = %v, want Unauthenticated mentioning %q", err, tc.want)
			}
		})
	}
}

func TestUnknownKeysAreCachedButBounded(t *testing.T) {
	crm := &countingCRM{key: activeKey()}
	signer, _ := principal.NewSigner([]byte(strings.Repeat("s", 32)))
	k := NewKeys(crm, signer, time.Minute, 50, noop.NewMeterProvider())
	for i := range 500 {
		hdr := "Bearer atr_" + strings.Repeat("x", 40) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + "0"
		if _, err := k.Authenticate(t.Context(), hdr); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("unknown key: %v", err)
		}
	}
	if n := k.Len(); n > 50 {
		t.Fatalf("cache holds %d entries, want at most 50", n)
	}
}

func TestCRMOutageIsUnavailableAndNotCached(t *testing.T) {
	crm := &countingCRM{key: activeKey(), fail: status.Error(codes.Unavailable, "connection refused")}
	k, _ := newKeys(t, crm, time.Minute)
	if _, err := k.Authenticate(t.Context(), "Bearer "+secretKey); status.Code(err) != codes.Unavailable {
		t.Fatalf("error = %v, want Unavailable", err)
	}
	crm.fail = nil
	if _, err := k.Authenticate(t.Context(), "Bearer "+secretKey); err != nil {
		t.Fatalf("after the CRM recovers: %v", err)
	}
}

func TestAdminToken(t *testing.T) {
	if _, err := NewAdminToken("short"); err == nil {
		t.Fatal("short admin token accepted")
	}
	a, err := NewAdminToken("a-long-admin-token")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := a.Authenticate("Bearer a-long-admin-token"); err != nil || p.Kind != principal.KindAdmin {
		t.Fatalf("valid token: %+v %v", p, err)
	}
	for _, h := range []string{"", "Bearer a-long-admin-tokex", "Bearer a-long-admin-token2", "a-long-admin-token"} {
		if _, err := a.Authenticate(h); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("header %q: error = %v, want Unauthenticated", h, err)
		}
	}
}
