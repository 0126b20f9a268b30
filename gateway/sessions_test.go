package gateway

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// The people of the session tests. Ids are UUIDs so that the events
// carrying them parse.
const (
	userID     = "00000000-0000-4000-8000-0000000000a1"
	sessionID  = "00000000-0000-4000-8000-0000000000b1"
	agencyA    = "00000000-0000-4000-8000-00000000000a"
	agencyB    = "00000000-0000-4000-8000-00000000000b"
	siteA1     = "00000000-0000-4000-8000-0000000000a1"
	siteA2     = "00000000-0000-4000-8000-0000000000a2"
	siteB1     = "00000000-0000-4000-8000-0000000000b1"
	clientA    = "00000000-0000-4000-8000-0000000000c1"
	cookieVal  = "sess_0123456789abcdefghijklmnopqrstuvwxyzABCDEF"
	csrfToken  = "csrf-token-of-the-session"
	loginEmail = "ada@example.com"
	loginPass  = "correct horse battery staple"
)

// fakePeople is the CRM's and the collections' side of sessions, on a real
// gRPC server with the real interceptors (which judge the principal the
// gateway signs again): it knows one session, whose memberships the test
// sets, and records the principal and the address each call came with.
type fakePeople struct {
	crmv1.UnimplementedCRMServiceServer
	crmv1.UnimplementedAPIKeyServiceServer
	crmv1.UnimplementedSessionServiceServer
	crmv1.UnimplementedSessionAuthServiceServer
	crmv1.UnimplementedPeopleServiceServer
	collectionsv1.UnimplementedCollectionsServiceServer
	collectionsv1.UnimplementedSiteOwnerServiceServer

	mu          sync.Mutex
	memberships []*crmv1.Membership
	ended       bool
	last        principal.Principal
	lastFor     string // x-forwarded-for of the last call

	verifies, owners, logins atomic.Int32
}

func (f *fakePeople) setMemberships(ms ...*crmv1.Membership) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.memberships = ms
}

func (f *fakePeople) seen(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last, _ = principal.FromContext(ctx)
	f.lastFor = ""
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		f.lastFor = strings.Join(md.Get("x-forwarded-for"), "|")
	}
}

func (f *fakePeople) lastPrincipal() principal.Principal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *fakePeople) VerifyAPIKey(_ context.Context, req *crmv1.VerifyAPIKeyRequest) (*crmv1.VerifyAPIKeyResponse, error) {
	if d := sha256.Sum256([]byte(apiKey)); string(req.SecretSha256) == string(d[:]) {
		return &crmv1.VerifyAPIKeyResponse{Key: &crmv1.APIKey{Id: "key-1", Scopes: []string{"read", "write"}, AgencyId: wrapperspb.String(agencyA)}}, nil
	}
	return nil, apperr.NotFound("unknown API key")
}

func (f *fakePeople) VerifySession(_ context.Context, req *crmv1.VerifySessionRequest) (*crmv1.VerifySessionResponse, error) {
	f.verifies.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if d := sha256.Sum256([]byte(cookieVal)); string(req.SecretSha256) != string(d[:]) || f.ended {
		return nil, apperr.NotFound("no such session")
	}
	csrf := sha256.Sum256([]byte(csrfToken))
	return &crmv1.VerifySessionResponse{
		Session: &crmv1.Session{Id: sessionID, UserId: userID, ExpiresAt: timestamppb.New(time.Now().Add(time.Hour))},
		User:    &crmv1.User{Id: userID, Email: loginEmail}, Memberships: f.memberships,
		CsrfSha256: csrf[:], CsrfToken: csrfToken,
	}, nil
}

func (f *fakePeople) CreateSession(ctx context.Context, req *crmv1.CreateSessionRequest) (*crmv1.CreateSessionResponse, error) {
	f.logins.Add(1)
	f.seen(ctx)
	if req.Email != loginEmail || req.Password != loginPass {
		return nil, apperr.Unauthenticated("wrong email or password")
	}
	if err := grpc.SetHeader(ctx, metadata.Pairs("atrium-session", cookieVal, "atrium-session-expires", "2030-01-02T03:04:05Z")); err != nil {
		return nil, err
	}
	return &crmv1.CreateSessionResponse{User: &crmv1.User{Id: userID, Email: loginEmail}, CsrfToken: csrfToken, Session: &crmv1.Session{Id: sessionID, UserId: userID}}, nil
}

