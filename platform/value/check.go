package value

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/render"
)

// Value is a checked value in its canonical form. Only the fields of its
// kind are set.
type Value struct {
	Kind Kind
	// Str is a String, URL, Email or Date as given, or a UUID in its
	// canonical lower-case form.
	Str string
	// Num is an Integer or a Number.
	Num float64
	// Bool is a Boolean.
	Bool bool
	// Time is a Date (midnight UTC) or a Timestamp (in UTC, at the
	// precision given; a store keeps what it can).
	Time time.Time
	// JSON is a JSON value, encoded.
	JSON json.RawMessage
}

// Check checks v, a decoded JSON value (bool, float64, string, []any,
// map[string]any; never nil, which is the caller's "absent"), against the
// rule and returns it in canonical form.
func (r Rule) Check(v any) (Value, bool) {
	switch r.Kind {
	case Integer, Number:
		n, ok := v.(float64)
		if !ok || math.IsNaN(n) || math.IsInf(n, 0) || (r.Kind == Integer && (n != math.Trunc(n) || math.Abs(n) > MaxInteger)) ||
			(r.AtLeast != nil && n < *r.AtLeast) || (r.AtMost != nil && n > *r.AtMost) {
			return Value{}, false
		}
		return Value{Kind: r.Kind, Num: n}, true
	case Boolean:
		b, ok := v.(bool)
		return Value{Kind: Boolean, Bool: b}, ok
	case JSON:
		if v == nil || !storable(v) {
			return Value{}, false
		}
		b, err := render.Marshal(v)
		if err != nil || (r.Max > 0 && len(b) > r.Max) {
			return Value{}, false
		}
		return Value{Kind: JSON, JSON: b}, true
	}
	s, ok := v.(string)
	if !ok {
		return Value{}, false
	}
	return r.CheckString(s)
}

// CheckString checks a value that arrived as text (a protobuf string
// field, a path segment) against a rule of a kind written as a string:
// String, Date, Timestamp, URL, Email or UUID. Numbers, booleans and JSON
// never pass: a query parameter is read as those by ParseQuery first.
func (r Rule) CheckString(s string) (Value, bool) {
	switch r.Kind {
	case String:
		return Value{Kind: String, Str: s}, Text(s, r.Max, r.Lines)
	case Date:
		t, err := time.Parse(time.DateOnly, s)
		return Value{Kind: Date, Str: s, Time: t}, err == nil && t.Year() >= 1
	case Timestamp:
		t, err := time.Parse(time.RFC3339Nano, s)
		return Value{Kind: Timestamp, Str: s, Time: t.UTC()}, err == nil
	case URL:
		_, ok := HTTPURL(s, r.max())
		return Value{Kind: URL, Str: s}, ok
	case Email:
		return Value{Kind: Email, Str: s}, EmailAddress(s, r.max())
	case UUID:
		id, ok := ParseID(s)
		return Value{Kind: UUID, Str: id}, ok
	}
	return Value{}, false
}

// Text reports whether s is text of at most max characters (no bound when
// max is 0) with the control characters lines allows, in valid UTF-8,
// without NUL.
func Text(s string, max int, lines Lines) bool {
	if lines == AnyText {
		// The common long case (rich text, article bodies): each step runs
		// over the bytes many at a time.
		return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) &&
			(max <= 0 || len(s) <= max || utf8.RuneCountInString(s) <= max)
	}
	n := 0
	for i := 0; i < len(s); n++ {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(lines == MultiLine && (c == '\t' || c == '\n' || c == '\r')) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unicode.IsControl(r) {
			return false
		}
		i += size
	}
	return max <= 0 || n <= max
}

// Blank reports whether s is empty or only white space.
func Blank(s string) bool { return strings.TrimSpace(s) == "" }

// Missing reports whether v, a decoded JSON value, fails "required": a
// required field is present, not null and, when it is a string, not blank.
// Every interface applies this one rule.
func Missing(v any) bool {
	if s, ok := v.(string); ok {
		return Blank(s)
	}
	return v == nil
}

