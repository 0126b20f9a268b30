package schemaform

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/value"
)

// The bounds of one posted field. A field is refused past them before
// anything is read from it, so that a form cannot make Parse work in
// proportion to what it was sent.
const (
	// MaxFieldBytes is the most text a field takes, unless its schema
	// declares a longer maxLength (a call transcript takes 200,000
	// characters): then four bytes a character, the most UTF-8 takes, up
	// to MaxDeclaredBytes.
	MaxFieldBytes    = 64 << 10
	MaxDeclaredBytes = 1 << 20
	// MaxLines is the most lines a list (or JSON) field takes.
	MaxLines = 1000
)

// Parse reads a posted form into the input of the action whose schema
// this is, and checks it against the schema. input holds what the action
// takes: numbers as numbers, a checkbox as true or false, a list as an
// array of its non-blank lines, trimmed; a const property (the action's
// name) as the schema fixes it; an optional field left empty is left out.
// errs maps a property's name to what is wrong with it, in words for the
// person at the form, naming what is allowed; errs[""] is an error of the
// form as a whole (an unreadable schema). With errors, input is not to be
// sent: show the form again with Build(schema, Posted(form), errs).
//
// Posted names the schema does not declare are ignored. Parse never
// panics.
func Parse(schema []byte, form url.Values) (input map[string]any, errs map[string]string) {
	input, errs = map[string]any{}, map[string]string{}
	s, err := readSchema(schema)
	if err != nil {
		errs[""] = "This form cannot be read: " + err.Error() + "."
		return input, errs
	}
	for _, p := range s.props {
		if p.isConst {
			input[p.name] = p.constVal
			continue
		}
		v, msg := parseProp(p, form[p.name])
		switch {
		case msg != "":
			errs[p.name] = label(p) + ": " + msg
		case v != nil:
			input[p.name] = v
		}
	}
	return input, errs
}

// limit is the most bytes p's field takes.
func limit(p *prop) int {
	n := MaxFieldBytes
	if p.maxLength != nil && *p.maxLength > n/4 {
		n = min(*p.maxLength*4, MaxDeclaredBytes)
	}
	return n
}

// parseProp reads one property from its posted values: its value (nil to
// leave it out) or what is wrong.
func parseProp(p *prop, posted []string) (any, string) {
	for _, s := range posted {
		if len(s) > limit(p) {
			return nil, fmt.Sprintf("at most %s of text; you gave %s", size(limit(p), false), size(len(s), true))
		}
	}
	if len(posted) > 1 && p.kind != KindChoices {
		// Two controls of the same name: the form was not this one.
		posted = posted[:1]
	}
	switch p.kind {
	case KindCheckbox:
		// A ticked checkbox posts its value, an unticked one nothing.
		return len(posted) > 0 && ticked(posted[0]), ""
	case KindChoices:
		return parseChoices(p, posted)
	}
	raw := ""
	if len(posted) > 0 {
		raw = posted[0]
	}
	if !utf8.ValidString(raw) {
		return nil, "this holds bytes that are not text; type or paste it again"
	}
	if strings.ContainsRune(raw, 0) {
		// No store holds NUL, and the actions refuse it.
		return nil, "this holds a NUL character, which no field takes; type or paste it again"
	}
	// A browser posts a line break as CRLF; a lone CR is a break too.
	raw = strings.ReplaceAll(strings.ReplaceAll(raw, "\r\n", "\n"), "\r", "\n")
	switch p.kind {
	case KindList:
		return parseList(p, raw)
	case KindJSON:
		return parseJSON(p, raw)
	case KindTextarea:
		// Free text is kept as typed; only blank is empty.
		if strings.TrimSpace(raw) == "" {
			return missing(p)
		}
	default:
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return missing(p)
		}
	}
	return scalarValue(p, raw)
}

// missing is an empty field: left out if optional.
func missing(p *prop) (any, string) {
	if p.required {
		return nil, "required: " + allowed(p)
	}
	return nil, ""
}

// decimal is a number as a person types it: no hexadecimal, no Inf.
var decimal = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

