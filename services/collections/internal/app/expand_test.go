package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// countingStore counts the reads expand makes, by collection.
type countingStore struct {
	app.Store
	mu     sync.Mutex
	items  map[string]int
	assets int
}

func (s *countingStore) ItemsByID(ctx context.Context, collectionID string, ids []string) ([]app.Item, error) {
	s.mu.Lock()
	s.items[collectionID]++
	s.mu.Unlock()
	return s.Store.ItemsByID(ctx, collectionID, ids)
}

func (s *countingStore) AssetsByID(ctx context.Context, siteID string, ids []string) ([]app.Asset, error) {
	s.mu.Lock()
	s.assets++
	s.mu.Unlock()
	return s.Store.AssetsByID(ctx, siteID, ids)
}

// TestExpandReadsOncePerCollectionAndLevel: a page of 60 posts expanding
// their author, the author's avatar, their category and the category's
// parent costs one read per referenced collection and level (authors,
// categories, then categories again and the assets), not one per item; a
// deleted target and a draft hidden from a published-only reader expand to
// null.
func TestExpandReadsOncePerCollectionAndLevel(t *testing.T) {
	w := newWorld(t, app.AssetConfig{})
	ctx := t.Context()
	counting := &countingStore{Store: w.store, items: map[string]int{}}
	content := app.NewContent(app.ContentStoreOf(counting), app.Clock(time.Now))
	define := func(slug string, fields ...app.Field) app.Collection {
		c, err := content.CreateCollection(ctx, w.site, app.NewCollection{Name: slug, Slug: slug, Fields: fields})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	authors := define("authors", app.Field{Key: "name", Type: app.TypeText}, app.Field{Key: "avatar", Type: app.TypeAsset})
	categories := define("categories", app.Field{Key: "name", Type: app.TypeText}, app.Field{Key: "parent", Type: app.TypeReference, Target: "categories"})
	define("posts", app.Field{Key: "title", Type: app.TypeText},
		app.Field{Key: "author", Type: app.TypeReference, Target: "authors"},
		app.Field{Key: "category", Type: app.TypeReference, Target: "categories"})
	avatar, err := w.assets.Upload(ctx, w.site, upload(pngFile(t, 4, 4), "ana.png", "image/png", true))
	if err != nil {
		t.Fatal(err)
	}
	create := func(slug string, data map[string]any, published bool) string {
		_, it, err := content.CreateItem(ctx, w.site, slug, app.NewItem{Data: data, IsPublished: &published})
		if err != nil {
			t.Fatal(err)
		}
		return it.ID
	}
	var authorIDs []string
	for i := range 4 {
		authorIDs = append(authorIDs, create("authors", map[string]any{"name": fmt.Sprint("Author ", i), "avatar": avatar.ID}, true))
	}
	root := create("categories", map[string]any{"name": "Food"}, true)
	bread := create("categories", map[string]any{"name": "Bread", "parent": root}, true)
	draft := create("categories", map[string]any{"name": "Secret", "parent": root}, false)
	for i := range 60 {
		category := bread
		if i == 0 {
			category = draft
		}
		create("posts", map[string]any{"title": fmt.Sprint("Post ", i), "author": authorIDs[i%4], "category": category}, true)
	}
	if err := content.DeleteItem(ctx, w.site, "authors", authorIDs[3], ""); err != nil {
		t.Fatal(err)
	}
	c, items, _, err := content.Items(ctx, w.site, "posts", app.ListParams{})
	if err != nil || len(items) != 60 {
		t.Fatalf("list = %d items, %v", len(items), err)
	}
	x, err := content.Expand(ctx, w.site, c, items, "author, category.parent,author.avatar", true)
	if err != nil {
		t.Fatal(err)
	}
	if counting.items[authors.ID] != 1 || counting.items[categories.ID] != 2 || counting.assets != 1 {
		t.Fatalf("reads: authors %d, categories %d, assets %d; want 1, 2 (two levels), 1",
			counting.items[authors.ID], counting.items[categories.ID], counting.assets)
	}
	for _, it := range items {
		author := app.RefID(it.Values["author"])
		_, found := x.Items[author]
		if found != (author != authorIDs[3]) {
			t.Fatalf("author %s expanded = %v; want the three that exist, not the deleted one", author, found)
		}
	}
	if _, ok := x.Items[draft]; ok {
		t.Fatal("a draft category expanded for a published-only reader")
	}
	if x.Items[bread].Item.Values == nil || x.Items[root].Collection.Slug != "categories" {
		t.Fatalf("category and its parent not expanded: %+v", x.Items)
	}
	if _, ok := x.Assets[avatar.ID]; !ok {
		t.Fatal("the authors' avatar was not expanded")
	}
	for _, tc := range []struct{ expand, says string }{
		{"title", `Invalid expand field "title". Expandable: author, category`},
		{"author.name", "Expandable: avatar"},
		{"author.avatar.size", "is an asset"},
		{"category.parent.parent.parent", "at most 3"},
		{"", ""},
	} {
		_, err := content.Expand(ctx, w.site, c, items, tc.expand, false)
		if tc.says == "" {
			if err != nil {
				t.Fatalf("empty expand: %v", err)
			}
			continue
		}
		wantKind(t, err, apperr.KindInvalid, tc.says)
	}
}