func (f *fakePeople) AcceptInvitation(ctx context.Context, _ *crmv1.AcceptInvitationRequest) (*crmv1.AcceptInvitationResponse, error) {
	if err := grpc.SetHeader(ctx, metadata.Pairs("atrium-session", cookieVal, "atrium-session-expires", "2030-01-02T03:04:05Z")); err != nil {
		return nil, err
	}
	return &crmv1.AcceptInvitationResponse{CsrfToken: csrfToken}, nil
}

func (f *fakePeople) RequestPasswordReset(context.Context, *crmv1.RequestPasswordResetRequest) (*crmv1.RequestPasswordResetResponse, error) {
	return &crmv1.RequestPasswordResetResponse{}, nil
}

func (f *fakePeople) GetCurrentSession(ctx context.Context, _ *crmv1.GetCurrentSessionRequest) (*crmv1.GetCurrentSessionResponse, error) {
	f.seen(ctx)
	return &crmv1.GetCurrentSessionResponse{User: &crmv1.User{Id: userID}, CsrfToken: csrfToken}, nil
}

func (f *fakePeople) DeleteCurrentSession(ctx context.Context, _ *crmv1.DeleteCurrentSessionRequest) (*crmv1.DeleteCurrentSessionResponse, error) {
	f.seen(ctx)
	f.mu.Lock()
	f.ended = true
	f.mu.Unlock()
	return &crmv1.DeleteCurrentSessionResponse{}, nil
}

func (f *fakePeople) ListProspects(ctx context.Context, _ *crmv1.ListProspectsRequest) (*crmv1.ListProspectsResponse, error) {
	f.seen(ctx)
	return &crmv1.ListProspectsResponse{}, nil
}

func (f *fakePeople) ListMembers(ctx context.Context, _ *crmv1.ListMembersRequest) (*crmv1.ListMembersResponse, error) {
	f.seen(ctx)
	return &crmv1.ListMembersResponse{}, nil
}

func (f *fakePeople) CreateMember(ctx context.Context, _ *crmv1.PeopleServiceCreateMemberRequest) (*crmv1.PeopleServiceCreateMemberResponse, error) {
	f.seen(ctx)
	return &crmv1.PeopleServiceCreateMemberResponse{}, nil
}

func (f *fakePeople) ListCollections(ctx context.Context, _ *collectionsv1.ListCollectionsRequest) (*collectionsv1.ListCollectionsResponse, error) {
	f.seen(ctx)
	return &collectionsv1.ListCollectionsResponse{}, nil
}

func (f *fakePeople) GetSiteOwner(_ context.Context, req *collectionsv1.GetSiteOwnerRequest) (*collectionsv1.GetSiteOwnerResponse, error) {
	f.owners.Add(1)
	switch req.SiteId {
	case siteA1, siteA2:
		return &collectionsv1.GetSiteOwnerResponse{AgencyId: agencyA}, nil
	case siteB1:
		return &collectionsv1.GetSiteOwnerResponse{AgencyId: agencyB}, nil
	}
	return nil, apperr.NotFound("no such site")
}

func owner(agency string) *crmv1.Membership {
	return &crmv1.Membership{MemberId: "member-" + agency[len(agency)-1:], AgencyId: agency, AgencyName: "Agency " + agency[len(agency)-1:], Role: "owner"}
}

// startPeople starts the fake behind a gateway (CRM and collections on one
// server) and returns the gateway's base URL.
func startPeople(t *testing.T, f *fakePeople, tweak func(*Config)) (string, *running) {
	t.Helper()
	signer, _ := principal.NewSigner(secret)
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	crmv1.RegisterCRMServiceServer(srv, f)
	crmv1.RegisterAPIKeyServiceServer(srv, f)
	crmv1.RegisterSessionServiceServer(srv, f)
	crmv1.RegisterSessionAuthServiceServer(srv, f)
	crmv1.RegisterPeopleServiceServer(srv, f)
	collectionsv1.RegisterCollectionsServiceServer(srv, f)
	collectionsv1.RegisterSiteOwnerServiceServer(srv, f)
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	other := closedAddr(t)
	r := startGatewayTo(t, map[string]string{"crm": srv.Addr(), "collections": srv.Addr(), "data": other, "actions": other, "webhooks": other, "audit": other}, tweak)
	return "http://" + r.gw.HTTPAddr(), r
}

