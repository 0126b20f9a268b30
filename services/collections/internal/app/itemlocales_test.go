package app_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// shown decodes an item's values as a reader sees them.
func shown(t *testing.T, it app.Item) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, raw := range it.Values {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// TestItemsInLocales: a write in a locale changes only that locale's
// values of localized fields; a read in de-AT falls back to de, then to
// the default, saying where each value came from; fallback=none shows
// only the locale's own; locale=* shows every locale's; a site with one
// locale reads and writes as before.
func TestItemsInLocales(t *testing.T) {
	ctx := t.Context()
	db := memdb.New(nil)
	st := memory.New(db)
	clock := app.Clock(time.Now)
	sites := app.NewSites(app.SiteStoreOf(st), nil, clock)
	content := app.NewContent(app.ContentStoreOf(st), clock)
	site, err := sites.Create(ctx, app.NewSite{Name: "Bakery"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := content.CreateCollection(ctx, site.ID, app.NewCollection{Name: "Posts", Slug: "posts", Fields: []app.Field{
		{Key: "title", Type: app.TypeText, Required: true, Localized: true}, {Key: "body", Type: app.TypeRichText, Localized: true},
		{Key: "rating", Type: app.TypeNumber}}}); err != nil {
		t.Fatal(err)
	}
	_, it, err := content.CreateItem(ctx, site.ID, "posts", app.NewItem{Data: map[string]any{"title": "Bread", "body": "Good", "rating": 4.0}})
	if err != nil {
		t.Fatal(err)
	}
	// One locale: a locale other than en is refused naming en.
	_, _, err = content.ItemIn(ctx, site.ID, "posts", it.ID, "de", "")
	wantKindSays(t, err, apperr.KindInvalid, `locale "de"`, "en")
	if _, err := sites.SetLocales(ctx, site.ID, "en", []string{"de", "de-AT"}); err != nil {
		t.Fatal(err)
	}

	// Writes in de: localized fields only, and only de's values change.
	_, err = func() (app.Item, error) {
		_, it, err := content.UpdateItem(ctx, site.ID, "posts", it.ID, app.ItemUpdate{Locale: "de", Data: map[string]any{"title": "Brot", "rating": 5.0}})
		return it, err
	}()
	wantKindSays(t, err, apperr.KindInvalid, "locale de holds only the localized fields (title, body)", "rating")
	_, _, err = content.UpdateItem(ctx, site.ID, "posts", it.ID, app.ItemUpdate{Locale: "fr", Data: map[string]any{"title": "Pain"}})
	wantKindSays(t, err, apperr.KindInvalid, `locale "fr"`, "en, de, de-AT")
	_, written, err := content.UpdateItem(ctx, site.ID, "posts", it.ID, app.ItemUpdate{Locale: "DE", Data: map[string]any{"title": "Brot"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := shown(t, written); !reflect.DeepEqual(got, map[string]any{"title": "Brot", "body": "Good", "rating": 4.0}) || written.ReadIn != "de" ||
		!maps.Equal(written.Fallbacks, map[string]string{"body": "en"}) {
		t.Fatalf("the de write answers %v in %q, fallbacks %v", got, written.ReadIn, written.Fallbacks)
	}
	// Its events name the locale; a write of the data names none.
	var sawLocale bool
	for _, e := range drain(t, db) {
		if strings.HasPrefix(e, "atrium.collections.") && strings.Contains(e, ".item.updated ") {
			if !strings.Contains(e, `"locale":"de"`) {
				t.Fatalf("the de write's event: %s", e)
			}
			sawLocale = true
		}
	}
	if !sawLocale {
		t.Fatal("the de write announced no item.updated")
	}
	// null in a locale removes its value, even of a required field.
	if _, _, err := content.UpdateItem(ctx, site.ID, "posts", it.ID, app.ItemUpdate{Locale: "de-AT", Data: map[string]any{"title": "Semmel"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := content.UpdateItem(ctx, site.ID, "posts", it.ID, app.ItemUpdate{Locale: "de-AT", Data: map[string]any{"title": nil}}); err != nil {
		t.Fatalf("null in de-AT: %v", err)
	}
	// The data is untouched by the locale writes.
	_, plain, _ := content.Item(ctx, site.ID, "posts", it.ID)
	if got := shown(t, plain); !reflect.DeepEqual(got, map[string]any{"title": "Bread", "body": "Good", "rating": 4.0}) || plain.ReadIn != "" {
		t.Fatalf("read without locale: %v", got)
	}

	for _, tc := range []struct {
		locale, fallback string
		want             map[string]any
		fallbacks        map[string]string
	}{
		{"de-AT", "", map[string]any{"title": "Brot", "body": "Good", "rating": 4.0}, map[string]string{"title": "de", "body": "en"}},
		{"de-at", "default", map[string]any{"title": "Brot", "body": "Good", "rating": 4.0}, map[string]string{"title": "de", "body": "en"}},
		{"de-AT", "none", map[string]any{"rating": 4.0}, nil},
		{"de", "none", map[string]any{"title": "Brot", "rating": 4.0}, nil},
		{"en", "", map[string]any{"title": "Bread", "body": "Good", "rating": 4.0}, nil},
		{"*", "", map[string]any{"title": map[string]any{"en": "Bread", "de": "Brot"}, "body": map[string]any{"en": "Good"}, "rating": 4.0}, nil},
	} {
		_, got, err := content.ItemIn(ctx, site.ID, "posts", it.ID, tc.locale, tc.fallback)
		if err != nil || !reflect.DeepEqual(shown(t, got), tc.want) || !maps.Equal(got.Fallbacks, tc.fallbacks) {
			t.Errorf("read in %s (fallback %q) = %v, fallbacks %v (%v); want %v, %v", tc.locale, tc.fallback, shown(t, got), got.Fallbacks, err, tc.want, tc.fallbacks)
		}
		_, items, _, err := content.Items(ctx, site.ID, "posts", app.ListParams{Locale: tc.locale, Fallback: tc.fallback})
		if err != nil || len(items) != 1 || !reflect.DeepEqual(shown(t, items[0]), tc.want) {
			t.Errorf("list in %s = %v (%v)", tc.locale, items, err)
		}
	}
	// The list's projection holds in a locale too.
	_, items, _, err := content.Items(ctx, site.ID, "posts", app.ListParams{Locale: "de", Fields: "rating"})
	if err != nil || !reflect.DeepEqual(shown(t, items[0]), map[string]any{"rating": 4.0}) {
		t.Fatalf("projected list in de = %v (%v)", items, err)
	}
	_, _, err = content.ItemIn(ctx, site.ID, "posts", it.ID, "de", "always")
	wantKindSays(t, err, apperr.KindInvalid, "fallback must be default or none")
	_, _, err = content.ItemIn(ctx, site.ID, "posts", it.ID, "", "none")
	wantKindSays(t, err, apperr.KindInvalid, "give locale too")
	_, _, _, err = content.Items(ctx, site.ID, "posts", app.ListParams{Locale: "de", Order: "title"})
	wantKindSays(t, err, apperr.KindInvalid, "localized field (title)", "en")
	if _, _, _, err := content.Items(ctx, site.ID, "posts", app.ListParams{Locale: "de", Order: "rating"}); err != nil {
		t.Fatalf("order on a field that is not localized, in de: %v", err)
	}
	_, _, err = content.UpdateItem(ctx, site.ID, "posts", it.ID, app.ItemUpdate{Locale: "*", Data: map[string]any{"title": "x"}})
	wantKindSays(t, err, apperr.KindInvalid, "a write names one locale")

	// A locale items hold values in cannot leave the site's other
	// locales, removed or made the default; once emptied it can.
	_, err = sites.SetLocales(ctx, site.ID, "en", []string{"de-AT"})
	wantKindSays(t, err, apperr.KindConflict, "1 items hold values in locale de", "PATCH")
	_, err = sites.SetLocales(ctx, site.ID, "de", []string{"en", "de-AT"})
	wantKindSays(t, err, apperr.KindConflict, "locale de")
	if _, err := sites.SetLocales(ctx, site.ID, "en", []string{"de"}); err != nil {
		t.Fatalf("removing de-AT, which holds nothing: %v", err)
	}
	if _, _, err := content.UpdateItem(ctx, site.ID, "posts", it.ID, app.ItemUpdate{Locale: "de", Data: map[string]any{"title": nil}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sites.SetLocales(ctx, site.ID, "en", nil); err != nil {
		t.Fatalf("removing de once emptied: %v", err)
	}

	// Another site's item is not found in any locale.
	other, _ := sites.Create(ctx, app.NewSite{Name: "Other"})
	if _, err := content.CreateCollection(ctx, other.ID, app.NewCollection{Name: "Posts", Slug: "posts", Fields: []app.Field{{Key: "title", Type: app.TypeText, Localized: true}}}); err != nil {
		t.Fatal(err)
	}
	_, _, err = content.ItemIn(ctx, other.ID, "posts", it.ID, "en", "")
	wantKindSays(t, err, apperr.KindNotFound, it.ID)
	_, _, err = content.UpdateItem(ctx, other.ID, "posts", it.ID, app.ItemUpdate{Locale: "en", Data: map[string]any{"title": "x"}})
	wantKindSays(t, err, apperr.KindNotFound, it.ID)
}
