package app

import (
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/store"
)

// maxName bounds every name-like field.
const maxName = 200

// Clock returns the current time; store.Clock fixes its precision.
type Clock = store.Clock

// newID returns a time-ordered UUID (v7).
func newID() string { return store.NewID() }

// pathID canonicalises an id taken from the request path. An id that is not
// a UUID names no object, so it is reported as not found.
func pathID(what, v string) (string, error) {
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return "", apperr.NotFound("%s %q not found", what, v)
	}
	return id.String(), nil
}

// bodyID canonicalises an id given in a request body field.
func bodyID(field, v string) (string, error) {
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return "", apperr.Invalid("%s must be a UUID such as 0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b; got %q", field, v)
	}
	return id.String(), nil
}

// text checks a free-text field: trimmed, at most max characters, no
// control characters, and present unless optional.
func text(field, v string, max int, optional bool) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		if optional {
			return "", nil
		}
		return "", apperr.Invalid("%s is required (1 to %d characters)", field, max)
	}
	if !utf8.ValidString(v) {
		return "", apperr.Invalid("%s must be valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(v); n > max {
		return "", apperr.Invalid("%s must be at most %d characters; got %d", field, max, n)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return "", apperr.Invalid("%s must not contain control characters", field)
	}
	return v, nil
}

var hostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// hostname checks and lower-cases a host name such as example.com.
func hostname(field, v string) (string, error) {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(v)), ".")
	if h == "" {
		return "", apperr.Invalid("%s is required: a host name such as example.com", field)
	}
	labels := strings.Split(h, ".")
	ok := len(h) <= 253 && len(labels) >= 2
	for _, l := range labels {
		ok = ok && hostLabel.MatchString(l)
	}
	if !ok {
		return "", apperr.Invalid("%s must be a host name such as example.com (letters, digits and hyphens, at least two labels); got %q", field, v)
	}
	return h, nil
}

// httpURL checks an absolute http or https URL and returns it with its host.
func httpURL(field, v string) (string, string, error) {
	v = strings.TrimSpace(v)
	u, err := url.Parse(v)
	if v == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(v) > 2048 {
		return "", "", apperr.Invalid("%s must be an absolute http or https URL of at most 2048 characters, such as https://example.com; got %q", field, v)
	}
	return v, u.Hostname(), nil
}

// score checks a 0 to 100 score.
func score(field string, v float64) (float64, error) {
	if math.IsNaN(v) || v < 0 || v > 100 {
		return 0, apperr.Invalid("%s must be a number from 0 to 100; got %v", field, v)
	}
	return v, nil
}

// oneOf checks v against the allowed values.
func oneOf(field, v string, vs []string) (string, error) {
	if !allowed(v, vs) {
		return "", apperr.Invalid("%s must be one of: %s; got %q", field, strings.Join(vs, ", "), v)
	}
	return v, nil
}

// date checks a YYYY-MM-DD calendar date.
func date(field, v string) (string, error) {
	if t, err := time.Parse(time.DateOnly, v); err != nil || t.Year() < 1 {
		return "", apperr.Invalid("%s must be a date in the form YYYY-MM-DD; got %q", field, v)
	}
	return v, nil
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// currency checks an ISO 4217 code, accepting lower case.
func currency(v string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(v))
	if !currencyCode.MatchString(c) {
		return "", apperr.Invalid("currency must be a three-letter ISO 4217 code such as USD; got %q", v)
	}
	return c, nil
}

// money checks a deal value.
func money(v float64) (float64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e15 {
		return 0, apperr.Invalid("value must be a number from 0 to 1e15; got %v", v)
	}
	return v, nil
}
