package studio

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// visit is one request of a signed-in person: who they are, the agency
// they act for (the path's), and, on the pages of a site, the site.
type visit struct {
	s    *Studio
	w    http.ResponseWriter
	r    *http.Request
	sess *auth.Session
	// m is the membership of the path's agency; nil outside an agency.
	m *crmv1.Membership
	// site is the site the page works on ("" outside a site's pages).
	site string
	// operator: a page of the operator's console (operator.go), acting
	// with admin, its forms carrying opCSRF.
	operator bool
	admin    principal.Principal
	opCSRF   string
}

// begin resolves the request's session and the path's agency. It answers
// the request itself and returns false when there is no session (a GET
// goes to the sign-in page and comes back; a POST keeps what it posted:
// signin.go) or the path's agency is not one of the person's.
func (s *Studio) begin(w http.ResponseWriter, r *http.Request) (*visit, bool) {
	v := &visit{s: s, w: w, r: r}
	sess, err := s.cfg.Gate.Session(r)
	if err != nil {
		if status.Code(err) == codes.Unauthenticated {
			s.signInFirst(v, err)
			return nil, false
		}
		s.fail(v, err)
		return nil, false
	}
	v.sess = sess
	if ok, wait := s.cfg.Gate.RateLimit(sess); !ok {
		setRetryAfter(w, wait)
		s.problem(v, http.StatusTooManyRequests, "You are making requests faster than this Atrium allows.",
			"Wait "+wait.Round(time.Second).String()+" and reload the page.")
		return nil, false
	}
	if a := r.PathValue("agency"); a != "" {
		i := slices.IndexFunc(sess.Memberships, func(m *crmv1.Membership) bool { return m.GetAgencyId() == a })
		if i < 0 {
			// Another agency's page and a page that does not exist look
			// alike: an agency learns nothing of the others.
			s.problem(v, http.StatusNotFound, "There is no page at this address among your agencies.",
				"Check the link, or switch to one of your agencies from the start page.")
			return nil, false
		}
		v.m = sess.Memberships[i]
		// A site's pages act for the path's site; the gateway refuses a
		// site the agency does not own, or one an editor may not edit.
		v.site = r.PathValue("site")
	}
	if r.Method == http.MethodPost {
		if err := v.checkForm(); err != nil {
			s.fail(v, err)
			return nil, false
		}
	}
	return v, true
}

// checkForm refuses a POST from another origin's page or without the
// session's CSRF token in its csrf_token field.
func (v *visit) checkForm() error {
	if err := v.s.cfg.Gate.SameOrigin(v.r); err != nil {
		return err
	}
	if err := v.r.ParseMultipartForm(32 << 20); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return status.Errorf(codes.InvalidArgument, "the form could not be read: %v", err)
	}
	if err := v.sess.CheckCSRF(v.r.PostFormValue("csrf_token")); err != nil {
		return status.Error(codes.PermissionDenied, "this form is out of date or was not sent by the Studio (its security token is missing or wrong): reload the page and send it again")
	}
	return checkText("", v.r.PostForm)
}

// checkText refuses an address or a form that is not UTF-8 text: the
// services' messages carry only UTF-8 strings, so a page would otherwise
// fail to send it (a 500) rather than say what is wrong with it.
func checkText(path string, form url.Values) error {
	if !utf8.ValidString(path) {
		return status.Error(codes.InvalidArgument, "the address holds bytes that are not UTF-8 text: follow the Studio's own links rather than typing an address")
	}
	for name, values := range form {
		if !utf8.ValidString(name) {
			return status.Error(codes.InvalidArgument, "a field's name is not UTF-8 text: fields must be UTF-8 text")
		}
		for _, val := range values {
			if !utf8.ValidString(val) {
				return status.Errorf(codes.InvalidArgument, "the field %q is not UTF-8 text: fields must be UTF-8 text", clip(name, 60))
			}
		}
	}
	return nil
}

// clip shortens what a client sent for a message that quotes it.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// agency is the id of the agency the visit acts for.
func (v *visit) agency() string { return v.m.GetAgencyId() }

