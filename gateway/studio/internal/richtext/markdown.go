package richtext

import (
	"html/template"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// The Markdown understood here is a small subset of CommonMark, enough for
// what authors type in a textarea and what the console's toolbar inserts:
//
//   - ATX headings (# to ######), paragraphs, hard breaks (two trailing
//     spaces or a backslash at the end of a line);
//   - bullet lists (-, *, +) and ordered lists (1. or 1)), nested by
//     indenting under the item's text;
//   - block quotes (>), fenced code (``` or ~~~), thematic breaks (---);
//   - inline: [text](url "title"), ![alt](url), **strong**, __strong__,
//     *em*, _em_, `code`, backslash escapes.
//
// Raw HTML inside Markdown is shown as text, not interpreted (a value is
// either HTML or Markdown; LooksLikeMarkdown tells them apart), and link
// and image addresses follow Sanitize's scheme rules. Unlike CommonMark
// there are no setext headings, indented code blocks, reference links or
// autolinks: input that uses them still renders, as text.

// maxBlockDepth and maxInlineDepth bound the nesting the renderer follows
// (quotes in lists in quotes; emphasis in links in emphasis); deeper
// markup is rendered as text, so cost stays linear in the input.
const (
	maxBlockDepth  = 16
	maxInlineDepth = 8
	// maxLinkScan is the longest link text or address read as one: longer
	// bracketed text is just text.
	maxLinkScan = 2048
)

var (
	htmlTag = regexp.MustCompile(`(?i)<(/?[a-z][a-z0-9-]*)(\s[^<>]*)?/?>`)
	// mdCode is Markdown's code (fenced blocks, spans), where a tag is an
	// example rather than markup.
	mdCode  = regexp.MustCompile("(?ms)^ {0,3}(```|~~~).*?^ {0,3}(```|~~~)|`[^`\n]+`")
	mdBlock = regexp.MustCompile("(?m)^ {0,3}(#{1,6}[ \t]|[-*+][ \t]+\\S|\\d{1,9}[.)][ \t]+\\S|>|```|~~~)")
	mdSpan  = regexp.MustCompile("\\*\\*[^*\\n]+\\*\\*|__[^_\\n]+__|\\[[^\\]\\n]+\\]\\([^)\\n]+\\)|`[^`\\n]+`|(^|\\s)\\*[^*\\s][^*\\n]*\\*")
)

// LooksLikeMarkdown reports whether a stored rich_text value reads as
// Markdown: it holds no HTML tag and uses at least one Markdown construct
// (a heading, list, quote or fence line; strong, emphasis, a link or code).
// Plain text without either is neither; Preview shows it as paragraphs.
func LooksLikeMarkdown(s string) bool {
	s, _ = truncate(s)
	if htmlTag.MatchString(mdCode.ReplaceAllString(s, "")) {
		return false
	}
	return mdBlock.MatchString(s) || mdSpan.MatchString(s)
}

// Preview is what the console shows for a stored rich_text value: HTML is
// sanitized; Markdown, and plain text without any tag, is rendered by
// MarkdownToHTML first (plain text so that its blank lines still separate
// paragraphs).
func Preview(s string) template.HTML {
	if LooksLikeMarkdown(s) || !htmlTag.MatchString(s) {
		return Sanitize(MarkdownToHTML(s))
	}
	return Sanitize(s)
}

// MarkdownToHTML renders the Markdown subset described above as HTML. Every
// piece of text is escaped, so the result is safe on its own, but it is
// meant to go through Sanitize like any other stored HTML. Input beyond
// MaxInput is cut and TruncatedNote appended.
func MarkdownToHTML(s string) string {
	s, cut := truncate(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = expandLeadingTabs(l)
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	renderBlocks(&b, lines, 0, false)
	if cut {
		b.WriteString(TruncatedNote)
	}
	return b.String()
}

// expandLeadingTabs turns the tabs of a line's indentation into spaces (to
// the next multiple of 4, as CommonMark counts them), so indentation can be
// compared in columns.
func expandLeadingTabs(l string) string {
	if !strings.Contains(l, "\t") {
		return l
	}
	var b strings.Builder
	col := 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case ' ':
			b.WriteByte(' ')
			col++
		case '\t':
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
		default:
			b.WriteString(l[i:])
			return b.String()
		}
	}
	return b.String()
}

