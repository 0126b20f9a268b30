package studio

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// Signing in, out, accepting an invitation and resetting a password: the
// forms of the JSON API's session routes, calling the same RPCs of the
// CRM, under the same attempt limits.

func (s *Studio) signInRoutes() {
	s.mux.HandleFunc("GET /studio/sign-in", s.signInPage)
	s.mux.HandleFunc("POST /studio/sign-in", s.signIn)
	s.mux.HandleFunc("POST /studio/sign-out", s.signOut)
	s.mux.HandleFunc("GET /studio/invitations/{token}", s.invitationPage)
	s.mux.HandleFunc("POST /studio/invitations/{token}", s.acceptInvitation)
	s.mux.HandleFunc("GET /studio/password-resets", s.resetRequestPage)
	s.mux.HandleFunc("POST /studio/password-resets", s.requestReset)
	s.mux.HandleFunc("GET /studio/password-resets/{token}", s.resetPage)
	s.mux.HandleFunc("POST /studio/password-resets/{token}", s.completeReset)
}

// signInData is the sign-in page's: the form, where to go after it, and a
// form of the console that was posted while the session had ended, kept to
// be sent again.
type signInData struct {
	Email, Next string
	Error       string
	SSO         string
	Replay      *replay
}

// replay is a form posted after its session ended: its address and fields,
// carried through the sign-in page in hidden fields (never stored).
type replay struct {
	To     string
	Fields []field
	// Files: the form carried files, which a page cannot keep; the person
	// must choose them again.
	Files bool
	// CSRF is the new session's token, once signed in.
	CSRF string
}

type field struct{ Name, Value string }

// The replay's hidden fields are named with this prefix.
const replayPrefix = "replay."

// maxReplayFields bounds what a sign-in page carries back.
const maxReplayFields = 500

