package provider

import "fmt"

// Error is a failure of an outside provider: a model server, a web page, an
// SMTP server, a search engine's submission endpoint. The run ends with
// status "error", StatusCode as its status_code and Message in its data,
// and spends no credits.
type Error struct {
	// StatusCode is HTTP-style: the provider's own status when it answered
	// with one (429, 500, ...), 502 for an answer that could not be used,
	// 503 for a provider that is not configured or not reachable, 504 for a
	// provider that did not answer in time, 403 for an address the fetcher
	// may not reach.
	StatusCode int
	// Provider names the provider in words: "text generator", "web page".
	Provider string
	// Message says what went wrong, for the caller; it never holds
	// credentials.
	Message string
	// Err is the cause, for logs.
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Provider, e.Message) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Failure returns an Error.
func Failure(provider string, code int, cause error, format string, a ...any) *Error {
	return &Error{StatusCode: code, Provider: provider, Message: fmt.Sprintf(format, a...), Err: cause}
}
