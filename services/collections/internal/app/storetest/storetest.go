// Package storetest is the contract every collections store adapter must
// meet; each adapter's test is one call to RunAll.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/publicfile"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// Store is what the suite needs of an adapter. Transactions, events and
// the outbox are platform/txtest's contract; this suite checks the
// collections domain only.
type Store = app.Store

// RunAll runs the contract against fresh stores made by newStore.
func RunAll(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, Store)
	}{
		{"SiteRoundTrip", testSiteRoundTrip},
		{"SiteListOrderAndPaging", testSiteList},
		{"SiteOwner", testSiteOwner},
		{"AgencySitesByName", testAgencySites},
		{"RollbackLeavesNoTrace", testRollback},
		{"RolledBackItemsLeaveTheOrder", testItemRollback},
		{"CollectionsRoundTrip", testCollections},
		{"ItemByCollectionSlug", testItemBySlug},
		{"InsertItemChecksTheDefinition", testInsertItemChecksTheDefinition},
		{"ItemsOrderAndPaging", testItemsPaging},
		{"ItemFilters", testItemFilters},
		{"ItemsProjection", testItemsProjection},
		{"PatchMergesAtomically", testPatch},
		{"ConcurrentPatchesAllSurvive", testConcurrentPatches},
		{"DeleteItem", testDelete},
		{"RemovedFieldsLeaveItems", testRemoveFields},
		{"OrderByField", testOrderByField},
		{"SearchMatchesEveryWord", testSearch},
		{"ItemsAndAssetsByID", testByID},
		{"SearchFollowsTheDefinition", testSearchDefinition},
		{"AssetsRoundTrip", testAssetsRoundTrip},
		{"AssetsOfAnotherSiteDoNotExist", testAssetTenancy},
		{"AssetsOrderAndPaging", testAssetsPaging},
		{"AssetsUpdateAndDelete", testAssetsUpdateAndDelete},
		{"AssetsRollBack", testAssetsRollback},
		{"PreviewLinks", testPreviewLinks},
		{"PreviewLinksRevokeAndTenancy", testPreviewLinksRevokeAndTenancy},
		{"Schedules", testSchedules},
		{"ScheduleClaimsAreDisjoint", testClaimsAreDisjoint},
		{"RevisionsOfEveryWrite", testRevisionsOfEveryWrite},
		{"RevisionsOutliveTheItem", testRevisionsOutliveTheItem},
		{"RevisionPurgesAreDisjoint", testPurgesAreDisjoint},
		{"ItemLocales", testItemLocales},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

var base = time.Date(2026, 11, 1, 9, 30, 0, 123456000, time.UTC)

func testSiteRoundTrip(t *testing.T, s Store) {
	site := app.Site{ID: uuid.NewString(), Name: "Bakery blog", CreatedAt: base, UpdatedAt: base, AllowedOrigins: []string{}}
	if err := s.InTx(t.Context(), func(tx app.Tx) error { return tx.InsertSite(t.Context(), site) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Site(t.Context(), site.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, site) {
		t.Fatalf("got %+v, want %+v", got, site)
	}
	if _, err := s.Site(t.Context(), uuid.NewString()); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("unknown site: error = %v, want ErrNotFound", err)
	}
	changed := site
	changed.AllowedOrigins, changed.UpdatedAt = []string{"https://www.example.com", "*"}, base.Add(time.Hour)
	inTx(t, s, func(tx app.Tx) error { return tx.UpdateSite(t.Context(), changed) })
	if got, err := s.Site(t.Context(), site.ID); err != nil || !reflect.DeepEqual(got, changed) {
		t.Fatalf("after UpdateSite got %+v (%v), want %+v", got, err, changed)
	}
	if err := s.InTx(t.Context(), func(tx app.Tx) error {
		return tx.UpdateSite(t.Context(), app.Site{ID: uuid.NewString(), Name: "x", AllowedOrigins: []string{}})
	}); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("UpdateSite of no site = %v, want ErrNotFound", err)
	}
	// Locales round-trip in the order given (the default first).
	localized := changed
	localized.DefaultLocale, localized.Locales, localized.UpdatedAt = "de", []string{"de", "en", "de-AT", "zh-Hant-TW"}, base.Add(2*time.Hour)
	inTx(t, s, func(tx app.Tx) error { return tx.UpdateSite(t.Context(), localized) })
	if got, err := s.Site(t.Context(), site.ID); err != nil || !reflect.DeepEqual(got, localized) {
		t.Fatalf("after UpdateSite with locales got %+v (%v), want %+v", got, err, localized)
	}
	withLocales := app.Site{ID: uuid.NewString(), Name: "Shop", CreatedAt: base, UpdatedAt: base, AllowedOrigins: []string{},
		DefaultLocale: "fr", Locales: []string{"fr", "nl"}}
	inTx(t, s, func(tx app.Tx) error { return tx.InsertSite(t.Context(), withLocales) })
	if got, err := s.Site(t.Context(), withLocales.ID); err != nil || !reflect.DeepEqual(got, withLocales) {
		t.Fatalf("inserted with locales got %+v (%v), want %+v", got, err, withLocales)
	}
	site = changed
	err = s.InTx(t.Context(), func(tx app.Tx) error { return tx.InsertSite(t.Context(), site) })
	if !errors.Is(err, app.ErrDuplicate) {
		t.Fatalf("duplicate site: error = %v, want ErrDuplicate", err)
	}
}

func testSiteList(t *testing.T, s Store) {
	list := func(page pagination.Page) []app.Site {
		t.Helper()
		sites, err := s.Sites(t.Context(), app.SiteFilter{}, page)
		if err != nil {
			t.Fatal(err)
		}
		return sites
	}
	if got := list(pagination.Page{Limit: 10}); len(got) != 0 {
		t.Fatalf("sites of an empty store = %+v", got)
	}
	// created_at: s0 at +0, s1 and s2 at +1m. Newest first, ties by id
	// descending (v7 ids are time-ordered: the later insert first).
	var sites []app.Site
	for i := range 3 {
		site := app.Site{ID: uuid.Must(uuid.NewV7()).String(), Name: fmt.Sprint("Site ", i),
			CreatedAt: base.Add(time.Duration(min(i, 1)) * time.Minute), UpdatedAt: base, AllowedOrigins: []string{}}
		inTx(t, s, func(tx app.Tx) error { return tx.InsertSite(t.Context(), site) })
		sites = append(sites, site)
	}
	want := []app.Site{sites[2], sites[1], sites[0]}
	if got := list(pagination.Page{Limit: 10}); !reflect.DeepEqual(got, want) {
		t.Fatalf("sites = %+v\nwant %+v", got, want)
	}
	if got := list(pagination.Page{Limit: 1, Offset: 1}); !reflect.DeepEqual(got, want[1:2]) {
		t.Fatalf("page 2 of 1 = %+v, want %+v", got, want[1:2])
	}
	if got := list(pagination.Page{Limit: 5, Offset: 3}); len(got) != 0 {
		t.Fatalf("past the end = %+v", got)
	}
}

// testSiteOwner: a site's owner is kept as inserted, changed and cleared
// by UpdateSite, and the agency filter lists only the agency's sites, in
// the list's order.
func testSiteOwner(t *testing.T, s Store) {
	agencyA, agencyB, client := uuid.NewString(), uuid.NewString(), uuid.NewString()
	owned := app.Site{ID: uuid.Must(uuid.NewV7()).String(), Name: "Owned", CreatedAt: base, UpdatedAt: base, AllowedOrigins: []string{},
		AgencyID: agencyA, ClientID: client}
	unowned := app.Site{ID: uuid.Must(uuid.NewV7()).String(), Name: "Unowned", CreatedAt: base.Add(time.Minute), UpdatedAt: base, AllowedOrigins: []string{}}
	second := app.Site{ID: uuid.Must(uuid.NewV7()).String(), Name: "Second", CreatedAt: base.Add(2 * time.Minute), UpdatedAt: base,
		AllowedOrigins: []string{}, AgencyID: agencyA}
	for _, site := range []app.Site{owned, unowned, second} {
		inTx(t, s, func(tx app.Tx) error { return tx.InsertSite(t.Context(), site) })
	}
	get := func(id string) app.Site {
		t.Helper()
		got, err := s.Site(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := get(owned.ID); !reflect.DeepEqual(got, owned) {
		t.Fatalf("owned site = %+v, want %+v", got, owned)
	}
	if got := get(unowned.ID); got.AgencyID != "" || got.ClientID != "" {
		t.Fatalf("unowned site has owner %q/%q", got.AgencyID, got.ClientID)
	}
	list := func(agency string) []string {
		t.Helper()
		sites, err := s.Sites(t.Context(), app.SiteFilter{AgencyID: agency}, pagination.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, site := range sites {
			out = append(out, site.ID)
		}
		return out
	}
	if got, want := list(agencyA), []string{second.ID, owned.ID}; !slices.Equal(got, want) {
		t.Fatalf("sites of agency A = %v, want %v (newest first)", got, want)
	}
	if got := list(agencyB); len(got) != 0 {
		t.Fatalf("sites of agency B = %v, want none", got)
	}
	if got := list(""); len(got) != 3 {
		t.Fatalf("unfiltered sites = %v, want all 3", got)
	}

	// Changed: the agency moves to B, without a client; the unowned site
	// is assigned to B with the client.
	moved := owned
	moved.AgencyID, moved.ClientID, moved.UpdatedAt = agencyB, "", base.Add(time.Hour)
	assigned := unowned
	assigned.AgencyID, assigned.ClientID, assigned.UpdatedAt = agencyB, client, base.Add(time.Hour)
	inTx(t, s, func(tx app.Tx) error {
		if err := tx.UpdateSite(t.Context(), moved); err != nil {
			return err
		}
		return tx.UpdateSite(t.Context(), assigned)
	})
	if got := get(owned.ID); !reflect.DeepEqual(got, moved) {
		t.Fatalf("moved site = %+v, want %+v", got, moved)
	}
	if got := get(unowned.ID); !reflect.DeepEqual(got, assigned) {
		t.Fatalf("assigned site = %+v, want %+v", got, assigned)
	}
	if got, want := list(agencyA), []string{second.ID}; !slices.Equal(got, want) {
		t.Fatalf("sites of agency A after the move = %v, want %v", got, want)
	}
	if got, want := list(agencyB), []string{unowned.ID, owned.ID}; !slices.Equal(got, want) {
		t.Fatalf("sites of agency B after the move = %v, want %v", got, want)
	}

	// Cleared: the site is unowned again and leaves every agency's list.
	cleared := assigned
	cleared.AgencyID, cleared.ClientID = "", ""
	inTx(t, s, func(tx app.Tx) error { return tx.UpdateSite(t.Context(), cleared) })
	if got := get(unowned.ID); !reflect.DeepEqual(got, cleared) {
		t.Fatalf("cleared site = %+v, want %+v", got, cleared)
	}
	if got, want := list(agencyB), []string{owned.ID}; !slices.Equal(got, want) {
		t.Fatalf("sites of agency B after the clear = %v, want %v", got, want)
	}
}

// testAgencySites: an agency's sites are listed by name (byte order, so
// "Zeta" before "alpha"), ties by id, and neither another agency's nor an
// unowned site ever appears; a site moved away leaves the list.
func testAgencySites(t *testing.T, s Store) {
	agencyA, agencyB := uuid.NewString(), uuid.NewString()
	site := func(name, agency string) app.Site {
		return app.Site{ID: uuid.NewString(), Name: name, CreatedAt: base, UpdatedAt: base, AllowedOrigins: []string{}, AgencyID: agency}
	}
	lower, upper, twinA, twinB := site("alpha", agencyA), site("Zeta", agencyA), site("Twin", agencyA), site("Twin", agencyA)
	if twinB.ID < twinA.ID {
		twinA, twinB = twinB, twinA
	}
	other, unowned := site("Another agency's", agencyB), site("Unowned", "")
	for _, site := range []app.Site{lower, upper, twinB, other, unowned, twinA} {
		inTx(t, s, func(tx app.Tx) error { return tx.InsertSite(t.Context(), site) })
	}
	list := func(agency string) []app.Site {
		t.Helper()
		sites, err := s.AgencySites(t.Context(), agency)
		if err != nil {
			t.Fatal(err)
		}
		if sites == nil {
			t.Fatalf("sites of agency %s = nil, want a list (JSON [] rather than null)", agency)
		}
		return sites
	}
	if got, want := list(agencyA), []app.Site{twinA, twinB, upper, lower}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sites of agency A = %+v\nwant %+v (by name byte by byte, then id)", got, want)
	}
	if got, want := list(agencyB), []app.Site{other}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sites of agency B = %+v, want only its own %+v", got, want)
	}
	if got := list(uuid.NewString()); len(got) != 0 {
		t.Fatalf("sites of an agency with none = %+v", got)
	}
	moved := upper
	moved.AgencyID, moved.UpdatedAt = agencyB, base.Add(time.Hour)
	inTx(t, s, func(tx app.Tx) error { return tx.UpdateSite(t.Context(), moved) })
	if got, want := list(agencyA), []app.Site{twinA, twinB, lower}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sites of agency A after a move = %+v\nwant %+v", got, want)
	}
	if got, want := list(agencyB), []app.Site{other, moved}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sites of agency B after a move = %+v\nwant %+v", got, want)
	}
}

