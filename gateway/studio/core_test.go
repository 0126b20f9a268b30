package studio

import (
	"context"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// The unit tests of the console's own logic: where a page may send a
// person, what a sign-in page carries back, the headers of every answer,
// the static files, the problem pages. They run the console over a fake
// Gate and fake connections, since none of this is the gateway's or the
// services' behaviour (the end-to-end tests, cmd/atrium, run the real
// ones).

// fakeGate is a gateway for the console's own logic: a request with the
// cookie "fake" is signed in as sess; everything else is signed out.
type fakeGate struct {
	sess *auth.Session
}

func (g fakeGate) Session(r *http.Request) (*auth.Session, error) {
	if c, err := r.Cookie("fake"); err == nil && c.Value != "" && g.sess != nil {
		return g.sess, nil
	}
	return nil, status.Error(codes.Unauthenticated, "not signed in")
}

func (fakeGate) Principal(context.Context, *auth.Session, string, string, string) (principal.Principal, error) {
	return principal.Principal{}, status.Error(codes.PermissionDenied, "the fake gate lets nobody call anything")
}

func (fakeGate) Outgoing(ctx context.Context, _ *http.Request, _ principal.Principal) context.Context {
	return ctx
}

func (fakeGate) OpenedCookie(*http.Request, metadata.MD) (*http.Cookie, error) {
	return &http.Cookie{Name: "fake", Value: "opened", HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode}, nil
}

func (fakeGate) ClearedCookie(*http.Request) *http.Cookie {
	return &http.Cookie{Name: "fake", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode}
}
func (fakeGate) EvictSession(string) {}
func (fakeGate) AllowSignIn(*http.Request, string) (bool, time.Duration) {
	return true, 0
}
func (fakeGate) RateLimit(*auth.Session) (bool, time.Duration) { return true, 0 }
func (fakeGate) SameOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		return status.Errorf(codes.PermissionDenied, "the session cookie is not accepted from another origin (Origin %s)", o)
	}
	return nil
}
func (fakeGate) Upload(context.Context, *http.Request, principal.Principal, *collectionsv1.AssetUpload, io.Reader) (*collectionsv1.Asset, error) {
	return nil, status.Error(codes.Unavailable, "the fake gate keeps no files")
}
func (fakeGate) UploadBody(_ http.ResponseWriter, r *http.Request, limit int64) io.ReadCloser {
	return http.MaxBytesReader(nil, r.Body, limit)
}
func (fakeGate) OperatorSignIn(*http.Request, string) (*http.Cookie, error) {
	return nil, status.Error(codes.Unauthenticated, "wrong token")
}
func (fakeGate) Operator(*http.Request) (principal.Principal, string, error) {
	return principal.Principal{}, "", status.Error(codes.Unauthenticated, "not signed in as the operator")
}
func (fakeGate) OperatorSignOut(*http.Request) *http.Cookie {
	return &http.Cookie{Name: "op", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode}
}
func (fakeGate) SingleSignOn() (string, bool) { return "", false }

// fakeConn answers every RPC: CreateSession opens a session with the CSRF
// token "new-csrf"; every other RPC is Unavailable.
type fakeConn struct{}

func (fakeConn) Invoke(_ context.Context, method string, _, reply any, opts ...grpc.CallOption) error {
	if method == crmv1.SessionService_CreateSession_FullMethodName {
		for _, o := range opts {
			if h, ok := o.(grpc.HeaderCallOption); ok {
				*h.HeaderAddr = metadata.Pairs("x-session", "secret")
			}
		}
		proto.Merge(reply.(proto.Message), &crmv1.CreateSessionResponse{CsrfToken: "new-csrf"})
		return nil
	}
	return status.Error(codes.Unavailable, "the fake connection has no services")
}

func (fakeConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unavailable, "the fake connection has no streams")
}

