package schemaform

import (
	"encoding/json"
	"maps"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// everything is a schema with every kind of control the form has, and
// every bound it checks, beside the catalog's.
const everything = `{"type":"object","required":["title","count"],"properties":{
	"title":{"type":"string","minLength":2,"maxLength":20,"pattern":"^[^\\x00-\\x1F\\x7F]*$"},
	"count":{"type":"integer","minimum":-5,"maximum":500,"multipleOf":5},
	"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
	"site":{"type":"string","format":"uri","maxLength":100},
	"mail":{"type":"string","format":"email"},
	"id":{"type":"string","format":"uuid"},
	"day":{"type":"string","format":"date"},
	"notes":{"type":"string","maxLength":1000},
	"on":{"type":"boolean","default":true},
	"tone":{"type":"string","enum":["a","b"]},
	"level":{"type":"integer","enum":[1,2,3]},
	"tags":{"type":"array","items":{"type":"string","maxLength":10},"minItems":2,"maxItems":5,"uniqueItems":true},
	"scores":{"type":"array","items":{"type":"number","minimum":0}},
	"picks":{"type":"array","items":{"type":"string","enum":["x","y","z"]}}}}`

// FuzzParse posts any form to every catalog schema and to everything.
// Parse never panics; the form it refuses shows again (with markup in
// the values kept as text); the input it accepts is valid by the schema's
// own validator and comes back the same through the rendered form.
func FuzzParse(f *testing.F) {
	actions := catalogActions(f)
	schemas := [][]byte{[]byte(everything)}
	for _, a := range actions {
		schemas = append(schemas, a.InputSchema)
	}
	validators := make([]interface{ Validate(any) error }, len(schemas))
	for i, s := range schemas {
		validators[i] = validator(f, s)
	}
	for i, a := range actions {
		form := url.Values{}
		for k, v := range a.Example {
			form.Set(k, lines(v))
		}
		f.Add(uint8(i+1), form.Encode())
	}
	f.Add(uint8(0), "title=ab&count=10&ratio=0.5&site=https://x.example/&mail=a@b.example&id=0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b&day=2026-03-01&notes=a%0D%0Ab&on=true&tone=a&level=2&tags=p%0Aq&scores=1%0A2.5&picks=x&picks=z")
	f.Add(uint8(0), "title=%3Cscript%3E&count=1e3&tags=a%0Aa&picks=w&site=javascript:x")
	f.Add(uint8(3), "client_id=%00&url=http://[::1&competitors=%FF")
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		i := int(which) % len(schemas)
		schema := schemas[i]
		form, _ := url.ParseQuery(body)
		in, errs := Parse(schema, form)
		if len(errs) > 0 {
			fm, err := Build(schema, Posted(form), errs)
			if err != nil {
				t.Fatal(err)
			}
			noMarkup(t, render(t, fm))
			return
		}
		if err := validators[i].Validate(asJSON(t, in)); err != nil {
			b, _ := json.Marshal(in)
			t.Fatalf("Parse accepted %s, which the schema refuses: %v", b, err)
		}
		fm, err := Build(schema, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := render(t, fm)
		noMarkup(t, out)
		// Build shows an absent optional field's default, which the
		// action applies to it anyway: it comes back as that default.
		again, errs := Parse(schema, submit(t, out))
		if len(errs) > 0 || !sameJSON(t, again, withDefaults(t, schema, in)) {
			t.Fatalf("the accepted input did not come back through the form:\n%v\n%v\n%v", in, again, errs)
		}
	})
}

// noMarkup checks that a rendered form holds no element or handler but
// the template's own.
func noMarkup(t *testing.T, out string) {
	t.Helper()
	walk(parseHTML(t, out), func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.DataAtom {
		case atom.Html, atom.Head, atom.Body, atom.Form, atom.Div, atom.Fieldset, atom.Legend, atom.Label, atom.Span,
			atom.P, atom.Input, atom.Select, atom.Option, atom.Textarea:
		default:
			t.Fatalf("<%s> in the rendered form:\n%s", n.Data, out)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") || a.Key == "style" {
				t.Fatalf("%s=%q in the rendered form", a.Key, a.Val)
			}
		}
	})
}

// FuzzBuild reads any schema: Build and Parse never panic, and what Build
// makes renders.
func FuzzBuild(f *testing.F) {
	f.Add([]byte(everything), "title=ab&count=5")
	for _, a := range catalogActions(f)[:4] {
		f.Add([]byte(a.InputSchema), "url=https://example.com/")
	}
	f.Add([]byte(`{"properties":{"a":{"type":"array","items":{"enum":[1,"x"]}},"b":{"enum":[]},"c":{"minLength":1e300}}}`), "a=1")
	f.Add([]byte(`{"properties":{"a":{"type":"string","pattern":"(?=x)","default":5},"a":{}}}`), "a=x")
	f.Fuzz(func(t *testing.T, schema []byte, body string) {
		form, _ := url.ParseQuery(body)
		_, errs := Parse(schema, form)
		fm, err := Build(schema, Posted(form), errs)
		if err != nil {
			if errs[""] == "" {
				t.Fatalf("Build refused the schema (%v) that Parse read", err)
			}
			return
		}
		render(t, fm)
	})
}

// withDefaults is in with the schema's default for each property it
// leaves out.
func withDefaults(t *testing.T, schema []byte, in map[string]any) map[string]any {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	out := maps.Clone(in)
	for name, p := range s.Properties {
		if def, ok := p["default"]; ok {
			if _, given := out[name]; !given {
				out[name] = def
			}
		}
	}
	return out
}