func testRollback(t *testing.T, s Store) {
	site := app.Site{ID: uuid.NewString(), Name: "Gone", CreatedAt: base, UpdatedAt: base}
	abort := errors.New("abort")
	err := s.InTx(t.Context(), func(tx app.Tx) error {
		if err := tx.InsertSite(t.Context(), site); err != nil {
			return err
		}
		return abort
	})
	if !errors.Is(err, abort) {
		t.Fatalf("error = %v, want the closure's", err)
	}
	if _, err := s.Site(t.Context(), site.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("rolled-back site: error = %v, want ErrNotFound", err)
	}
}

// testItemRollback: items inserted by a transaction that fails, newest or
// in the middle, are in no list, and the items inserted after them are
// listed in order.
func testItemRollback(t *testing.T, s Store) {
	ctx := t.Context()
	c := newCollection(t, s, newSite(t, s).ID, "posts")
	first := newItem(t, s, c, base, nil)
	third := newItem(t, s, c, base.Add(2*time.Second), nil)
	abort := errors.New("abort")
	err := s.InTx(ctx, func(tx app.Tx) error {
		for _, at := range []time.Time{base.Add(3 * time.Second), base.Add(4 * time.Second), base.Add(time.Second)} {
			it := app.Item{ID: uuid.NewString(), SiteID: c.SiteID, CollectionID: c.ID, Version: 1, CreatedAt: at, UpdatedAt: at}
			if err := tx.InsertItem(ctx, it, created, announce(it)); err != nil {
				return err
			}
		}
		return abort
	})
	if !errors.Is(err, abort) {
		t.Fatalf("error = %v, want the closure's", err)
	}
	second := newItem(t, s, c, base.Add(time.Second), nil)
	fourth := newItem(t, s, c, base.Add(3*time.Second), nil)
	got, err := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 10}, OrderBy: "created_at"})
	if err != nil {
		t.Fatal(err)
	}
	if want := ids([]app.Item{fourth, third, second, first}); !slices.Equal(ids(got), want) {
		t.Fatalf("items = %v, want %v: the rolled-back inserts gone, the later ones in order", ids(got), want)
	}
}

