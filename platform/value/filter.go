package value

import (
	"strconv"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// ParseQuery reads a query parameter as a decoded JSON value of kind k,
// for Check: a JSON number for an Integer or a Number, true or false for
// a Boolean, the text itself for the kinds written as strings. JSON
// values are never read from a query (false).
func ParseQuery(k Kind, s string) (any, bool) {
	switch k {
	case Integer, Number:
		if !jsonNumber(s) {
			return nil, false
		}
		n, err := strconv.ParseFloat(s, 64)
		return n, err == nil
	case Boolean:
		switch s {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		return nil, false
	case JSON:
		return nil, false
	}
	return s, true
}

// jsonNumber reports whether s is a number as JSON writes one (so not
// "NaN", "Inf", "0x10", "+1", "1_000" or " 1").
func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i - start
	}
	switch n := digits(); {
	case n == 0, n > 1 && s[i-n] == '0':
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// InvalidFilter is the 400 of a filter_value that is not a value of its
// field: "filter_value for <field> must be <expected>; got "<s>"".
func InvalidFilter(field, expected, s string) error {
	return apperr.Invalid("filter_value for %s must be %s; got %q", field, expected, s)
}

// ParseFilter reads the filter_value of field as a value of the rule.
func (r Rule) ParseFilter(field, s string) (Value, error) {
	if v, ok := ParseQuery(r.Kind, s); ok {
		if val, ok := r.Check(v); ok {
			return val, nil
		}
	}
	return Value{}, InvalidFilter(field, r.Expected(), s)
}