type answer struct {
	code   int
	header http.Header
	body   string
}

// call makes a request with the session cookie (unless cookie is "") and
// the given headers, "Name: value".
func call(t *testing.T, method, url, body, cookie string, headers ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "atrium_session", Value: cookie}) //nolint:gosec // G124: a request's cookie, as a browser sends it (only name and value)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func (a answer) want(t *testing.T, code int, says ...string) {
	t.Helper()
	if a.code != code {
		t.Fatalf("status %d, want %d: %s", a.code, code, a.body)
	}
	for _, s := range says {
		if !strings.Contains(a.body, s) {
			t.Fatalf("body %s does not say %q", a.body, s)
		}
	}
}

// TestSignInSetsTheCookie: the CRM's session secret becomes an HttpOnly,
// SameSite=Lax cookie for the whole API with the session's expiry, and
// never appears in the body or as a header of its own; Secure with
// --cookie-secure. Signing out clears the cookie, and the session stops
// working on this gateway at once.
func TestSignInSetsTheCookie(t *testing.T) {
	for _, secure := range []bool{false, true} {
		f := &fakePeople{}
		f.setMemberships(owner(agencyA))
		base, _ := startPeople(t, f, func(c *Config) { c.CookieSecure = secure })
		a := call(t, "POST", base+"/api/v1/sessions", `{"email":"`+loginEmail+`","password":"`+loginPass+`"}`, "")
		a.want(t, http.StatusCreated, csrfToken)
		if strings.Contains(a.body, cookieVal) {
			t.Fatalf("the session secret is in the body: %s", a.body)
		}
		for k := range a.header {
			if strings.EqualFold(k, "Atrium-Session") || strings.EqualFold(k, "Atrium-Session-Expires") || strings.HasPrefix(strings.ToLower(k), "grpc-metadata") {
				t.Fatalf("the CRM's metadata is forwarded as header %s", k)
			}
		}
		cookies := (&http.Response{Header: a.header}).Cookies()
		if len(cookies) != 1 {
			t.Fatalf("Set-Cookie = %v, want one cookie", a.header.Values("Set-Cookie"))
		}
		c := cookies[0]
		if c.Name != "atrium_session" || c.Value != cookieVal || c.Path != "/" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode ||
			!c.Expires.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) || c.Secure != secure {
			t.Fatalf("cookie = %+v (secure wanted: %v)", c, secure)
		}

		a = call(t, "GET", base+"/api/v1/sessions/current", "", cookieVal)
		a.want(t, http.StatusOK, csrfToken)
		if p := f.lastPrincipal(); p.Kind != principal.KindUser || p.Subject != userID || p.SessionID != sessionID {
			t.Fatalf("the CRM saw %+v", p)
		}
		call(t, "DELETE", base+"/api/v1/sessions/current", "", cookieVal).want(t, http.StatusForbidden, "X-CSRF-Token")
		a = call(t, "DELETE", base+"/api/v1/sessions/current", "", cookieVal, "X-CSRF-Token: "+csrfToken)
		a.want(t, http.StatusOK)
		cleared := (&http.Response{Header: a.header}).Cookies()
		if len(cleared) != 1 || cleared[0].Name != "atrium_session" || cleared[0].Value != "" || cleared[0].MaxAge >= 0 || !cleared[0].HttpOnly {
			t.Fatalf("sign-out Set-Cookie = %v, want the cookie cleared", a.header.Values("Set-Cookie"))
		}
		call(t, "GET", base+"/api/v1/sessions/current", "", cookieVal).want(t, http.StatusUnauthorized, "sign in again")
	}
}

// TestSessionCookieOverTLSIsSecure: a request that came over TLS gets a
// Secure cookie without --cookie-secure.
func TestSessionCookieOverTLSIsSecure(t *testing.T) {
	g := &Gateway{}
	if !g.secureCookies(context.WithValue(context.Background(), stateKey{}, &requestState{tls: true})) {
		t.Fatal("a request over TLS does not get a Secure cookie")
	}
	if g.secureCookies(context.WithValue(context.Background(), stateKey{}, &requestState{})) {
		t.Fatal("a plain request gets a Secure cookie without --cookie-secure")
	}
}