func newTestStudio(t *testing.T, g Gate) *Studio {
	t.Helper()
	conns := Conns{}
	for _, n := range []string{"collections", "crm", "data", "actions", "webhooks", "audit"} {
		conns[n] = fakeConn{}
	}
	s, err := New(Config{Gate: g, Conns: conns, Version: "test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serve makes one request of h.
func serve(h http.Handler, method, target string, body string, headers ...string) *httptest.ResponseRecorder {
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// localPath never lets ?next= (or a replayed form's address) lead out of
// the Studio: whatever it is given, the result is a path under /studio/
// of this origin.
func TestLocalPathStaysInTheStudio(t *testing.T) {
	kept := map[string]string{
		"/studio/a/ag1/members":       "/studio/a/ag1/members",
		"/studio/a/ag1/sites?q=x&p=2": "/studio/a/ag1/sites?q=x&p=2",
		"/studio/":                    "/studio/",
	}
	for in, want := range kept {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
	hostile := []string{
		"", "//evil.com", "//evil.com/studio/", "/\\evil.com", "\\\\evil.com", "/\\/evil.com/studio/",
		"https://evil", "https://evil/studio/", "http://evil.com/studio/a/", "HTTPS://evil.com",
		"javascript:alert(1)", "JavaScript:alert(1)//studio/", "data:text/html,<script>alert(1)</script>",
		"/studio/../admin", "/studio/..%2fadmin", "/studio/%2e%2e/admin", "/studio/a/../../admin/v1/agencies",
		"%2f%2fevil.com", "/%2f%2fevil.com", "/studio/%0d%0aLocation:%20https://evil", "/studio/\r\nX: y",
		"/studio/\tx", "/studio//evil.com", "/admin/v1/agencies", "studio/", "/studiox/", "https:evil.com",
		"//user@evil.com/studio/", "/studio/@evil.com", " /studio/", "\x00/studio/", "/studio/\x00",
		"/%5Cevil.com", "/studio/a/%5c%5cevil.com",
	}
	for _, in := range hostile {
		got := localPath(in)
		u, err := url.Parse(got)
		if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
			t.Errorf("localPath(%q) = %q: not a path of this origin", in, got)
			continue
		}
		// What a browser makes of the address: resolved against the
		// console's origin, it must stay on that origin, under /studio/.
		base, _ := url.Parse("https://atrium.example/studio/a/ag1/")
		abs := base.ResolveReference(u)
		if abs.Host != "atrium.example" || !strings.HasPrefix(abs.Path, Prefix) || strings.Contains(abs.Path, "..") {
			t.Errorf("localPath(%q) = %q, which a browser opens as %s", in, got, abs)
		}
		if strings.HasPrefix(got, "//") || strings.ContainsAny(got, "\\\r\n\t\x00") {
			t.Errorf("localPath(%q) = %q: a browser may read it as another host or header", in, got)
		}
	}
}

// hidden are the hidden inputs of a page, by name (values unescaped as a
// browser reads them).
var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)

func hidden(page string) [][2]string {
	var out [][2]string
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		out = append(out, [2]string{html.UnescapeString(m[1]), html.UnescapeString(m[2])})
	}
	return out
}

// A form posted after the session ended comes back from the sign-in page
// as it was: names and values with quotes and markup are escaped in the
// hidden inputs (no markup of theirs reaches the page) and, once signed in,
// the page that sends them again holds exactly what was posted, with the
// new session's token.
func TestSignInReplayRoundTrip(t *testing.T) {
	s := newTestStudio(t, fakeGate{})
	posted := url.Values{
		"title":                  {`"><script>alert(1)</script>`, `second 'value' & <b>bold</b>`},
		`na"me<i>`:               {`x" onmouseover="alert(1)`},
		"body":                   {"line one\nline two\ttab — ünïcode"},
		"csrf_token":             {"the-old-token"},
		"replay.to":              {"https://evil.example/"},
		"replay.f.injected":      {"should not be carried"},
		"empty":                  {""},
		"{{.V.CSRF}}":            {"{{template \"csrf\"}}"},
		"name with spaces & amp": {"&amp;&lt;"},
	}
	w := serve(s, "POST", "/studio/a/ag1/members/m1", posted.Encode())
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("a POST without a session answered %d, want 401 with the sign-in form", w.Code)
	}
	page := w.Body.String()
	for _, bad := range []string{"<script>alert(1)", `" onmouseover="`, "<b>bold</b>", "<i>"} {
		if strings.Contains(page, bad) {
			t.Fatalf("the sign-in page holds %q unescaped:\n%s", bad, page)
		}
	}
	signIn := url.Values{"email": {"ed@example.com"}, "password": {"pw"}}
	carried := url.Values{}
	for _, kv := range hidden(page) {
		signIn.Add(kv[0], kv[1])
		if n, ok := strings.CutPrefix(kv[0], replayPrefix+"f."); ok {
			carried.Add(n, kv[1])
		}
	}
	if got := signIn.Get("replay.to"); got != "/studio/a/ag1/members/m1" {
		t.Fatalf("the sign-in page sends the form back to %q, want its own address", got)
	}
	want := url.Values{}
	for k, vs := range posted {
		if k != "csrf_token" && !strings.HasPrefix(k, replayPrefix) {
			want[k] = vs
		}
	}
	if !sameValues(carried, want) {
		t.Fatalf("the sign-in page carries %v, want %v", carried, want)
	}

	// Signing in: the replay page holds the same fields, to be sent to the
	// same address with the new session's token.
	w = serve(s, "POST", "/studio/sign-in", signIn.Encode())
	if w.Code != http.StatusOK {
		t.Fatalf("signing in with a replay answered %d: %s", w.Code, w.Body)
	}
	page = w.Body.String()
	if !strings.Contains(page, `action="/studio/a/ag1/members/m1"`) {
		t.Fatalf("the replay form is not sent to the form's address:\n%s", page)
	}
	for _, bad := range []string{"<script>alert(1)", `" onmouseover="`, "<b>bold</b>", "<i>"} {
		if strings.Contains(page, bad) {
			t.Fatalf("the replay page holds %q unescaped", bad)
		}
	}
	replayed := url.Values{}
	for _, kv := range hidden(page) {
		replayed.Add(kv[0], kv[1])
	}
	if replayed.Get("csrf_token") != "new-csrf" || len(replayed["csrf_token"]) != 1 {
		t.Fatalf("the replay form's token is %v, want the new session's only", replayed["csrf_token"])
	}
	delete(replayed, "csrf_token")
	if !sameValues(replayed, want) {
		t.Fatalf("the replay page sends %v, want %v", replayed, want)
	}

	// A replay that asks to be sent elsewhere is sent to the Studio.
	signIn.Set("replay.to", "//evil.example/x")
	w = serve(s, "POST", "/studio/sign-in", signIn.Encode())
	if !strings.Contains(w.Body.String(), `action="/studio/"`) {
		t.Fatalf("a replay to another site was not brought back to the Studio:\n%s", w.Body)
	}
}

func sameValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, vs := range a {
		if !slices.Equal(slices.Sorted(slices.Values(vs)), slices.Sorted(slices.Values(b[k]))) {
			return false
		}
	}
	return true
}

