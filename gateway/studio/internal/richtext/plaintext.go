package richtext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Ellipsis ends an excerpt that PlainText shortened.
const Ellipsis = "…"

// blockBreak are the elements whose edges separate words, so that
// "<p>one</p><p>two</p>" reads "one two", not "onetwo".
var blockBreak = map[atom.Atom]bool{
	atom.P: true, atom.Br: true, atom.Hr: true, atom.Div: true, atom.Li: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Ul: true, atom.Ol: true, atom.Blockquote: true, atom.Pre: true, atom.Tr: true,
	atom.Td: true, atom.Th: true, atom.Table: true, atom.Figure: true, atom.Figcaption: true,
	atom.Img: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Dt: true, atom.Dd: true, atom.Caption: true,
}

// voidTag are the elements that have no end tag: a dropped one has no
// content to skip.
var voidTag = map[atom.Atom]bool{
	atom.Input: true, atom.Link: true, atom.Meta: true, atom.Base: true, atom.Param: true,
	atom.Source: true, atom.Track: true, atom.Keygen: true, atom.Area: true, atom.Embed: true,
}

// PlainText returns the text a reader of html would see, for a list page's
// excerpt: tags and what Sanitize drops with its content (scripts, styles,
// SVG...) are left out, entities decoded, runs of white space made one
// space. When the text is longer than max characters (runes) it is cut at
// the last word boundary that fits and Ellipsis appended (the result is
// then at most max+1 characters); max <= 0 means no limit. The result is
// text, not HTML: a template escapes it.
//
// Markdown is read as text too; render it with MarkdownToHTML first for an
// excerpt without its markup.
func PlainText(s string, max int) string {
	s, _ = truncate(s)
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	runes := 0
	space := false // a space is owed before the next word
	skip := 0      // depth inside dropped elements
	limit := max
	if limit > 0 {
		limit++ // one more than fits tells that the text was cut
	}
	for limit <= 0 || runes < limit {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return finish(b.String(), runes, max)
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if dropped[a] && !voidTag[a] {
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			}
			if blockBreak[a] {
				space = true
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			for _, r := range string(z.Text()) {
				if unicode.IsSpace(r) || r == 0 {
					space = true
					continue
				}
				if space && b.Len() > 0 {
					b.WriteByte(' ')
					runes++
				}
				space = false
				b.WriteRune(r)
				runes++
				if limit > 0 && runes >= limit {
					break
				}
			}
		}
	}
	return finish(b.String(), runes, max)
}

// finish cuts text of n runes to max runes at a word boundary.
func finish(text string, n, max int) string {
	if max <= 0 || n <= max {
		return text
	}
	// Keep max runes, then back off to the last space so no word is cut
	// (unless the first word alone is longer than max).
	i, count := 0, 0
	for i < len(text) && count < max {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		count++
	}
	cut := text[:i]
	if i < len(text) && text[i] != ' ' {
		if sp := strings.LastIndexByte(cut, ' '); sp > 0 {
			cut = cut[:sp]
		}
	}
	return strings.TrimRight(cut, " ") + Ellipsis
}