// TestSessionPrincipal: the cookie authenticates as the person, acting for
// the agency Atrium-Agency names (one of theirs), by default their first;
// another agency is refused naming theirs.
func TestSessionPrincipal(t *testing.T) {
	f := &fakePeople{}
	client := &crmv1.Membership{MemberId: "member-c", AgencyId: agencyB, AgencyName: "Agency b", Role: "client", ClientId: wrapperspb.String(clientA)}
	f.setMemberships(owner(agencyA), client)
	base, _ := startPeople(t, f, nil)

	call(t, "GET", base+"/api/v1/members", "", cookieVal).want(t, http.StatusOK)
	if p := f.lastPrincipal(); p.Kind != principal.KindUser || p.Subject != userID || p.SessionID != sessionID || p.AgencyID != agencyA ||
		p.Role != principal.RoleOwner || p.MemberID != "member-a" || p.ClientID != "" {
		t.Fatalf("default agency: the CRM saw %+v", p)
	}
	// As the client of agency B: members are not theirs to read.
	call(t, "GET", base+"/api/v1/members", "", cookieVal, "Atrium-Agency: "+agencyB).want(t, http.StatusForbidden, "client role")
	call(t, "GET", base+"/api/v1/prospects", "", cookieVal, "Atrium-Agency: "+agencyB).want(t, http.StatusForbidden)
	// A third agency: refused, naming the two they may use.
	call(t, "GET", base+"/api/v1/members", "", cookieVal, "Atrium-Agency: 00000000-0000-4000-8000-0000000000ff").
		want(t, http.StatusForbidden, "Atrium-Agency", agencyA, agencyB)

	// An Authorization header wins over the cookie.
	call(t, "GET", base+"/api/v1/prospects", "", cookieVal, "Authorization: Bearer "+apiKey).want(t, http.StatusOK)
	if p := f.lastPrincipal(); p.Kind != principal.KindKey || p.Subject != "key-1" {
		t.Fatalf("key and cookie: the CRM saw %+v", p)
	}
	// A key cannot use the routes of a person's session.
	call(t, "GET", base+"/api/v1/sessions/current", "", "", "Authorization: Bearer "+apiKey).want(t, http.StatusForbidden, "signed-in person")
	call(t, "GET", base+"/api/v1/sessions/current", "", "").want(t, http.StatusUnauthorized, "POST /api/v1/sessions")
	call(t, "GET", base+"/api/v1/prospects", "", "sess_unknown").want(t, http.StatusUnauthorized, "sign in again")
}

// TestAtriumSite: the collections interface acts for the site Atrium-Site
// names, which must be one of the agency's; an editor whose membership
// names sites may use only those, and without the header uses their only
// one.
func TestAtriumSite(t *testing.T) {
	f := &fakePeople{}
	f.setMemberships(owner(agencyA))
	base, r := startPeople(t, f, nil)

	call(t, "GET", base+"/api/public/v1/collections", "", cookieVal).want(t, http.StatusForbidden, "Atrium-Site")
	call(t, "GET", base+"/api/public/v1/collections", "", cookieVal, "Atrium-Site: "+siteA2).want(t, http.StatusOK)
	if p := f.lastPrincipal(); p.SiteID != siteA2 || p.AgencyID != agencyA {
		t.Fatalf("the collections service saw %+v", p)
	}
	// Another agency's site and an unknown one: the same refusal.
	other := call(t, "GET", base+"/api/public/v1/collections", "", cookieVal, "Atrium-Site: "+siteB1)
	other.want(t, http.StatusForbidden, "not a site of agency "+agencyA)
	unknown := call(t, "GET", base+"/api/public/v1/collections", "", cookieVal, "Atrium-Site: 00000000-0000-4000-8000-0000000000ee")
	unknown.want(t, http.StatusForbidden, "not a site of agency "+agencyA)
	// The owner is cached: asking again does not ask collections.
	n := f.owners.Load()
	call(t, "GET", base+"/api/public/v1/collections", "", cookieVal, "Atrium-Site: "+siteA2).want(t, http.StatusOK)
	if f.owners.Load() != n {
		t.Fatal("the site's owner was asked again within the cache's TTL")
	}

	// The owner becomes an editor limited to site a1 (the event of the
	// change evicts the session; TestSessionEvents sends it).
	f.setMemberships(&crmv1.Membership{MemberId: "member-e", AgencyId: agencyA, Role: "editor", SiteIds: []string{siteA1}})
	r.gw.sessions.EvictUser(userID)
	call(t, "GET", base+"/api/public/v1/collections", "", cookieVal).want(t, http.StatusOK)
	if p := f.lastPrincipal(); p.SiteID != siteA1 || p.Role != principal.RoleEditor {
		t.Fatalf("an editor of one site, without Atrium-Site: the collections service saw %+v", p)
	}
	call(t, "GET", base+"/api/public/v1/collections", "", cookieVal, "Atrium-Site: "+siteA2).
		want(t, http.StatusForbidden, "as an editor of agency "+agencyA+" you may use only the sites "+siteA1)
	call(t, "GET", base+"/api/public/v1/collections", "", cookieVal, "Atrium-Site: "+siteA1).want(t, http.StatusOK)
	// An editor reads no prospects.
	call(t, "GET", base+"/api/v1/prospects", "", cookieVal).want(t, http.StatusForbidden, "editor role", "the roles that may")
}

