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
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/principal"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

const sessionSecret = "sess_0123456789abcdefghijklmnopqrstuvwxyz"

// sessionCRM answers VerifySession for one session and counts the calls.
type sessionCRM struct {
	calls       atomic.Int32
	delay       time.Duration
	fail        error
	expires     time.Time
	memberships []*crmv1.Membership
}

// CreateVerifiedSession is single sign-on's call, which the cache never
// makes.
func (c *sessionCRM) CreateVerifiedSession(context.Context, *crmv1.CreateVerifiedSessionRequest, ...grpc.CallOption) (*crmv1.CreateVerifiedSessionResponse, error) {
	return nil, status.Error(codes.Unimplemented, "not the cache's call")
}

func (c *sessionCRM) VerifySession(_ context.Context, in *crmv1.VerifySessionRequest, _ ...grpc.CallOption) (*crmv1.VerifySessionResponse, error) {
	c.calls.Add(1)
	time.Sleep(c.delay) // why sleep: the CRM takes time to answer; the tests that set a delay run on synctest's fake clock
	if c.fail != nil {
		return nil, c.fail
	}
	if d := sha256.Sum256([]byte(sessionSecret)); string(in.SecretSha256) != string(d[:]) {
		return nil, status.Error(codes.NotFound, "unknown")
	}
	csrf := sha256.Sum256([]byte("the-csrf-token"))
	return &crmv1.VerifySessionResponse{
		Session:     &crmv1.Session{Id: "s1", UserId: "u1", ExpiresAt: timestamppb.New(c.expires)},
		User:        &crmv1.User{Id: "u1"},
		Memberships: c.memberships,
		CsrfSha256:  csrf[:], CsrfToken: "the-csrf-token",
	}, nil
}

func newSessions(t testing.TB, crm *sessionCRM, ttl time.Duration) (*Sessions, *sdkmetric.ManualReader, *time.Time) {
	signer, err := principal.NewSigner([]byte(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	s := NewSessions(crm, signer, ttl, 1000, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	if crm.expires.IsZero() {
		crm.expires = now.Add(24 * time.Hour)
	}
	return s, reader, &now
}

// TestSessionsCacheAndEvict: a session is asked of the CRM once per TTL
// and again after an eviction by its id or by its user; the hits and
// misses are counted as the keys' are.
func TestSessionsCacheAndEvict(t *testing.T) {
	crm := &sessionCRM{}
	s, reader, now := newSessions(t, crm, 5*time.Second)
	for range 4 {
		sess, err := s.Authenticate(t.Context(), sessionSecret)
		if err != nil {
			t.Fatal(err)
		}
		if sess.ID != "s1" || sess.UserID != "u1" {
			t.Fatalf("session = %+v", sess)
		}
	}
	if n := crm.calls.Load(); n != 1 {
		t.Fatalf("CRM calls = %d, want 1 within the TTL", n)
	}
	*now = now.Add(6 * time.Second)
	_, _ = s.Authenticate(t.Context(), sessionSecret)
	s.EvictSessions("s1")
	_, _ = s.Authenticate(t.Context(), sessionSecret)
	s.EvictUser("u1")
	_, _ = s.Authenticate(t.Context(), sessionSecret)
	s.EvictUser("someone else")
	s.EvictSessions("another session")
	_, _ = s.Authenticate(t.Context(), sessionSecret)
	if n := crm.calls.Load(); n != 4 {
		t.Fatalf("CRM calls = %d, want 4: after the TTL and after each eviction", n)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	size := int64(-1)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "atrium.gateway.session_cache.lookups":
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					v, _ := dp.Attributes.Value(attribute.Key("result"))
					got[v.AsString()] += dp.Value
				}
			case "atrium.gateway.session_cache.size":
				size = m.Data.(metricdata.Sum[int64]).DataPoints[0].Value
			}
		}
	}
	if got["hit"] != 4 || got["miss"] != 4 || size != 1 {
		t.Fatalf("session cache lookups = %v, size %d; want 4 hits, 4 misses, 1 cached", got, size)
	}
}

func TestSessionsConcurrentLookupsShareOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		crm := &sessionCRM{delay: 50 * time.Millisecond}
		s, _, _ := newSessions(t, crm, time.Second)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if _, err := s.Authenticate(t.Context(), sessionSecret); err != nil {
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

func TestSessionsRejections(t *testing.T) {
	crm := &sessionCRM{}
	s, _, now := newSessions(t, crm, time.Minute)
	for name, tc := range map[string]struct {
		secret string
		want   string
	}{
		"empty":   {"", "malformed session cookie"},
		"huge":    {strings.Repeat("x", 300), "malformed session cookie"},
		"unknown": {"sess_nope", "has ended or never existed"},
	} {
		if _, err := s.Authenticate(t.Context(), tc.secret); status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), tc.want) {
			t.Errorf("%s: error = %v, want Unauthenticated mentioning %q", name, err, tc.want)
		}
	}
	crm.expires = now.Add(time.Second)
	*now = now.Add(2 * time.Second)
	if _, err := s.Authenticate(t.Context(), sessionSecret); status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "expired at") {
		t.Fatalf("expired session: %v", err)
	}

	// An outage is Unavailable and not cached.
	crm2 := &sessionCRM{fail: status.Error(codes.Unavailable, "connection refused")}
	s2, _, _ := newSessions(t, crm2, time.Minute)
	if _, err := s2.Authenticate(t.Context(), sessionSecret); status.Code(err) != codes.Unavailable {
		t.Fatalf("CRM down: %v, want Unavailable", err)
	}
	crm2.fail = nil
	if _, err := s2.Authenticate(t.Context(), sessionSecret); err != nil {
		t.Fatalf("after the CRM recovers: %v", err)
	}
}

func TestCheckCSRF(t *testing.T) {
	s, _, _ := newSessions(t, &sessionCRM{}, time.Minute)
	sess, err := s.Authenticate(t.Context(), sessionSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.CheckCSRF("the-csrf-token"); err != nil {
		t.Fatalf("right token: %v", err)
	}
	for token, want := range map[string]string{"": "missing X-CSRF-Token", "the-csrf-tokem": "wrong X-CSRF-Token", "the-csrf-token ": "wrong"} {
		if err := sess.CheckCSRF(token); status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), want) {
			t.Errorf("token %q: %v, want PermissionDenied mentioning %q", token, err, want)
		}
	}
}

// owners is a SiteOwners double: sites a1, a2 of agency A, b1 of B.
type owners map[string]string

func (o owners) Owner(_ context.Context, id string) (SiteOwner, error) {
	a, ok := o[id]
	return SiteOwner{Found: ok, AgencyID: a}, nil
}

