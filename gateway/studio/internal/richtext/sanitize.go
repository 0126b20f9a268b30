package richtext

import (
	"fmt"
	"html/template"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MaxInput is the most of a value the functions of this package read, in
// bytes: 1 MiB, twice the default max_length of a rich_text field, so a
// preview never holds the console's page for long. Longer input is cut at
// a character boundary and the output says so.
const MaxInput = 1 << 20

// TruncatedNote is the paragraph Sanitize appends when it cut its input.
const TruncatedNote = `<p><em>Preview truncated: only the first 1 MiB of this value is shown.</em></p>`

// maxDepth is how deeply kept elements may nest. Deeper elements are
// unwrapped (their text stays): no toolbar makes such markup, and the
// pages that show it need not lay out thousands of nested boxes.
const maxDepth = 100

// RelLink is the rel every kept link gets: the console must not hand the
// linked page a window.opener or a Referer with an item's address, and a
// stored link is not the console's endorsement.
const RelLink = "noopener noreferrer nofollow"

// action says what Sanitize does with an element.
type action int

const (
	unwrap    action = iota // drop the tag, keep what it holds (span, font, unknown tags)
	keep                    // keep the tag with its allowed attributes
	drop                    // drop the tag and everything in it
	paragraph               // write a <p> for it: a block of text in a tag not kept (div)
)

// blockText are the block elements not kept that often hold a line or
// paragraph of text (editors write a <div> per line): written as <p> when
// they hold no block themselves, so that their lines do not run together.
var blockText = map[atom.Atom]bool{
	atom.Div: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Main: true, atom.Aside: true, atom.Nav: true, atom.Address: true, atom.Details: true,
	atom.Summary: true, atom.Center: true, atom.Dt: true, atom.Dd: true, atom.Hgroup: true,
}

// block are the elements that set the text around them apart themselves.
var block = map[atom.Atom]bool{
	atom.P: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Ul: true, atom.Ol: true, atom.Li: true, atom.Pre: true, atom.Blockquote: true,
	atom.Hr: true, atom.Table: true, atom.Figure: true, atom.Dl: true,
}

// holdsBlock reports whether n has a child that is a block, or is written
// as one.
func holdsBlock(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Namespace == "" && (block[c.DataAtom] || blockText[c.DataAtom]) {
			return true
		}
	}
	return false
}

// allowed are the elements kept, with the attributes each may carry
// (beyond those every element may not carry at all: no style, class, id or
// on* attribute). href and src are checked by safeURL.
var allowed = map[atom.Atom][]string{
	atom.P: nil, atom.Br: nil, atom.Hr: nil,
	atom.H1: nil, atom.H2: nil, atom.H3: nil, atom.H4: nil, atom.H5: nil, atom.H6: nil,
	atom.Ul: nil, atom.Ol: {"start", "reversed"}, atom.Li: nil,
	atom.A:      {"href", "title"},
	atom.Img:    {"src", "alt", "title", "width", "height"},
	atom.Strong: nil, atom.Em: nil, atom.B: nil, atom.I: nil, atom.U: nil, atom.S: nil,
	atom.Code: {"class"}, atom.Pre: nil, atom.Blockquote: nil,
	atom.Table: nil, atom.Thead: nil, atom.Tbody: nil, atom.Tfoot: nil, atom.Tr: nil,
	atom.Th: {"colspan", "rowspan", "scope"}, atom.Td: {"colspan", "rowspan"},
	atom.Caption: nil,
	atom.Figure:  nil, atom.Figcaption: nil,
}

// dropped are the elements removed with their content: what runs, styles,
// embeds or submits, and what holds text that was never meant to be read
// as part of the document (titles, options, templates).
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Link: true, atom.Meta: true, atom.Base: true,
	atom.Iframe: true, atom.Frame: true, atom.Frameset: true, atom.Object: true, atom.Embed: true,
	atom.Applet: true, atom.Param: true, atom.Form: true, atom.Input: true, atom.Button: true,
	atom.Select: true, atom.Option: true, atom.Optgroup: true, atom.Textarea: true,
	atom.Datalist: true, atom.Keygen: true, atom.Output: true,
	atom.Svg: true, atom.Math: true, atom.Template: true, atom.Noscript: true,
	atom.Noembed: true, atom.Noframes: true, atom.Xmp: true, atom.Plaintext: true,
	atom.Title: true, atom.Head: true, atom.Audio: true, atom.Video: true, atom.Source: true,
	atom.Track: true, atom.Canvas: true, atom.Dialog: true, atom.Slot: true,
	atom.Map: true, atom.Area: true, atom.Picture: true,
}