func inTx(t *testing.T, s Store, fn func(app.Tx) error) {
	t.Helper()
	if err := s.InTx(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

func newSite(t *testing.T, s Store) app.Site {
	site := app.Site{ID: uuid.NewString(), Name: "Site", CreatedAt: base, UpdatedAt: base, AllowedOrigins: []string{}}
	inTx(t, s, func(tx app.Tx) error { return tx.InsertSite(t.Context(), site) })
	return site
}

func newCollection(t *testing.T, s Store, siteID, slug string, fields ...app.Field) app.Collection {
	c := app.Collection{ID: uuid.NewString(), SiteID: siteID, Name: "Posts", Slug: slug, Fields: fields, SearchLanguage: app.DefaultSearchLanguage, CreatedAt: base, UpdatedAt: base}
	if c.Fields == nil {
		c.Fields = []app.Field{}
	}
	inTx(t, s, func(tx app.Tx) error { return tx.InsertCollection(t.Context(), c) })
	return c
}

func values(kv ...any) app.Values {
	v := app.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		b, _ := json.Marshal(kv[i+1])
		v[kv[i].(string)] = b
	}
	return v
}

// decoded is an item's values as plain JSON values, to compare semantically.
func decoded(t *testing.T, v app.Values) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, raw := range v {
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			t.Fatalf("value %s = %q is not JSON: %v", k, raw, err)
		}
		out[k] = x
	}
	return out
}

func newItem(t *testing.T, s Store, c app.Collection, at time.Time, v app.Values) app.Item {
	it := app.Item{ID: uuid.NewString(), SiteID: c.SiteID, CollectionID: c.ID, Values: v, Version: 1, CreatedAt: at, UpdatedAt: at}
	inTx(t, s, func(tx app.Tx) error { return tx.InsertItem(t.Context(), it, created, announce(it)) })
	return it
}

// announce is an event for an inserted item. Events and the outbox are
// platform/txtest's contract; here they only have to be accepted.
func announce(it app.Item) outbox.Event {
	return outbox.Event{ID: uuid.NewString(), Subject: "atrium.collections.test.item.created", Payload: []byte(`{"id":"` + it.ID + `"}`), CreatedAt: it.CreatedAt}
}

func testCollections(t *testing.T, s Store) {
	ctx := t.Context()
	site, other := newSite(t, s), newSite(t, s)
	fields := []app.Field{
		{Key: "title", Type: app.TypeText, Required: true, MaxLength: 120},
		{Key: "tags", Type: app.TypeMultiSelect, Options: []string{"news", "recipes"}},
		{Key: "author", Type: app.TypeReference, Target: "authors"},
	}
	posts := newCollection(t, s, site.ID, "posts", fields...)
	newCollection(t, s, site.ID, "authors")
	newCollection(t, s, other.ID, "posts")

	got, err := s.Collection(ctx, site.ID, "posts")
	if err != nil || !reflect.DeepEqual(got, posts) {
		t.Fatalf("Collection = %+v, %v; want %+v", got, err, posts)
	}
	list, err := s.Collections(ctx, site.ID)
	if err != nil || len(list) != 2 || list[0].Slug != "authors" || list[1].Slug != "posts" {
		t.Fatalf("Collections = %+v, %v; want authors and posts of this site only, by slug", list, err)
	}
	if empty, err := s.Collections(ctx, uuid.NewString()); err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("Collections of an unknown site = %#v, %v; want an empty list", empty, err)
	}
	if _, err := s.Collection(ctx, other.ID, "authors"); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another site's slug: %v, want ErrNotFound", err)
	}
	err = s.InTx(ctx, func(tx app.Tx) error {
		return tx.InsertCollection(ctx, app.Collection{ID: uuid.NewString(), SiteID: site.ID, Name: "Again", Slug: "posts", Fields: []app.Field{}, CreatedAt: base, UpdatedAt: base})
	})
	if !errors.Is(err, app.ErrDuplicate) {
		t.Fatalf("duplicate slug in a site: %v, want ErrDuplicate", err)
	}
}

// testItemBySlug reads an item by its site, its collection's slug and its
// id, and tells a missing collection (zero Collection) from a missing item
// (the Collection returned). Another site's collection is missing.
func testItemBySlug(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts", app.Field{Key: "title", Type: app.TypeText})
	it := newItem(t, s, c, base, values("title", "Hello"))
	gotC, got, err := s.Item(ctx, site.ID, "posts", it.ID)
	if err != nil || gotC.ID != c.ID || len(gotC.Fields) != 1 || got.ID != it.ID || got.CollectionID != c.ID || got.Version != 1 ||
		!got.CreatedAt.Equal(base) || !reflect.DeepEqual(decoded(t, got.Values), map[string]any{"title": "Hello"}) {
		t.Fatalf("Item = %+v, %+v, %v; want the collection and the item as stored", gotC, got, err)
	}
	gotC, _, err = s.Item(ctx, site.ID, "posts", uuid.NewString())
	if !errors.Is(err, app.ErrNotFound) || gotC.ID != c.ID {
		t.Fatalf("unknown item: collection %q, %v; want the collection and ErrNotFound", gotC.ID, err)
	}
	gotC, _, err = s.Item(ctx, site.ID, "nope", it.ID)
	if !errors.Is(err, app.ErrNotFound) || gotC.ID != "" {
		t.Fatalf("unknown collection: collection %q, %v; want none and ErrNotFound", gotC.ID, err)
	}
	other := newSite(t, s)
	newCollection(t, s, other.ID, "posts")
	gotC, _, err = s.Item(ctx, other.ID, "posts", it.ID)
	if !errors.Is(err, app.ErrNotFound) || gotC.ID == c.ID {
		t.Fatalf("the item through another site's posts: collection %q, %v; want ErrNotFound", gotC.ID, err)
	}
	if _, _, err = s.Item(ctx, uuid.NewString(), "posts", it.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("the item through an unknown site: %v, want ErrNotFound", err)
	}
}

