package schemaform

import (
	"net/url"
	"strings"
	"testing"
)

// A property the form cannot show as a control is a JSON textarea: the
// rest of the form is unchanged, valid JSON is sent as it is, and invalid
// JSON is refused saying so.
func TestUnsupportedPropertiesFallBackToJSON(t *testing.T) {
	schema := []byte(`{"type":"object","required":["filters"],"properties":{
		"filters":{"type":"object","properties":{"min":{"type":"number"}},"description":"Which rows."},
		"either":{"oneOf":[{"type":"string"},{"type":"number"}]},
		"maybe":{"type":["string","null"]},
		"rows":{"type":"array","items":{"type":"object"}},
		"grid":{"type":"array","items":{"type":"array","items":{"type":"string"}}},
		"ref":{"$ref":"#/$defs/x"},
		"anything":true,
		"weird_len":{"type":"string","maxLength":"ten"},
		"name":{"type":"string","maxLength":50}}}`)
	f, err := Build(schema, map[string]any{"filters": map[string]any{"min": 2.0}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]Field{}
	for _, fd := range f.Fields {
		kinds[fd.Name] = fd
	}
	for _, n := range []string{"filters", "either", "maybe", "rows", "grid", "ref", "anything", "weird_len"} {
		if kinds[n].Kind != KindJSON || kinds[n].Fallback == "" {
			t.Errorf("%s: kind %s, fallback %q; want a JSON textarea saying why", n, kinds[n].Kind, kinds[n].Fallback)
		}
	}
	if kinds["name"].Kind != KindText {
		t.Errorf("name: %s; a supported property next to unsupported ones is still a control", kinds["name"].Kind)
	}
	if f.Fields[0].Name != "filters" || !strings.Contains(f.Fields[0].Value, `"min": 2`) {
		t.Errorf("filters: the previous value as JSON: %+v", f.Fields[0])
	}
	checkAccessible(t, "fallback", render(t, f), f)

	in, errs := Parse(schema, url.Values{"filters": {`{"min": 3}`}, "either": {"12"}, "maybe": {""}, "name": {"Rye"}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !sameJSON(t, in, map[string]any{"filters": map[string]any{"min": 3}, "either": 12, "name": "Rye"}) {
		t.Errorf("got %v", in)
	}
	_, errs = Parse(schema, url.Values{"filters": {`{min: 3}`}})
	if !strings.HasPrefix(errs["filters"], "Filters: this is not valid JSON (invalid character 'm' looking for beginning of object key string, at character 2); write it as JSON") {
		t.Errorf("invalid JSON: %q", errs["filters"])
	}
	_, errs = Parse(schema, url.Values{})
	if !strings.HasPrefix(errs["filters"], "Filters: required: a value written as JSON") {
		t.Errorf("missing JSON: %q", errs["filters"])
	}
}

// A schema that is not an object schema cannot be a form: Build says so,
// and Parse says so as an error of the whole form, without panicking.
func TestNotAnObjectSchema(t *testing.T) {
	for _, s := range []string{``, `null`, `[]`, `"x"`, `{"type":"string"}`, `{"properties":[]}`, `{"required":"a"}`, `{`} {
		if _, err := Build([]byte(s), nil, nil); err == nil {
			t.Errorf("Build(%q) did not fail", s)
		}
		in, errs := Parse([]byte(s), url.Values{"a": {"b"}})
		if len(in) != 0 || !strings.HasPrefix(errs[""], "This form cannot be read: ") {
			t.Errorf("Parse(%q): %v %v", s, in, errs)
		}
	}
	f, err := Build([]byte(`{"type":"object"}`), nil, nil)
	if err != nil || len(f.Fields) != 0 {
		t.Errorf("an object schema without properties: %v %v", f, err)
	}
}

// Checkboxes post true when ticked and false when not; an array of an
// enum is a group of checkboxes in a fieldset, each value at most once.
func TestCheckboxesAndChoices(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"notify":{"type":"boolean","description":"Email me when done."},
		"engines":{"type":"array","items":{"type":"string","enum":["google","bing","yandex"]},"maxItems":2,"default":["google"]}}}`)
	f, _ := Build(schema, nil, nil)
	out := render(t, f)
	checkAccessible(t, "choices", out, f)
	if !strings.Contains(out, "<legend>Engines</legend>") {
		t.Errorf("no legend for the group:\n%s", out)
	}
	posted := submit(t, out)
	in, errs := Parse(schema, posted)
	if len(errs) > 0 || !sameJSON(t, in, map[string]any{"notify": false, "engines": []any{"google"}}) {
		t.Errorf("defaults posted: %v %v", in, errs)
	}
	in, errs = Parse(schema, url.Values{"notify": {"true"}, "engines": {"bing", "google", "bing"}})
	if len(errs) > 0 || !sameJSON(t, in, map[string]any{"notify": true, "engines": []any{"bing", "google"}}) {
		t.Errorf("ticked: %v %v", in, errs)
	}
	_, errs = Parse(schema, url.Values{"engines": {"altavista"}})
	if errs["engines"] != `Engines: one of: google, bing, yandex; you gave "altavista"` {
		t.Errorf("an unknown choice: %q", errs["engines"])
	}
	_, errs = Parse(schema, url.Values{"engines": {"google", "bing", "yandex"}})
	if errs["engines"] != "Engines: at most 2 choices; you gave 3" {
		t.Errorf("too many choices: %q", errs["engines"])
	}
	f, _ = Build(schema, Posted(url.Values{"engines": {"bing", "yandex"}}), nil)
	if o := f.Fields[1].Options; o[0].Selected || !o[1].Selected || !o[2].Selected {
		t.Errorf("posted choices not shown: %+v", o)
	}
}

// A field is bounded before it is read: 64 KiB of text, or what its
// schema declares when that is longer (a call transcript); a list or JSON
// 1000 lines.
func TestBounds(t *testing.T) {
	a := catalogAction1(t, "run_llm_visibility")
	form := url.Values{"client_id": {clientID}, "prompt": {"Who?"}, "brand_name": {strings.Repeat("x", MaxFieldBytes+1)}}
	_, errs := Parse(a.InputSchema, form)
	if errs["brand_name"] != "Brand name: at most 64 KiB of text; you gave 65 KiB" {
		t.Errorf("a field past 64 KiB: %q", errs["brand_name"])
	}
	form.Set("brand_name", "Rye")
	form.Set("competitors", strings.Repeat("\n", MaxLines))
	_, errs = Parse(a.InputSchema, form)
	if errs["competitors"] != "Competitors: at most 1000 lines of text; you gave 1001" {
		t.Errorf("a list past 1000 lines: %q", errs["competitors"])
	}

	sc := catalogAction1(t, "score_call")
	transcript := strings.Repeat("Caller: my boiler is leaking.\nAgent: we can come today.\n", 3000) // 168,000 characters
	in, errs := Parse(sc.InputSchema, url.Values{"client_id": {clientID}, "transcript": {transcript}})
	if len(errs) > 0 || in["transcript"] != transcript {
		t.Errorf("a transcript within its declared 200,000 characters: %v", errs)
	}
	_, errs = Parse(sc.InputSchema, url.Values{"client_id": {clientID}, "transcript": {transcript + strings.Repeat("x", 40000)}})
	if errs["transcript"] != "Transcript: at most 200000 characters; you gave 208000" {
		t.Errorf("a transcript past its maxLength: %q", errs["transcript"])
	}
	_, errs = Parse(sc.InputSchema, url.Values{"client_id": {clientID}, "transcript": {strings.Repeat("x", MaxDeclaredBytes+1)}})
	if errs["transcript"] != "Transcript: at most 781 KiB of text; you gave 1025 KiB" {
		t.Errorf("a transcript past its byte bound: %q", errs["transcript"])
	}
}

// Labels are the title, or the name in words.
func TestLabels(t *testing.T) {
	for name, want := range map[string]string{"brand_name": "Brand name", "prospectUrl": "Prospect URL", "client_id": "Client ID",
		"body_points": "Body points", "HTMLBody": "Htmlbody", "x": "X", "__": "__", "lat": "Latitude", "center_lng": "Center longitude", "seo-score": "SEO score"} {
		if got := label(&prop{name: name}); got != want {
			t.Errorf("label(%q) = %q, want %q", name, got, want)
		}
	}
	if got := label(&prop{name: "lat", title: "Latitude"}); got != "Latitude" {
		t.Errorf("a title is the label: %q", got)
	}
}

// Numbers are read as people type them, and refused when they are not
// one: no hexadecimal, no infinity, no thousands separator.
func TestNumbers(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0,"multipleOf":0.5},"i":{"type":"integer"}}}`)
	for _, c := range []struct {
		n    string
		want any
		err  string
	}{
		{"2.5", 2.5, ""}, {" 10 ", 10.0, ""}, {"1e1", 10.0, ""}, {".5", 0.5, ""},
		{"0", nil, `N: a number, above 0, in steps of 0.5; you gave "0"`},
		{"0.3", nil, `N: a number, above 0, in steps of 0.5; you gave "0.3"`},
		{"0x10", nil, `N: a number, above 0, in steps of 0.5; you gave "0x10"`},
		{"Inf", nil, `N: a number, above 0, in steps of 0.5; you gave "Inf"`},
		{"1e999", nil, `N: a number, above 0, in steps of 0.5; you gave "1e999"`},
		{"1,5", nil, `N: a number, above 0, in steps of 0.5; you gave "1,5"`},
	} {
		in, errs := Parse(schema, url.Values{"n": {c.n}})
		if errs["n"] != c.err || c.err == "" && in["n"] != c.want {
			t.Errorf("%q: %v %q", c.n, in["n"], errs["n"])
		}
	}
	in, errs := Parse(schema, url.Values{"i": {"3.0"}})
	if in["i"] != 3.0 || len(errs) > 0 {
		t.Errorf("3.0 as an integer: %v %v", in, errs)
	}
}

// A required select left on its empty choice is refused, and shows again
// on the empty choice: a browser posts a select's first option when none
// is selected, which would choose for the person.
func TestRequiredSelectIsChosenOnPurpose(t *testing.T) {
	schema := []byte(`{"type":"object","required":["style"],"properties":{"style":{"type":"string","enum":["gradient","solid"]}}}`)
	f, _ := Build(schema, nil, nil)
	posted := submit(t, render(t, f))
	_, errs := Parse(schema, posted)
	if errs["style"] != "Style: required: one of: gradient, solid" {
		t.Fatalf("the empty choice posted: %q", errs["style"])
	}
	f, _ = Build(schema, Posted(posted), errs)
	if o := f.Fields[0].Options; len(o) != 3 || o[0].Value != "" || !o[0].Selected || o[0].Label != "Choose one…" {
		t.Errorf("shown again as %+v", o)
	}
	if again := submit(t, render(t, f)); again.Get("style") != "" {
		t.Errorf("the form shown again posts %q", again.Get("style"))
	}
	f, _ = Build(schema, map[string]any{"style": "solid"}, nil)
	if o := f.Fields[0].Options; len(o) != 2 || !o[1].Selected {
		t.Errorf("with a value chosen: %+v", o)
	}
}
