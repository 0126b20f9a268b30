package studio

import (
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

func TestReadFieldForm(t *testing.T) {
	ff, def, err := readFieldForm(url.Values{"key": {" kind "}, "type": {"select"}, "options": {"talk\r\n\n workshop \npanel"},
		"target": {"authors"}, "max_length": {""}, "required": {"on"}})
	if err != nil {
		t.Fatal(err)
	}
	if def.GetKey() != "kind" || !def.GetRequired() || strings.Join(def.GetOptions(), "|") != "talk|workshop|panel" {
		t.Fatalf("a select's definition = %v", def)
	}
	if def.Target != nil || def.MaxLength != nil {
		t.Fatalf("a select took a target or a maximum length: %v", def)
	}
	if ff.Key != "kind" || !ff.Required || ff.Options == "" {
		t.Fatalf("the form as posted = %+v", ff)
	}

	_, def, err = readFieldForm(url.Values{"key": {"speaker"}, "type": {"reference"}, "target": {"authors"}, "options": {"ignored"}})
	if err != nil || def.GetTarget() != "authors" || len(def.GetOptions()) != 0 || def.GetRequired() {
		t.Fatalf("a reference = %v, %v", def, err)
	}
	_, def, err = readFieldForm(url.Values{"key": {"title"}, "type": {"text"}, "max_length": {" 80 "}})
	if err != nil || def.GetMaxLength() != 80 {
		t.Fatalf("a text with a maximum = %v, %v", def, err)
	}
	for _, bad := range []string{"eighty", "0", "-3", "99999999999", "1.5"} {
		ff, _, err := readFieldForm(url.Values{"key": {"title"}, "type": {"text"}, "max_length": {bad}})
		if err == nil || !strings.Contains(err.Error(), "whole number") {
			t.Errorf("max_length %q: err = %v, want one that says a whole number is wanted", bad, err)
		}
		if ff.MaxLength != bad && ff.MaxLength != strings.TrimSpace(bad) {
			t.Errorf("max_length %q: the form kept %q", bad, ff.MaxLength)
		}
	}
}

func TestFormOfRoundTrips(t *testing.T) {
	def := &collectionsv1.FieldDefinition{Key: "tags", Type: "multi_select", Options: []string{"a", "b"}, Required: true}
	ff := formOf(def)
	_, got, err := readFieldForm(url.Values{"key": {ff.Key}, "type": {ff.Type}, "options": {ff.Options}, "required": {"on"}, "max_length": {ff.MaxLength}})
	if err != nil || strings.Join(got.GetOptions(), ",") != "a,b" || !got.GetRequired() || got.GetType() != "multi_select" {
		t.Fatalf("the change form of %v reads back as %v, %v", def, got, err)
	}
}

func TestSafeReturn(t *testing.T) {
	for in, want := range map[string]string{
		"": "",
		"/studio/a/x/sites/s/collections/posts/items/1": "/studio/a/x/sites/s/collections/posts/items/1",
		"/studio/a/x/new?draft=1":                       "/studio/a/x/new?draft=1",
		"https://evil.example/studio/a/":                "",
		"//evil.example/studio/":                        "",
		"/elsewhere":                                    "",
		"/studio/":                                      "/studio/",
		"javascript:alert(1)":                           "",
	} {
		if got := safeReturn(in); got != want {
			t.Errorf("safeReturn(%q) = %q, want %q", in, got, want)
		}
	}
	if got := withAsset("/studio/a/x/new?draft=1", "a b"); got != "/studio/a/x/new?asset=a+b&draft=1" {
		t.Errorf("withAsset = %q", got)
	}
}

func TestActorLabel(t *testing.T) {
	names := map[string]string{"m1": "you", "m2": "Ana"}
	for _, c := range []struct {
		a    *collectionsv1.RevisionActor
		want string
	}{
		{&collectionsv1.RevisionActor{Kind: "user", Id: "u", MemberId: wrapperspb.String("m1")}, "you"},
		{&collectionsv1.RevisionActor{Kind: "user", Id: "u", MemberId: wrapperspb.String("m2")}, "Ana"},
		{&collectionsv1.RevisionActor{Kind: "user", Id: "u", MemberId: wrapperspb.String("m9")}, "A person (member m9)"},
		{&collectionsv1.RevisionActor{Kind: "key", Id: "k1"}, "API key k1"},
		{&collectionsv1.RevisionActor{Kind: "admin", Id: "admin"}, "Atrium's operator"},
		{&collectionsv1.RevisionActor{Kind: "service", Id: "scheduler"}, "The scheduler (scheduler)"},
		{nil, "Unknown"},
	} {
		if got := actorLabel(c.a, names); got != c.want {
			t.Errorf("actorLabel(%v) = %q, want %q", c.a, got, c.want)
		}
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1536: "1.5 KiB", 25 << 20: "25.0 MiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// The content tools' pages are parsed with the others at start: a
// template that does not parse stops the Studio, so this is its check.
func TestContentToolsTemplatesParse(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"revisions", "revision", "assets", "asset", "schema", "schema-collection"} {
		if p.byName["contenttools/"+name] == nil {
			t.Errorf("no page contenttools/%s", name)
		}
	}
	if staticHashes["assets.js"] == "" || staticHashes["contenttools.css"] == "" {
		t.Errorf("assets.js or contenttools.css is not served")
	}
}

func TestFieldMessage(t *testing.T) {
	for in, want := range map[string]string{
		`Fields[3].key must be 1 to 64 lower case letters; got "Bad Key".`: `Key must be 1 to 64 lower case letters; got "Bad Key".`,
		"add_fields[0].options must not be empty":                          "Options must not be empty.",
		"a field key is used twice":                                        "A field key is used twice.",
	} {
		if got := fieldMessage(in); got != want {
			t.Errorf("fieldMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsUpload(t *testing.T) {
	for path, want := range map[string]bool{
		"/studio/a/ag/sites/s1/assets":        true,
		"/studio/a/ag/sites/s1/assets/":       false,
		"/studio/a/ag/sites/s1/assets/x":      false,
		"/studio/a/ag/sites//assets":          false,
		"/studio/a//sites/s1/assets":          false,
		"/studio/a/ag/clients/s1/assets":      false,
		"/api/public/v1/assets":               false,
		"/studio/a/ag/sites/s1/schema":        false,
		"/studio/a/ag/sites/s1/assets/delete": false,
	} {
		if got := IsUpload("POST", path); got != want {
			t.Errorf("IsUpload(POST %s) = %v, want %v", path, got, want)
		}
	}
	if IsUpload("GET", "/studio/a/ag/sites/s1/assets") {
		t.Error("the library's GET is an upload")
	}
}
