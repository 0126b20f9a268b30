package web

import (
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// maxText is the most visible text a Page keeps (WordCount counts it all).
const maxText = 100 << 10

// reader reads one parsed document into a Page.
type reader struct {
	page *provider.Page
	// base resolves the document's URLs: the final URL, or the document's
	// <base href> when it has one, as a browser does.
	base *url.URL
	host string // the final URL's host name, for Link.Internal
	text strings.Builder

	sawTitle, sawDescription, sawRobots, sawCanonical bool
}

// read fills page's HTML fields from doc, fetched from final.
func read(page *provider.Page, doc *html.Node, final *url.URL) {
	r := &reader{page: page, base: final, host: final.Hostname()}
	if b := findBase(doc); b != "" {
		if u, err := final.Parse(b); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			r.base = u
		}
	}
	r.walk(doc, true)
	text := collapse(r.text.String())
	page.WordCount = countWords(text)
	page.Text = truncate(text, maxText)
}

func findBase(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Base && n.Namespace == "" {
		if href, ok := attr(n, "href"); ok {
			return strings.TrimSpace(href)
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if b := findBase(c); b != "" {
			return b
		}
	}
	return ""
}

// walk reads n and its descendants; visible is false under an element whose
// text a visitor does not see.
func (r *reader) walk(n *html.Node, visible bool) {
	switch n.Type {
	case html.TextNode:
		if visible {
			r.text.WriteString(n.Data)
		}
		return
	case html.ElementNode:
		if n.Namespace == "" && !r.element(n) {
			return
		}
		if n.Namespace == "svg" && (n.Data == "title" || n.Data == "desc") {
			return // a tooltip and a description for assistive technology, not text on the page
		}
		if _, hidden := attr(n, "hidden"); hidden && n.Namespace == "" {
			visible = false
		}
	}
	block := n.Type == html.ElementNode && isBlock(n.DataAtom)
	if block {
		r.text.WriteByte(' ')
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.walk(c, visible)
	}
	if block {
		r.text.WriteByte(' ')
	}
}

// element reads an HTML element's own fields and says whether to walk its
// children.
func (r *reader) element(n *html.Node) bool {
	p := r.page
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Object:
		return false
	case atom.Title:
		if !r.sawTitle {
			r.sawTitle = true
			p.Title = textOf(n)
		}
		return false
	case atom.Html:
		if lang, ok := attr(n, "lang"); ok {
			p.Lang = strings.TrimSpace(lang)
		}
	case atom.Meta:
		name, _ := attr(n, "name")
		content, _ := attr(n, "content")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "description":
			if !r.sawDescription {
				r.sawDescription = true
				p.MetaDescription = collapse(content)
			}
		case "robots":
			if !r.sawRobots {
				r.sawRobots = true
				p.MetaRobots = collapse(content)
			}
		case "viewport":
			p.Viewport = true
		}
	case atom.Link:
		rel, _ := attr(n, "rel")
		href, _ := attr(n, "href")
		if !r.sawCanonical && hasToken(rel, "canonical") && strings.TrimSpace(href) != "" {
			if u, ok := r.resolve(href); ok {
				r.sawCanonical = true
				p.Canonical = u.String()
			}
		}
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		p.Headings = append(p.Headings, provider.Heading{Level: int(n.Data[1] - '0'), Text: textOf(n)})
	case atom.Img:
		src, _ := attr(n, "src")
		alt, hasAlt := attr(n, "alt")
		img := provider.PageImage{Alt: collapse(alt), HasAlt: hasAlt}
		src = strings.TrimSpace(src)
		switch {
		case len(src) >= 5 && strings.EqualFold(src[:5], "data:"):
			// An inline image can be hundreds of kilobytes; its type is
			// what identifies it.
			if i := strings.IndexByte(src, ','); i >= 0 {
				src = src[:i+1] + "…"
			}
			img.Src = src
		case src != "":
			if u, ok := r.resolve(src); ok {
				img.Src = u.String()
			}
		}
		p.Images = append(p.Images, img)
	case atom.A:
		if link, ok := r.link(n); ok {
			p.Links = append(p.Links, link)
		}
	}
	return true
}

// link reads an <a>; only links to http and https pages count (not
// javascript:, mailto:, tel:, nor links to a fragment of this page).
func (r *reader) link(n *html.Node) (provider.Link, bool) {
	href, ok := attr(n, "href")
	href = strings.TrimSpace(href)
	if !ok || href == "" || strings.HasPrefix(href, "#") {
		return provider.Link{}, false
	}
	u, ok := r.resolve(href)
	if !ok || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return provider.Link{}, false
	}
	text := textOf(n)
	if text == "" {
		text = altsOf(n)
	}
	rel, _ := attr(n, "rel")
	return provider.Link{
		Href:     u.String(),
		Text:     text,
		Internal: strings.EqualFold(u.Hostname(), r.host),
		NoFollow: hasToken(rel, "nofollow"),
	}, true
}

func (r *reader) resolve(ref string) (*url.URL, bool) {
	u, err := r.base.Parse(strings.TrimSpace(ref))
	return u, err == nil
}

func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

// hasToken reports whether the space-separated list (a rel attribute)
// holds token, ignoring case.
func hasToken(list, token string) bool {
	return slices.ContainsFunc(strings.Fields(list), func(t string) bool { return strings.EqualFold(t, token) })
}

// textOf is the text of n's descendants as a visitor reads it, whitespace
// collapsed.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				return
			}
		}
		block := n.Type == html.ElementNode && isBlock(n.DataAtom)
		if block {
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if block {
			b.WriteByte(' ')
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c)
	}
	return collapse(b.String())
}

// altsOf is the alt text of the images in n, the text of a link that is an
// image.
func altsOf(n *html.Node) string {
	var alts []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Img {
			if alt, _ := attr(n, "alt"); strings.TrimSpace(alt) != "" {
				alts = append(alts, alt)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return collapse(strings.Join(alts, " "))
}

// isBlock reports whether an element separates words: text on either side
// of it does not run together (<p>a</p><p>b</p> is two words, a<b>b</b>
// one).
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Br, atom.Button,
		atom.Caption, atom.Dd, atom.Details, atom.Dialog, atom.Div, atom.Dl, atom.Dt, atom.Fieldset,
		atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.H1, atom.H2, atom.H3, atom.H4,
		atom.H5, atom.H6, atom.Header, atom.Hr, atom.Img, atom.Input, atom.Label, atom.Legend, atom.Li,
		atom.Main, atom.Nav, atom.Ol, atom.Option, atom.P, atom.Pre, atom.Section, atom.Select,
		atom.Summary, atom.Table, atom.Tbody, atom.Td, atom.Textarea, atom.Tfoot, atom.Th, atom.Thead,
		atom.Tr, atom.Ul:
		return true
	}
	return false
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// countWords counts the space-separated tokens with a letter or a digit,
// so that a "|" or "—" between words is not one. Text without spaces
// between words (Chinese, Japanese) counts as few words.
func countWords(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++
		}
	}
	return n
}

// truncate cuts s to at most max bytes, at a space when there is one in
// the last part, never inside a character.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	s = s[:cut]
	if i := strings.LastIndexByte(s, ' '); i > cut-200 {
		s = s[:i]
	}
	return s
}