// testInsertItemChecksTheDefinition: an item inserted in a transaction of
// its own is written with its collection as it was read for the write
// (CollectionForWrite), and not at all, with ErrCollectionChanged, once the
// collection's fields have changed; its id cannot be taken twice.
func testInsertItemChecksTheDefinition(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	newCollection(t, s, site.ID, "posts", app.Field{Key: "title", Type: app.TypeText})
	c, err := s.CollectionForWrite(ctx, site.ID, "posts")
	if err != nil || len(c.Fields) != 1 {
		t.Fatalf("CollectionForWrite = %+v, %v", c, err)
	}
	own := app.Item{ID: uuid.NewString(), SiteID: site.ID, CollectionID: c.ID, Values: values("title", "Own"), Version: 1, CreatedAt: base, UpdatedAt: base}
	if err := s.InsertItem(ctx, c, own, created, announce(own)); err != nil {
		t.Fatal(err)
	}
	if _, got, err := s.Item(ctx, site.ID, "posts", own.ID); err != nil || !reflect.DeepEqual(decoded(t, got.Values), map[string]any{"title": "Own"}) {
		t.Fatalf("item inserted on its own = %+v, %v", got, err)
	}
	if err := s.InsertItem(ctx, c, own, created, announce(own)); !errors.Is(err, app.ErrDuplicate) {
		t.Fatalf("the same id again: %v, want ErrDuplicate", err)
	}
	changed := c
	changed.Fields = []app.Field{{Key: "title", Type: app.TypeText}, {Key: "body", Type: app.TypeRichText}}
	changed.UpdatedAt = base.Add(time.Minute)
	inTx(t, s, func(tx app.Tx) error { return tx.UpdateCollection(ctx, changed, nil) })
	late := app.Item{ID: uuid.NewString(), SiteID: site.ID, CollectionID: c.ID, Values: values("title", "Late"), Version: 1, CreatedAt: base, UpdatedAt: base}
	if err := s.InsertItem(ctx, c, late, created, announce(late)); !errors.Is(err, app.ErrCollectionChanged) {
		t.Fatalf("item checked against the old fields: %v, want ErrCollectionChanged", err)
	}
	if _, _, err := s.Item(ctx, site.ID, "posts", late.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("item refused for the old fields was written: %v", err)
	}
	now, err := s.CollectionForWrite(ctx, site.ID, "posts")
	if err != nil || len(now.Fields) != 2 {
		t.Fatalf("CollectionForWrite after the change = %+v, %v; want the new fields", now.Fields, err)
	}
	if err := s.InsertItem(ctx, now, late, created, announce(late)); err != nil {
		t.Fatalf("item checked against the new fields: %v", err)
	}
}

func testItemsPaging(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts", app.Field{Key: "n", Type: app.TypeInteger})
	var all []app.Item
	for i := range 23 {
		// Groups of three share a creation time: ties are broken by id.
		at := base.Add(time.Duration(i/3) * time.Second)
		all = append(all, newItem(t, s, c, at, values("n", i)))
	}
	newItem(t, s, newCollection(t, s, site.ID, "other"), base, nil) // not in c
	want := slices.Clone(all)
	slices.SortFunc(want, func(a, b app.Item) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		if a.ID > b.ID {
			return -1
		}
		return 1
	})
	for _, asc := range []bool{false, true} {
		var got []string
		for off := int32(0); off < 30; off += 5 {
			page, err := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 5, Offset: off}, OrderBy: "created_at", Asc: asc})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page {
				got = append(got, it.ID)
			}
		}
		wantIDs := ids(want)
		if asc {
			slices.Reverse(wantIDs)
		}
		if !slices.Equal(got, wantIDs) {
			t.Fatalf("asc=%v: pages of 5 gave %v\nwant %v (newest first, ties by id, each once)", asc, got, wantIDs)
		}
	}
	first, err := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 1}, OrderBy: "created_at"})
	if err != nil || len(first) != 1 || !reflect.DeepEqual(decoded(t, first[0].Values), decoded(t, want[0].Values)) {
		t.Fatalf("first item = %+v, %v; want the values it was stored with", first, err)
	}
	// updated_at order follows the last write.
	inTx(t, s, func(tx app.Tx) error {
		_, _, err := tx.PatchItem(ctx, c.ID, all[0].ID, app.ItemPatch{Set: values("n", 100), At: base.Add(time.Hour)})
		return err
	})
	latest, err := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 1}, OrderBy: "updated_at"})
	if err != nil || len(latest) != 1 || latest[0].ID != all[0].ID {
		t.Fatalf("updated_at desc first = %+v, %v; want the item just patched", latest, err)
	}
}

