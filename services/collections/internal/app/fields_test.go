package app_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// TestParseProjection: fields names fields of the collection (in the
// collection's order, the item's own properties allowed and always
// kept, expand's fields added); anything else is refused naming what is
// allowed, and the list is bounded.
func TestParseProjection(t *testing.T) {
	c := app.Collection{Slug: "posts", Fields: []app.Field{
		{Key: "title", Type: app.TypeText}, {Key: "body", Type: app.TypeRichText},
		{Key: "author", Type: app.TypeReference, Target: "authors"}, {Key: "rating", Type: app.TypeNumber},
	}}
	for _, tc := range []struct{ fields, expand, want string }{
		{"", "", "<all>"},
		{"rating,title", "", "title,rating"},
		{" title , title", "", "title"},
		{"id,updated_at", "", ""},
		{"title", "author", "title,author"},
		{"title", "author.avatar", "title,author"},
	} {
		p, err := app.ParseProjection(c, tc.fields, tc.expand)
		if err != nil {
			t.Fatalf("fields %q: %v", tc.fields, err)
		}
		got := strings.Join(p.Keys(), ",")
		if p == nil {
			got = "<all>"
		}
		if got != tc.want {
			t.Errorf("fields %q expand %q = %q, want %q", tc.fields, tc.expand, got, tc.want)
		}
	}
	for _, tc := range []struct{ fields, says string }{
		{"title,summary", `"summary". Allowed: title, body, author, rating`},
		{"title,", `""`},
		{"Title", `"Title"`},
		{strings.Repeat("title,", app.MaxProjectedFields) + "title", "at most 200"},
		{strings.Repeat("x", 10_001), "at most 10000 characters"},
	} {
		_, err := app.ParseProjection(c, tc.fields, "")
		wantKind(t, err, apperr.KindInvalid, tc.says)
	}
}

// TestProjectKeepsOnlyTheFields: Project copies the named values and
// leaves the item's own map alone.
func TestProjectKeepsOnlyTheFields(t *testing.T) {
	v := app.Values{"title": []byte(`"Bread"`), "body": []byte(`"<p>x</p>"`)}
	got := app.Projection{{Key: "title"}, {Key: "rating"}}.Project(v)
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"title"}) || len(v) != 2 {
		t.Fatalf("projected %v from %v", keys, v)
	}
	if got := app.Projection(nil).Project(v); len(got) != 2 {
		t.Fatalf("no projection kept %v", got)
	}
}
