package apperr

import (
	"errors"
	"fmt"
)

// Kind classifies an error by what the caller can do about it.
type Kind uint8

const (
	// KindInvalid: the request is malformed or breaks a rule. Retrying the
	// same request fails the same way.
	KindInvalid Kind = iota + 1
	// KindNotFound: an object named by the request does not exist (for this
	// tenant).
	KindNotFound
	// KindConflict: the request collides with existing state, such as a
	// duplicate unique value.
	KindConflict
	// KindUnauthenticated: the caller's credentials are missing or invalid.
	KindUnauthenticated
	// KindPermissionDenied: the caller is known but may not do this.
	KindPermissionDenied
	// KindUnavailable: a dependency is temporarily unreachable; retry later.
	KindUnavailable
)

// Error is an error whose message is safe and useful to show to the caller.
type Error struct {
	Kind    Kind
	Message string
	cause   error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause, which is logged but never shown.
func (e *Error) Unwrap() error { return e.cause }

func newf(k Kind, format string, a []any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, a...)}
}

// Invalid reports a request that breaks a rule.
func Invalid(format string, a ...any) error { return newf(KindInvalid, format, a) }

// NotFound reports an object that does not exist for this caller.
func NotFound(format string, a ...any) error { return newf(KindNotFound, format, a) }

// Conflict reports a collision with existing state.
func Conflict(format string, a ...any) error { return newf(KindConflict, format, a) }

// Unauthenticated reports missing or invalid credentials.
func Unauthenticated(format string, a ...any) error {
	return newf(KindUnauthenticated, format, a)
}

// PermissionDenied reports a caller that may not do what it asked.
func PermissionDenied(format string, a ...any) error {
	return newf(KindPermissionDenied, format, a)
}

// Unavailable reports a dependency that is temporarily unreachable. cause is
// logged, never shown.
func Unavailable(cause error, format string, a ...any) error {
	return &Error{Kind: KindUnavailable, Message: fmt.Sprintf(format, a...), cause: cause}
}

// KindOf returns the kind of err, or 0 if err is not (wrapping) an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