func ids(items []app.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func testItemFilters(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts",
		app.Field{Key: "category", Type: app.TypeText}, app.Field{Key: "rating", Type: app.TypeNumber}, app.Field{Key: "featured", Type: app.TypeBoolean})
	a := newItem(t, s, c, base, values("category", "news", "rating", 4.5, "featured", true))
	b := newItem(t, s, c, base.Add(time.Second), values("category", "News", "rating", 3, "featured", false))
	inTx(t, s, func(tx app.Tx) error {
		yes := true
		_, _, err := tx.PatchItem(ctx, c.ID, b.ID, app.ItemPatch{IsPublished: &yes, At: base.Add(time.Minute)})
		return err
	})
	query := func(q app.ItemQuery) []string {
		q.Page, q.OrderBy = pagination.Page{Limit: 10}, "created_at"
		items, err := s.Items(ctx, c, q)
		if err != nil {
			t.Fatal(err)
		}
		return ids(items)
	}
	yes, no := true, false
	for name, tc := range map[string]struct {
		q    app.ItemQuery
		want []string
	}{
		"published":            {app.ItemQuery{Published: &yes}, []string{b.ID}},
		"drafts":               {app.ItemQuery{Published: &no}, []string{a.ID}},
		"text, case-sensitive": {app.ItemQuery{FilterKey: "category", FilterValue: json.RawMessage(`"news"`)}, []string{a.ID}},
		"number":               {app.ItemQuery{FilterKey: "rating", FilterValue: json.RawMessage(`3`)}, []string{b.ID}},
		"boolean":              {app.ItemQuery{FilterKey: "featured", FilterValue: json.RawMessage(`true`)}, []string{a.ID}},
		"filter and published": {app.ItemQuery{FilterKey: "featured", FilterValue: json.RawMessage(`true`), Published: &yes}, nil},
		"value nobody has":     {app.ItemQuery{FilterKey: "category", FilterValue: json.RawMessage(`"sport"`)}, nil},
	} {
		if got := query(tc.q); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}

// testItemsProjection: a list asking for some fields gets only those
// values (and an empty projection none), while filters, order and the
// item's own properties see and keep everything; no projection is every
// value.
func testItemsProjection(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts", app.Field{Key: "title", Type: app.TypeText}, app.Field{Key: "body", Type: app.TypeRichText},
		app.Field{Key: "rating", Type: app.TypeNumber}, app.Field{Key: "tags", Type: app.TypeMultiSelect, Options: []string{"a", "b"}})
	a := newItem(t, s, c, base, values("title", "Bread", "body", "Long", "rating", 4.5, "tags", []string{"a"}))
	b := newItem(t, s, c, base.Add(time.Second), values("title", "Cake", "body", "Longer"))
	rating := app.Field{Key: "rating", Type: app.TypeNumber}
	list := func(q app.ItemQuery) []app.Item {
		t.Helper()
		q.Page = pagination.Page{Limit: 10}
		if q.OrderBy == "" {
			q.OrderBy = "created_at"
		}
		items, err := s.Items(ctx, c, q)
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	shown := app.Projection{c.Fields[0], c.Fields[2]}
	got := list(app.ItemQuery{Fields: shown})
	if len(got) != 2 || got[0].ID != b.ID || got[1].ID != a.ID {
		t.Fatalf("projected list = %v, want [%s %s]", ids(got), b.ID, a.ID)
	}
	if v := decoded(t, got[0].Values); !reflect.DeepEqual(v, map[string]any{"title": "Cake"}) {
		t.Errorf("title,rating of an item without rating = %v, want only its title", v)
	}
	if v := decoded(t, got[1].Values); !reflect.DeepEqual(v, map[string]any{"title": "Bread", "rating": 4.5}) {
		t.Errorf("title,rating = %v, want title and rating only", v)
	}
	if got[1].Version != a.Version || !got[1].CreatedAt.Equal(a.CreatedAt) || got[1].CollectionID != c.ID {
		t.Errorf("a projected item lost its own properties: %+v", got[1])
	}
	// A filter and an order on fields left out still apply.
	got = list(app.ItemQuery{Fields: app.Projection{c.Fields[0]}, FilterKey: "body", FilterValue: json.RawMessage(`"Longer"`)})
	if len(got) != 1 || got[0].ID != b.ID || len(got[0].Values) != 1 {
		t.Errorf("filtered on a field left out = %+v, want the cake with its title only", got)
	}
	got = list(app.ItemQuery{Fields: app.Projection{c.Fields[0]}, OrderBy: "rating", OrderField: &rating, Asc: true})
	if !slices.Equal(ids(got), []string{a.ID, b.ID}) {
		t.Errorf("ordered by a field left out = %v, want [%s %s] (no rating last)", ids(got), a.ID, b.ID)
	}
	if got := list(app.ItemQuery{Fields: app.Projection{}}); len(got) != 2 || len(got[0].Values) != 0 || len(got[1].Values) != 0 {
		t.Errorf("an empty projection = %+v, want the items without values", got)
	}
	if got := list(app.ItemQuery{}); len(got) != 2 || len(got[1].Values) != 4 {
		t.Errorf("no projection = %+v, want every value", got)
	}
}

func testPatch(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts", app.Field{Key: "title", Type: app.TypeText}, app.Field{Key: "body", Type: app.TypeText}, app.Field{Key: "tag", Type: app.TypeText})
	it := newItem(t, s, c, base, values("title", "Hello", "body", "First", "tag", "x"))
	yes := true
	var before, after app.Item
	inTx(t, s, func(tx app.Tx) error {
		var err error
		before, after, err = tx.PatchItem(ctx, c.ID, it.ID, app.ItemPatch{Set: values("title", "Hi"), Unset: []string{"tag"}, IsPublished: &yes, At: base.Add(time.Minute)})
		return err
	})
	if before.IsPublished || before.Version != 1 {
		t.Fatalf("before = %+v; want the draft at version 1", before)
	}
	if !after.IsPublished || after.Version != 2 || !after.UpdatedAt.Equal(base.Add(time.Minute)) || !after.CreatedAt.Equal(base) {
		t.Fatalf("after = %+v; want published, version 2, updated now, created unchanged", after)
	}
	if got := decoded(t, after.Values); !reflect.DeepEqual(got, map[string]any{"title": "Hi", "body": "First"}) {
		t.Fatalf("merged values = %v; want title replaced, body kept, tag removed", got)
	}
	_, stored, err := s.Item(ctx, c.SiteID, c.Slug, it.ID)
	if err != nil || stored.Version != 2 || !reflect.DeepEqual(decoded(t, stored.Values), decoded(t, after.Values)) {
		t.Fatalf("stored = %+v, %v", stored, err)
	}
	stale := int64(1)
	err = s.InTx(ctx, func(tx app.Tx) error {
		_, _, err := tx.PatchItem(ctx, c.ID, it.ID, app.ItemPatch{Set: values("title", "Lost"), IfVersion: &stale, At: base.Add(time.Hour)})
		return err
	})
	if !errors.Is(err, app.ErrVersionMismatch) {
		t.Fatalf("patch of a stale version: %v, want ErrVersionMismatch", err)
	}
	current := int64(2)
	inTx(t, s, func(tx app.Tx) error {
		_, _, err := tx.PatchItem(ctx, c.ID, it.ID, app.ItemPatch{Set: values("title", "Kept"), IfVersion: &current, At: base.Add(time.Hour)})
		return err
	})
	for name, target := range map[string][2]string{"unknown item": {c.ID, uuid.NewString()}, "other collection": {uuid.NewString(), it.ID}} {
		err := s.InTx(ctx, func(tx app.Tx) error {
			_, _, err := tx.PatchItem(ctx, target[0], target[1], app.ItemPatch{Set: values("title", "x"), At: base})
			return err
		})
		if !errors.Is(err, app.ErrNotFound) {
			t.Fatalf("%s: %v, want ErrNotFound", name, err)
		}
	}
	other := newCollection(t, s, c.SiteID, "other")
	if got, _, err := s.Item(ctx, c.SiteID, other.Slug, it.ID); !errors.Is(err, app.ErrNotFound) || got.ID != other.ID {
		t.Fatalf("item through another collection: %v (collection %q), want ErrNotFound with that collection", err, got.ID)
	}
}

// testConcurrentPatches races one writer per field on one item: every
// write must survive, which a read-modify-write in the service would lose.
func testConcurrentPatches(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	var fields []app.Field
	for i := range 16 {
		fields = append(fields, app.Field{Key: fmt.Sprintf("f%d", i), Type: app.TypeInteger})
	}
	c := newCollection(t, s, site.ID, "posts", fields...)
	it := newItem(t, s, c, base, nil)
	var wg sync.WaitGroup
	errs := make(chan error, len(fields))
	for i, f := range fields {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.InTx(context.WithoutCancel(ctx), func(tx app.Tx) error {
				_, _, err := tx.PatchItem(ctx, c.ID, it.ID, app.ItemPatch{Set: values(f.Key, i), At: base.Add(time.Second)})
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, got, err := s.Item(ctx, c.SiteID, c.Slug, it.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Values) != len(fields) || got.Version != int64(1+len(fields)) {
		t.Fatalf("after %d concurrent patches: %d values, version %d; every write must survive", len(fields), len(got.Values), got.Version)
	}
}

func testDelete(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts")
	it := newItem(t, s, c, base, nil)
	keep := newItem(t, s, c, base.Add(time.Second), nil)
	wrong := int64(7)
	err := s.InTx(ctx, func(tx app.Tx) error {
		_, err := tx.DeleteItem(ctx, c.ID, it.ID, &wrong, deleted, base.Add(time.Hour))
		return err
	})
	if !errors.Is(err, app.ErrVersionMismatch) {
		t.Fatalf("delete with a wrong version: %v, want ErrVersionMismatch", err)
	}
	var gone app.Item
	inTx(t, s, func(tx app.Tx) error {
		var err error
		gone, err = tx.DeleteItem(ctx, c.ID, it.ID, nil, deleted, base.Add(time.Hour))
		return err
	})
	if gone.ID != it.ID {
		t.Fatalf("deleted %+v", gone)
	}
	if _, _, err := s.Item(ctx, c.SiteID, c.Slug, it.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("deleted item: %v, want ErrNotFound", err)
	}
	err = s.InTx(ctx, func(tx app.Tx) error {
		_, err := tx.DeleteItem(ctx, c.ID, it.ID, nil, deleted, base.Add(time.Hour))
		return err
	})
	if !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	left, err := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 10}, OrderBy: "created_at"})
	if err != nil || !slices.Equal(ids(left), []string{keep.ID}) {
		t.Fatalf("list after delete = %v, %v", ids(left), err)
	}
	// A rolled-back delete leaves the item in the list.
	abort := errors.New("abort")
	_ = s.InTx(ctx, func(tx app.Tx) error {
		_, _ = tx.DeleteItem(ctx, c.ID, keep.ID, nil, deleted, base.Add(time.Hour))
		return abort
	})
	if left, _ := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 10}, OrderBy: "created_at"}); len(left) != 1 {
		t.Fatalf("rolled-back delete: list = %v", ids(left))
	}
}

