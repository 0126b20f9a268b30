package value

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// Invalid is the 400 of a value that is not what its field accepts:
// "<name> must be <expected>; got <what was sent>".
func Invalid(name, expected string, got any) error {
	return apperr.Invalid("%s must be %s; got %s", name, expected, Describe(got))
}

// Required is the 400 of a required field that is absent, null or blank.
func Required(name, expected string) error {
	return apperr.Invalid("%s is required: %s", name, expected)
}

// Invalid is the 400 of a value the rule refuses.
func (r Rule) Invalid(name string, got any) error { return Invalid(name, r.Expected(), got) }

// Required is the 400 of a field of this rule that is missing.
func (r Rule) Required(name string) error { return Required(name, r.Expected()) }

// Describe names what a client sent, for "got ...": a short string
// quoted, a long one by its length, other values by what they are.
func Describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		b, _ := json.Marshal(v)
		return "the number " + string(b)
	case string:
		if n := utf8.RuneCountInString(v); n > 40 {
			return fmt.Sprintf("a string of %d characters", n)
		}
		return strconv.Quote(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// PathID reads an id from a request path. An id that is not a UUID names
// nothing, so it is the same 404 as an id that names nothing stored:
// "<what> "<id>" not found".
func PathID(what, id string) (string, error) {
	if c, ok := ParseID(id); ok {
		return c, nil
	}
	return "", NotFound(what, id)
}

// NotFound is the 404 of an object that does not exist for the caller.
func NotFound(what, id string) error { return apperr.NotFound("%s %q not found", what, id) }

// BodyID reads an id from a request body field or query parameter, where a
// value that is not a UUID is a bad request.
func BodyID(field, id string) (string, error) {
	if c, ok := ParseID(id); ok {
		return c, nil
	}
	return "", apperr.Invalid("%s must be %s; got %q", field, Rule{Kind: UUID}.Expected(), id)
}

// Line reads a one-line text field that arrives as a string (a name, a
// title): white space around it is dropped, and what is left must be a
// OneLine string of at most max characters, not blank unless the field is
// optional (then blank is "").
func Line(field, s string, max int, optional bool) (string, error) {
	r := Rule{Kind: String, Max: max, Lines: OneLine}
	s = strings.TrimSpace(s)
	switch {
	case s == "" && optional:
		return "", nil
	case s == "":
		return "", r.Required(field)
	case !Text(s, max, OneLine):
		return "", r.Invalid(field, s)
	}
	return s, nil
}

// UTF8 is the 400 of text that is not valid UTF-8, or nil when s is. Every
// string a request carries is text, and text travels between Atrium's
// processes as protobuf strings, which hold UTF-8 only: a header, a query
// parameter or a form field read as raw bytes (an upload's file name, its
// alt text, its declared type) is checked with this before it is sent on,
// so that it is refused naming the field rather than failing on its way.
// The message points at the first byte that is not UTF-8.
func UTF8(field, s string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return apperr.Invalid("%s must be text in UTF-8; its byte %d (0x%02X) is not part of a UTF-8 character", field, i+1, s[i])
		}
		i += size
	}
	return nil
}
