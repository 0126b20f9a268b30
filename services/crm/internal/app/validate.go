package app

import (
	"math"
	"regexp"
	"strings"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
)

// maxName bounds every name-like field.
const maxName = 200

// Clock returns the current time; store.Clock fixes its precision.
type Clock = store.Clock

// newID returns a time-ordered UUID (v7).
func newID() string { return store.NewID() }

// hostname checks and lower-cases a host name such as example.com, by the
// platform's domain-name rule.
func hostname(field, v string) (string, error) {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(v)), ".")
	if h == "" {
		return "", apperr.Invalid("%s is required: a host name such as example.com", field)
	}
	if !value.DomainName(h) {
		return "", apperr.Invalid("%s must be a host name such as example.com (letters, digits and hyphens, at least two labels, not an IP address); got %q", field, v)
	}
	return h, nil
}

var (
	urlRule  = value.Rule{Kind: value.URL}
	dateRule = value.Rule{Kind: value.Date}
)

// httpURL checks an absolute http or https URL and returns it with its host.
func httpURL(field, v string) (string, string, error) {
	v = strings.TrimSpace(v)
	u, ok := value.HTTPURL(v, 0)
	if !ok {
		return "", "", urlRule.Invalid(field, v)
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
	if _, ok := dateRule.CheckString(v); !ok {
		return "", dateRule.Invalid(field, v)
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