// Sanitize rebuilds html from the allowlist described in the package
// documentation and returns markup that is safe to insert into a page.
// It never fails: what it cannot keep it drops. Input beyond MaxInput is
// cut and TruncatedNote appended.
func Sanitize(s string) template.HTML {
	s, cut := truncate(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	nodes, err := parseFragment(s)
	if err != nil {
		// The parser refuses markup nested more than 512 elements deep
		// (no editor makes it; it is how one would make a parser slow):
		// show its text, so that nothing of the value is hidden.
		b.WriteString("<p>")
		b.WriteString(html.EscapeString(PlainText(s, 0)))
		b.WriteString("</p>")
	}
	for _, n := range nodes {
		writeTree(&b, n)
	}
	if cut {
		b.WriteString(TruncatedNote)
	}
	//nolint:gosec // G203: the string was rebuilt from the allowlist above, every text and attribute escaped.
	return template.HTML(b.String())
}

// truncate cuts s to MaxInput bytes, backing off to the start of a
// character, and reports whether it cut.
func truncate(s string) (string, bool) {
	if len(s) <= MaxInput {
		return s, false
	}
	i := MaxInput
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// parseFragment parses s as the content of a <body>, as a browser would
// when the console puts it inside one. The parser recovers from any
// malformed markup; it fails only on nesting deeper than it allows.
func parseFragment(s string) ([]*html.Node, error) {
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(s), body)
	if err != nil {
		return nil, fmt.Errorf("parse rich text as HTML: %w", err)
	}
	return nodes, nil
}

// classify says what to do with element n.
func classify(n *html.Node) action {
	if n.Namespace != "" { // SVG and MathML content, whatever its tag
		return drop
	}
	if dropped[n.DataAtom] {
		return drop
	}
	if _, ok := allowed[n.DataAtom]; ok && n.DataAtom != 0 {
		return keep
	}
	if blockText[n.DataAtom] && !holdsBlock(n) {
		return paragraph
	}
	return unwrap
}

// writeTree writes root and its descendants. It walks the tree without
// recursion so that deeply nested input cannot grow the stack.
func writeTree(b *strings.Builder, root *html.Node) {
	var open []string // for each element entered: its end tag, or "" when none was written
	depth := 0        // tags written and not yet closed

	// enter writes n's start (and for a childless node its end) and
	// reports whether the walk should go into its children.
	enter := func(n *html.Node) bool {
		switch n.Type {
		case html.TextNode:
			b.WriteString(html.EscapeString(n.Data))
			return false
		case html.ElementNode:
		default: // comments, doctypes: nothing a reader sees
			return false
		}
		act := classify(n)
		if act == drop {
			return false
		}
		if act != unwrap && depth >= maxDepth {
			act = unwrap
		}
		end := ""
		switch act {
		case paragraph:
			if n.FirstChild == nil {
				return false // an empty block shows nothing
			}
			b.WriteString("<p>")
			end = "</p>"
			depth++
		case keep:
			writeStart(b, n)
			if voidElement(n.DataAtom) {
				return false
			}
			end = "</" + n.Data + ">"
			if n.FirstChild == nil {
				b.WriteString(end)
				return false
			}
			// The parser drops a newline right after <pre>: write one
			// back so a stored leading newline survives a second pass.
			if n.DataAtom == atom.Pre && n.FirstChild.Type == html.TextNode && strings.HasPrefix(n.FirstChild.Data, "\n") {
				b.WriteByte('\n')
			}
			depth++
		}
		if n.FirstChild == nil {
			return false
		}
		open = append(open, end)
		return true
	}
	leave := func() {
		end := open[len(open)-1]
		open = open[:len(open)-1]
		if end != "" {
			b.WriteString(end)
			depth--
		}
	}

	n := root
	for n != nil {
		if enter(n) {
			n = n.FirstChild
			continue
		}
		// n is done: go to the next sibling, closing the parents whose
		// last child it was.
		for n != nil {
			if n == root {
				n = nil
				break
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
			leave()
			if n == root {
				n = nil
			}
		}
	}
}

func voidElement(a atom.Atom) bool {
	return a == atom.Br || a == atom.Hr || a == atom.Img
}

func writeStart(b *strings.Builder, n *html.Node) {
	b.WriteByte('<')
	b.WriteString(n.Data)
	names := allowed[n.DataAtom]
	for _, name := range names {
		v, ok := attr(n, name)
		if !ok {
			continue
		}
		v, ok = checkAttr(n.DataAtom, name, v)
		if !ok {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(name)
		if name == "reversed" {
			continue
		}
		b.WriteString(`="`)
		b.WriteString(html.EscapeString(v))
		b.WriteByte('"')
	}
	if n.DataAtom == atom.A {
		b.WriteString(` rel="` + RelLink + `"`)
	}
	b.WriteByte('>')
}

// attr returns the first attribute of n named name (the parser lowercases
// names and keeps the first of duplicates, as browsers do).
func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

// checkAttr returns the value to write for attribute name of element el,
// or false to leave the attribute out.
func checkAttr(el atom.Atom, name, v string) (string, bool) {
	switch name {
	case "href":
		return safeURL(v, linkSchemes)
	case "src":
		return safeURL(v, imageSchemes)
	case "width", "height", "colspan", "rowspan", "start":
		return v, isSmallNumber(v)
	case "scope":
		switch strings.ToLower(v) {
		case "row", "col", "rowgroup", "colgroup":
			return strings.ToLower(v), true
		}
		return "", false
	case "class":
		// Only a code block's language (language-go), as Markdown
		// fences and most editors write it: other classes could borrow
		// the console's own styles.
		return v, el == atom.Code && isLanguageClass(v)
	case "reversed":
		return "", true
	}
	return v, true // alt, title: text, escaped when written
}

func isSmallNumber(v string) bool {
	if v == "" || len(v) > 5 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

func isLanguageClass(v string) bool {
	rest, ok := strings.CutPrefix(v, "language-")
	if !ok || rest == "" || len(rest) > 32 {
		return false
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '#' || c == '_') {
			return false
		}
	}
	return true
}

var (
	linkSchemes  = []string{"http", "https", "mailto"}
	imageSchemes = []string{"http", "https"}
)

// safeURL reports whether u may be written as a link or image address and
// returns it as a browser would read it. A URL with a scheme is kept only
// when the scheme is one of schemes; a URL without one (a path such as
// /files/..., a fragment, a query) is relative and kept.
//
// The scheme is read the way an attacker would hope a browser reads it and
// a filter would not: entities are already decoded by the parser, and
// every ASCII control character and space is removed before looking, since
// browsers strip tabs and newlines anywhere in a URL ("jav&#x09;ascript:")
// and leading controls and spaces. Case does not matter. Anything before
// the first ':' that is not followed by a '/', '?' or '#' counts as a
// scheme, even characters a browser would not accept in one, so an
// unusual spelling is refused rather than guessed about.
func safeURL(u string, schemes []string) (string, bool) {
	// What the browser would parse: leading and trailing C0 controls and
	// spaces gone, tabs and newlines gone everywhere.
	u = strings.TrimFunc(u, func(r rune) bool { return r <= 0x20 })
	u = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, u)
	if len(u) > 8192 { // no toolbar makes such a link; a data: payload would
		return "", false
	}
	compact := strings.Map(func(r rune) rune {
		if r <= 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, u)
	colon := strings.IndexByte(compact, ':')
	if colon < 0 {
		return u, true
	}
	if strings.ContainsAny(compact[:colon], "/?#") {
		return u, true // the colon is in the path, query or fragment
	}
	scheme := strings.ToLower(compact[:colon])
	for _, s := range schemes {
		if scheme == s {
			return u, true
		}
	}
	return "", false
}
