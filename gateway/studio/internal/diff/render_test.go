package diff

import (
	"strings"
	"testing"
)

func TestHTMLSaysWhatChangedInWordsNotOnlyColour(t *testing.T) {
	f := Fields(map[string]any{"title": "Rye <script>alert(1)</script>"}, map[string]any{"title": "Spelt <script>alert(1)</script>"}, nil)[0]
	out := string(f.HTML())
	for _, want := range []string{
		`<td class="diff-del"><span class="diff-marker" aria-hidden="true">−</span><span class="diff-sr">removed: </span>`,
		`<td class="diff-add"><span class="diff-marker" aria-hidden="true">+</span><span class="diff-sr">added: </span>`,
		`<del>Rye</del>`, `<ins>Spelt</ins>`,
		`&lt;script&gt;alert(1)&lt;/script&gt;`,
		`<caption class="diff-sr">title: changed</caption>`,
		`<th scope="col">Before</th><th scope="col">After</th>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("HTML lacks %s\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script>") {
		t.Errorf("a value's markup reached the page unescaped: %s", out)
	}
}

func TestHTMLOfFieldsSetOnOneSideOnly(t *testing.T) {
	d := Fields(map[string]any{"old": "x"}, map[string]any{"new": "y"}, nil)
	for _, f := range d {
		out := string(f.HTML())
		if !strings.Contains(out, `<td class="diff-empty">not set</td>`) {
			t.Errorf("%s: the missing side does not say so: %s", f.Key, out)
		}
	}
}

func TestRowsFaceReplacedLinesAndShareKeptOnes(t *testing.T) {
	f := Fields(map[string]any{"b": "a\nb\nc\nd"}, map[string]any{"b": "a\nB\nB2\nd"}, nil)[0]
	var got []string
	for _, r := range f.Rows() {
		cell := func(l *Line) string {
			if l == nil {
				return "-"
			}
			return l.Text
		}
		got = append(got, cell(r.Before)+"|"+cell(r.After))
	}
	want := []string{"a|a", "b|B", "c|B2", "d|d"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rows = %v, want %v", got, want)
	}

	f = Fields(map[string]any{"b": "a\nb"}, map[string]any{"b": "a\nb\nc\nd"}, nil)[0]
	got = got[:0]
	for _, r := range f.Rows() {
		if r.Before == nil {
			got = append(got, "-|"+r.After.Text)
		} else {
			got = append(got, r.Before.Text+"|"+r.After.Text)
		}
	}
	if strings.Join(got, " ") != "a|a b|b -|c -|d" {
		t.Errorf("rows = %v", got)
	}
}

func TestCSSHasTheClassesTheMarkupUses(t *testing.T) {
	for _, class := range []string{".diff ", ".diff-add", ".diff-del", ".diff-empty", ".diff-marker", ".diff-sr", ".diff-too-long"} {
		if !strings.Contains(CSS, class) {
			t.Errorf("CSS has no %s rule", class)
		}
	}
}
