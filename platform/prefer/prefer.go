// Package prefer reads the Prefer request header of RFC 7240, the one
// parser every route that honours a preference uses (the actions' run and
// run-status routes: respond-async, wait=N), so that a preference reads
// the same wherever it is sent.
//
// The grammar (RFC 7240, section 2):
//
//	Prefer     = 1#preference
//	preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
//	parameter  = token [ BWS "=" BWS word ]
//	word       = token / quoted-string
//
// Preference and parameter names are case-insensitive; several
// preferences may share a header, separated by commas, and several Prefer
// headers are one list in their order; when a preference comes more than
// once only the first counts; an empty value is no value. What a server
// does not understand it ignores, so a list element that does not follow
// the grammar is skipped, not an error: the caller decides what a
// preference it honours must hold (a wait that is not a number is a 400
// there, with the rule).
package prefer

import "strings"

// Preference is one preference of a Prefer header.
type Preference struct {
	// Name is the preference's token, in lower case.
	Name string
	// Value is its value, unquoted; "" when it has none.
	Value string
	// Params are its parameters in the order sent, names in lower case.
	Params []Param
}

// Param is a preference's parameter.
type Param struct {
	Name, Value string
}

// Preferences are a request's preferences, in the order sent, each name
// once.
type Preferences []Preference

// Get returns the preference called name (in any case), if sent.
func (ps Preferences) Get(name string) (Preference, bool) {
	for _, p := range ps {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Preference{}, false
}

// Has reports whether the preference called name was sent.
func (ps Preferences) Has(name string) bool {
	_, ok := ps.Get(name)
	return ok
}

// Parse reads the values of every Prefer header of a request, in order.
// The first occurrence of a preference wins; elements that do not follow
// the grammar are skipped.
func Parse(headers []string) Preferences {
	var out Preferences
	for _, h := range headers {
		s := scanner{s: h}
		for !s.done() {
			p, ok := s.preference()
			if ok && !out.Has(p.Name) {
				out = append(out, p)
			}
			s.skipElement()
		}
	}
	return out
}

// scanner walks one header value.
type scanner struct {
	s string
	i int
}

func (s *scanner) done() bool {
	s.space()
	for s.i < len(s.s) && s.s[s.i] == ',' { // empty list elements are allowed
		s.i++
		s.space()
	}
	return s.i >= len(s.s)
}

func (s *scanner) space() {
	for s.i < len(s.s) && (s.s[s.i] == ' ' || s.s[s.i] == '\t') {
		s.i++
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.s) {
		return s.s[s.i]
	}
	return 0
}

// skipElement moves past the rest of the list element, to after its
// comma: what follows a preference that did not parse, or nothing but
// white space after one that did. Commas in quoted strings are not ends.
func (s *scanner) skipElement() {
	for s.i < len(s.s) {
		switch s.s[s.i] {
		case ',':
			s.i++
			return
		case '"':
			s.quoted()
		default:
			s.i++
		}
	}
}

// preference reads token [ "=" word ] *( ";" [ parameter ] ), ending at a
// comma or the end; false when the element does not follow the grammar.
func (s *scanner) preference() (Preference, bool) {
	name, value, ok := s.pair()
	if !ok {
		return Preference{}, false
	}
	p := Preference{Name: name, Value: value}
	for {
		s.space()
		switch s.peek() {
		case 0, ',':
			return p, true
		case ';':
			s.i++
			s.space()
			if c := s.peek(); c == 0 || c == ',' || c == ';' {
				continue // "foo;" and "foo; ;bar": a parameter is optional
			}
			name, value, ok := s.pair()
			if !ok {
				return Preference{}, false
			}
			p.Params = append(p.Params, Param{Name: name, Value: value})
		default:
			return Preference{}, false
		}
	}
}

// pair reads token [ BWS "=" BWS word ].
func (s *scanner) pair() (name, value string, ok bool) {
	name = s.token()
	if name == "" {
		return "", "", false
	}
	s.space()
	if s.peek() != '=' {
		return strings.ToLower(name), "", true
	}
	s.i++
	s.space()
	if s.peek() == '"' {
		value, ok = s.quoted()
	} else {
		value = s.token()
		ok = value != ""
	}
	return strings.ToLower(name), value, ok
}

// token reads an RFC 9110 token (tchar: letters, digits and
// !#$%&'*+-.^_`|~).
func (s *scanner) token() string {
	start := s.i
	for s.i < len(s.s) && isTchar(s.s[s.i]) {
		s.i++
	}
	return s.s[start:s.i]
}

// quoted reads a quoted-string from its opening quote and returns its
// content with the quoted pairs (\x) undone; false when it never closes.
func (s *scanner) quoted() (string, bool) {
	s.i++ // the opening quote
	var b strings.Builder
	for s.i < len(s.s) {
		c := s.s[s.i]
		s.i++
		switch c {
		case '"':
			return b.String(), true
		case '\\':
			if s.i < len(s.s) {
				b.WriteByte(s.s[s.i])
				s.i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// String writes the preference as a Prefer header would carry it, its
// value quoted when it is not a token: "wait=10", `foo="a b"; bar`.
func (p Preference) String() string {
	var b strings.Builder
	writePair(&b, p.Name, p.Value)
	for _, q := range p.Params {
		b.WriteString("; ")
		writePair(&b, q.Name, q.Value)
	}
	return b.String()
}

func writePair(b *strings.Builder, name, value string) {
	b.WriteString(name)
	if value == "" {
		return
	}
	b.WriteByte('=')
	token := true
	for i := 0; i < len(value); i++ {
		token = token && isTchar(value[i])
	}
	if token {
		b.WriteString(value)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(value); i++ {
		if c := value[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(value[i])
	}
	b.WriteByte('"')
}
