package studio

import (
	"html/template"
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestFieldControlsMatchTheTemplate: the controls written in Go are the
// markup the editor's template drew (testdata/editor-fields-template.html,
// the template they replace, html/template's escaping), for every field
// type, with and without errors, required or not, with hostile values:
// the same elements, attributes and text, whitespace aside.
func TestFieldControlsMatchTheTemplate(t *testing.T) {
	src, err := os.ReadFile("testdata/editor-fields-template.html")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template.Must(template.New("fields").Parse(string(src)))
	hostile := `"><script>alert('x')</script>&amp;`
	for _, withErrors := range []bool{false, true} {
		for _, required := range []bool{false, true} {
			for _, f := range postFields {
				f.Required = required
			}
			form := formValues(postFields, map[string]any{
				"title": hostile, "body": "<h2>Bread</h2><p>" + hostile + "</p>", "rating": 4.5, "views": 12.0, "featured": true,
				"publish_on": "2026-12-01", "edited_at": "2026-11-20T08:00:00Z", "contact": "ana@example.com", "source": "https://example.com/?a=1&b='2'",
				"category": "news", "tags": []any{"bread", "vegan"}, "extra": map[string]any{"a": hostile}, "author": "a1", "cover": "as1",
			})
			errs := map[string]string{}
			if withErrors {
				for _, f := range postFields {
					errs[f.GetKey()] = "wrong: " + hostile
				}
			}
			fields := controls(postFields, form, errs)
			for i := range fields {
				f := &fields[i]
				f.Writable = required
				f.AssetsURL = "/studio/a/ag%201/sites/s1/assets"
				f.ChoicesURL = "/studio/a/ag/sites/s1/collections/posts/choices?" + "current=a1&field=" + f.Key
				switch f.Type {
				case "reference":
					f.Options = []choice{{Value: "a1", Label: hostile, Selected: true}, {Value: `a"2`, Label: "Ana"}}
					f.More = withErrors
				case "asset":
					f.Assets = []assetChoice{{ID: "as1", Label: hostile, Thumb: "https://cdn.example.com/files/x.png", Selected: true},
						{ID: "as2", Label: "menu.pdf"}, {ID: "as3", Label: "evil", Thumb: "javascript:alert(1)"}}
				}
			}
			var want strings.Builder
			for _, f := range fields {
				if err := tmpl.ExecuteTemplate(&want, "field-control", f); err != nil {
					t.Fatal(err)
				}
			}
			got := string(fieldControlsHTML(fields))
			// html/template writes a refused URL as #ZgotmplZ; the Go
			// controls leave the image out.
			wantText := strings.ReplaceAll(want.String(), `<img src="#ZgotmplZ" alt="" loading="lazy" width="96" height="72">`, "")
			if g, w := normalized(t, got), normalized(t, wantText); g != w {
				t.Errorf("errors %v, required %v: the controls differ from the template's\n got: %s\nwant: %s", withErrors, required, g, w)
			}
			if strings.Contains(got, "<script>") {
				t.Fatal("a value was written unescaped")
			}
		}
	}
	for _, f := range postFields {
		f.Required = f.GetKey() == "title"
	}
}

var spaces = regexp.MustCompile(`\s+`)

// normalized is an HTML fragment as its tokens, each attribute and text
// decoded, whitespace collapsed: two writings of the same markup compare
// equal.
func normalized(t *testing.T, s string) string {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return b.String()
		}
		tok := z.Token()
		switch tok.Type {
		case html.TextToken:
			if txt := strings.TrimSpace(spaces.ReplaceAllString(tok.Data, " ")); txt != "" {
				b.WriteString("|" + txt)
			}
		default:
			b.WriteString("|" + tok.String())
		}
	}
}
