package schemaform

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// checkAccessible checks what a screen reader and the console's CSP need
// of a rendered form: every control has a unique id and a label for it
// (a checkbox group a fieldset with a legend); every id aria-describedby
// names is there; aria-invalid is set exactly where there is an error;
// there is no script, no style attribute and no event handler.
func checkAccessible(t *testing.T, name, fragment string, f Form) {
	t.Helper()
	doc := parseHTML(t, fragment)
	ids := map[string]int{}
	labels := map[string]bool{}
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if id, ok := attr(n, "id"); ok {
			ids[id]++
		}
		if n.DataAtom == atom.Label {
			if f, ok := attr(n, "for"); ok {
				labels[f] = true
			}
		}
		if n.DataAtom == atom.Script || n.DataAtom == atom.Style {
			t.Errorf("%s: a <%s> element", name, n.Data)
		}
		for _, a := range n.Attr {
			if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
				t.Errorf("%s: <%s %s=%q>", name, n.Data, a.Key, a.Val)
			}
		}
	})
	for id, n := range ids {
		if n > 1 {
			t.Errorf("%s: id %s used %d times", name, id, n)
		}
	}
	controls := 0
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.DataAtom {
		case atom.Input, atom.Select, atom.Textarea:
			controls++
			id, _ := attr(n, "id")
			if id == "" || !labels[id] {
				t.Errorf("%s: <%s name=%q> has no label", name, n.Data, id)
			}
		case atom.Fieldset:
			if n.FirstChild == nil || firstElement(n).DataAtom != atom.Legend {
				t.Errorf("%s: a fieldset without a legend first", name)
			}
		}
		if d, ok := attr(n, "aria-describedby"); ok {
			for _, id := range strings.Fields(d) {
				if ids[id] != 1 {
					t.Errorf("%s: aria-describedby names %s, which is not there", name, id)
				}
			}
		}
	})
	if controls == 0 && len(f.Fields) > 0 {
		t.Errorf("%s: no controls rendered", name)
	}
	for _, fd := range f.Fields {
		if fd.Kind == KindChoices {
			continue
		}
		ctl := byID(doc, fd.ID)
		if ctl == nil {
			t.Errorf("%s: no control for %s", name, fd.Name)
			continue
		}
		inv, _ := attr(ctl, "aria-invalid")
		if (inv == "true") != (fd.Error != "") {
			t.Errorf("%s.%s: aria-invalid %q with error %q", name, fd.Name, inv, fd.Error)
		}
		d, _ := attr(ctl, "aria-describedby")
		if fd.Error != "" && !strings.Contains(d, fd.ErrorID()) || fd.Help != "" && !strings.Contains(d, fd.HelpID()) {
			t.Errorf("%s.%s: aria-describedby %q leaves out its error or help", name, fd.Name, d)
		}
	}
}

func firstElement(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return &html.Node{}
}

func byID(doc *html.Node, id string) *html.Node {
	var found *html.Node
	walk(doc, func(n *html.Node) {
		if v, ok := attr(n, "id"); ok && v == id && found == nil {
			found = n
		}
	})
	return found
}

// Every catalog form is accessible, new and with an error on each field.
func TestCatalogFormsAreAccessible(t *testing.T) {
	for _, a := range catalogActions(t) {
		f, _ := Build(a.InputSchema, nil, nil)
		checkAccessible(t, a.Name, render(t, f), f)
		errs := map[string]string{}
		for _, fd := range f.Fields {
			errs[fd.Name] = fd.Label + ": wrong"
		}
		f, _ = Build(a.InputSchema, a.Example, errs)
		out := render(t, f)
		checkAccessible(t, a.Name+" with errors", out, f)
		for _, fd := range f.Fields {
			if !strings.Contains(out, fd.Label+": wrong") {
				t.Errorf("%s.%s: the error is not shown", a.Name, fd.Name)
			}
		}
	}
}