// The sign-in page carries at most maxReplayFields fields back, on both
// legs, however many were posted.
func TestReplayFieldsAreBounded(t *testing.T) {
	s := newTestStudio(t, fakeGate{})
	f := url.Values{}
	for i := range maxReplayFields * 3 {
		f.Add("field", strings.Repeat("v", i%7))
	}
	w := serve(s, "POST", "/studio/a/ag1/keys", f.Encode())
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("status %d", w.Code)
	}
	if n := strings.Count(w.Body.String(), `name="replay.f.`); n != maxReplayFields {
		t.Fatalf("the sign-in page carries %d fields, want at most %d", n, maxReplayFields)
	}
	signIn := url.Values{"email": {"ed@example.com"}, "password": {"pw"}, "replay.to": {"/studio/a/ag1/keys"}}
	for i := range maxReplayFields * 3 {
		signIn.Add("replay.f.x", strings.Repeat("v", i%5))
	}
	w = serve(s, "POST", "/studio/sign-in", signIn.Encode())
	if n := len(hidden(w.Body.String())); w.Code != http.StatusOK || n != maxReplayFields+1 {
		t.Fatalf("the replay page (%d) carries %d hidden fields, want %d and the token", w.Code, n, maxReplayFields)
	}
}

var wantHeaders = map[string]string{
	"Content-Security-Policy": "frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "same-origin",
	"X-Frame-Options":         "DENY",
}

func checkHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for k, v := range wantHeaders {
		if !strings.Contains(h.Get(k), v) {
			t.Errorf("%s: %s = %q, want it to hold %q", what, k, h.Get(k), v)
		}
	}
	if csp := h.Get("Content-Security-Policy"); strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("%s: the CSP allows inline code: %s", what, csp)
	}
}

