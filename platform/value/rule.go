package value

import (
	"strconv"
	"strings"
)

// Kind is a kind of request value.
type Kind uint8

// The kinds, named as the docs and the data catalog name them.
const (
	String Kind = iota + 1
	Integer
	Number
	Boolean
	Date
	Timestamp
	URL
	Email
	UUID
	JSON
)

var kindNames = [...]string{String: "string", Integer: "integer", Number: "number", Boolean: "boolean",
	Date: "date", Timestamp: "timestamp", URL: "url", Email: "email", UUID: "uuid", JSON: "json"}

// String returns the kind's name ("timestamp").
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Lines says which control characters a String may hold. Whatever it
// says, a string never holds NUL (U+0000): PostgreSQL's text and jsonb
// cannot store it, so it is refused before anything is written.
type Lines uint8

const (
	// AnyText is any text a store can hold: every character but NUL.
	AnyText Lines = iota
	// MultiLine is text without control characters other than tab and
	// line breaks (LF, CR).
	MultiLine
	// OneLine is one line without control characters (tab included).
	OneLine
)

// Bounds of the kinds that have their own.
const (
	// MaxURL is the longest URL, in characters.
	MaxURL = 2048
	// MaxEmail is the longest email address, in characters (RFC 5321's
	// path limit less the angle brackets).
	MaxEmail = 254
	// MaxInteger is the largest integer magnitude: every integer up to it
	// is exact in a float64, so in every JSON client.
	MaxInteger = 1 << 53
)

// Rule is what a field accepts: a kind with its bound. The zero bound is
// the kind's own.
type Rule struct {
	Kind Kind
	// Max bounds a String, URL or Email in characters and a JSON value in
	// bytes once encoded. 0 is the kind's own bound: MaxURL, MaxEmail, and
	// none for the others. A URL or Email bound above the kind's own is
	// the kind's own.
	Max int
	// Lines applies to a String.
	Lines Lines
	// AtLeast and AtMost bound an Integer or a Number, inclusive; nil is
	// no bound (an Integer stays within ±MaxInteger either way).
	AtLeast, AtMost *float64
}

func (r Rule) max() int {
	switch r.Kind {
	case URL:
		return bounded(r.Max, MaxURL)
	case Email:
		return bounded(r.Max, MaxEmail)
	}
	return r.Max
}

func bounded(max, own int) int {
	if max <= 0 || max > own {
		return own
	}
	return max
}

// Expected says in words what the rule accepts, for "must be ...".
func (r Rule) Expected() string {
	switch r.Kind {
	case String:
		s := "a string"
		if r.Max > 0 {
			s += " of at most " + Count(r.Max) + " characters"
		}
		switch r.Lines {
		case OneLine:
			return s + ", on one line without control characters"
		case MultiLine:
			return s + ", without control characters other than tab and line breaks"
		}
		return s + ", without NUL characters (U+0000)"
	case Integer:
		if r.AtLeast != nil || r.AtMost != nil {
			return "an integer" + r.bounds()
		}
		return "an integer (a whole number within ±2^53)"
	case Number:
		return "a number" + r.bounds()
	case Boolean:
		return "true or false"
	case Date:
		return "a date YYYY-MM-DD"
	case Timestamp:
		return "an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"
	case URL:
		return "an absolute http or https URL such as https://example.com/page (at most " + Count(r.max()) +
			" characters, no spaces, no user name or password)"
	case Email:
		return "an email address such as ana@example.com (ASCII, at a domain name, no display name, at most " +
			Count(r.max()) + " characters)"
	case UUID:
		return "a UUID such as " + ExampleID
	case JSON:
		if r.Max > 0 {
			return "a JSON value of at most " + Count(r.Max) + " bytes encoded, without NUL characters (U+0000)"
		}
		return "any JSON value without NUL characters (U+0000)"
	}
	return r.Kind.String()
}

// bounds says how an Integer or a Number is bounded: " between 1 and 3",
// " of at least 0.5", " of at most 10", or "" without bounds.
func (r Rule) bounds() string {
	switch {
	case r.AtLeast != nil && r.AtMost != nil:
		return " between " + number(*r.AtLeast) + " and " + number(*r.AtMost)
	case r.AtLeast != nil:
		return " of at least " + number(*r.AtLeast)
	case r.AtMost != nil:
		return " of at most " + number(*r.AtMost)
	}
	return ""
}

// number writes a bound as JSON would (-85, 0.5).
func number(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// ExampleID is the UUID the messages show.
const ExampleID = "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"

// Count writes n with a comma between thousands (2,048), as the docs and
// messages write numbers.
func Count(n int) string {
	s := strconv.Itoa(n)
	start := 0
	if n < 0 {
		start = 1
	}
	digits := len(s) - start
	if digits <= 3 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:start])
	first := digits % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(s[start : start+first])
	for i := start + first; i < len(s); i += 3 {
		b.WriteByte(',')
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