func isBlank(l string) bool { return strings.TrimSpace(l) == "" }

func indentOf(l string) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

// renderBlocks writes lines as blocks. tight is true inside a list item
// without blank lines, whose paragraphs are written without <p>.
func renderBlocks(b *strings.Builder, lines []string, depth int, tight bool) {
	var para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		if !tight {
			b.WriteString("<p>")
		}
		renderInline(b, strings.Join(para, "\n"), 0)
		if !tight {
			b.WriteString("</p>\n")
		}
		para = para[:0]
	}
	i := 0
	for i < len(lines) {
		line := lines[i]
		if isBlank(line) {
			flush()
			i++
			continue
		}
		if fence, info, ok := fenceOpen(line); ok {
			flush()
			i = renderFence(b, lines, i+1, fence, info)
			continue
		}
		if level, text, ok := heading(line); ok {
			flush()
			tag := "h" + strconv.Itoa(level)
			b.WriteString("<" + tag + ">")
			renderInline(b, text, 0)
			b.WriteString("</" + tag + ">\n")
			i++
			continue
		}
		if isThematicBreak(line) {
			flush()
			b.WriteString("<hr>\n")
			i++
			continue
		}
		if depth < maxBlockDepth {
			if _, ok := quoteLine(line); ok {
				flush()
				var inner []string
				for i < len(lines) {
					rest, ok := quoteLine(lines[i])
					if !ok {
						break
					}
					inner = append(inner, rest)
					i++
				}
				b.WriteString("<blockquote>\n")
				renderBlocks(b, inner, depth+1, false)
				b.WriteString("</blockquote>\n")
				continue
			}
			if m, ok := listMarker(line); ok {
				flush()
				i = renderList(b, lines, i, m, depth)
				continue
			}
		}
		para = append(para, strings.TrimLeft(line, " "))
		i++
	}
	flush()
}

func fenceOpen(l string) (fence, info string, ok bool) {
	t := l[indentOf(l):]
	if indentOf(l) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return "", "", false
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return "", "", false
	}
	info = strings.TrimSpace(t[n:])
	if t[0] == '`' && strings.Contains(info, "`") {
		return "", "", false
	}
	if f := strings.Fields(info); len(f) > 0 {
		info = f[0]
	}
	return t[:n], info, true
}

// renderFence writes a fenced code block whose content starts at lines[i]
// and returns the index after its closing fence (or the end: an unclosed
// fence runs to the end, as in CommonMark).
func renderFence(b *strings.Builder, lines []string, i int, fence, info string) int {
	b.WriteString("<pre><code")
	if info != "" && isLanguageClass("language-"+info) {
		b.WriteString(` class="language-` + html.EscapeString(info) + `"`)
	}
	b.WriteString(">")
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if indentOf(lines[i]) <= 3 && strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
			i++
			break
		}
		b.WriteString(html.EscapeString(lines[i]))
		b.WriteByte('\n')
	}
	b.WriteString("</code></pre>\n")
	return i
}

func heading(l string) (int, string, bool) {
	if indentOf(l) > 3 {
		return 0, "", false
	}
	t := l[indentOf(l):]
	n := 0
	for n < len(t) && n < 7 && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0, "", false
	}
	text := strings.TrimSpace(t[n:])
	// An optional closing sequence of #s, after a space.
	if trimmed := strings.TrimRight(text, "#"); trimmed != text && (trimmed == "" || strings.HasSuffix(trimmed, " ")) {
		text = strings.TrimSpace(trimmed)
	}
	return n, text, true
}

