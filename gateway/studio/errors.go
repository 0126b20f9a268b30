package studio

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fail answers a request whose page could not be made: the service's (or
// the judge's) error as a page that says what happened and what to do.
// This is the one place the Studio maps errors to answers, as
// gateway/internal/rest is the JSON API's.
func (s *Studio) fail(v *visit, err error) {
	st, ok := status.FromError(err)
	if !ok {
		st = status.New(codes.Internal, err.Error())
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unauthenticated:
		s.signInFirst(v, err)
	case codes.InvalidArgument, codes.OutOfRange:
		s.problem(v, http.StatusBadRequest, sentence(msg), "Correct it and send the form again.")
	case codes.PermissionDenied:
		do := "If you need it, ask an owner of your agency to change your role."
		if v.m != nil {
			do = "Your role in " + View{v: v}.AgencyName() + " is " + v.m.GetRole() + ". " + do
		}
		s.problem(v, http.StatusForbidden, "You may not do this. "+sentence(msg), do)
	case codes.NotFound:
		s.problem(v, http.StatusNotFound, "Not found: "+sentence(msg), "It may have been deleted, or belong to another agency. Go back and reload the list.")
	case codes.AlreadyExists:
		s.problem(v, http.StatusConflict, sentence(msg), "Choose another name, or open the one that exists.")
	case codes.FailedPrecondition, codes.Aborted:
		code := http.StatusConflict
		if strings.Contains(strings.ToLower(msg), "if-match") || strings.Contains(strings.ToLower(msg), "etag") {
			code = http.StatusPreconditionFailed
		}
		s.problem(v, code, sentence(msg), "Reload the page to see the latest version, then make your change again.")
	case codes.ResourceExhausted:
		s.problem(v, http.StatusTooManyRequests, sentence(msg), "Wait a moment and try again.")
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		s.problem(v, http.StatusServiceUnavailable, "Atrium could not answer in time.", "Try again in a moment. If it keeps happening, tell your agency's operator.")
	default:
		s.cfg.Logger.ErrorContext(v.r.Context(), "studio: a page failed", "path", v.r.URL.Path, "code", st.Code().String(), "error", msg)
		s.problem(v, http.StatusInternalServerError, "Something went wrong on Atrium's side.", "Try again; if it happens again, tell your agency's operator what you were doing.")
	}
}

// problem answers with the problem page.
func (s *Studio) problem(v *visit, code int, what, do string) {
	title := http.StatusText(code)
	s.render(v, code, "problem", View{Title: title, Problem: &Problem{Status: code, What: what, Do: do}}, nil)
}

// sentence makes a service's message a sentence a page can show.
func sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	// The first letter, not the first byte: a message may start with
	// one written in more than one byte (a name, a quoted value).
	r, n := utf8.DecodeRuneInString(msg)
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// errForm is a form's error the page shows next to the form, rather than
// on a page of its own: the input was refused (400), the person may fix it.
func errForm(err error) (string, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return "", false
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.OutOfRange, codes.AlreadyExists, codes.FailedPrecondition:
		return sentence(st.Message()), true
	}
	return "", false
}

// setRetryAfter says, on a refused request, in how many whole seconds to
// try again (at least one).
func setRetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
}

// refuseAttempts answers a sign-in form the attempt limits refused: it
// sets Retry-After and returns the form's message ("Too many attempts.
// Wait 12s and try again."), what naming the attempts.
func refuseAttempts(w http.ResponseWriter, wait time.Duration, what string) string {
	setRetryAfter(w, wait)
	return fmt.Sprintf("Too many %s. Wait %s and try again.", what, wait.Round(time.Second))
}

// Refuse answers, as a page, a request the gateway refused before the
// Studio saw it: a body over the size limit, one that did not arrive in
// time, a handler that panicked. A person who posted a form from the
// console reads what happened and what to do, not the JSON API's
// {"error": …} body.
func (s *Studio) Refuse(w http.ResponseWriter, r *http.Request, code int, what, do string) {
	securityHeaders(w.Header())
	s.problem(&visit{s: s, w: w, r: r}, code, what, do)
}
