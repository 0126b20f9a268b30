package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// locales decodes an item's other locales, to compare semantically (nil
// and empty alike: stores hold a locale only while it has a value).
func locales(t *testing.T, l map[string]app.Values) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for k, v := range l {
		out[k] = decoded(t, v)
	}
	return out
}

// testItemLocales: an item's other locales are written whole with it
// (both ways of inserting), read by every read, changed one locale at a
// time by a patch that names it (the data and the other locales stay),
// a locale left without values is dropped, and removing a field removes
// its values in every locale.
func testItemLocales(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts", app.Field{Key: "title", Type: app.TypeText, Localized: true},
		app.Field{Key: "body", Type: app.TypeRichText, Localized: true}, app.Field{Key: "rating", Type: app.TypeNumber})
	it := app.Item{ID: uuid.NewString(), SiteID: site.ID, CollectionID: c.ID, Values: values("title", "Bread", "rating", 4), Version: 1,
		CreatedAt: base, UpdatedAt: base, Locales: map[string]app.Values{"de": values("title", "Brot"), "de-AT": values("title", "Brot", "body", "Gut")}}
	inTx(t, s, func(tx app.Tx) error { return tx.InsertItem(ctx, it, created, announce(it)) })
	one := app.Item{ID: uuid.NewString(), SiteID: site.ID, CollectionID: c.ID, Values: values("title", "Cake"), Version: 1,
		CreatedAt: base.Add(time.Second), UpdatedAt: base.Add(time.Second), Locales: map[string]app.Values{"fr": values("title", "Gâteau")}}
	if err := s.InsertItem(ctx, c, one, created, announce(one)); err != nil {
		t.Fatal(err)
	}
	plain := newItem(t, s, c, base.Add(2*time.Second), values("title", "Pie"))

	want := map[string]map[string]map[string]any{
		it.ID:    {"de": {"title": "Brot"}, "de-AT": {"title": "Brot", "body": "Gut"}},
		one.ID:   {"fr": {"title": "Gâteau"}},
		plain.ID: {},
	}
	check := func(when string) {
		t.Helper()
		for id, w := range want {
			_, got, err := s.Item(ctx, site.ID, c.Slug, id)
			if err != nil || !reflect.DeepEqual(locales(t, got.Locales), w) {
				t.Fatalf("%s: Item %s locales = %v (%v), want %v", when, id, locales(t, got.Locales), err, w)
			}
		}
		// The list reads them whole, whatever the projection.
		for _, fields := range []app.Projection{nil, {{Key: "rating", Type: app.TypeNumber}}} {
			items, err := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 10}, OrderBy: "created_at", Fields: fields})
			if err != nil || len(items) != 3 {
				t.Fatalf("%s: Items = %d items, %v", when, len(items), err)
			}
			for _, got := range items {
				if !reflect.DeepEqual(locales(t, got.Locales), want[got.ID]) {
					t.Fatalf("%s: listed %s (fields %v) locales = %v, want %v", when, got.ID, fields.Keys(), locales(t, got.Locales), want[got.ID])
				}
			}
		}
		byID, err := s.ItemsByID(ctx, c.ID, []string{it.ID, one.ID, plain.ID})
		if err != nil || len(byID) != 3 {
			t.Fatalf("%s: ItemsByID = %d, %v", when, len(byID), err)
		}
		for _, got := range byID {
			if !reflect.DeepEqual(locales(t, got.Locales), want[got.ID]) {
				t.Fatalf("%s: ItemsByID %s locales = %v", when, got.ID, locales(t, got.Locales))
			}
		}
	}
	check("inserted")
	other := newSite(t, s)
	newCollection(t, s, other.ID, "posts", app.Field{Key: "title", Type: app.TypeText, Localized: true})
	inTx(t, s, func(tx app.Tx) error {
		for siteID, want := range map[string]map[string]int{site.ID: {"de": 1, "de-AT": 1, "fr": 1}, other.ID: {}} {
			got, err := tx.ItemsInLocales(ctx, siteID, []string{"de", "de-AT", "fr", "nl", "en"})
			if err != nil {
				return err
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("ItemsInLocales of a site = %v, want %v", got, want)
			}
		}
		return nil
	})

	patch := func(id string, p app.ItemPatch) app.Item {
		t.Helper()
		var after app.Item
		inTx(t, s, func(tx app.Tx) error {
			var err error
			_, after, err = tx.PatchItem(ctx, c.ID, id, p)
			return err
		})
		return after
	}
	// A patch of de changes de alone: the data and de-AT stay.
	after := patch(it.ID, app.ItemPatch{Locale: "de", Set: values("body", "Gutes Brot"), At: base.Add(time.Minute)})
	want[it.ID]["de"] = map[string]any{"title": "Brot", "body": "Gutes Brot"}
	if !reflect.DeepEqual(locales(t, after.Locales), want[it.ID]) || !reflect.DeepEqual(decoded(t, after.Values), map[string]any{"title": "Bread", "rating": 4.0}) {
		t.Fatalf("after the de patch: data %v, locales %v", decoded(t, after.Values), locales(t, after.Locales))
	}
	// A first value in a new locale adds it; a patch of the data leaves
	// the locales.
	patch(plain.ID, app.ItemPatch{Locale: "nl", Set: values("title", "Taart"), At: base.Add(time.Minute)})
	want[plain.ID] = map[string]map[string]any{"nl": {"title": "Taart"}}
	patch(one.ID, app.ItemPatch{Set: values("title", "Cake!"), At: base.Add(time.Minute)})
	check("patched")
	// A locale left without values is dropped.
	after = patch(one.ID, app.ItemPatch{Locale: "fr", Unset: []string{"title"}, At: base.Add(2 * time.Minute)})
	want[one.ID] = map[string]map[string]any{}
	if len(after.Locales) != 0 {
		t.Fatalf("emptied fr is still held: %v", after.Locales)
	}
	check("emptied")

	// Removing a field removes its values in every locale, and a locale
	// left without values goes.
	c.Fields = slices.Clone(c.Fields[:1])
	c.Fields = append(c.Fields, app.Field{Key: "rating", Type: app.TypeNumber})
	c.UpdatedAt = base.Add(time.Hour)
	inTx(t, s, func(tx app.Tx) error { return tx.UpdateCollection(ctx, c, []string{"body"}) })
	want[it.ID] = map[string]map[string]any{"de": {"title": "Brot"}, "de-AT": {"title": "Brot"}}
	check("body removed")
	inTx(t, s, func(tx app.Tx) error {
		c.Fields = c.Fields[1:]
		return tx.UpdateCollection(ctx, c, []string{"title"})
	})
	want[it.ID], want[plain.ID] = map[string]map[string]any{}, map[string]map[string]any{}
	check("title removed")
}
