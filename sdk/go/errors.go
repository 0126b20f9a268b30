package atrium

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Error is an answer of the API other than a success: its status, Atrium's
// message (which names what was wrong and what is allowed) and the
// request's trace id (Atrium-Trace-Id), to quote to an operator.
type Error struct {
	StatusCode int
	Message    string
	TraceID    string
	// RetryAfter is what the answer's Retry-After asked for (429, 503).
	RetryAfter time.Duration
	// Method and Path are the request's.
	Method, Path string
	Header       http.Header
	// Attempts is how many times the request was sent.
	Attempts int
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "atrium: %s %s: %d %s", e.Method, e.Path, e.StatusCode, e.Message)
	if e.TraceID != "" {
		fmt.Fprintf(&b, " (trace %s)", e.TraceID)
	}
	return b.String()
}

func newError(method, path string, resp *http.Response, body []byte) *Error {
	e := &Error{StatusCode: resp.StatusCode, TraceID: resp.Header.Get("Atrium-Trace-Id"), RetryAfter: retryAfter(resp.Header),
		Method: method, Path: path, Header: resp.Header}
	var msg struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.Error != "" {
		e.Message = msg.Error
	} else {
		e.Message = strings.TrimSpace(string(body))
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	return e
}

// StatusOf returns the HTTP status of an error the API answered with, and
// 0 for any other error (a network error, a time-out).
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// IsNotFound reports whether err is a 404: the object does not exist, or
// belongs to another tenant.
func IsNotFound(err error) bool { return StatusOf(err) == http.StatusNotFound }