// A form Parse refused shows again as it was typed, each error by its
// field: nothing typed is lost, and an unticked checkbox stays unticked
// even where its default is ticked.
func TestRefusedFormShowsAgainAsTyped(t *testing.T) {
	schema := []byte(`{"type":"object","required":["keywords"],"properties":{
		"keywords":{"type":"array","items":{"type":"string","maxLength":5},"maxItems":2,"description":"One keyword a line."},
		"notify":{"type":"boolean","default":true,"description":"Email me when done."},
		"depth":{"type":"integer","minimum":1,"maximum":3,"default":2}}}`)
	form := url.Values{"keywords": {"plumber\r\nboiler\r\ntap"}, "depth": {"three"}}
	_, errs := Parse(schema, form)
	if errs["keywords"] != "Keywords: at most 2 lines; you gave 3" {
		t.Errorf("keywords: %q", errs["keywords"])
	}
	if errs["depth"] != `Depth: a whole number from 1 to 3; you gave "three"` {
		t.Errorf("depth: %q", errs["depth"])
	}
	f, err := Build(schema, Posted(form), errs)
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, f)
	checkAccessible(t, "refused", out, f)
	again := submit(t, out)
	if again.Get("keywords") != form.Get("keywords") || again.Get("depth") != "three" {
		t.Errorf("typed values lost: %v", again)
	}
	if again.Has("notify") {
		t.Errorf("the unticked checkbox shows ticked again")
	}
	if !strings.Contains(out, "Keywords: at most 2 lines; you gave 3") {
		t.Errorf("the error is not shown:\n%s", out)
	}
}

// Whatever a schema or a value holds is text on the page: no element,
// attribute or script can come of it, and a value comes back through the
// form exactly.
func TestEscaping(t *testing.T) {
	evil := `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	schema := []byte(`{"type":"object","title":"` + jsonEsc(evil) + `","properties":{
		"note":{"type":"string","maxLength":200,"title":"` + jsonEsc(evil) + `","description":"` + jsonEsc(evil) + `"},
		"body":{"type":"string","description":"</textarea><script>alert(3)</script>"},
		"choice":{"type":"string","enum":["` + jsonEsc(evil) + `","plain"]},
		"tags":{"type":"array","items":{"type":"string"}},
		"\"><b onclick=x>":{"type":"string","maxLength":10},
		"link":{"type":"string","format":"uri"}}}`)
	values := map[string]any{"note": evil, "body": "</textarea><script>alert(4)</script>\n", "choice": evil,
		"tags": []any{evil, "javascript:alert(5)"}, "link": "javascript:alert(6)"}
	f, err := Build(schema, values, map[string]string{"note": evil})
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, f)
	checkAccessible(t, "evil", out, f)
	if strings.Contains(out, "<script") || strings.Contains(out, "<img") || strings.Contains(out, "<b ") {
		t.Fatalf("markup from the schema or a value reached the page:\n%s", out)
	}
	in, errs := Parse(schema, submit(t, out))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]any{"note": evil, "body": "</textarea><script>alert(4)</script>\n", "choice": evil,
		"tags": []any{evil, "javascript:alert(5)"}, "link": "javascript:alert(6)"}
	if !sameJSON(t, in, want) {
		t.Errorf("the values did not come back:\n%v\nwant\n%v", in, want)
	}
}

func jsonEsc(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// Every class the template uses is styled by CSS, and CSS styles no class
// the template does not use: the two change together.
func TestCSSMatchesTheTemplate(t *testing.T) {
	classes := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, w := range strings.FieldsFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
		}) {
			if strings.HasPrefix(w, "sf-") && !strings.HasSuffix(w, "-") {
				out[w] = true
			}
		}
		return out
	}
	tpl, css := classes(Template()), classes(CSS)
	// sf-{{.Kind}}: the kinds styled on their own.
	for _, k := range []string{KindList, KindJSON} {
		tpl["sf-"+k] = true
	}
	for c := range tpl {
		if !css[c] {
			t.Errorf("the template's class %s has no style", c)
		}
	}
	for c := range css {
		if !tpl[c] {
			t.Errorf("CSS styles %s, which the template does not use", c)
		}
	}
}