func isThematicBreak(l string) bool {
	if indentOf(l) > 3 {
		return false
	}
	t := strings.TrimSpace(l)
	if t == "" || (t[0] != '-' && t[0] != '*' && t[0] != '_') {
		return false
	}
	n := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case t[0]:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

func quoteLine(l string) (string, bool) {
	if indentOf(l) > 3 {
		return "", false
	}
	t := l[indentOf(l):]
	if !strings.HasPrefix(t, ">") {
		return "", false
	}
	return strings.TrimPrefix(t[1:], " "), true
}

// marker is a list item's marker: which kind of list, and the column where
// the item's text starts (continuation lines indented that far belong to
// the item).
type marker struct {
	ordered bool
	char    byte // '-', '*', '+' or, for ordered lists, '.' or ')'
	start   int
	col     int
	text    string
}

func listMarker(l string) (marker, bool) {
	ind := indentOf(l)
	if ind > 3 {
		return marker{}, false
	}
	t := l[ind:]
	var m marker
	n := 0
	switch {
	case len(t) > 0 && (t[0] == '-' || t[0] == '*' || t[0] == '+'):
		m.char, n = t[0], 1
	default:
		for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(t) || (t[n] != '.' && t[n] != ')') {
			return marker{}, false
		}
		m.ordered, m.char = true, t[n]
		m.start, _ = strconv.Atoi(t[:n])
		n++
	}
	if n < len(t) && t[n] != ' ' {
		return marker{}, false
	}
	rest := t[n:]
	sp := indentOf(rest)
	if strings.TrimSpace(rest) == "" {
		return marker{}, false // an empty item: rare in prose, and "-" alone is often a dash
	}
	if sp > 4 { // more is indented code in CommonMark; read it as one space
		sp = 1
	}
	m.col = ind + n + sp
	m.text = rest[sp:]
	return m, true
}

// renderList writes the list starting at lines[i] and returns the index
// after it.
func renderList(b *strings.Builder, lines []string, i int, first marker, depth int) int {
	if first.ordered {
		if first.start != 1 {
			b.WriteString(`<ol start="` + strconv.Itoa(first.start) + `">` + "\n")
		} else {
			b.WriteString("<ol>\n")
		}
	} else {
		b.WriteString("<ul>\n")
	}
	for i < len(lines) {
		// Blank lines between items keep the list going when another
		// item of the same kind follows.
		j := i
		for j < len(lines) && isBlank(lines[j]) {
			j++
		}
		if j >= len(lines) {
			i = j
			break
		}
		m, ok := listMarker(lines[j])
		if !ok || m.ordered != first.ordered || m.char != first.char || indentOf(lines[j]) >= first.col {
			break
		}
		i = j + 1
		item := []string{m.text}
		loose := false
		for i < len(lines) {
			l := lines[i]
			if isBlank(l) {
				k := i
				for k < len(lines) && isBlank(lines[k]) {
					k++
				}
				if k < len(lines) && indentOf(lines[k]) >= m.col {
					for ; i < k; i++ {
						item = append(item, "")
					}
					loose = true
					continue
				}
				break
			}
			if indentOf(l) >= m.col {
				item = append(item, l[m.col:])
				i++
				continue
			}
			// A line that is not indented continues the item's
			// paragraph unless it starts a block of its own.
			if _, ok := listMarker(l); ok {
				break
			}
			if _, ok := quoteLine(l); ok {
				break
			}
			if _, _, ok := heading(l); ok || isThematicBreak(l) {
				break
			}
			if _, _, ok := fenceOpen(l); ok {
				break
			}
			item = append(item, strings.TrimLeft(l, " "))
			i++
		}
		b.WriteString("<li>")
		renderBlocks(b, item, depth+1, !loose)
		b.WriteString("</li>\n")
	}
	if first.ordered {
		b.WriteString("</ol>\n")
	} else {
		b.WriteString("</ul>\n")
	}
	return i
}

// inline renders one run of inline Markdown. The failed flags remember
// that a kind of closer does not occur after some point, so a text full of
// unmatched openers is still read once.
type inline struct {
	b         *strings.Builder
	s         string
	depth     int
	noClose   map[string]bool
	noTicks   map[int]bool
	inLink    bool
	textStart int
	// closeOf[i] is the index of the ']' or ')' matching the '[' or '('
	// at i, or -1; computed once per run, on the first bracket.
	closeOf []int32
}

// matchBrackets fills closeOf in one pass, brackets and parentheses
// nesting separately and backslash escapes skipped, so that finding a
// link's end costs nothing however many brackets never close.
func (in *inline) matchBrackets() {
	if in.closeOf != nil {
		return
	}
	s := in.s
	in.closeOf = make([]int32, len(s))
	var squares, rounds []int32
	for i := 0; i < len(s); i++ {
		in.closeOf[i] = -1
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				in.closeOf[i] = -1
			}
		case '[':
			squares = append(squares, int32(i))
		case ']':
			if n := len(squares); n > 0 {
				in.closeOf[squares[n-1]] = int32(i)
				squares = squares[:n-1]
			}
		case '(':
			rounds = append(rounds, int32(i))
		case ')':
			if n := len(rounds); n > 0 {
				in.closeOf[rounds[n-1]] = int32(i)
				rounds = rounds[:n-1]
			}
		}
	}
}