// storable reports whether a JSON value holds no NUL in any string or key.
func storable(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) < 0
	case []any:
		for _, e := range v {
			if !storable(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.IndexByte(k, 0) >= 0 || !storable(e) {
				return false
			}
		}
	}
	return true
}

// ParseID returns s in the canonical form of an id (a UUID of 36
// characters in lower case), or false when s is not a UUID written that
// way in either case. Ids take no other spelling: braces, a urn:uuid:
// prefix and the 32 digits without hyphens are refused.
func ParseID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	upper := false
	for i := 0; i < 36; i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			upper = true
		default:
			return "", false
		}
	}
	if upper {
		return strings.ToLower(s), true
	}
	return s, true
}

// HTTPURL parses an absolute http or https URL: the URL rule.
func HTTPURL(s string, max int) (*url.URL, bool) {
	u, why := ParseURL(s, max)
	return u, why == ""
}

// ParseURL parses s as an absolute http or https URL of at most max
// characters (MaxURL when max is 0) with a host, without white space or
// control characters, without a user name or password; or says what is
// wrong with it, for a message that explains more than Expected (a fetch
// refused, a redirect). The reason never repeats a password.
func ParseURL(s string, max int) (*url.URL, string) {
	max = bounded(max, MaxURL)
	switch {
	case s == "":
		return nil, "the URL is empty"
	case len(s) > max && utf8.RuneCountInString(s) > max:
		return nil, "the URL is longer than " + Count(max) + " characters"
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return nil, "the URL must not contain spaces or control characters; percent-encode them (a space is %20)"
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Parse's own message quotes the URL, user name and password
		// included; the cause alone does not.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "the URL is not a valid URL: " + err.Error()
	}
	switch {
	case u.Scheme == "":
		return nil, "the URL has no scheme; write it with http:// or https://"
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Sprintf("the URL's scheme %q is not allowed; only http and https URLs are", u.Scheme)
	case u.User != nil:
		return nil, "the URL must not contain a user name or password (user:password@); remove them"
	case u.Hostname() == "":
		return nil, "the URL has no host; write it as https://host/path"
	}
	return u, ""
}

// EmailAddress reports whether s is one email address of at most max
// characters (MaxEmail when max is 0): a local part of at most 64 ASCII
// characters (letters, digits and !#$%&'*+-/=?^_`{|}~, in dot-separated
// runs), "@", and a domain name. No display name, angle brackets, quoted
// local part or non-ASCII character (a mail relay without SMTPUTF8 takes
// none). Address literals (bob@[127.0.0.1]) and numeric domains are
// refused: they would let a caller make the deployment's mail relay
// deliver to an address of its choice.
func EmailAddress(s string, max int) bool {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at > 64 || len(s) > bounded(max, MaxEmail) || !DomainName(s[at+1:]) {
		return false
	}
	local := s[:at]
	for i := 0; i < len(local); i++ {
		c := local[i]
		switch {
		case c == '.':
			if i == 0 || i == len(local)-1 || local[i-1] == '.' {
				return false
			}
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// DomainName reports whether s is a host name such as example.com: at
// least two labels of letters, digits and hyphens (1 to 63 characters, no
// hyphen at either end), at most 253 characters, the last label not all
// digits (so no IP address passes). Letters may be of either case.
func DomainName(s string) bool {
	if len(s) > 253 {
		return false
	}
	labels, start, digits := 0, 0, true
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			n := i - start
			if n == 0 || n > 63 || s[start] == '-' || s[i-1] == '-' {
				return false
			}
			labels++
			if i == len(s) && digits {
				return false
			}
			start, digits = i+1, true
			continue
		}
		switch c := s[i]; {
		case '0' <= c && c <= '9', c == '-':
			digits = digits && c != '-'
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			digits = false
		default:
			return false
		}
	}
	return labels >= 2
}