var uuidForm = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// scalarValue checks one value (a field's or a list item's) that is not
// empty and returns it as the action takes it.
func scalarValue(p *prop, raw string) (any, string) {
	bad := func() (any, string) { return nil, allowed(p) + "; you gave " + gave(raw) }
	switch p.typ {
	case "integer", "number":
		// No thousands separators: 1,5 is 1.5 in much of the world.
		s := raw
		if !decimal.MatchString(s) {
			return bad()
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return bad()
		}
		if p.typ == "integer" && x != math.Trunc(x) {
			return bad()
		}
		if p.minimum != nil && x < *p.minimum || p.maximum != nil && x > *p.maximum ||
			p.exclMin != nil && x <= *p.exclMin || p.exclMax != nil && x >= *p.exclMax {
			return bad()
		}
		if p.multipleOf != nil {
			q := x / *p.multipleOf
			if math.Abs(q-math.Round(q)) > 1e-9 {
				return bad()
			}
		}
		if len(p.enum) > 0 && !slices.Contains(p.enum, any(x)) {
			return bad()
		}
		return x, ""
	}
	if len(p.enum) > 0 {
		if !slices.Contains(p.enum, any(raw)) {
			return bad()
		}
		return raw, ""
	}
	n := utf8.RuneCountInString(raw)
	if p.maxLength != nil && n > *p.maxLength {
		return nil, fmt.Sprintf("at most %s; you gave %d", plural(*p.maxLength, "character", "characters"), n)
	}
	if p.minLength != nil && n < *p.minLength {
		return nil, fmt.Sprintf("at least %s; you gave %d", plural(*p.minLength, "character", "characters"), n)
	}
	switch p.format {
	case "uri", "url":
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" || strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			return bad()
		}
		// A web address by the actions' own rule, which says what is
		// wrong with it (no host, a password in it).
		if u.Scheme == "http" || u.Scheme == "https" {
			if _, why := value.ParseURL(raw, n); why != "" {
				// why never repeats a password; neither does this.
				return nil, allowed(p) + "; " + why
			}
		}
	case "email":
		// The actions' rule: ASCII, at a domain name, no display name.
		if !value.EmailAddress(raw, n) {
			return bad()
		}
	case "uuid":
		if !uuidForm.MatchString(raw) {
			return bad()
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, raw); err != nil {
			return bad()
		}
	}
	if p.pattern != nil && !p.pattern.MatchString(raw) {
		if strings.ContainsAny(raw, "\t\n\r") && p.kind != KindTextarea {
			return nil, "one line, without tabs or line breaks; " + allowed(p)
		}
		if p.kind == KindURL {
			return bad()
		}
		return nil, "this is not in the form the field takes (" + allowed(p) + "); you gave " + gave(raw)
	}
	return raw, ""
}

// parseList reads a list, one item a line: lines are trimmed and blank
// ones skipped; an error names the line.
func parseList(p *prop, raw string) (any, string) {
	all := strings.Split(raw, "\n")
	if len(all) > MaxLines {
		return nil, fmt.Sprintf("at most %d lines of text; you gave %d", MaxLines, len(all))
	}
	// The count first: a list too long is the first thing to fix.
	var given []string
	var at []int
	for i, line := range all {
		if line = strings.TrimSpace(line); line != "" {
			given, at = append(given, line), append(at, i+1)
		}
	}
	if p.maxItems != nil && len(given) > *p.maxItems {
		return nil, fmt.Sprintf("at most %s; you gave %d", plural(*p.maxItems, "line", "lines"), len(given))
	}
	items := []any{}
	first := map[string]int{}
	for i, line := range given {
		v, msg := scalarValue(p.item, line)
		if msg != "" {
			return nil, fmt.Sprintf("line %d: %s", at[i], msg)
		}
		if p.unique {
			if j, ok := first[line]; ok {
				return nil, fmt.Sprintf("line %d repeats line %d; each line must differ", at[i], j)
			}
			first[line] = at[i]
		}
		items = append(items, v)
	}
	return listValue(p, items, "line", "lines")
}

// listValue bounds a list's length; an empty optional list is left out.
func listValue(p *prop, items []any, one, many string) (any, string) {
	n := len(items)
	switch {
	case n == 0 && p.required:
		return nil, "required: " + allowed(p)
	case n == 0:
		return nil, ""
	case p.maxItems != nil && n > *p.maxItems:
		return nil, fmt.Sprintf("at most %s; you gave %d", plural(*p.maxItems, one, many), n)
	case p.minItems != nil && n < *p.minItems:
		return nil, fmt.Sprintf("at least %s; you gave %d", plural(*p.minItems, one, many), n)
	}
	return items, ""
}

// parseChoices reads a checkbox group: each ticked value once.
func parseChoices(p *prop, posted []string) (any, string) {
	if len(posted) > len(p.enum) {
		return nil, fmt.Sprintf("at most %s; you gave %d", plural(len(p.enum), "choice", "choices"), len(posted))
	}
	items := []any{}
	for _, s := range posted {
		v, msg := scalarValue(p.item, s)
		if msg != "" {
			return nil, msg
		}
		if !slices.Contains(items, v) {
			items = append(items, v)
		}
	}
	return listValue(p, items, "choice", "choices")
}

// parseJSON reads a JSON textarea; the service checks what the form
// could not.
func parseJSON(p *prop, raw string) (any, string) {
	if strings.TrimSpace(raw) == "" {
		return missing(p)
	}
	if n := strings.Count(raw, "\n") + 1; n > MaxLines {
		return nil, fmt.Sprintf("at most %d lines of text; you gave %d", MaxLines, n)
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, "this is not valid JSON (" + jsonProblem(err) + "); write it as JSON, such as \"text\", 12, true, [\"a\", \"b\"] or {\"name\": \"value\"}"
	}
	return v, ""
}

// jsonProblem says where JSON went wrong without Go's type names.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s, at character %d", se.Error(), se.Offset)
	}
	return err.Error()
}

// size is a byte count in the units a person reads; up rounds a part of a
// KiB up (what was given), else down (the bound), so that the two never
// read the same.
func size(n int, up bool) string {
	if n < 1<<10 {
		return plural(n, "byte", "bytes")
	}
	if up {
		n += 1<<10 - 1
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