func testRemoveFields(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts", app.Field{Key: "a", Type: app.TypeText}, app.Field{Key: "b", Type: app.TypeText})
	it := newItem(t, s, c, base, values("a", "1", "b", "2"))
	c.Fields = c.Fields[:1]
	c.Name = "Renamed"
	inTx(t, s, func(tx app.Tx) error { return tx.UpdateCollection(ctx, c, []string{"b"}) })
	_, got, err := s.Item(ctx, c.SiteID, c.Slug, it.ID)
	if err != nil || !reflect.DeepEqual(decoded(t, got.Values), map[string]any{"a": "1"}) {
		t.Fatalf("after removing b: %v, %v", got.Values, err)
	}
	stored, err := s.Collection(ctx, site.ID, "posts")
	if err != nil || stored.Name != "Renamed" || len(stored.Fields) != 1 {
		t.Fatalf("collection after update = %+v, %v", stored, err)
	}
}

// testOrderByField orders by a number and by a text field both ways:
// values in order, ties by id, items without a value after every value.
func testOrderByField(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	rating := app.Field{Key: "rating", Type: app.TypeNumber}
	title := app.Field{Key: "title", Type: app.TypeText}
	c := newCollection(t, s, site.ID, "posts", rating, title)
	mk := func(i int, v app.Values) app.Item { return newItem(t, s, c, base.Add(time.Duration(i)*time.Second), v) }
	a := mk(0, values("rating", 10, "title", "banana"))
	b := mk(1, values("rating", 2.5, "title", "Zebra"))
	d := mk(2, values("rating", 10, "title", "apple"))
	e := mk(3, values("title", "ápple"))
	f := mk(4, values("rating", -1))
	tie := func(x, y app.Item) []string { // the two tied items, by id
		if x.ID < y.ID {
			return []string{x.ID, y.ID}
		}
		return []string{y.ID, x.ID}
	}
	query := func(field app.Field, asc bool) []string {
		items, err := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 10}, OrderBy: field.Key, OrderField: &field, Asc: asc})
		if err != nil {
			t.Fatal(err)
		}
		return ids(items)
	}
	wantAsc := append(append([]string{f.ID, b.ID}, tie(a, d)...), e.ID)
	if got := query(rating, true); !slices.Equal(got, wantAsc) {
		t.Fatalf("rating asc = %v, want %v (numbers by value, ties by id, no value last)", got, wantAsc)
	}
	wantDesc := slices.Clone(wantAsc)
	slices.Reverse(wantDesc)
	if got := query(rating, false); !slices.Equal(got, wantDesc) {
		t.Fatalf("rating desc = %v, want %v (no value first)", got, wantDesc)
	}
	// Text in byte order: upper case before lower case, accents after.
	if got, want := query(title, true), []string{b.ID, d.ID, a.ID, e.ID, f.ID}; !slices.Equal(got, want) {
		t.Fatalf("title asc = %v, want %v", got, want)
	}
}

func newAsset(siteID string, at time.Time, image bool) app.Asset {
	a := app.Asset{ID: uuid.Must(uuid.NewV7()).String(), SiteID: siteID, Name: publicfile.NewName("png"), Filename: "hero.png",
		ContentType: "image/png", Size: 1234, Alt: "A loaf", SHA256: strings.Repeat("ab", 32), CreatedAt: at, UpdatedAt: at}
	if image {
		w, h := 640, 480
		a.Width, a.Height = &w, &h
	} else {
		a.Name, a.Filename, a.ContentType, a.Alt = publicfile.NewName("pdf"), "menu.pdf", "application/pdf", ""
	}
	return a
}

func assetAnnounce(a app.Asset) outbox.Event {
	return outbox.Event{ID: uuid.NewString(), Subject: "atrium.collections.test.asset.created", Payload: []byte(`{"id":"` + a.ID + `"}`), CreatedAt: a.CreatedAt}
}

func insertAsset(t *testing.T, s Store, a app.Asset) {
	t.Helper()
	inTx(t, s, func(tx app.Tx) error { return tx.InsertAsset(t.Context(), a, assetAnnounce(a)) })
}

func assetIDs(as []app.Asset) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