// TestCSRF: an unsafe method with the cookie needs the session's token in
// X-CSRF-Token; a safe one does not.
func TestCSRF(t *testing.T) {
	f := &fakePeople{}
	f.setMemberships(owner(agencyA))
	base, _ := startPeople(t, f, nil)
	body := `{"email":"bob@example.com","role":"viewer"}`
	call(t, "POST", base+"/api/v1/members", body, cookieVal).
		want(t, http.StatusForbidden, "missing X-CSRF-Token", "POST /api/v1/sessions", "GET /api/v1/sessions/current")
	call(t, "POST", base+"/api/v1/members", body, cookieVal, "X-CSRF-Token: not-the-token").want(t, http.StatusForbidden, "wrong X-CSRF-Token")
	call(t, "POST", base+"/api/v1/members", body, cookieVal, "X-CSRF-Token: "+csrfToken).want(t, http.StatusCreated)
	call(t, "GET", base+"/api/v1/members", "", cookieVal).want(t, http.StatusOK)
	// A key needs no CSRF token: no browser attaches it by itself.
	call(t, "GET", base+"/api/v1/prospects", "", "", "Authorization: Bearer "+apiKey).want(t, http.StatusOK)
}

// TestCrossOriginCookiesAreRefused: a request from another origin's page
// is refused with the cookie, whatever it carries; from the API's own
// origin it is served. Signing in from another origin is refused too.
func TestCrossOriginCookiesAreRefused(t *testing.T) {
	f := &fakePeople{}
	f.setMemberships(owner(agencyA))
	base, _ := startPeople(t, f, nil)
	for _, h := range []string{"Origin: https://evil.example", "Origin: null", "Sec-Fetch-Site: cross-site", "Origin: " + strings.Replace(base, "127.0.0.1", "localhost", 1)} {
		call(t, "GET", base+"/api/v1/members", "", cookieVal, h).want(t, http.StatusForbidden, "not accepted from another")
		a := call(t, "POST", base+"/api/v1/members", `{"email":"x@example.com"}`, cookieVal, h, "X-CSRF-Token: "+csrfToken)
		a.want(t, http.StatusForbidden, "not accepted from another")
		if a.header.Get("Access-Control-Allow-Credentials") != "" || a.header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%s: CORS headers %v", h, a.header)
		}
		call(t, "POST", base+"/api/v1/sessions", `{"email":"`+loginEmail+`","password":"`+loginPass+`"}`, "", h).
			want(t, http.StatusForbidden, "not accepted from another")
	}
	if n := f.logins.Load(); n != 0 {
		t.Fatalf("the CRM was asked to sign in %d times from another origin", n)
	}
	call(t, "GET", base+"/api/v1/members", "", cookieVal, "Origin: "+base, "Sec-Fetch-Site: same-origin").want(t, http.StatusOK)
	call(t, "POST", base+"/api/v1/sessions", `{"email":"`+loginEmail+`","password":"`+loginPass+`"}`, "", "Origin: "+base).want(t, http.StatusCreated)

	// The preflight never allows credentials.
	a := call(t, "OPTIONS", base+"/api/v1/members", "", "", "Origin: https://evil.example", "Access-Control-Request-Method: POST")
	if a.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("a preflight allows credentials: %v", a.header)
	}
}

