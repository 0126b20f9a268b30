package diff

import (
	_ "embed"
	"html"
	"html/template"
	"strings"
)

// CSS styles the markup of FieldDiff.HTML: classes diff, diff-add,
// diff-del, diff-empty, diff-marker, diff-sr (visually hidden) and
// diff-too-long. The console serves it with its other styles.
//
//go:embed diff.css
var CSS string

// TooLongText is what the page says for a field too long to compare.
const TooLongText = "changed (too long to compare)"

// Row is one row of the side-by-side table: a line of the earlier value,
// of the later one, or of both. A nil side is an empty cell.
type Row struct {
	Before, After *Line
}

// Rows pairs the lines of f for a side-by-side view: lines kept share a
// row, and a run of removed lines faces the run of added lines that
// replaced it.
func (f FieldDiff) Rows() []Row {
	b, a := f.Before, f.After
	var rows []Row
	i, j := 0, 0
	for i < len(b) || j < len(a) {
		if i < len(b) && j < len(a) && b[i].Op == Same && a[j].Op == Same {
			rows = append(rows, Row{&b[i], &a[j]})
			i++
			j++
			continue
		}
		ri, aj := i, j
		for ri < len(b) && b[ri].Op != Same {
			ri++
		}
		for aj < len(a) && a[aj].Op != Same {
			aj++
		}
		if ri == i && aj == j {
			// Same lines left on one side only: not what Fields makes,
			// but show them rather than loop.
			if i < len(b) {
				rows = append(rows, Row{Before: &b[i]})
				i++
			} else {
				rows = append(rows, Row{After: &a[j]})
				j++
			}
			continue
		}
		for k := 0; k < max(ri-i, aj-j); k++ {
			var r Row
			if i+k < ri {
				r.Before = &b[i+k]
			}
			if j+k < aj {
				r.After = &a[j+k]
			}
			rows = append(rows, r)
		}
		i, j = ri, aj
	}
	return rows
}

// HTML renders f as a two-column table (earlier, later). Changed lines
// carry the class diff-del or diff-add, a "−" or "+" marker and a visually
// hidden "removed"/"added"; in a removed line facing an added one, the
// words that differ are in <del> and <ins>. A field too long to compare is
// a paragraph saying so. Every piece of text is escaped.
func (f FieldDiff) HTML() template.HTML {
	var b strings.Builder
	if f.TooLong {
		b.WriteString(`<p class="diff-too-long">` + TooLongText + `</p>`)
		return template.HTML(b.String()) //nolint:gosec // G203: constant text
	}
	b.WriteString(`<table class="diff"><caption class="diff-sr">`)
	b.WriteString(html.EscapeString(f.Key))
	if f.Changed {
		b.WriteString(": changed")
	} else {
		b.WriteString(": unchanged")
	}
	b.WriteString(`</caption><thead><tr><th scope="col">Before</th><th scope="col">After</th></tr></thead><tbody>`)
	if len(f.Before) == 0 && len(f.After) == 0 {
		b.WriteString(`<tr><td class="diff-empty">not set</td><td class="diff-empty">not set</td></tr>`)
	}
	for _, r := range f.Rows() {
		b.WriteString("<tr>")
		var bw, aw []Line
		if r.Before != nil && r.After != nil && r.Before.Op == Removed && r.After.Op == Added {
			bw, aw = Words(r.Before.Text, r.After.Text)
		}
		writeCell(&b, r.Before, bw, len(f.Before) == 0)
		writeCell(&b, r.After, aw, len(f.After) == 0)
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return template.HTML(b.String()) //nolint:gosec // G203: every text written through html.EscapeString
}

// writeCell writes one side of a row. words, when given, is the line cut
// into words with those that differ marked. absent says the field is not
// set on this side at all.
func writeCell(b *strings.Builder, l *Line, words []Line, absent bool) {
	if l == nil {
		if absent {
			b.WriteString(`<td class="diff-empty">not set</td>`)
		} else {
			b.WriteString(`<td class="diff-empty"></td>`)
		}
		return
	}
	switch l.Op {
	case Removed:
		b.WriteString(`<td class="diff-del"><span class="diff-marker" aria-hidden="true">−</span><span class="diff-sr">removed: </span>`)
	case Added:
		b.WriteString(`<td class="diff-add"><span class="diff-marker" aria-hidden="true">+</span><span class="diff-sr">added: </span>`)
	default:
		b.WriteString(`<td>`)
	}
	if words == nil {
		b.WriteString(html.EscapeString(l.Text))
	} else {
		writeWords(b, words)
	}
	b.WriteString("</td>")
}

// writeWords writes a line word by word, runs of changed words in one
// <del> or <ins>. A run of only spaces is not marked.
func writeWords(b *strings.Builder, words []Line) {
	for i := 0; i < len(words); {
		if words[i].Op == Same {
			b.WriteString(html.EscapeString(words[i].Text))
			i++
			continue
		}
		op := words[i].Op
		var run strings.Builder
		for i < len(words) && words[i].Op == op {
			run.WriteString(words[i].Text)
			i++
		}
		text := run.String()
		if strings.TrimSpace(text) == "" {
			b.WriteString(html.EscapeString(text))
			continue
		}
		tag := "del"
		if op == Added {
			tag = "ins"
		}
		b.WriteString("<" + tag + ">" + html.EscapeString(text) + "</" + tag + ">")
	}
}