func renderInline(b *strings.Builder, s string, depth int) {
	in := inline{b: b, s: s, depth: depth, noClose: map[string]bool{}, noTicks: map[int]bool{}}
	in.run()
}

func (in *inline) flushText(end int) {
	if end > in.textStart {
		in.b.WriteString(html.EscapeString(in.s[in.textStart:end]))
	}
}

func (in *inline) sub(s string, inLink bool) {
	if in.depth >= maxInlineDepth {
		in.b.WriteString(html.EscapeString(s))
		return
	}
	child := inline{b: in.b, s: s, depth: in.depth + 1, noClose: map[string]bool{}, noTicks: map[int]bool{}, inLink: inLink || in.inLink}
	child.run()
}

func (in *inline) run() {
	s := in.s
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			in.flushText(i)
			in.b.WriteString("<br>\n")
			i += 2
			in.textStart = i
			continue
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			in.flushText(i)
			in.textStart = i + 1
			i += 2
			continue
		case c == ' ' && strings.HasPrefix(s[i:], "  \n"):
			j := i
			for j > in.textStart && s[j-1] == ' ' {
				j--
			}
			in.flushText(j)
			in.b.WriteString("<br>\n")
			i += 3
			in.textStart = i
			continue
		case c == '`':
			if n := in.codeSpan(i); n > 0 {
				i = n
				continue
			}
		case c == '!' && i+1 < len(s) && s[i+1] == '[':
			if n := in.link(i+1, true); n > 0 {
				i = n
				continue
			}
		case c == '[' && !in.inLink:
			if n := in.link(i, false); n > 0 {
				i = n
				continue
			}
		case c == '*' || c == '_':
			if n := in.emphasis(i); n > 0 {
				i = n
				continue
			}
		}
		i++
	}
	in.flushText(len(s))
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// codeSpan renders the code span opening at i and returns the index after
// it, or 0 when the backticks are not closed.
func (in *inline) codeSpan(i int) int {
	s := in.s
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	if in.noTicks[n] {
		return 0
	}
	ticks := s[i : i+n]
	from := i + n
	for {
		k := strings.Index(s[from:], ticks)
		if k < 0 {
			in.noTicks[n] = true
			return 0
		}
		at := from + k
		end := at + n
		if end < len(s) && s[end] == '`' { // a longer run: not ours
			for end < len(s) && s[end] == '`' {
				end++
			}
			from = end
			continue
		}
		code := strings.ReplaceAll(s[i+n:at], "\n", " ")
		if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
			code = code[1 : len(code)-1]
		}
		in.flushText(i)
		in.b.WriteString("<code>" + html.EscapeString(code) + "</code>")
		in.textStart = end
		return end
	}
}