// TestSignInAttemptsAreLimited: past the attempts allowed per email, and
// per address, a sign-in is answered 429 with Retry-After and when to try
// again, before the CRM is asked.
func TestSignInAttemptsAreLimited(t *testing.T) {
	f := &fakePeople{}
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	base, _ := startPeople(t, f, func(c *Config) {
		c.LoginAttemptsPerEmail, c.LoginAttemptsPerAddress, c.LoginAttemptWindow = 3, 5, 15*time.Minute
		c.now = clock
	})
	wrong := `{"email":"ADA@example.com ","password":"wrong password!"}`
	for range 3 {
		call(t, "POST", base+"/api/v1/sessions", wrong, "").want(t, http.StatusUnauthorized)
	}
	a := call(t, "POST", base+"/api/v1/sessions", `{"email":"`+loginEmail+`","password":"`+loginPass+`"}`, "")
	a.want(t, http.StatusTooManyRequests, "for this email address", "at most 3 in 15m0s", "try again in 300 second(s), at 2026-11-29T09:05:00Z")
	if a.header.Get("Retry-After") != "300" {
		t.Fatalf("Retry-After = %q, want 300", a.header.Get("Retry-After"))
	}
	if n := f.logins.Load(); n != 3 {
		t.Fatalf("the CRM was asked %d times, want 3", n)
	}
	// Another email from the same address: two more, then the address's
	// limit.
	for range 2 {
		call(t, "POST", base+"/api/v1/sessions", `{"email":"eve@example.com","password":"x"}`, "").want(t, http.StatusUnauthorized)
	}
	call(t, "POST", base+"/api/v1/sessions", `{"email":"mallory@example.com","password":"x"}`, "").
		want(t, http.StatusTooManyRequests, "from your address (127.0.0.1)", "at most 5")
	call(t, "POST", base+"/api/v1/password-resets", `{"email":"mallory@example.com"}`, "").want(t, http.StatusTooManyRequests)
	// Five minutes on, the address has one attempt back, and the email one.
	mu.Lock()
	now = now.Add(5 * time.Minute)
	mu.Unlock()
	call(t, "POST", base+"/api/v1/sessions", `{"email":"`+loginEmail+`","password":"`+loginPass+`"}`, "").want(t, http.StatusCreated)
}

// TestClientAddressIsThePeer: the address the services see (which the
// audit trail records) is the TCP peer's, whatever X-Forwarded-For a
// client sends.
func TestClientAddressIsThePeer(t *testing.T) {
	f := &fakePeople{}
	f.setMemberships(owner(agencyA))
	base, _ := startPeople(t, f, nil)
	call(t, "GET", base+"/api/v1/members", "", cookieVal, "X-Forwarded-For: 203.0.113.9", "X-Forwarded-Host: evil.example").want(t, http.StatusOK)
	f.mu.Lock()
	got := f.lastFor
	f.mu.Unlock()
	if got != "127.0.0.1" {
		t.Fatalf("x-forwarded-for = %q, want the peer 127.0.0.1 alone", got)
	}
	// Nor does it lift the limits of sign-in attempts.
	call(t, "POST", base+"/api/v1/sessions", `{"email":"`+loginEmail+`","password":"`+loginPass+`"}`, "", "X-Forwarded-For: 203.0.113.10").want(t, http.StatusCreated)
	f.mu.Lock()
	got = f.lastFor
	f.mu.Unlock()
	if got != "127.0.0.1" {
		t.Fatalf("sign-in: x-forwarded-for = %q, want the peer 127.0.0.1 alone", got)
	}

	// Behind a trusted proxy, the client is the address it appended.
	base, _ = startPeople(t, f, func(c *Config) { c.TrustedProxies = "127.0.0.0/8, ::1" })
	call(t, "GET", base+"/api/v1/members", "", cookieVal, "X-Forwarded-For: 203.0.113.9, 198.51.100.7").want(t, http.StatusOK)
	f.mu.Lock()
	got = f.lastFor
	f.mu.Unlock()
	if got != "198.51.100.7" {
		t.Fatalf("behind a trusted proxy: x-forwarded-for = %q, want 198.51.100.7", got)
	}
}