// role is the person's role in the visit's agency.
func (v *visit) role() principal.Role {
	r, _ := principal.ParseRole(v.m.GetRole())
	return r
}

// ctx is the visit's context for a call of fullMethod, carrying the
// principal the gateway makes for it.
func (v *visit) ctx(fullMethod string) (context.Context, error) {
	p, err := v.s.cfg.Gate.Principal(v.r.Context(), v.sess, v.agency(), v.site, fullMethod)
	if err != nil {
		return nil, err
	}
	return v.s.cfg.Gate.Outgoing(v.r.Context(), v.r, p), nil
}

// may reports whether the person may call fullMethod in this visit, as the
// judge decides it before the service does: pages show only the controls
// that would work.
func (v *visit) may(fullMethod string) bool {
	a, ok := principal.AccessOf(fullMethod)
	if !ok {
		return false
	}
	p, err := v.s.cfg.Gate.Principal(v.r.Context(), v.sess, v.agency(), v.site, fullMethod)
	if err != nil {
		return false
	}
	return principal.Authorize(p, a) == nil
}

// call calls one RPC as the visit's person: fn is the generated client's
// method and fullMethod its name (the generated _FullMethodName constant),
// which picks the principal the gateway makes for it.
func call[Req, Resp any](v *visit, fullMethod string, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req, opts ...grpc.CallOption) (Resp, error) {
	ctx, err := v.ctx(fullMethod)
	if err != nil {
		var zero Resp
		return zero, err
	}
	return fn(ctx, req, opts...)
}

// callJSONWith is call asking the service for the JSON body the API
// answers (rendered once, by the service, as for the JSON API's route),
// which read reads: for the pages that list many records, cheaper than the
// typed answer, whose values are protobuf Structs.
func callJSONWith[Req any, Resp interface{ GetRenderedJson() []byte }](v *visit, fullMethod string, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req, read func([]byte) error, opts ...grpc.CallOption) error {
	ctx, err := v.ctx(fullMethod)
	if err != nil {
		return err
	}
	return callJSONIn(ctx, fullMethod, fn, req, read, opts...)
}

// callJSONIn is callJSONWith in ctx, made by visit.ctx: a page that
// makes its calls side by side makes their contexts first, on its own
// goroutine.
func callJSONIn[Req any, Resp interface{ GetRenderedJson() []byte }](ctx context.Context, fullMethod string, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req, read func([]byte) error, opts ...grpc.CallOption) error {
	resp, err := fn(metadata.AppendToOutgoingContext(ctx, render.MetadataKey, render.JSON), req, opts...)
	if err != nil {
		return err
	}
	b := resp.GetRenderedJson()
	if len(b) == 0 {
		return status.Errorf(codes.Internal, "%s answered no rendered body", fullMethod)
	}
	if err := read(b); err != nil {
		return status.Errorf(codes.Internal, "%s's rendered body: %v", fullMethod, err)
	}
	return nil
}

// callIfMatch is call with the If-Match precondition (an item's ETag): the
// service refuses the write when someone else saved first.
func callIfMatch[Req, Resp any](v *visit, fullMethod, etag string, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req, opts ...grpc.CallOption) (Resp, error) {
	ctx, err := v.ctx(fullMethod)
	if err != nil {
		var zero Resp
		return zero, err
	}
	if etag != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "if-match", etag)
	}
	return fn(ctx, req, opts...)
}

// path is a path of the visit's agency: v.path("sites", id) is
// /studio/a/{agency}/sites/{id}, each part escaped.
func (v *visit) path(parts ...string) string {
	var b strings.Builder
	b.WriteString(Prefix + "a/" + url.PathEscape(v.agency()) + "/")
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// redirect answers a POST with 303 to the page that shows its result, with
// a confirmation to show there.
func (v *visit) redirect(to, flash string) error {
	if flash != "" {
		u, err := url.Parse(to)
		if err == nil {
			q := u.Query()
			q.Set("done", flash)
			u.RawQuery = q.Encode()
			to = u.String()
		}
	}
	http.Redirect(v.w, v.r, to, http.StatusSeeOther) //nolint:gosec // G710: to is a path the handlers build (v.path, Prefix+…) or one localPath kept under /studio/
	return nil
}