func testAssetsRoundTrip(t *testing.T, s Store) {
	site := newSite(t, s)
	img, pdf := newAsset(site.ID, base, true), newAsset(site.ID, base.Add(time.Second), false)
	insertAsset(t, s, img)
	insertAsset(t, s, pdf)
	for _, want := range []app.Asset{img, pdf} {
		got, err := s.Asset(t.Context(), site.ID, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	}
	if _, err := s.Asset(t.Context(), site.ID, uuid.NewString()); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("unknown asset: %v, want ErrNotFound", err)
	}
	dupID := newAsset(site.ID, base, true)
	dupID.ID = img.ID
	dupName := newAsset(site.ID, base, true)
	dupName.Name = img.Name
	for _, a := range []app.Asset{dupID, dupName} {
		err := s.InTx(t.Context(), func(tx app.Tx) error { return tx.InsertAsset(t.Context(), a, assetAnnounce(a)) })
		if !errors.Is(err, app.ErrDuplicate) {
			t.Errorf("an asset with a taken id or name: %v, want ErrDuplicate", err)
		}
	}
	inTx(t, s, func(tx app.Tx) error {
		for id, want := range map[string]bool{img.ID: true, pdf.ID: true, uuid.NewString(): false} {
			if ok, err := tx.AssetExists(t.Context(), site.ID, id); err != nil || ok != want {
				t.Errorf("AssetExists(%s) = %v, %v; want %v", id, ok, err, want)
			}
		}
		return nil
	})
}

func testAssetTenancy(t *testing.T, s Store) {
	mine, theirs := newSite(t, s), newSite(t, s)
	a := newAsset(mine.ID, base, true)
	insertAsset(t, s, a)
	if _, err := s.Asset(t.Context(), theirs.ID, a.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another site's asset: %v, want ErrNotFound", err)
	}
	if got, err := s.Assets(t.Context(), theirs.ID, pagination.Page{Limit: 10}); err != nil || len(got) != 0 {
		t.Fatalf("another site's list = %v, %v; want empty", assetIDs(got), err)
	}
	alt := "changed"
	inTx(t, s, func(tx app.Tx) error {
		if _, err := tx.UpdateAsset(t.Context(), theirs.ID, a.ID, app.AssetPatch{Alt: &alt, At: base}); !errors.Is(err, app.ErrNotFound) {
			t.Errorf("updating another site's asset: %v, want ErrNotFound", err)
		}
		if _, err := tx.DeleteAsset(t.Context(), theirs.ID, a.ID); !errors.Is(err, app.ErrNotFound) {
			t.Errorf("deleting another site's asset: %v, want ErrNotFound", err)
		}
		if ok, err := tx.AssetExists(t.Context(), theirs.ID, a.ID); ok || err != nil {
			t.Errorf("AssetExists of another site's asset = %v, %v", ok, err)
		}
		return nil
	})
	if got, err := s.Asset(t.Context(), mine.ID, a.ID); err != nil || got.Alt != a.Alt {
		t.Fatalf("the asset after another site's writes: %+v, %v; want it unchanged", got, err)
	}
}

func testAssetsPaging(t *testing.T, s Store) {
	site := newSite(t, s)
	other := newSite(t, s)
	insertAsset(t, s, newAsset(other.ID, base.Add(time.Hour), true))
	// a0 at +0, a1 and a2 at +1m (ties by id: v7 ids, the later insert
	// first), a3 at +2m, inserted out of order.
	var as []app.Asset
	for _, d := range []time.Duration{0, time.Minute, time.Minute, 2 * time.Minute} {
		as = append(as, newAsset(site.ID, base.Add(d), true))
	}
	for _, i := range []int{3, 0, 1, 2} {
		insertAsset(t, s, as[i])
	}
	want := assetIDs([]app.Asset{as[3], as[2], as[1], as[0]})
	list := func(limit, offset int32) []string {
		got, err := s.Assets(t.Context(), site.ID, pagination.Page{Limit: limit, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		return assetIDs(got)
	}
	if got := list(10, 0); !slices.Equal(got, want) {
		t.Fatalf("assets = %v, want %v (newest first, ties by id descending)", got, want)
	}
	if got := list(2, 1); !slices.Equal(got, want[1:3]) {
		t.Fatalf("limit 2 offset 1 = %v, want %v", got, want[1:3])
	}
	if got := list(5, 4); len(got) != 0 {
		t.Fatalf("past the end = %v", got)
	}
}

func testAssetsUpdateAndDelete(t *testing.T, s Store) {
	site := newSite(t, s)
	a, kept := newAsset(site.ID, base, true), newAsset(site.ID, base.Add(time.Second), true)
	insertAsset(t, s, a)
	insertAsset(t, s, kept)
	alt, name, at := "", "renamed.png", base.Add(time.Hour)
	var got app.Asset
	inTx(t, s, func(tx app.Tx) (err error) {
		got, err = tx.UpdateAsset(t.Context(), site.ID, a.ID, app.AssetPatch{Alt: &alt, At: at})
		return err
	})
	if got.Alt != "" || got.Filename != a.Filename || !got.UpdatedAt.Equal(at) || got.Name != a.Name || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("after clearing alt: %+v", got)
	}
	inTx(t, s, func(tx app.Tx) (err error) {
		got, err = tx.UpdateAsset(t.Context(), site.ID, a.ID, app.AssetPatch{Filename: &name, At: at.Add(time.Second)})
		return err
	})
	if got.Alt != "" || got.Filename != name || *got.Width != 640 {
		t.Fatalf("after renaming: %+v", got)
	}
	if read, err := s.Asset(t.Context(), site.ID, a.ID); err != nil || !reflect.DeepEqual(read, got) {
		t.Fatalf("read back %+v, %v; want %+v", read, err, got)
	}
	var deleted app.Asset
	inTx(t, s, func(tx app.Tx) (err error) {
		deleted, err = tx.DeleteAsset(t.Context(), site.ID, a.ID)
		return err
	})
	if deleted.ID != a.ID || deleted.Name != a.Name {
		t.Fatalf("DeleteAsset returned %+v", deleted)
	}
	if _, err := s.Asset(t.Context(), site.ID, a.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("deleted asset: %v", err)
	}
	if got, _ := s.Assets(t.Context(), site.ID, pagination.Page{Limit: 10}); !slices.Equal(assetIDs(got), []string{kept.ID}) {
		t.Fatalf("assets after delete = %v, want only %s", assetIDs(got), kept.ID)
	}
	err := s.InTx(t.Context(), func(tx app.Tx) error {
		_, err := tx.DeleteAsset(t.Context(), site.ID, a.ID)
		return err
	})
	if !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("deleting again: %v, want ErrNotFound", err)
	}
}