// index is /studio/: the first agency of a signed-in person, or the
// sign-in page.
func (s *Studio) index(w http.ResponseWriter, r *http.Request) {
	sess, err := s.cfg.Gate.Session(r)
	if err != nil || len(sess.Memberships) == 0 {
		if err == nil {
			v := &visit{s: s, w: w, r: r, sess: sess}
			s.problem(v, http.StatusForbidden, "You are not a member of any agency (any more).", "Ask an agency's owner for an invitation.")
			return
		}
		http.Redirect(w, r, Prefix+"sign-in", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, Prefix+"a/"+url.PathEscape(sess.Memberships[0].GetAgencyId())+"/", http.StatusSeeOther)
}

// signInFirst answers a visit without a session: a GET goes to the
// sign-in page and back; a POST shows the sign-in page holding what was
// posted, to send it again after signing in.
func (s *Studio) signInFirst(v *visit, cause error) {
	d := signInData{Next: localPath(v.r.URL.RequestURI()), SSO: s.ssoLink(v.r.URL.RequestURI())}
	if v.r.Method != http.MethodPost {
		http.Redirect(v.w, v.r, Prefix+"sign-in?next="+url.QueryEscape(d.Next), http.StatusSeeOther)
		return
	}
	// Only a form of the Studio's own pages is kept: another site's page
	// must not have a person sign in and then send what it wrote.
	if err := s.cfg.Gate.SameOrigin(v.r); err != nil {
		s.fail(v, err)
		return
	}
	_ = v.r.ParseMultipartForm(32 << 20) //nolint:gosec // G120: the gateway read the body whole under --max-body-bytes before the console runs
	rp := &replay{To: localPath(v.r.URL.Path)}
	for name, values := range v.r.PostForm {
		if name == "csrf_token" || strings.HasPrefix(name, replayPrefix) {
			continue
		}
		for _, val := range values {
			if len(rp.Fields) < maxReplayFields {
				rp.Fields = append(rp.Fields, field{name, val})
			}
		}
	}
	slices.SortStableFunc(rp.Fields, func(a, b field) int { return strings.Compare(a.Name, b.Name) })
	rp.Files = v.r.MultipartForm != nil && len(v.r.MultipartForm.File) > 0
	d.Replay = rp
	d.Error = "Your session has ended, so your changes were not saved yet. They are kept on this page: sign in, and you can save them."
	if st, ok := status.FromError(cause); ok && !strings.Contains(st.Message(), "not signed in") {
		d.Error += " (" + sentence(st.Message()) + ")"
	}
	s.render(v, http.StatusUnauthorized, "sign-in", View{Title: "Sign in"}, d)
}

func (s *Studio) signInPage(w http.ResponseWriter, r *http.Request) {
	v := &visit{s: s, w: w, r: r}
	next := localPath(r.URL.Query().Get("next"))
	if sess, err := s.cfg.Gate.Session(r); err == nil && len(sess.Memberships) > 0 && r.URL.Query().Get("next") != "" {
		http.Redirect(w, r, next, http.StatusSeeOther) //nolint:gosec // G710: next is a path of the Studio (localPath)
		return
	}
	s.render(v, http.StatusOK, "sign-in", View{Title: "Sign in"}, signInData{Next: next, SSO: s.ssoLink(next)})
}

func (s *Studio) signIn(w http.ResponseWriter, r *http.Request) {
	v := &visit{s: s, w: w, r: r}
	if err := s.cfg.Gate.SameOrigin(r); err != nil {
		s.fail(v, err)
		return
	}
	_ = r.ParseForm()
	if err := checkText("", r.PostForm); err != nil {
		s.fail(v, err)
		return
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	d := signInData{Email: email, Next: localPath(r.PostFormValue("next")), SSO: s.ssoLink(r.PostFormValue("next"))}
	if to := r.PostFormValue(replayPrefix + "to"); to != "" {
		d.Replay = &replay{To: localPath(to), Files: r.PostFormValue(replayPrefix+"files") == "1"}
		for name, values := range r.PostForm {
			if n, ok := strings.CutPrefix(name, replayPrefix+"f."); ok {
				for _, val := range values {
					if len(d.Replay.Fields) < maxReplayFields {
						d.Replay.Fields = append(d.Replay.Fields, field{n, val})
					}
				}
			}
		}
		slices.SortStableFunc(d.Replay.Fields, func(a, b field) int { return strings.Compare(a.Name, b.Name) })
	}
	if ok, wait := s.cfg.Gate.AllowSignIn(r, strings.ToLower(email)); !ok {
		d.Error = refuseAttempts(w, wait, "sign-in attempts")
		s.render(v, http.StatusTooManyRequests, "sign-in", View{Title: "Sign in"}, d)
		return
	}
	var header metadata.MD
	resp, err := s.sessions.CreateSession(s.anonymous(r), &crmv1.CreateSessionRequest{Email: email, Password: r.PostFormValue("password")}, grpc.Header(&header))
	if err != nil {
		code := http.StatusBadRequest
		switch status.Code(err) {
		case codes.Unauthenticated, codes.PermissionDenied:
			code = http.StatusUnauthorized
			d.Error = "That email and password do not match. Check them and try again, or reset your password."
		case codes.InvalidArgument:
			d.Error = sentence(status.Convert(err).Message())
		default:
			s.fail(v, err)
			return
		}
		s.render(v, code, "sign-in", View{Title: "Sign in"}, d)
		return
	}
	if !s.setSession(v, header) {
		return
	}
	if d.Replay != nil {
		d.Replay.CSRF = resp.GetCsrfToken()
		s.render(v, http.StatusOK, "replay", View{Title: "Save your changes"}, d.Replay)
		return
	}
	to := d.Next
	if to == "" || to == Prefix {
		if ms := resp.GetMemberships(); len(ms) > 0 {
			to = Prefix + "a/" + url.PathEscape(ms[0].GetAgencyId()) + "/"
		}
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// setSession sets the cookie of the session the CRM has just opened.
func (s *Studio) setSession(v *visit, header metadata.MD) bool {
	c, err := s.cfg.Gate.OpenedCookie(v.r, header)
	if err != nil {
		s.fail(v, err)
		return false
	}
	http.SetCookie(v.w, c)
	return true
}

func (s *Studio) signOut(w http.ResponseWriter, r *http.Request) {
	v, ok := s.begin(w, r)
	if !ok {
		return
	}
	if _, err := call(v, crmv1.SessionService_DeleteCurrentSession_FullMethodName, s.sessions.DeleteCurrentSession, &crmv1.DeleteCurrentSessionRequest{}); err != nil &&
		status.Code(err) != codes.Unauthenticated {
		s.fail(v, err)
		return
	}
	s.cfg.Gate.EvictSession(v.sess.ID)
	http.SetCookie(w, s.cfg.Gate.ClearedCookie(r))
	http.Redirect(w, r, Prefix+"sign-in", http.StatusSeeOther)
}

// anonymous is the context of a call open to anyone (signing in).
func (s *Studio) anonymous(r *http.Request) context.Context {
	return s.cfg.Gate.Outgoing(r.Context(), r, principal.Principal{Kind: principal.KindAnonymous, Subject: "anonymous"})
}

// ssoLink is single sign-on's start, coming back to next; "" without it.
func (s *Studio) ssoLink(next string) string {
	start, ok := s.cfg.Gate.SingleSignOn()
	if !ok {
		return ""
	}
	return start + "?return_to=" + url.QueryEscape(localPath(next))
}

// localPath keeps a path of the Studio, so that ?next= cannot send a
// person elsewhere (no open redirect); anything else is the Studio's start.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, Prefix) ||
		strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n\t\x00") {
		return Prefix
	}
	// A dot segment (also escaped, %2e%2e, which browsers resolve too)
	// would lead out of /studio/ once the browser resolves it.
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return Prefix
		}
	}
	return u.RequestURI()
}

