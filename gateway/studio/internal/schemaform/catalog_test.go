package schemaform

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const clientID = "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"

// Every action the catalog declares gets a form of real controls: none
// falls back to JSON, and the action's own name is filled in, not asked.
func TestEveryCatalogActionBuilds(t *testing.T) {
	for _, a := range catalogActions(t) {
		f, err := Build(a.InputSchema, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		var props map[string]any
		if err := json.Unmarshal(a.InputSchema, &props); err != nil {
			t.Fatal(err)
		}
		if want := len(props["properties"].(map[string]any)) - 1; len(f.Fields) != want {
			t.Errorf("%s: %d fields, want %d (every property but action)", a.Name, len(f.Fields), want)
		}
		if f.Title != a.Name {
			t.Errorf("%s: form title %q", a.Name, f.Title)
		}
		for _, fd := range f.Fields {
			if fd.Name == "action" {
				t.Errorf("%s: the action's name is a field to fill", a.Name)
			}
			// generate_report.period is a name or a {"from", "to"} object
			// (oneOf), which the form shows as a JSON field: the one
			// catalog field it cannot do better for yet.
			if fd.Kind == KindJSON && (a.Name != "generate_report" || fd.Name != "period") {
				t.Errorf("%s.%s: falls back to JSON (%s)", a.Name, fd.Name, fd.Fallback)
			}
			if fd.Label == "" || fd.Help == "" || fd.ID == "" {
				t.Errorf("%s.%s: label %q, help %q, id %q", a.Name, fd.Name, fd.Label, fd.Help, fd.ID)
			}
		}
	}
}

// The controls of the catalog's fields, as a person sees them.
func TestCatalogFieldsAsControls(t *testing.T) {
	field := func(action, name string) Field {
		t.Helper()
		f, err := Build(catalogAction1(t, action).InputSchema, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range f.Fields {
			if fd.Name == name {
				return fd
			}
		}
		t.Fatalf("%s has no field %s", action, name)
		return Field{}
	}
	cases := []struct {
		action, name string
		check        func(Field) bool
	}{
		{"seo_audit", "url", func(f Field) bool {
			return f.Kind == KindURL && f.InputType == "url" && f.Required && f.MaxLength == "2048" && f.Label == "URL"
		}},
		{"run_llm_visibility", "competitors", func(f Field) bool {
			return f.Kind == KindList && !f.Required && f.Hint == "One per line, at most 10 lines, each at most 100 characters."
		}},
		{"run_llm_visibility", "prompt", func(f Field) bool { return f.Kind == KindTextarea && f.MaxLength == "2000" }},
		{"run_llm_visibility", "brand_name", func(f Field) bool { return f.Kind == KindText && f.Label == "Brand name" }},
		{"generate_topical_map", "depth", func(f Field) bool {
			return f.Kind == KindInteger && f.Min == "1" && f.Max == "3" && f.Step == "1" && f.Value == "2" && f.Hint == "A whole number from 1 to 3."
		}},
		{"run_grid_search", "lat", func(f Field) bool {
			return f.Kind == KindNumber && f.Min == "-85" && f.Max == "85" && f.Step == "any" && f.Required
		}},
		{"run_grid_search", "radius", func(f Field) bool { return f.Value == "5" && f.Min == "0.5" }},
		{"generate_blog", "tone", func(f Field) bool {
			// Optional with a default: the default is chosen, and no
			// empty choice is offered (it would mean the default).
			return f.Kind == KindSelect && len(f.Options) == 5 && f.Options[0].Selected && f.Options[0].Value == "professional"
		}},
		{"generate_gbp_post", "cta", func(f Field) bool {
			return f.Kind == KindSelect && f.Options[0].Value == "" && f.Options[0].Selected && f.Label == "CTA"
		}},
		{"generate_outreach_email", "prospectUrl", func(f Field) bool { return f.Label == "Prospect URL" && f.ID == "sf-prospectUrl" }},
		{"send_prospect_email", "to", func(f Field) bool { return f.Kind == KindEmail && f.InputType == "email" }},
		{"send_prospect_email", "html", func(f Field) bool { return f.Kind == KindTextarea && f.Label == "HTML" }},
		{"score_call", "transcript", func(f Field) bool { return f.Kind == KindTextarea && f.MaxLength == "200000" }},
		{"deploy_blog", "post_id", func(f Field) bool { return f.Kind == KindText && strings.Contains(f.Hint, "123e4567-") }},
		{"fetch_backlinks", "client_id", func(f Field) bool { return f.Label == "Client ID" && f.Required }},
	}
	for _, c := range cases {
		if f := field(c.action, c.name); !c.check(f) {
			t.Errorf("%s.%s: %+v", c.action, c.name, f)
		}
	}
}

// A new form posted as it is asks only for what is required and has no
// default; nothing else is in error.
func TestNewFormAsksOnlyForTheRequired(t *testing.T) {
	for _, a := range catalogActions(t) {
		f, _ := Build(a.InputSchema, nil, nil)
		_, errs := Parse(a.InputSchema, submit(t, render(t, f)))
		var want []string
		var s struct {
			Required   []string                  `json:"required"`
			Properties map[string]map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(a.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		for _, r := range s.Required {
			if _, def := s.Properties[r]["default"]; r != "action" && !def {
				want = append(want, r)
			}
		}
		got := slices.Sorted(maps.Keys(errs))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: errors for %v, want %v: %v", a.Name, got, want, errs)
		}
		for k, msg := range errs {
			if !strings.Contains(msg, ": required: ") {
				t.Errorf("%s.%s: %q does not say it is required", a.Name, k, msg)
			}
		}
	}
}

// The new form with the required fields filled in (the catalog's example
// values, which it checks its validation accepts) posts the input the
// action expects: the example, plus the defaults the form showed. The
// schema's validator accepts it.
func TestNewFormFilledInIsValidInput(t *testing.T) {
	for _, a := range catalogActions(t) {
		f, _ := Build(a.InputSchema, nil, nil)
		form := submit(t, render(t, f))
		for k, v := range a.Example {
			if k == "action" {
				continue
			}
			form.Set(k, lines(v))
		}
		in, errs := Parse(a.InputSchema, form)
		if len(errs) > 0 {
			t.Errorf("%s: %v", a.Name, errs)
			continue
		}
		if err := validator(t, a.InputSchema).Validate(asJSON(t, in)); err != nil {
			t.Errorf("%s: the schema refuses %v: %v", a.Name, in, err)
		}
		for k, v := range a.Example {
			if !sameJSON(t, in[k], v) {
				t.Errorf("%s.%s: %#v, want %#v", a.Name, k, in[k], v)
			}
		}
	}
}

// A previous input (the catalog's example, with the defaults it leaves
// out) shown in the form and posted untouched comes back the same, typed
// as the action takes it: numbers as numbers, lists as arrays.
func TestPreviousInputRoundTrips(t *testing.T) {
	for _, a := range catalogActions(t) {
		f, err := Build(a.InputSchema, a.Example, nil)
		if err != nil {
			t.Fatal(err)
		}
		in, errs := Parse(a.InputSchema, submit(t, render(t, f)))
		if len(errs) > 0 {
			t.Errorf("%s: %v", a.Name, errs)
			continue
		}
		if !sameJSON(t, in, a.Example) {
			t.Errorf("%s: posted back as\n%v\nwant\n%v", a.Name, in, a.Example)
		}
		if err := validator(t, a.InputSchema).Validate(asJSON(t, in)); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
	}
}

// What the schema refuses, Parse refuses, in words that say what is
// allowed and what was given.
func TestParseRefusesWhatTheSchemaRefuses(t *testing.T) {
	long := strings.Repeat("a", 101)
	cases := []struct {
		action string
		set    map[string]string
		field  string
		want   string
		// asJSON is the value as a JSON client would send it, which the
		// schema's validator must refuse too; nil when there is none (a
		// word where a number goes).
		asJSON any
	}{
		{"run_llm_visibility", map[string]string{"competitors": strings.Repeat("Brand\n", 12)}, "competitors",
			"Competitors: at most 10 lines; you gave 12", slices.Repeat([]any{"Brand"}, 12)},
		{"run_llm_visibility", map[string]string{"competitors": "Roto-Rooter\n\n" + long}, "competitors",
			"Competitors: line 3: at most 100 characters; you gave 101", []any{"Roto-Rooter", long}},
		{"generate_topical_map", map[string]string{"depth": "5"}, "depth",
			"Depth: a whole number from 1 to 3; you gave \"5\"", 5.0},
		{"generate_topical_map", map[string]string{"depth": "1.5"}, "depth",
			"Depth: a whole number from 1 to 3; you gave \"1.5\"", 1.5},
		{"run_grid_search", map[string]string{"lat": "north"}, "lat",
			"Latitude: a number from -85 to 85; you gave \"north\"", nil},
		{"run_grid_search", map[string]string{"radius": "0.1"}, "radius",
			"Radius: a number from 0.5 to 50; you gave \"0.1\"", 0.1},
		{"seo_audit", map[string]string{"url": "example.com/page"}, "url",
			"URL: a full web address starting with http:// or https://, at most 2048 characters; you gave \"example.com/page\"", "example.com/page"},
		{"seo_audit", map[string]string{"url": "ftp://example.com/page"}, "url",
			"URL: a full web address starting with http:// or https://", "ftp://example.com/page"},
		{"seo_audit", map[string]string{"url": "https://ana:secret@example.com/"}, "url",
			"URL: a full web address starting with http:// or https://, at most 2048 characters; the URL must not contain a user name or password (user:password@); remove them", nil},
		{"index_url", map[string]string{"url": "https:///blog"}, "url",
			"URL: a full web address starting with http:// or https://, at most 2048 characters; the URL has no host; write it as https://host/path", nil},
		{"generate_blog", map[string]string{"keyword": long}, "keyword",
			"Keyword: at most 100 characters; you gave 101", long},
		{"generate_blog", map[string]string{"tone": "sarcastic"}, "tone",
			"Tone: one of: professional, friendly, casual, authoritative, playful; you gave \"sarcastic\"", "sarcastic"},
		{"generate_blog", map[string]string{"keyword": "leaking\ttap"}, "keyword",
			"Keyword: one line, without tabs or line breaks", "leaking\ttap"},
		{"send_prospect_email", map[string]string{"to": "editor at example.org"}, "to",
			"To: one email address, such as name@example.com (no name around it), at most 254 characters; you gave \"editor at example.org\"", "editor at example.org"},
		{"seo_audit", map[string]string{"client_id": "acme"}, "client_id",
			"Client ID: an ID such as 123e4567-e89b-12d3-a456-426614174000; you gave \"acme\"", "acme"},
		{"generate_blog", map[string]string{"keyword": "   "}, "keyword",
			"Keyword: required: one line of text of at most 100 characters", nil},
	}
	for _, c := range cases {
		a := catalogAction1(t, c.action)
		f, _ := Build(a.InputSchema, a.Example, nil)
		form := submit(t, render(t, f))
		for k, v := range c.set {
			form.Set(k, v)
		}
		_, errs := Parse(a.InputSchema, form)
		if !strings.HasPrefix(errs[c.field], c.want) {
			t.Errorf("%s.%s: %q, want %q", c.action, c.field, errs[c.field], c.want)
		}
		if len(errs) != 1 {
			t.Errorf("%s: errors beyond %s: %v", c.action, c.field, errs)
		}
		if c.asJSON != nil {
			body := maps.Clone(a.Example)
			body[c.field] = c.asJSON
			if validator(t, a.InputSchema).Validate(asJSON(t, body)) == nil {
				t.Errorf("%s.%s: the schema accepts %v, which the form refuses", c.action, c.field, c.asJSON)
			}
		}
	}
}

// Lists and free text are read as a person types them: a list's lines
// trimmed and blank ones skipped, a textarea's CRLF line breaks as LF,
// and an optional field left empty is left out.
func TestParseReadsAsTyped(t *testing.T) {
	a := catalogAction1(t, "run_llm_visibility")
	form := url.Values{
		"client_id":   {" " + clientID + " "},
		"prompt":      {"Who fixes boilers\r\nin Leeds?"},
		"brand_name":  {"  Rye Plumbing "},
		"competitors": {"\r\n  Roto-Rooter  \r\n\r\nMr. Rooter\r\n"},
	}
	in, errs := Parse(a.InputSchema, form)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]any{"action": "run_llm_visibility", "client_id": clientID, "prompt": "Who fixes boilers\nin Leeds?",
		"brand_name": "Rye Plumbing", "competitors": []any{"Roto-Rooter", "Mr. Rooter"}}
	if !sameJSON(t, in, want) {
		t.Errorf("got %v, want %v", in, want)
	}
	form.Set("competitors", "\r\n \r\n")
	in, errs = Parse(a.InputSchema, form)
	if _, ok := in["competitors"]; ok || len(errs) > 0 {
		t.Errorf("a list of blank lines: %v %v; want it left out", in, errs)
	}
	// Posted names the schema does not declare are not sent on: the
	// action refuses fields it does not take.
	form.Set("csrf_token", "x")
	form.Set("action", "delete_everything")
	in, _ = Parse(a.InputSchema, form)
	if _, ok := in["csrf_token"]; ok || in["action"] != "run_llm_visibility" {
		t.Errorf("posted extras reached the input: %v", in)
	}
}