func testAssetsRollback(t *testing.T, s Store) {
	site := newSite(t, s)
	first := newAsset(site.ID, base, true)
	insertAsset(t, s, first)
	abort := errors.New("abort")
	gone := newAsset(site.ID, base.Add(time.Second), true)
	alt := "never"
	err := s.InTx(t.Context(), func(tx app.Tx) error {
		if err := tx.InsertAsset(t.Context(), gone, assetAnnounce(gone)); err != nil {
			return err
		}
		if _, err := tx.UpdateAsset(t.Context(), site.ID, first.ID, app.AssetPatch{Alt: &alt, At: base}); err != nil {
			return err
		}
		if _, err := tx.DeleteAsset(t.Context(), site.ID, first.ID); err != nil {
			return err
		}
		return abort
	})
	if !errors.Is(err, abort) {
		t.Fatalf("error = %v, want the closure's", err)
	}
	got, err := s.Assets(t.Context(), site.ID, pagination.Page{Limit: 10})
	if err != nil || !slices.Equal(assetIDs(got), []string{first.ID}) || got[0].Alt != first.Alt {
		t.Fatalf("after a rolled-back transaction: %+v, %v; want only the first asset as it was", got, err)
	}
	if _, err := s.Asset(t.Context(), site.ID, gone.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("the rolled-back asset: %v", err)
	}
}

// searchQuery lists c's items matching q's words (app.Words), newest first
// unless order says otherwise.
func searchQuery(t *testing.T, s Store, c app.Collection, q string, order string, published *bool, page pagination.Page) []string {
	t.Helper()
	if order == "" {
		order = "created_at"
	}
	items, err := s.Items(t.Context(), c, app.ItemQuery{Page: page, OrderBy: order, Words: app.Words(q), Published: published})
	if err != nil {
		t.Fatal(err)
	}
	return ids(items)
}

func testSearch(t *testing.T, s Store) {
	ctx := t.Context()
	site, other := newSite(t, s), newSite(t, s)
	fields := []app.Field{{Key: "title", Type: app.TypeText}, {Key: "body", Type: app.TypeRichText},
		{Key: "contact", Type: app.TypeEmail}, {Key: "notes", Type: app.TypeJSON}}
	c := newCollection(t, s, site.ID, "posts", fields...)
	loaf := newItem(t, s, c, base, values("title", "Sourdough loaf", "body", "<p>Feed the <b>starter</b> daily.</p>"))
	rye := newItem(t, s, c, base.Add(time.Second), values("title", "Rye bread", "body", "<p>Rye and Starter, starter; STARTER!</p>"))
	baguette := newItem(t, s, c, base.Add(2*time.Second), values("title", "Baguette", "body", `<a href="starter" title="starter">crust</a> &starter; more`))
	newItem(t, s, c, base.Add(3*time.Second), values("title", "Contact", "contact", "starter@example.com", "notes", map[string]any{"k": "starter"}))
	newItem(t, s, c, base.Add(4*time.Second), values("title", "Untitled"))
	elsewhere := newCollection(t, s, other.ID, "posts", fields...)
	newItem(t, s, elsewhere, base, values("title", "starter of another site"))
	inTx(t, s, func(tx app.Tx) error {
		yes := true
		_, _, err := tx.PatchItem(ctx, c.ID, loaf.ID, app.ItemPatch{IsPublished: &yes, At: base.Add(time.Minute)})
		return err
	})
	all := pagination.Page{Limit: 10}
	yes := true
	for _, tc := range []struct {
		q, order  string
		published *bool
		page      pagination.Page
		want      []string
	}{
		{"starter", "", nil, all, []string{rye.ID, loaf.ID}},
		{"Starter", "", nil, all, []string{rye.ID, loaf.ID}},
		{"starter", app.OrderRelevance, nil, all, []string{rye.ID, loaf.ID}},
		{"starter", "", &yes, all, []string{loaf.ID}},
		{"rye starter", "", nil, all, []string{rye.ID}},
		{"rye, loaf", "", nil, all, nil},
		{"crust", "", nil, all, []string{baguette.ID}},
		{"example", "", nil, all, nil},
		{"starter", app.OrderRelevance, nil, pagination.Page{Limit: 1, Offset: 1}, []string{loaf.ID}},
	} {
		got := searchQuery(t, s, c, tc.q, tc.order, tc.published, tc.page)
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("q=%q order=%q published=%v page=%+v: got %v, want %v", tc.q, tc.order, tc.published, tc.page, got, tc.want)
		}
	}
}

// testSearchDefinition: the words searched follow the collection's
// fields as they are now.
func testSearchDefinition(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts", app.Field{Key: "title", Type: app.TypeText}, app.Field{Key: "summary", Type: app.TypeText})
	a := newItem(t, s, c, base, values("title", "Croissant", "summary", "butter layers"))
	b := newItem(t, s, c, base.Add(time.Second), values("title", "Butter", "summary", "salted"))
	if got := searchQuery(t, s, c, "butter", "", nil, pagination.Page{Limit: 10}); !slices.Equal(got, []string{b.ID, a.ID}) {
		t.Fatalf("q=butter = %v, want both items", got)
	}
	c.Fields = c.Fields[:1]
	inTx(t, s, func(tx app.Tx) error { return tx.UpdateCollection(ctx, c, []string{"summary"}) })
	if got := searchQuery(t, s, c, "butter", "", nil, pagination.Page{Limit: 10}); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("q=butter after removing summary = %v, want only the item titled Butter", got)
	}
}

// testByID: the reads expand uses return the named items of one
// collection and assets of one site, never another's.
func testByID(t *testing.T, s Store) {
	ctx := t.Context()
	site, other := newSite(t, s), newSite(t, s)
	c := newCollection(t, s, site.ID, "authors", app.Field{Key: "name", Type: app.TypeText})
	d := newCollection(t, s, site.ID, "tags", app.Field{Key: "name", Type: app.TypeText})
	elsewhere := newCollection(t, s, other.ID, "authors", app.Field{Key: "name", Type: app.TypeText})
	a := newItem(t, s, c, base, values("name", "Ana"))
	b := newItem(t, s, c, base.Add(time.Second), values("name", "Bo"))
	tag := newItem(t, s, d, base, values("name", "bread"))
	foreign := newItem(t, s, elsewhere, base, values("name", "Eve"))
	got, err := s.ItemsByID(ctx, c.ID, []string{a.ID, b.ID, tag.ID, foreign.ID, uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	gotIDs := ids(got)
	slices.Sort(gotIDs)
	want := []string{a.ID, b.ID}
	slices.Sort(want)
	if !slices.Equal(gotIDs, want) {
		t.Fatalf("ItemsByID = %v, want only the collection's %v", gotIDs, want)
	}
	if got[0].Values == nil || got[0].CollectionID != c.ID {
		t.Fatalf("ItemsByID item = %+v, want its values and collection", got[0])
	}
	mine, theirs := newAsset(site.ID, base, false), newAsset(other.ID, base, true)
	insertAsset(t, s, mine)
	insertAsset(t, s, theirs)
	as, err := s.AssetsByID(ctx, site.ID, []string{mine.ID, theirs.ID, uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(assetIDs(as), []string{mine.ID}) {
		t.Fatalf("AssetsByID = %v, want only the site's %s", assetIDs(as), mine.ID)
	}
}
