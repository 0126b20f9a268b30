package app

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
)

func wantInvalid(t *testing.T, err error, words ...string) {
	t.Helper()
	if apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("got %v, want InvalidArgument mentioning %q", err, words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

func TestCheckValue(t *testing.T) {
	for _, tc := range []struct {
		f    Field
		ok   []any
		bad  []any
		want string
	}{
		{Field{Key: "t", Type: TypeText, MaxLength: 3}, []any{"", "abc", "a\tb", "日本語"}, []any{"abcd", 1, true, "a\x00b", "a\x07"}, "data.t"},
		// Text a store cannot hold is refused, whatever else the type allows.
		{Field{Key: "h", Type: TypeRichText}, []any{"<p>\x07</p>"}, []any{"<p>\x00</p>"}, "without NUL"},
		{Field{Key: "n", Type: TypeNumber}, []any{0.0, -1.5, 1e300}, []any{"1", true}, "must be a number"},
		{Field{Key: "i", Type: TypeInteger}, []any{0.0, -3.0, 9007199254740992.0}, []any{1.5, 9007199254740994.0, "2"}, "must be an integer"},
		{Field{Key: "b", Type: TypeBoolean}, []any{true, false}, []any{"true", 0.0}, "true or false"},
		{Field{Key: "d", Type: TypeDate}, []any{"2026-02-28", "2024-02-29"}, []any{"2026-02-29", "2026-2-1", "2026-02-28T00:00:00Z", 20260228.0}, "YYYY-MM-DD"},
		{Field{Key: "dt", Type: TypeDatetime}, []any{"2026-01-02T15:04:05Z", "2026-01-02T15:04:05.5+01:00"}, []any{"2026-01-02 15:04:05", "2026-01-02", 1.0}, "RFC 3339"},
		{Field{Key: "e", Type: TypeEmail}, []any{"ana@example.com"}, []any{"Ana <ana@example.com>", "ana", "ana@", 1.0, "josé@example.com", "bob@[127.0.0.1]"}, "email address"},
		{Field{Key: "u", Type: TypeURL}, []any{"https://a.example/x?y=1", "http://a.example"}, []any{"ftp://a.example", "a.example", "https://"}, "http or https URL"},
		{Field{Key: "s", Type: TypeSelect, Options: []string{"x", "y"}}, []any{"x"}, []any{"X", "z", []any{"x"}}, "one of: x, y"},
		{Field{Key: "m", Type: TypeMultiSelect, Options: []string{"x", "y"}}, []any{[]any{}, []any{"x", "y"}}, []any{"x", []any{"x", "x"}, []any{"z"}, []any{1.0}}, "distinct values from: x, y"},
		{Field{Key: "j", Type: TypeJSON}, []any{map[string]any{"a": []any{1.0}}, "s", 1.0, false}, []any{map[string]any{"a": "\x00"}}, "JSON value"},
		{Field{Key: "r", Type: TypeReference, Target: "authors"}, []any{"019a4b2c-3d4e-7f60-8a9b-000000000000"}, []any{"019a4b2c3d4e7f608a9b000000000000", "x", 1.0}, `item of collection "authors"`},
	} {
		for _, v := range tc.ok {
			if _, err := checkValue(tc.f, v); err != nil {
				t.Errorf("%s accepts %#v: %v", tc.f.Type, v, err)
			}
		}
		for _, v := range tc.bad {
			_, err := checkValue(tc.f, v)
			wantInvalid(t, err, "data."+tc.f.Key, tc.want)
		}
	}
	if got, _ := checkValue(Field{Key: "dt", Type: TypeDatetime}, "2026-01-02T15:04:05+02:00"); string(got) != `"2026-01-02T13:04:05Z"` {
		t.Fatalf("datetime stored as %s, want UTC", got)
	}
	if got, _ := checkValue(Field{Key: "r", Type: TypeReference, Target: "authors"}, "019A4B2C-3D4E-7F60-8A9B-000000000000"); string(got) != `"019a4b2c-3d4e-7f60-8a9b-000000000000"` {
		t.Fatalf("reference stored as %s, want the canonical lower case", got)
	}
}

func TestCheckData(t *testing.T) {
	c := Collection{Slug: "posts", Fields: []Field{{Key: "title", Type: TypeText, Required: true}, {Key: "body", Type: TypeText}}}
	_, err := checkData(c, map[string]any{"body": "x"}, true)
	wantInvalid(t, err, "data.title is required")
	_, err = checkData(c, map[string]any{"title": "x", "colour": "red"}, true)
	wantInvalid(t, err, "data.colour is not a field", "title, body")
	_, err = checkData(c, map[string]any{"title": nil}, false)
	wantInvalid(t, err, "data.title is required")
	// Required means present, not null and not blank, as everywhere.
	for _, blank := range []string{"", "  "} {
		_, err = checkData(c, map[string]any{"title": blank}, true)
		wantInvalid(t, err, "data.title is required: a string")
		_, err = checkData(c, map[string]any{"title": blank}, false)
		wantInvalid(t, err, "data.title is required: a string")
	}
	if ch, err := checkData(c, map[string]any{"title": "x", "body": ""}, true); err != nil || string(ch.set["body"]) != `""` {
		t.Fatalf("an optional text field takes the empty string: %+v %v", ch, err)
	}
	ch, err := checkData(c, map[string]any{"body": nil}, false)
	if err != nil || len(ch.unset) != 1 || ch.unset[0] != "body" {
		t.Fatalf("patch with null clears the field: %+v %v", ch, err)
	}
	ch, err = checkData(c, map[string]any{"title": "x", "body": nil}, true)
	if err != nil || len(ch.set) != 1 || len(ch.unset) != 0 {
		t.Fatalf("create with a null optional field leaves it out: %+v %v", ch, err)
	}
	if ch, err := checkData(c, map[string]any{}, false); err != nil || len(ch.set) != 0 {
		t.Fatalf("an empty patch is allowed: %+v %v", ch, err)
	}
}

func TestCheckDefinitions(t *testing.T) {
	for name, tc := range map[string]struct {
		f    Field
		want string
	}{
		"bad key":             {Field{Key: "Title", Type: TypeText}, "fields[0].key must be 1 to 64 lower case"},
		"reserved":            {Field{Key: "created_at", Type: TypeText}, "reserved"},
		"unknown type":        {Field{Key: "a", Type: "string"}, "fields[0].type must be one of: text, rich_text"},
		"select no options":   {Field{Key: "a", Type: TypeSelect}, "needs options"},
		"options on text":     {Field{Key: "a", Type: TypeText, Options: []string{"x"}}, "options apply only to select"},
		"duplicate option":    {Field{Key: "a", Type: TypeSelect, Options: []string{"x", "x"}}, `lists "x" twice`},
		"reference no target": {Field{Key: "a", Type: TypeReference}, "needs target"},
		"target on text":      {Field{Key: "a", Type: TypeText, Target: "x"}, "target applies only to reference"},
		"max_length on bool":  {Field{Key: "a", Type: TypeBoolean, MaxLength: 3}, "max_length applies only to text"},
		"max_length range":    {Field{Key: "a", Type: TypeText, MaxLength: -1}, "max_length of a text field must be from 1 to 500000"},
		"url past the rule":   {Field{Key: "a", Type: TypeURL, MaxLength: 4096}, "max_length of a url field must be from 1 to 2048"},
		"control in option":   {Field{Key: "a", Type: TypeSelect, Options: []string{"a\x00"}}, "options[0] must be 1 to 200 characters on one line"},
		"localized number":    {Field{Key: "a", Type: TypeNumber, Localized: true}, "only text and rich_text fields can be localized, not number"},
		"localized select":    {Field{Key: "a", Type: TypeSelect, Options: []string{"x"}, Localized: true}, "not select"},
	} {
		t.Run(name, func(t *testing.T) { wantInvalid(t, checkDefinitions([]Field{tc.f}), tc.want) })
	}
	wantInvalid(t, checkDefinitions([]Field{{Key: "a", Type: TypeText}, {Key: "a", Type: TypeNumber}}), `fields[1].key "a" is defined twice`)
	if err := checkDefinitions([]Field{{Key: "title", Type: TypeText, Localized: true}, {Key: "body", Type: TypeRichText, Localized: true}}); err != nil {
		t.Fatalf("localized text and rich_text fields: %v", err)
	}
	wantInvalid(t, checkSlug("Posts"), "slug must be")
	if err := checkSlug("blog-posts_2"); err != nil {
		t.Fatal(err)
	}
}

func TestIfMatch(t *testing.T) {
	for header, want := range map[string]int64{`"3"`: 3, `W/"3", "4"`: 4, `"x"`: -1, `W/"3"`: -1} {
		v, _ := ifVersion(header)
		if v == nil || *v != want {
			t.Errorf("If-Match %s: version %v, want %d", header, v, want)
		}
	}
	for _, header := range []string{"", "*", " * "} {
		if v, _ := ifVersion(header); v != nil {
			t.Errorf("If-Match %q requires version %d, want none", header, *v)
		}
	}
}

func TestValuesKeepHTML(t *testing.T) {
	got, err := checkValue(Field{Key: "body", Type: TypeRichText}, "<p>Tom & Jerry</p>")
	if err != nil || string(got) != `"<p>Tom & Jerry</p>"` {
		t.Fatalf("stored %s, %v; want the markup as written", got, err)
	}
}

// TestProtoDocumentsTheFieldTypes: FieldDefinition.type's comment, which
// becomes the OpenAPI enumeration, lists exactly the types.
func TestProtoDocumentsTheFieldTypes(t *testing.T) {
	b, err := os.ReadFile("../../../../proto/atrium/collections/v1/collections.proto")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`// One of: ([a-z_, ]+)\.\n\s+string type = `).FindSubmatch(b)
	if m == nil {
		t.Fatal("collections.proto documents no field types")
	}
	if got := strings.Split(string(m[1]), ", "); !slices.Equal(got, FieldTypes) {
		t.Fatalf("collections.proto documents %v; the types are %v", got, FieldTypes)
	}
}
