package apperr

import (
	"errors"
	"fmt"
	"strings"
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
	// KindAborted: the request collided with concurrent work (a
	// serialization failure or deadlock that persisted through retries) and
	// changed nothing; the same request is likely to succeed when retried.
	KindAborted
	// KindPreconditionFailed: a condition the caller set on the request (an
	// If-Match ETag) does not hold; nothing changed. Re-read and decide.
	KindPreconditionFailed
	// KindExhausted: the caller has run out of something it pays for or is
	// allotted (credits); nothing changed. Retrying helps only once more
	// is granted.
	KindExhausted
)

// Reasons refine a kind where HTTP callers are owed a more precise status.
// They travel as the reason of a google.rpc.ErrorInfo detail in the domain
// ErrorDomain, so internal gRPC callers can read them too.
const (
	ErrorDomain = "atrium"
	// ReasonInsufficientCredits: an agency's credit balance is below what
	// the request costs (HTTP 402).
	ReasonInsufficientCredits = "INSUFFICIENT_CREDITS"
	// ReasonUnprocessable: the request is well formed but contradicts an
	// earlier one, such as an idempotency key reused with another body
	// (HTTP 422).
	ReasonUnprocessable = "UNPROCESSABLE"
	// ReasonPrincipalSignature: the caller's principal is signed with
	// another secret than the service's, a deployment fault (the processes
	// were given different --internal-secret values) rather than a bad
	// credential, which readiness checks report as such.
	ReasonPrincipalSignature = "PRINCIPAL_SIGNATURE"
	// ReasonTooLarge: the request carries more than a limit allows, such
	// as an upload over the largest asset size (HTTP 413).
	ReasonTooLarge = "TOO_LARGE"
	// ReasonQueueFull: the caller has as much work queued as it may; retry
	// once some of it has run (HTTP 429 with Retry-After).
	ReasonQueueFull = "QUEUE_FULL"
)

// Error is an error whose message is safe and useful to show to the caller.
type Error struct {
	Kind    Kind
	Message string
	// Reason, when set, is one of the Reason constants.
	Reason string
	cause  error
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

// Aborted reports a request that collided with concurrent work and changed
// nothing. cause is logged, never shown.
func Aborted(cause error, format string, a ...any) error {
	return &Error{Kind: KindAborted, Message: fmt.Sprintf(format, a...), cause: cause}
}

// PreconditionFailed reports a caller's condition that does not hold.
func PreconditionFailed(format string, a ...any) error {
	return newf(KindPreconditionFailed, format, a)
}

// InsufficientCredits reports a balance too low for what a request costs.
func InsufficientCredits(format string, a ...any) error {
	return &Error{Kind: KindExhausted, Reason: ReasonInsufficientCredits, Message: fmt.Sprintf(format, a...)}
}

// Unprocessable reports a well-formed request that contradicts an earlier
// one.
func Unprocessable(format string, a ...any) error {
	return &Error{Kind: KindInvalid, Reason: ReasonUnprocessable, Message: fmt.Sprintf(format, a...)}
}

// TooLarge reports a request larger than a limit allows; retrying the
// same request fails the same way.
func TooLarge(format string, a ...any) error {
	return &Error{Kind: KindInvalid, Reason: ReasonTooLarge, Message: fmt.Sprintf(format, a...)}
}

// QueueFull is KindExhausted with ReasonQueueFull: too much work queued.
func QueueFull(format string, a ...any) error {
	return &Error{Kind: KindExhausted, Reason: ReasonQueueFull, Message: fmt.Sprintf(format, a...)}
}

// Cause describes everything err wraps, for logs: the message of an *Error
// and the chain of causes under it.
func Cause(err error) string {
	var parts []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg := e.Error()
		if len(parts) > 0 && strings.Contains(parts[len(parts)-1], msg) {
			continue // a wrapper's message already holds its cause's
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, ": ")
}

// KindOf returns the kind of err, or 0 if err is not (wrapping) an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