// TestPersonPrincipal: how a session, the headers and the route's rule
// make the principal, and each refusal's message.
func TestPersonPrincipal(t *testing.T) {
	sites := owners{"a1": "A", "a2": "A", "b1": "B"}
	tenant := func(b principal.Binding) principal.Access {
		return principal.Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: principal.ScopeRead, Binding: b, Resource: "content"}
	}
	own := &crmv1.Membership{MemberId: "mA", AgencyId: "A", AgencyName: "Alpha", Role: "owner"}
	edit := &crmv1.Membership{MemberId: "mB", AgencyId: "B", AgencyName: "Beta", Role: "editor", SiteIds: []string{"b1"}}
	cli := &crmv1.Membership{MemberId: "mC", AgencyId: "C", AgencyName: "Gamma", Role: "client", ClientId: wrapperspb.String("client-1")}
	sess := &Session{ID: "s1", UserID: "u1", Memberships: []*crmv1.Membership{own, edit, cli}}
	for name, tc := range map[string]struct {
		c    Choice
		want principal.Principal
		err  string
	}{
		"person route": {c: Choice{Agency: "nope", Access: principal.Access{Caller: accessv1.Caller_CALLER_PERSON}},
			want: principal.Principal{Kind: principal.KindUser, Subject: "u1", SessionID: "s1"}},
		"first agency": {c: Choice{Access: tenant(principal.BindingAgency)},
			want: principal.Principal{Kind: principal.KindUser, Subject: "u1", SessionID: "s1", AgencyID: "A", MemberID: "mA", Role: principal.RoleOwner}},
		"agency header": {c: Choice{Agency: " C ", Access: tenant(principal.BindingAgency)},
			want: principal.Principal{Kind: principal.KindUser, Subject: "u1", SessionID: "s1", AgencyID: "C", MemberID: "mC", Role: principal.RoleClient, ClientID: "client-1"}},
		"not their agency": {c: Choice{Agency: "D", Access: tenant(principal.BindingAgency)},
			err: `the Atrium-Agency header names "D", which is not an agency you are a member of; yours: A (Alpha, owner), B (Beta, editor), C (Gamma, client)`},
		"site of the agency": {c: Choice{Site: "a2", Access: tenant(principal.BindingSite)},
			want: principal.Principal{Kind: principal.KindUser, Subject: "u1", SessionID: "s1", AgencyID: "A", MemberID: "mA", Role: principal.RoleOwner, SiteID: "a2"}},
		"owner without a site": {c: Choice{Access: tenant(principal.BindingSite)},
			want: principal.Principal{Kind: principal.KindUser, Subject: "u1", SessionID: "s1", AgencyID: "A", MemberID: "mA", Role: principal.RoleOwner}},
		"another agency's site": {c: Choice{Site: "b1", Access: tenant(principal.BindingSite)},
			err: `the Atrium-Site header names "b1", which is not a site of agency A`},
		"unknown site": {c: Choice{Site: "zz", Access: tenant(principal.BindingSite)},
			err: `the Atrium-Site header names "zz", which is not a site of agency A`},
		"editor's only site": {c: Choice{Agency: "B", Access: tenant(principal.BindingSite)},
			want: principal.Principal{Kind: principal.KindUser, Subject: "u1", SessionID: "s1", AgencyID: "B", MemberID: "mB", Role: principal.RoleEditor, SiteID: "b1"}},
		"editor's other site": {c: Choice{Agency: "B", Site: "a1", Access: tenant(principal.BindingSite)},
			err: "as an editor of agency B you may use only the sites b1"},
		"site header on an agency route": {c: Choice{Site: "b1", Access: tenant(principal.BindingAgency)},
			want: principal.Principal{Kind: principal.KindUser, Subject: "u1", SessionID: "s1", AgencyID: "A", MemberID: "mA", Role: principal.RoleOwner}},
		"site or agency, with a site": {c: Choice{Site: "a1", Access: tenant(principal.BindingSiteOrAgency)},
			want: principal.Principal{Kind: principal.KindUser, Subject: "u1", SessionID: "s1", AgencyID: "A", MemberID: "mA", Role: principal.RoleOwner, SiteID: "a1"}},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := sess.Principal(t.Context(), tc.c, sites)
			if tc.err != "" {
				if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), tc.err) {
					t.Fatalf("error = %v, want PermissionDenied saying %q", err, tc.err)
				}
				return
			}
			if err != nil || p.Kind != tc.want.Kind || p.Subject != tc.want.Subject || p.SessionID != tc.want.SessionID || p.AgencyID != tc.want.AgencyID ||
				p.MemberID != tc.want.MemberID || p.Role != tc.want.Role || p.ClientID != tc.want.ClientID || p.SiteID != tc.want.SiteID {
				t.Fatalf("principal = %+v, %v; want %+v", p, err, tc.want)
			}
		})
	}
	none := &Session{ID: "s2", UserID: "u2"}
	if _, err := none.Principal(t.Context(), Choice{Access: tenant(principal.BindingAgency)}, sites); status.Code(err) != codes.PermissionDenied ||
		!strings.Contains(err.Error(), "member of no agency") {
		t.Fatalf("no memberships: %v", err)
	}
}

// siteOwnerClient answers GetSiteOwner and counts the calls.
type siteOwnerClient struct {
	collectionsv1.SiteOwnerServiceClient // the methods the site owner cache never calls
	calls                                atomic.Int32
}

func (c *siteOwnerClient) GetSiteOwner(_ context.Context, in *collectionsv1.GetSiteOwnerRequest, _ ...grpc.CallOption) (*collectionsv1.GetSiteOwnerResponse, error) {
	c.calls.Add(1)
	if in.SiteId == "a1" {
		return &collectionsv1.GetSiteOwnerResponse{AgencyId: "A"}, nil
	}
	return nil, status.Error(codes.NotFound, "no such site")
}

func TestSiteOwnersCacheAndEvict(t *testing.T) {
	signer, _ := principal.NewSigner([]byte(strings.Repeat("s", 32)))
	c := &siteOwnerClient{}
	o := NewSiteOwners(c, signer, time.Minute, 10)
	for range 3 {
		if got, err := o.Owner(t.Context(), "a1"); err != nil || !got.Found || got.AgencyID != "A" {
			t.Fatalf("a1: %+v %v", got, err)
		}
		if got, err := o.Owner(t.Context(), "zz"); err != nil || got.Found {
			t.Fatalf("zz: %+v %v", got, err)
		}
	}
	if n := c.calls.Load(); n != 2 {
		t.Fatalf("calls = %d, want 2 (one per site)", n)
	}
	o.Evict("zz")
	_, _ = o.Owner(t.Context(), "zz")
	if n := c.calls.Load(); n != 3 {
		t.Fatalf("calls = %d, want 3 after an eviction", n)
	}
}