type invitationData struct {
	Token, Name string
	Error       string
}

func (s *Studio) invitationPage(w http.ResponseWriter, r *http.Request) {
	v := &visit{s: s, w: w, r: r}
	s.render(v, http.StatusOK, "invitation", View{Title: "Join your agency"}, invitationData{Token: r.PathValue("token")})
}

func (s *Studio) acceptInvitation(w http.ResponseWriter, r *http.Request) {
	v := &visit{s: s, w: w, r: r}
	if err := s.cfg.Gate.SameOrigin(r); err != nil {
		s.fail(v, err)
		return
	}
	_ = r.ParseForm()
	if err := checkText("", r.PostForm); err != nil {
		s.fail(v, err)
		return
	}
	d := invitationData{Token: r.PathValue("token"), Name: strings.TrimSpace(r.PostFormValue("name"))}
	if ok, wait := s.cfg.Gate.AllowSignIn(r, ""); !ok {
		d.Error = refuseAttempts(w, wait, "attempts")
		s.render(v, http.StatusTooManyRequests, "invitation", View{Title: "Join your agency"}, d)
		return
	}
	if p, c := r.PostFormValue("password"), r.PostFormValue("confirm"); p != c {
		d.Error = "The two passwords differ. Type the same password twice."
		s.render(v, http.StatusBadRequest, "invitation", View{Title: "Join your agency"}, d)
		return
	}
	var header metadata.MD
	resp, err := s.sessions.AcceptInvitation(s.anonymous(r), &crmv1.AcceptInvitationRequest{Token: d.Token, Name: d.Name, Password: r.PostFormValue("password")}, grpc.Header(&header))
	if err != nil {
		if msg, ok := errForm(err); ok || status.Code(err) == codes.NotFound || status.Code(err) == codes.Unauthenticated {
			if !ok {
				msg = "This invitation is not valid any more: it was used, replaced by a newer one, or it expired. Ask the owner who invited you to send a new one."
			}
			d.Error = msg
			s.render(v, http.StatusBadRequest, "invitation", View{Title: "Join your agency"}, d)
			return
		}
		s.fail(v, err)
		return
	}
	if !s.setSession(v, header) {
		return
	}
	to := Prefix
	if ms := resp.GetMemberships(); len(ms) > 0 {
		to = Prefix + "a/" + url.PathEscape(ms[len(ms)-1].GetAgencyId()) + "/"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

type resetData struct {
	Token, Email string
	Error, Done  string
}

func (s *Studio) resetRequestPage(w http.ResponseWriter, r *http.Request) {
	s.render(&visit{s: s, w: w, r: r}, http.StatusOK, "password-reset", View{Title: "Reset your password"}, resetData{})
}

func (s *Studio) requestReset(w http.ResponseWriter, r *http.Request) {
	v := &visit{s: s, w: w, r: r}
	if err := s.cfg.Gate.SameOrigin(r); err != nil {
		s.fail(v, err)
		return
	}
	_ = r.ParseForm()
	if err := checkText("", r.PostForm); err != nil {
		s.fail(v, err)
		return
	}
	d := resetData{Email: strings.TrimSpace(r.PostFormValue("email"))}
	if ok, wait := s.cfg.Gate.AllowSignIn(r, strings.ToLower(d.Email)); !ok {
		d.Error = refuseAttempts(w, wait, "attempts")
		s.render(v, http.StatusTooManyRequests, "password-reset", View{Title: "Reset your password"}, d)
		return
	}
	if _, err := s.sessions.RequestPasswordReset(s.anonymous(r), &crmv1.RequestPasswordResetRequest{Email: d.Email}); err != nil {
		if msg, ok := errForm(err); ok {
			d.Error = msg
			s.render(v, http.StatusBadRequest, "password-reset", View{Title: "Reset your password"}, d)
			return
		}
		s.fail(v, err)
		return
	}
	// The same answer whether or not the email is known.
	d.Done = "If " + d.Email + " belongs to an account, a link to choose a new password is on its way. It works once, for a limited time."
	s.render(v, http.StatusOK, "password-reset", View{Title: "Reset your password"}, d)
}

func (s *Studio) resetPage(w http.ResponseWriter, r *http.Request) {
	s.render(&visit{s: s, w: w, r: r}, http.StatusOK, "password-reset", View{Title: "Choose a new password"}, resetData{Token: r.PathValue("token")})
}

func (s *Studio) completeReset(w http.ResponseWriter, r *http.Request) {
	v := &visit{s: s, w: w, r: r}
	if err := s.cfg.Gate.SameOrigin(r); err != nil {
		s.fail(v, err)
		return
	}
	_ = r.ParseForm()
	if err := checkText("", r.PostForm); err != nil {
		s.fail(v, err)
		return
	}
	d := resetData{Token: r.PathValue("token")}
	if ok, wait := s.cfg.Gate.AllowSignIn(r, ""); !ok {
		d.Error = refuseAttempts(w, wait, "attempts")
		s.render(v, http.StatusTooManyRequests, "password-reset", View{Title: "Choose a new password"}, d)
		return
	}
	if p, c := r.PostFormValue("password"), r.PostFormValue("confirm"); p != c {
		d.Error = "The two passwords differ. Type the same password twice."
		s.render(v, http.StatusBadRequest, "password-reset", View{Title: "Choose a new password"}, d)
		return
	}
	if _, err := s.sessions.CompletePasswordReset(s.anonymous(r), &crmv1.CompletePasswordResetRequest{Token: d.Token, Password: r.PostFormValue("password")}); err != nil {
		msg, ok := errForm(err)
		if !ok {
			if c := status.Code(err); c != codes.NotFound && c != codes.Unauthenticated {
				s.fail(v, err)
				return
			}
			msg = "This link is not valid any more: it was used or it expired. Ask for a new one."
		}
		d.Error = msg
		s.render(v, http.StatusBadRequest, "password-reset", View{Title: "Choose a new password"}, d)
		return
	}
	s.render(v, http.StatusOK, "sign-in", View{Title: "Sign in", Flash: "Your password is changed. Sign in with it."}, signInData{})
}