// Every answer of the console carries its security headers: pages,
// problems (404, 405, 403), redirects, static files and their 404.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	s := newTestStudio(t, fakeGate{sess: &auth.Session{ID: "s1", UserID: "u1", Email: "ed@example.com",
		Memberships: []*crmv1.Membership{{AgencyId: "ag1", AgencyName: "Agency One", Role: "owner"}}}})
	op := s.OperatorHandler()
	cases := []struct {
		h               http.Handler
		method, target  string
		body            string
		headers         []string
		want            int
		says            string
		signedIn, pages bool
	}{
		{h: s, method: "GET", target: "/studio/sign-in", want: 200, says: "Sign in"},
		{h: s, method: "GET", target: "/studio/no/such/page", want: 404, says: "There is no page at this address"},
		{h: s, method: "DELETE", target: "/studio/sign-in", want: 405, says: "does not take DELETE"},
		{h: s, method: "PUT", target: "/studio/a/ag1/members", want: 405, says: "does not take PUT"},
		{h: s, method: "GET", target: "/studio/a/ag1/", want: 303},
		{h: s, method: "GET", target: "/studio/a/ag1/", headers: []string{"Cookie", "fake=1"}, want: 200, says: "Agency One"},
		{h: s, method: "GET", target: "/studio/a/other-agency/", headers: []string{"Cookie", "fake=1"}, want: 404, says: "among your agencies"},
		{h: s, method: "POST", target: "/studio/a/ag1/members", body: "csrf_token=wrong", headers: []string{"Cookie", "fake=1"}, want: 403, says: "security token"},
		{h: s, method: "POST", target: "/studio/a/ag1/members", body: "x=1", headers: []string{"Cookie", "fake=1", "Origin", "https://evil.example"}, want: 403, says: "another origin"},
		{h: s, method: "GET", target: staticPath("studio.css"), want: 200},
		{h: s, method: "GET", target: "/studio/static/nope.css", want: 404, says: "no static file"},
		{h: s, method: "GET", target: "/elsewhere", want: 303},
		{h: op, method: "GET", target: "/studio/", want: 303},
		{h: op, method: "GET", target: "/studio/sign-in", want: 200, says: "admin token"},
		{h: op, method: "GET", target: "/studio/nothing-here", want: 404, says: "There is no page at this address"},
		{h: op, method: "POST", target: "/studio/agencies", body: "name=x", want: 401, says: "operator session has ended"},
		{h: op, method: "GET", target: "/studio/static/nope.js", want: 404},
	}
	for _, c := range cases {
		what := c.method + " " + c.target
		w := serve(c.h, c.method, c.target, c.body, c.headers...)
		if w.Code != c.want {
			t.Errorf("%s: status %d, want %d: %s", what, w.Code, c.want, w.Body)
		}
		if c.says != "" && !strings.Contains(w.Body.String(), c.says) {
			t.Errorf("%s: the answer does not say %q: %s", what, c.says, w.Body)
		}
		checkHeaders(t, what, w.Header())
	}
}

// Static files: the hashed address is cached for good, any other only
// revalidated; an unknown file, a hidden one or a path out of static/ is
// 404; what is served is the embedded file with its type.
func TestStaticFiles(t *testing.T) {
	s := newTestStudio(t, fakeGate{})
	w := serve(s, "GET", staticPath("studio.css"), "")
	if w.Code != 200 || !strings.Contains(w.Header().Get("Cache-Control"), "immutable") || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/css") {
		t.Fatalf("the hashed stylesheet: %d, Cache-Control %q, Content-Type %q", w.Code, w.Header().Get("Cache-Control"), w.Header().Get("Content-Type"))
	}
	want, _ := readStatic("studio.css")
	if w.Body.String() != string(want) {
		t.Fatal("the stylesheet served is not the embedded one")
	}
	for _, name := range []string{"chart.css", "diff.css", "studio.js"} {
		if w := serve(s, "GET", staticPath(name), ""); w.Code != 200 || !strings.Contains(w.Header().Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d, Cache-Control %q", name, w.Code, w.Header().Get("Cache-Control"))
		}
	}
	for _, target := range []string{"/studio/static/studio.css", "/studio/static/studio.css?v=0000", "/studio/static/studio.css?v="} {
		if w := serve(s, "GET", target, ""); w.Code != 200 || w.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: %d, Cache-Control %q, want no-cache (a stale hash must not be cached for a year)", target, w.Code, w.Header().Get("Cache-Control"))
		}
	}
	for _, target := range []string{
		"/studio/static/nope.css", "/studio/static/.studio.css", "/studio/static/..%2fstudio.go",
		"/studio/static/..%2f..%2fstudio.go", "/studio/static/%2e%2e%2ftemplates%2flayout.html",
		"/studio/static/x%2fstudio.css", "/studio/static/..%5cstudio.css", "/studio/static/%00studio.css",
		"/studio/static/templates%2flayout.html", "/studio/static/static%2fstudio.css", "/studio/static/",
	} {
		w := serve(s, "GET", target, "")
		if w.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404: %.200s", target, w.Code, w.Body)
		}
		if strings.Contains(w.Body.String(), "package studio") || strings.Contains(w.Body.String(), "{{define") {
			t.Errorf("%s served a file outside static/", target)
		}
	}
	// The path cleaning of the mux never reaches a file out of static/.
	for _, target := range []string{"/studio/static/../studio.go", "/studio/static/../templates/layout.html"} {
		w := serve(s, "GET", target, "")
		if w.Code == 200 {
			t.Errorf("%s: 200: %.200s", target, w.Body)
		}
	}
}

