package smtpmail

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToText derives the text/plain alternative of an HTML body: the text
// of the elements a reader sees, entities decoded, whitespace collapsed as a
// browser would, a blank line around paragraphs, headings, lists and
// tables, a line break for <br>, list items and other block elements, list
// items marked "- " or numbered, and a link's address after its text when
// the text does not already show it. Scripts, styles and the title are
// left out.
func htmlToText(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var w textWriter
	var (
		hidden int        // depth inside elements whose text is not shown
		pre    int        // depth inside <pre>
		lists  []int      // per open list: -1 for <ul>, else the last <ol> number
		links  []openLink // open <a> elements
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return strings.TrimRight(w.b.String(), " \n")
		case html.TextToken:
			switch {
			case hidden > 0:
			case pre > 0:
				w.raw(string(z.Text()))
			default:
				w.text(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := atom.Lookup(name)
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			selfClosing := tt == html.SelfClosingTagToken
			switch tag {
			case atom.Script, atom.Style, atom.Title, atom.Template:
				if !selfClosing {
					hidden++
				}
			case atom.Br:
				w.lineBreak()
			case atom.Pre:
				w.blockBreak(2)
				if !selfClosing {
					pre++
				}
			case atom.Ul, atom.Ol:
				if len(lists) == 0 {
					w.blockBreak(2)
				} else {
					w.blockBreak(1)
				}
				if !selfClosing {
					n := -1
					if tag == atom.Ol {
						n = 0
					}
					lists = append(lists, n)
				}
			case atom.Li:
				w.blockBreak(1)
				indent := strings.Repeat("  ", max(len(lists)-1, 0))
				if k := len(lists) - 1; k >= 0 && lists[k] >= 0 {
					lists[k]++
					w.prefix = indent + strconv.Itoa(lists[k]) + ". "
				} else {
					w.prefix = indent + "- "
				}
			case atom.Td, atom.Th:
				w.space = true
			case atom.Img:
				if alt := strings.TrimSpace(attrs["alt"]); alt != "" && hidden == 0 {
					w.text(alt)
				}
			case atom.A:
				if !selfClosing {
					links = append(links, openLink{href: attrs["href"], start: w.b.Len()})
				}
			default:
				if n := blockBreaks(tag); n > 0 {
					w.blockBreak(n)
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := atom.Lookup(name)
			switch tag {
			case atom.Script, atom.Style, atom.Title, atom.Template:
				hidden = max(hidden-1, 0)
			case atom.Pre:
				pre = max(pre-1, 0)
				w.blockBreak(2)
			case atom.Ul, atom.Ol:
				if len(lists) > 0 {
					lists = lists[:len(lists)-1]
				}
				if len(lists) == 0 {
					w.blockBreak(2)
				} else {
					w.blockBreak(1)
				}
			case atom.A:
				if k := len(links) - 1; k >= 0 {
					l := links[k]
					links = links[:k]
					if shown := linkAddress(l.href, w.b.String()[l.start:]); shown != "" {
						w.text(" (" + shown + ")")
					}
				}
			default:
				if n := blockBreaks(tag); n > 0 {
					w.blockBreak(n)
				}
			}
		}
	}
}

type openLink struct {
	href  string
	start int // length of the text written when the link opened
}

// linkAddress is the address to show after a link's text: its href, when
// it is an absolute http(s) or mailto address the text does not already
// show.
func linkAddress(href, text string) string {
	href = strings.TrimSpace(href)
	lower := strings.ToLower(href)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "mailto:") {
		return ""
	}
	bare := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		for _, p := range []string{"mailto:", "https://", "http://", "www."} {
			s = strings.TrimPrefix(s, p)
		}
		return strings.TrimSuffix(s, "/")
	}
	if bare(href) == bare(text) {
		return ""
	}
	if strings.HasPrefix(lower, "mailto:") {
		return href[len("mailto:"):]
	}
	return href
}

// blockBreaks is how many line breaks separate a block element from its
// neighbours: 2 (a blank line) for paragraphs and the like, 1 for other
// blocks, 0 for inline elements.
func blockBreaks(tag atom.Atom) int {
	switch tag {
	case atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Table, atom.Blockquote, atom.Hr, atom.Dl, atom.Figure:
		return 2
	case atom.Div, atom.Tr, atom.Section, atom.Article, atom.Header,
		atom.Footer, atom.Nav, atom.Aside, atom.Main, atom.Figcaption,
		atom.Address, atom.Dt, atom.Dd, atom.Form, atom.Fieldset,
		atom.Details, atom.Summary, atom.Caption, atom.Body, atom.Html:
		return 1
	}
	return 0
}

// textWriter writes text with the breaks and spaces it owes written only
// when more text follows, so that nothing trails and breaks do not pile up.
type textWriter struct {
	b      strings.Builder
	breaks int    // line breaks owed before the next text
	space  bool   // a space owed before the next text
	prefix string // written after the breaks: a list item's marker
}

func (w *textWriter) text(s string) {
	for _, r := range s {
		if unicode.IsSpace(r) {
			w.space = true
			continue
		}
		w.flush()
		w.b.WriteRune(r)
	}
}

// raw writes preformatted text as it is, line breaks included.
func (w *textWriter) raw(s string) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	body := strings.TrimRight(s, "\n")
	if body != "" {
		w.flush()
		w.b.WriteString(body)
	}
	// Trailing line breaks are owed, not written, so that the break after
	// </pre> does not add to them.
	w.breaks += len(s) - len(body)
}

func (w *textWriter) flush() {
	if w.b.Len() > 0 {
		switch {
		case w.breaks > 0:
			w.b.WriteString(strings.Repeat("\n", min(w.breaks, 2)))
		case w.space:
			w.b.WriteByte(' ')
		}
	}
	w.b.WriteString(w.prefix)
	w.breaks, w.space, w.prefix = 0, false, ""
}

// blockBreak owes n line breaks before the next text, unless more are owed
// already.
func (w *textWriter) blockBreak(n int) {
	w.breaks = max(w.breaks, n)
	w.space = false
}

// lineBreak owes one more line break: two <br> make a blank line.
func (w *textWriter) lineBreak() {
	w.breaks++
	w.space = false
}