// link renders [text](dest "title") or, with image, ![alt](dest) whose
// '[' is at i, and returns the index after it, or 0 when it is not one.
func (in *inline) link(i int, image bool) int {
	s := in.s
	in.matchBrackets()
	close := int(in.closeOf[i])
	if close < 0 || close-i > maxLinkScan || close+1 >= len(s) || s[close+1] != '(' {
		return 0
	}
	end := int(in.closeOf[close+1])
	if end < 0 || end-close > maxLinkScan {
		return 0
	}
	dest, title, ok := linkTarget(s[close+2 : end])
	if !ok {
		return 0
	}
	text := s[i+1 : close]
	start := i
	if image {
		start = i - 1
	}
	in.flushText(start)
	in.textStart = end + 1
	if image {
		src, ok := safeURL(dest, imageSchemes)
		if !ok {
			in.b.WriteString(html.EscapeString(text))
			return end + 1
		}
		in.b.WriteString(`<img src="` + html.EscapeString(src) + `" alt="` + html.EscapeString(plainAlt(text)) + `"`)
		if title != "" {
			in.b.WriteString(` title="` + html.EscapeString(title) + `"`)
		}
		in.b.WriteString(">")
		return end + 1
	}
	href, ok := safeURL(dest, linkSchemes)
	if !ok {
		in.sub(text, true)
		return end + 1
	}
	in.b.WriteString(`<a href="` + html.EscapeString(href) + `"`)
	if title != "" {
		in.b.WriteString(` title="` + html.EscapeString(title) + `"`)
	}
	in.b.WriteString(">")
	in.sub(text, true)
	in.b.WriteString("</a>")
	return end + 1
}

// linkTarget splits what is between a link's parentheses into its
// destination (<...> or up to the first space) and optional quoted title.
func linkTarget(t string) (dest, title string, ok bool) {
	t = strings.TrimSpace(t)
	if strings.HasPrefix(t, "<") {
		k := strings.IndexByte(t, '>')
		if k < 0 {
			return "", "", false
		}
		dest, t = t[1:k], strings.TrimSpace(t[k+1:])
	} else {
		k := strings.IndexAny(t, " \t\n")
		if k < 0 {
			k = len(t)
		}
		dest, t = t[:k], strings.TrimSpace(t[k:])
	}
	if t != "" {
		if len(t) < 2 || !(t[0] == '"' && t[len(t)-1] == '"' || t[0] == '\'' && t[len(t)-1] == '\'' || t[0] == '(' && t[len(t)-1] == ')') {
			return "", "", false
		}
		title = t[1 : len(t)-1]
	}
	return unescapeBackslashes(dest), unescapeBackslashes(title), true
}

func unescapeBackslashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// plainAlt is an image's alt text: its Markdown without the markup.
func plainAlt(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '*', '_', '`', '[', ']':
			return -1
		}
		return r
	}, unescapeBackslashes(s))
}

// emphasis renders *em*, **strong**, _em_ or __strong__ opening at i and
// returns the index after it, or 0 when it is not one.
func (in *inline) emphasis(i int) int {
	s := in.s
	c := s[i]
	delim := s[i : i+1]
	if i+1 < len(s) && s[i+1] == c {
		delim = s[i : i+2]
	}
	after := i + len(delim)
	// An opener is followed by text; an underscore is not inside a word
	// (snake_case stays as it is).
	if after >= len(s) || isSpace(s[after]) || s[after] == c {
		return 0
	}
	if c == '_' && i > 0 && isWordByte(s[i-1]) {
		return 0
	}
	if in.noClose[delim] {
		return 0
	}
	from := after
	for {
		k := strings.Index(s[from:], delim)
		if k < 0 {
			in.noClose[delim] = true
			return 0
		}
		at := from + k
		end := at + len(delim)
		// A closer follows text and, for underscores, ends a word; a
		// single delimiter is not half of a double one.
		ok := !isSpace(s[at-1]) && at > after
		if len(delim) == 1 && end < len(s) && s[end] == c {
			ok = false
			end++
			for end < len(s) && s[end] == c {
				end++
			}
		}
		if c == '_' && end < len(s) && isWordByte(s[end]) {
			ok = false
		}
		if !ok {
			from = max(end, at+1)
			continue
		}
		tag := "em"
		if len(delim) == 2 {
			tag = "strong"
		}
		in.flushText(i)
		in.b.WriteString("<" + tag + ">")
		in.sub(s[after:at], false)
		in.b.WriteString("</" + tag + ">")
		in.textStart = end
		return end
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