// Each gRPC code a page's call can end with becomes its problem page: the
// status a browser sees and words that say what happened and what to do.
func TestProblemPageForEachCode(t *testing.T) {
	s := newTestStudio(t, fakeGate{})
	m := &crmv1.Membership{AgencyId: "ag1", AgencyName: "Agency One", Role: "viewer"}
	cases := []struct {
		err  error
		code int
		says []string
	}{
		{status.Error(codes.InvalidArgument, "name must not be empty"), 400, []string{"Name must not be empty.", "Correct it"}},
		{status.Error(codes.OutOfRange, "page is past the end"), 400, []string{"Page is past the end."}},
		{status.Error(codes.PermissionDenied, "editors may not delete"), 403, []string{"You may not do this.", "Editors may not delete.", "Your role in Agency One is viewer"}},
		{status.Error(codes.NotFound, "no item x"), 404, []string{"Not found: No item x.", "another agency"}},
		{status.Error(codes.AlreadyExists, "slug posts is taken"), 409, []string{"Slug posts is taken.", "Choose another name"}},
		{status.Error(codes.FailedPrecondition, "the collection has items"), 409, []string{"The collection has items.", "Reload the page"}},
		{status.Error(codes.Aborted, "someone saved first"), 409, []string{"Someone saved first."}},
		{status.Error(codes.FailedPrecondition, "If-Match does not match the item's ETag"), 412, []string{"If-Match does not match"}},
		{status.Error(codes.ResourceExhausted, "out of AI credits"), 429, []string{"Out of AI credits.", "Wait a moment"}},
		{status.Error(codes.Unavailable, "dial tcp 10.0.0.1:9000: refused"), 503, []string{"could not answer in time"}},
		{status.Error(codes.DeadlineExceeded, "deadline"), 503, []string{"could not answer in time"}},
		{status.Error(codes.Canceled, "canceled"), 503, []string{"could not answer in time"}},
		{status.Error(codes.Internal, "pq: relation items does not exist"), 500, []string{"went wrong on Atrium's side"}},
		{status.Error(codes.Unknown, "boom"), 500, []string{"went wrong on Atrium's side"}},
		{status.Error(codes.Unimplemented, "not yet"), 500, []string{"went wrong on Atrium's side"}},
		{errors.New("a plain error"), 500, []string{"went wrong on Atrium's side"}},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/studio/a/ag1/members", nil)
		s.fail(&visit{s: s, w: w, r: r, m: m}, c.err)
		if w.Code != c.code {
			t.Errorf("%v: status %d, want %d", c.err, w.Code, c.code)
		}
		body := html.UnescapeString(w.Body.String())
		for _, say := range c.says {
			if !strings.Contains(body, say) {
				t.Errorf("%v: the page does not say %q", c.err, say)
			}
		}
		// A fault's details stay in the log, never on the page.
		for _, leak := range []string{"10.0.0.1", "pq: relation", "boom"} {
			if strings.Contains(body, leak) {
				t.Errorf("%v: the page shows %q", c.err, leak)
			}
		}
		if w.Header().Get("Cache-Control") != "no-store" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%v: Cache-Control %q, Content-Type %q", c.err, w.Header().Get("Cache-Control"), w.Header().Get("Content-Type"))
		}
	}
	// Unauthenticated is the sign-in page (GET: a redirect that comes back).
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/studio/a/ag1/members?page=2", nil)
	s.fail(&visit{s: s, w: w, r: r, m: m}, status.Error(codes.Unauthenticated, "session ended"))
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/studio/sign-in?next="+url.QueryEscape("/studio/a/ag1/members?page=2") {
		t.Errorf("Unauthenticated: %d to %q", w.Code, w.Header().Get("Location"))
	}
}