func TestForwardedClient(t *testing.T) {
	c := Config{TrustedProxies: "10.0.0.0/8,192.0.2.1"}
	if err := c.parseTrustedProxies(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ peer, xff, want string }{
		{"198.51.100.1:5000", "203.0.113.9", "198.51.100.1:5000"},                // an untrusted peer's header is its word
		{"10.1.2.3:5000", "", "10.1.2.3:5000"},                                   // a proxy naming no one
		{"10.1.2.3:5000", "203.0.113.9", "203.0.113.9:5000"},                     // one proxy
		{"10.1.2.3:5000", "6.6.6.6, 203.0.113.9, 192.0.2.1", "203.0.113.9:5000"}, // two proxies; the client's own claim on the left
		{"10.1.2.3:5000", "6.6.6.6, not-an-address", "10.1.2.3:5000"},            // garbage: the proxy itself
		{"10.1.2.3:5000", "2001:db8::1", "[2001:db8::1]:5000"},
	} {
		r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{}}
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := forwardedClient(r, c.trusted); got != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: client %s, want %s", tc.peer, tc.xff, got, tc.want)
		}
	}
	bad := Config{TrustedProxies: "10.0.0.0/8, proxy.local"}
	if err := bad.parseTrustedProxies(); err == nil || !strings.Contains(err.Error(), `"proxy.local"`) {
		t.Fatalf("a host name among the trusted proxies: %v", err)
	}
}

// TestSessionEvents: the CRM's events evict sessions at once on every
// gateway: a member's change (their next request is judged by the new
// role), sessions ended; and a site's change of owner.
func TestSessionEvents(t *testing.T) {
	url := os.Getenv("TEST_NATS_URL")
	if url == "" {
		url = "nats://127.0.0.1:4222"
	}
	f := &fakePeople{}
	f.setMemberships(owner(agencyA))
	base, r := startPeople(t, f, func(c *Config) { c.NATSURL = url; c.KeyCacheTTL = time.Minute })
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// The gateway's subscriptions are in place once its connection has
	// flushed them.
	if err := r.gw.nats.Flush(); err != nil {
		t.Fatal(err)
	}
	publish := func(subject string, payload []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Publish(subject, payload); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	waitEvicted := func(what string, cached func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for cached() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: still cached after 5s", what)
			}
			time.Sleep(5 * time.Millisecond) // why sleep: the gateway's NATS handler runs on its own; its cache has no push form
		}
	}
	sessionCached := func() bool { return r.gw.sessions.Len() > 0 }

	call(t, "GET", base+"/api/v1/members", "", cookieVal).want(t, http.StatusOK)
	// The owner is made a viewer: the next request is refused members.
	f.setMemberships(&crmv1.Membership{MemberId: "member-a", AgencyId: agencyA, Role: "viewer"})
	publish(events.MemberUpdated.Marshal(events.MemberEvent{ID: "00000000-0000-4000-8000-000000000001", AgencyID: agencyA, UserID: userID, At: time.Now()}))
	waitEvicted("member.updated", sessionCached)
	call(t, "GET", base+"/api/v1/members", "", cookieVal).want(t, http.StatusForbidden, "viewer role")

	// A site's owner is cached until its site.updated event.
	f.setMemberships(owner(agencyA))
	r.gw.sessions.EvictUser(userID)
	call(t, "GET", base+"/api/public/v1/collections", "", cookieVal, "Atrium-Site: "+siteA1).want(t, http.StatusOK)
	n := f.owners.Load()
	publish(events.SiteUpdated.Marshal(events.SiteEvent{ID: siteA1, AgencyID: agencyA, At: time.Now()}))
	waitEvicted("site.updated", func() bool {
		call(t, "GET", base+"/api/public/v1/collections", "", cookieVal, "Atrium-Site: "+siteA1).want(t, http.StatusOK)
		return f.owners.Load() == n
	})

	// The session is ended elsewhere (another gateway's sign-out).
	f.mu.Lock()
	f.ended = true
	f.mu.Unlock()
	publish(events.SessionsEnded.Marshal(events.SessionsEvent{UserID: userID, SessionIDs: []string{sessionID}, At: time.Now()}))
	waitEvicted("session.ended", sessionCached)
	call(t, "GET", base+"/api/v1/prospects", "", cookieVal).want(t, http.StatusUnauthorized, "sign in again")
}
