package schemaform

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// catalogPath is the actions catalog as the gateway holds it: generated
// from services/actions/internal/app/catalog (its InputSchema, the one
// ParseRequest validates by, and its Example) and kept equal to it by that
// package's TestOpenAPIActions. The catalog itself is internal to the
// actions module, so the gateway reads this copy, as discovery publishes
// it.
const catalogPath = "../../../openapi/catalog/actions.json"

type catalogAction struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"input_schema"`
	Example     map[string]any  `json:"example"`
}

func catalogActions(t testing.TB) []catalogAction {
	t.Helper()
	b, err := os.ReadFile(catalogPath)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Actions []catalogAction `json:"actions"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Actions) < 10 {
		t.Fatalf("%s lists %d actions; the catalog has more", catalogPath, len(c.Actions))
	}
	return c.Actions
}

func catalogAction1(t testing.TB, name string) catalogAction {
	t.Helper()
	for _, a := range catalogActions(t) {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("the catalog has no action %s", name)
	return catalogAction{}
}

// validator compiles schema with an independent JSON Schema 2020-12
// validator, formats asserted, as the catalog's own tests do
// (services/actions/internal/app/catalog/schema_test.go): they show it
// refuses what the catalog's validation refuses.
func validator(t testing.TB, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("https://atrium.example/input.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("https://atrium.example/input.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSON is v as a JSON decoder gives it, which is what the action sees.
func asJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameJSON(t testing.TB, got, want any) bool {
	t.Helper()
	return reflect.DeepEqual(asJSON(t, got), asJSON(t, want))
}

// render renders f with the package's template, as a page would.
func render(t testing.TB, f Form) string {
	t.Helper()
	tpl, err := AddTo(template.New("page"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tpl.ExecuteTemplate(&b, "schemaform", f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// parseHTML parses a rendered fragment as a browser would, in a form.
func parseHTML(t testing.TB, fragment string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader("<!DOCTYPE html><html><body><form>" + fragment + "</form></body></html>"))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

// submit is what a browser posts for the rendered form, untouched: the
// successful controls by the HTML rules (a ticked checkbox, a select's
// selected option or its first, a textarea's text with its line breaks
// as CRLF).
func submit(t testing.TB, fragment string) url.Values {
	t.Helper()
	out := url.Values{}
	walk(parseHTML(t, fragment), func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		name, named := attr(n, "name")
		if !named {
			return
		}
		switch n.DataAtom {
		case atom.Input:
			typ, _ := attr(n, "type")
			v, _ := attr(n, "value")
			if typ == "checkbox" {
				if _, on := attr(n, "checked"); on {
					out.Add(name, v)
				}
				return
			}
			out.Add(name, v)
		case atom.Textarea:
			v := strings.ReplaceAll(textOf(n), "\r\n", "\n")
			out.Add(name, strings.ReplaceAll(v, "\n", "\r\n"))
		case atom.Select:
			var first, chosen *html.Node
			walk(n, func(o *html.Node) {
				if o.DataAtom != atom.Option {
					return
				}
				if first == nil {
					first = o
				}
				if _, sel := attr(o, "selected"); sel && chosen == nil {
					chosen = o
				}
			})
			if chosen == nil {
				chosen = first
			}
			if chosen != nil {
				v, _ := attr(chosen, "value")
				out.Add(name, v)
			}
		}
	})
	return out
}