// Routes lists every page registered, which the end-to-end test of hostile
// input walks.
func TestRoutesListsEveryPage(t *testing.T) {
	s := newTestStudio(t, fakeGate{})
	rs := s.Routes()
	for _, want := range []string{"GET /studio/sign-in", "POST /studio/sign-in", "GET /studio/a/{agency}/{$}", "GET /studio/static/{file}", "POST /studio/a/{agency}/members"} {
		if !slices.Contains(rs, want) {
			t.Errorf("Routes() lacks %q: %v", want, rs)
		}
	}
}

// An address, a query or a form that is not UTF-8 text is refused with a
// 400 that says so, before any service is called (a service's message
// cannot carry it: the call would fail as a fault of Atrium's).
func TestTextThatIsNotUTF8IsRefused(t *testing.T) {
	s := newTestStudio(t, fakeGate{sess: &auth.Session{ID: "s1", UserID: "u1",
		Memberships: []*crmv1.Membership{{AgencyId: "ag1", Role: "owner"}}}})
	for _, c := range []struct{ method, target, body string }{
		{"GET", "/studio/a/ag1/members/%ff%fe", ""},
		{"GET", "/studio/a/ag1/members?q=%ff", ""},
		{"GET", "/studio/invitations/%c3%28", ""},
		{"POST", "/studio/sign-in", "email=%ff%fe&password=x"},
		{"POST", "/studio/password-resets", "email=a%80b"},
		{"POST", "/studio/invitations/tok", "name=%ff&password=a&confirm=a"},
	} {
		w := serve(s, c.method, c.target, c.body, "Cookie", "fake=1")
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "not UTF-8 text") {
			t.Errorf("%s %s: %d %.300s", c.method, c.target, w.Code, w.Body)
		}
		checkHeaders(t, c.method+" "+c.target, w.Header())
	}
}

// A service's message becomes a sentence: its first letter capitalised
// (also one written in more than one byte), a full stop at the end.
func TestSentence(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"  name is required ":    "Name is required.",
		"done.":                  "Done.",
		"ünknown field „x“":      "Ünknown field „x“.",
		"élan is not a role":     "Élan is not a role.",
		`"x" is not a slug`:      `"x" is not a slug.`,
		"\xff broken":            "\uFFFD broken.",
		"日本 is not allowed here": "日本 is not allowed here.",
	} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// A confirmation longer than the cookie keeps is cut between letters.
func TestFlashIsCutBetweenLetters(t *testing.T) {
	s := newTestStudio(t, fakeGate{})
	w := httptest.NewRecorder()
	v := &visit{s: s, w: w, r: httptest.NewRequest("POST", "/studio/a/ag1/keys", nil)}
	v.setFlash("Key " + strings.Repeat("é", 300) + " created.")
	c := w.Result().Cookies()
	if len(c) != 1 {
		t.Fatalf("cookies %v", c)
	}
	r := httptest.NewRequest("GET", "/studio/a/ag1/keys", nil)
	r.AddCookie(c[0])
	got := (&visit{s: s, w: httptest.NewRecorder(), r: r}).takeFlash()
	if !strings.HasPrefix(got, "Key éé") || !utf8.ValidString(got) || len(got) > 300 {
		t.Fatalf("the confirmation came back as %q", got)
	}
}

// A form posted from another site's page while signed out is refused,
// not kept: the sign-in page would otherwise offer to send it, with the
// person's new token, once they sign in.
func TestAnotherSitesFormIsNotKeptForSignIn(t *testing.T) {
	s := newTestStudio(t, fakeGate{})
	w := serve(s, "POST", "/studio/a/ag1/members", "email=evil%40example.com&role=owner", "Origin", "https://evil.example")
	if w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "replay.f.") || strings.Contains(w.Body.String(), "evil@example.com") {
		t.Fatalf("another site's form while signed out: %d %.500s", w.Code, w.Body)
	}
	checkHeaders(t, "another site's form", w.Header())
}
