package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// compile compiles an action's input schema with an independent JSON
// Schema 2020-12 validator, formats asserted, as a client would use it.
func compile(t *testing.T, a *action.Action) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(InputSchema(a))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	url := "https://atrium.example/actions/" + a.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: the input schema does not compile: %v", a.Name, err)
	}
	return s
}

// asJSON is body as a JSON decoder gives it, which is what both
// validation and a schema validator see.
func asJSON(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExamplesAreValidRequests checks that each action declares an
// example, that validation accepts it and that its input schema does too:
// the OpenAPI document shows these examples.
func TestExamplesAreValidRequests(t *testing.T) {
	for _, a := range All() {
		if a.Example == nil {
			t.Errorf("%s declares no example", a.Name)
			continue
		}
		if a.TypicalSeconds <= 0 {
			t.Errorf("%s declares no typical duration", a.Name)
		}
		b := asJSON(t, withAction(a.Name, a.Example))
		if _, err := ParseRequest(b, &netguard.Guard{}); err != nil {
			t.Errorf("%s: validation refuses the example %v: %v", a.Name, b, err)
		}
		if err := compile(t, a).Validate(b); err != nil {
			t.Errorf("%s: the input schema refuses the example %v: %v", a.Name, b, err)
		}
	}
}

func withAction(name string, fields map[string]any) map[string]any {
	b := maps.Clone(fields)
	b["action"], b["client_id"] = name, client
	return b
}

// TestInputSchemaRefusesWhatValidationRefuses makes, from each field's
// declaration, values validation refuses (a wrong type, one past each
// bound, a value outside the enumeration, a missing required field, a
// field the action does not take) and checks that the schema refuses each
// too, so that a client that validates against the schema learns of a
// mistake before sending it. Each case starts from the action's valid
// example.
func TestInputSchemaRefusesWhatValidationRefuses(t *testing.T) {
	for _, a := range All() {
		s := compile(t, a)
		check := func(what string, b map[string]any) {
			t.Helper()
			b = asJSON(t, b)
			if _, err := ParseRequest(b, &netguard.Guard{}); err == nil {
				t.Fatalf("%s %s: validation accepts %v; the case is wrong", a.Name, what, b)
			}
			if err := s.Validate(b); err == nil {
				t.Errorf("%s %s: validation refuses %v but the input schema accepts it", a.Name, what, b)
			}
		}
		with := func(field string, v any) map[string]any {
			b := withAction(a.Name, a.Example)
			b[field] = v
			return b
		}
		check("unknown field", with("colour", "blue"))
		check("unknown action", with("action", "make_coffee"))
		for _, f := range a.Fields {
			if f.Required {
				b := withAction(a.Name, a.Example)
				delete(b, f.Name)
				check(f.Name+" missing", b)
			}
			for what, v := range invalidValues(f) {
				check(f.Name+" "+what, with(f.Name, v))
			}
		}
	}
}

// invalidValues are values of f that validation refuses, by what f
// declares.
func invalidValues(f action.Field) map[string]any {
	out := map[string]any{"of the wrong type": map[string]any{"nested": true}}
	if f.Type == action.TArray {
		out["with an item of the wrong type"] = []any{7}
		if f.MaxItems > 0 {
			items := make([]any, f.MaxItems+1)
			for i := range items {
				items[i] = fmt.Sprintf("item %d", i)
			}
			out["with too many items"] = items
		}
		if f.MaxLength > 0 {
			out["with a too long item"] = []any{strings.Repeat("a", f.MaxLength+1)}
		}
		return out
	}
	switch {
	case len(f.Enum) > 0:
		out["outside its values"] = "none-of-these"
	case f.Type == action.TInteger || f.Type == action.TNumber:
		out["as a string"] = "12"
		if f.Min != nil {
			out["under its minimum"] = *f.Min - 1
		}
		if f.Max != nil {
			out["over its maximum"] = *f.Max + 1
		}
		if f.Type == action.TInteger {
			out["with a fraction"] = 1.5
		}
	case f.Type == action.TString:
		out["as a number"] = 12.0
		switch f.Format {
		case action.FormatURL:
			out["not a URL"] = "example.com/page"
			out["not http"] = "ftp://example.com/file"
		case action.FormatEmail:
			out["not an address"] = "ana at example.com"
		case action.FormatUUID:
			out["not a UUID"] = "post-1"
		}
		if f.MaxLength > 0 && f.Format != action.FormatUUID {
			long := strings.Repeat("a", f.MaxLength+1)
			if f.Format == action.FormatURL {
				long = "https://example.com/" + long
			}
			if f.Format == action.FormatEmail {
				long = long + "@example.com"
			}
			out["too long"] = long
		}
		if !f.Multiline && f.Format == "" {
			out["on two lines"] = "first line\nsecond line"
		}
	}
	return out
}
