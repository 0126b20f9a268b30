package app

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/textsearch"
)

// Full-text search over a collection's text and rich_text fields (q on
// the item list). PostgreSQL searches with its text search configuration
// named by the collection's search_language; the memory store matches the
// same words by the rules of Words. Both keep an item when it holds every
// word of q.

// DefaultSearchLanguage is the search language of a collection that sets
// none: PostgreSQL's simple configuration, which lower-cases words and
// neither stems them nor drops stop words.
const DefaultSearchLanguage = textsearch.Default

// SearchLanguages are the search languages a collection may set: the text
// search configurations PostgreSQL ships with (platform/textsearch, which
// the Studio's schema builder offers too).
var SearchLanguages = textsearch.Languages

// OrderRelevance orders a search's results by how well they match q.
const OrderRelevance = "relevance"

// maxQuery bounds q in characters.
const maxQuery = 200

// checkSearchLanguage validates a search_language ("" is the default).
func checkSearchLanguage(lang string) (string, error) {
	if lang == "" {
		return DefaultSearchLanguage, nil
	}
	if !slices.Contains(SearchLanguages, lang) {
		return "", apperr.Invalid("search_language must be one of: %s; got %q", strings.Join(SearchLanguages, ", "), lang)
	}
	return lang, nil
}

// Searchable reports whether q searches f: text and rich_text fields.
func (f Field) Searchable() bool { return f.Type == TypeText || f.Type == TypeRichText }

// SearchFields are the fields q searches, in definition order.
func (c Collection) SearchFields() []Field {
	var out []Field
	for _, f := range c.Fields {
		if f.Searchable() {
			out = append(out, f)
		}
	}
	return out
}

// Words splits s into the words search matches: runs of letters and
// digits, lower-cased. Markup is not text: HTML tags and entities are
// skipped, as PostgreSQL's parser skips them.
func Words(s string) []string {
	var (
		out   []string
		start = -1
	)
	flush := func(end int) {
		if start >= 0 {
			out = append(out, strings.ToLower(s[start:end]))
			start = -1
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '<' && isTagStart(s[i+size:]):
			flush(i)
			if end := strings.IndexByte(s[i:], '>'); end >= 0 {
				i += end + 1
				continue
			}
		case r == '&':
			if end := entityEnd(s[i+1:]); end > 0 {
				flush(i)
				i += 1 + end
				continue
			}
			flush(i)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
		default:
			flush(i)
		}
		i += size
	}
	flush(len(s))
	return out
}

// isTagStart reports whether what follows a '<' opens an HTML tag.
func isTagStart(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if c == '/' && len(s) > 1 {
		c = s[1]
	}
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '!'
}

// entityEnd is the length of an HTML entity's name and ';' at the start
// of s ("amp;", "#39;"), or 0.
func entityEnd(s string) int {
	for i := 0; i < len(s) && i < 32; i++ {
		c := s[i]
		switch {
		case c == ';':
			if i == 0 {
				return 0
			}
			return i + 1
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '#' && i == 0:
		default:
			return 0
		}
	}
	return 0
}

// checkQuery validates q for a search of c and returns its words.
func checkQuery(c Collection, q string) ([]string, error) {
	if utf8.RuneCountInString(q) > maxQuery || !utf8.ValidString(q) || strings.ContainsRune(q, 0) {
		return nil, apperr.Invalid("q must be at most %d characters of text; got %d", maxQuery, utf8.RuneCountInString(q))
	}
	words := Words(q)
	if len(words) == 0 {
		return nil, apperr.Invalid("q must hold at least one word (letters or digits); got %q", q)
	}
	if len(c.SearchFields()) == 0 {
		return nil, apperr.Invalid("q searches text and rich_text fields, and collection %q has none", c.Slug)
	}
	return words, nil
}

// SearchText is the text of it that q searches: its text and rich_text
// values, one after another.
func SearchText(c Collection, it Item) string {
	var b strings.Builder
	for _, f := range c.Fields {
		if !f.Searchable() {
			continue
		}
		raw, ok := it.Values[f.Key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			b.WriteString(s)
			b.WriteByte(' ')
		}
	}
	return b.String()
}
