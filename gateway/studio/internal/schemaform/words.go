package schemaform

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The words of the form: labels from property names, and what a field
// allows, said once and used by the hint under a control and by the errors
// Parse returns, so that an error says what the hint said.

// acronyms are the words a label writes in capitals.
var acronyms = map[string]string{"url": "URL", "id": "ID", "uuid": "UUID", "html": "HTML", "cta": "CTA",
	"gbp": "GBP", "seo": "SEO", "llm": "LLM", "api": "API", "ai": "AI", "ip": "IP"}

// abbreviations are the words a label writes out.
var abbreviations = map[string]string{"lat": "latitude", "lng": "longitude", "lon": "longitude", "qty": "quantity", "desc": "description"}

// label is a property's title, or its name in words: brand_name is
// "Brand name", prospectUrl "Prospect URL".
func label(p *prop) string {
	if t := strings.TrimSpace(p.title); t != "" {
		return t
	}
	var words []string
	var w []rune
	flush := func() {
		if len(w) > 0 {
			words = append(words, string(w))
			w = w[:0]
		}
	}
	prevLower := false
	for _, r := range p.name {
		switch {
		case r == '_' || r == '-' || r == '.' || unicode.IsSpace(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		w = append(w, unicode.ToLower(r))
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	if len(words) == 0 {
		return p.name
	}
	for i, wd := range words {
		if full, ok := abbreviations[wd]; ok {
			wd = full
			words[i] = full
		}
		if a, ok := acronyms[wd]; ok {
			words[i] = a
		} else if i == 0 {
			r, n := utf8.DecodeRuneInString(wd)
			words[i] = string(unicode.ToUpper(r)) + wd[n:]
		}
	}
	return strings.Join(words, " ")
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// allowed says in words what p allows, lower case, without a full stop.
func allowed(p *prop) string {
	switch p.kind {
	case KindSelect:
		return "one of: " + options(p.enum)
	case KindChoices:
		s := "any of: " + options(p.enum)
		if p.maxItems != nil {
			s += " (at most " + strconv.Itoa(*p.maxItems) + ")"
		}
		return s
	case KindList:
		parts := []string{"one per line"}
		if p.minItems != nil && *p.minItems > 1 {
			parts = append(parts, "at least "+plural(*p.minItems, "line", "lines"))
		}
		if p.maxItems != nil {
			parts = append(parts, "at most "+plural(*p.maxItems, "line", "lines"))
		}
		if p.unique {
			parts = append(parts, "no line twice")
		}
		// A line is one line of text already: "each at most 100
		// characters" says the rest.
		item := strings.TrimPrefix(strings.TrimPrefix(allowed(p.item), "one line of text"), "text")
		if item = strings.TrimPrefix(item, " of "); item != "" {
			parts = append(parts, "each "+item)
		}
		return strings.Join(parts, ", ")
	case KindNumber, KindInteger:
		s := "a number"
		if p.kind == KindInteger {
			s = "a whole number"
		}
		switch {
		case p.minimum != nil && p.maximum != nil:
			s += " from " + num(*p.minimum) + " to " + num(*p.maximum)
		case p.minimum != nil:
			s += " of at least " + num(*p.minimum)
		case p.maximum != nil:
			s += " of at most " + num(*p.maximum)
		}
		if p.exclMin != nil {
			s += ", above " + num(*p.exclMin)
		}
		if p.exclMax != nil {
			s += ", below " + num(*p.exclMax)
		}
		if p.multipleOf != nil {
			s += ", in steps of " + num(*p.multipleOf)
		}
		return s
	case KindCheckbox:
		return "ticked or not"
	case KindJSON:
		return "a value written as JSON"
	}
	var s string
	switch {
	case p.kind == KindURL:
		s = "a full web address starting with http:// or https://"
	case p.kind == KindEmail:
		s = "one email address, such as name@example.com (no name around it)"
	case p.format == "uuid":
		return "an ID such as 123e4567-e89b-12d3-a456-426614174000"
	case p.format == "date":
		return "a date such as 2026-03-01 (year-month-day)"
	case p.kind == KindTextarea:
		s = "text"
	default:
		s = "one line of text"
	}
	// "one line of text of at most 100 characters"; after the address
	// and its example, ", at most 2048 characters".
	of := " of "
	if p.kind == KindURL || p.kind == KindEmail {
		of = ", "
	}
	switch {
	case p.minLength != nil && *p.minLength > 1 && p.maxLength != nil:
		s += fmt.Sprintf("%s%d to %d characters", of, *p.minLength, *p.maxLength)
	case p.maxLength != nil:
		s += of + "at most " + plural(*p.maxLength, "character", "characters")
	case p.minLength != nil && *p.minLength > 1:
		s += of + "at least " + plural(*p.minLength, "character", "characters")
	}
	return s
}

func options(enum []any) string {
	out := make([]string, len(enum))
	for i, v := range enum {
		out[i] = scalar(v)
	}
	return strings.Join(out, ", ")
}

// hint is allowed as a sentence, for under a control. Free text without
// bounds, a checkbox and a select (whose options show what is allowed)
// need none.
func hint(p *prop) string {
	switch p.kind {
	case KindCheckbox, KindSelect, KindChoices:
		return ""
	}
	// Under a one-line input, "one line of text of" goes without saying.
	a := strings.TrimPrefix(strings.TrimPrefix(allowed(p), "one line of text"), "text")
	if a = strings.TrimPrefix(a, " of "); a == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(a)
	return string(unicode.ToUpper(r)) + a[n:] + "."
}

// gave quotes what was given, cut short if long: an error repeats the
// value so that the person sees which one, not all of it.
func gave(s string) string {
	const most = 60
	if utf8.RuneCountInString(s) > most {
		r := []rune(s)
		s = string(r[:most]) + "…"
	}
	return strconv.Quote(s)
}

// scalar is a JSON scalar as a form shows it: a string as it is, a number
// without exponent, a boolean as true or false.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return num(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
