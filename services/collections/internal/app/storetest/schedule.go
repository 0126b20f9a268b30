package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

func ptr(t time.Time) *time.Time { return &t }

// testSchedules: an item's pending changes round-trip through insert,
// patch (set, keep, clear) and every read; ClaimDue returns the items with
// a change due, and nothing else.
func testSchedules(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts")
	soon, late := base.Add(time.Minute), base.Add(time.Hour)
	it := app.Item{ID: uuid.NewString(), SiteID: c.SiteID, CollectionID: c.ID, Version: 1, CreatedAt: base, UpdatedAt: base,
		PublishAt: ptr(soon), UnpublishAt: ptr(late)}
	inTx(t, s, func(tx app.Tx) error { return tx.InsertItem(ctx, it, created, announce(it)) })
	plain := newItem(t, s, c, base, nil)
	_, got, err := s.Item(ctx, c.SiteID, c.Slug, it.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.PublishAt == nil || !got.PublishAt.Equal(soon) || got.UnpublishAt == nil || !got.UnpublishAt.Equal(late) {
		t.Fatalf("read back %+v, want publish_at %s, unpublish_at %s", got, soon, late)
	}
	list, err := s.Items(ctx, c, app.ItemQuery{Page: pagination.Page{Limit: 10}, OrderBy: "created_at"})
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %v, %v", ids(list), err)
	}
	for _, l := range list {
		if (l.ID == it.ID) != (l.PublishAt != nil) {
			t.Fatalf("listed %+v: the schedule is not the item's", l)
		}
	}
	due := func(now time.Time) []string {
		t.Helper()
		var out []string
		inTx(t, s, func(tx app.Tx) error {
			ds, err := tx.ClaimDue(ctx, now, 10)
			for _, d := range ds {
				if d.SiteID != site.ID || d.Slug != "posts" || d.CollectionID != c.ID {
					t.Errorf("due item %+v: wrong collection", d)
				}
				out = append(out, d.ID)
			}
			return err
		})
		return out
	}
	if got := due(base); len(got) != 0 {
		t.Fatalf("due before any time: %v", got)
	}
	if got := due(soon); !slices.Equal(got, []string{it.ID}) {
		t.Fatalf("due at publish_at: %v, want the scheduled item", got)
	}
	// A patch that touches no schedule field keeps it; one that sets a
	// field replaces it; nil clears.
	var after app.Item
	inTx(t, s, func(tx app.Tx) error {
		_, after, err = tx.PatchItem(ctx, c.ID, it.ID, app.ItemPatch{Set: values("x", 1), At: base})
		return err
	})
	if after.PublishAt == nil || after.UnpublishAt == nil {
		t.Fatalf("a patch of the values dropped the schedule: %+v", after)
	}
	inTx(t, s, func(tx app.Tx) error {
		_, after, err = tx.PatchItem(ctx, c.ID, it.ID, app.ItemPatch{SetPublishAt: true, SetUnpublishAt: true, UnpublishAt: ptr(late.Add(time.Hour)), At: base})
		return err
	})
	if after.PublishAt != nil || after.UnpublishAt == nil || !after.UnpublishAt.Equal(late.Add(time.Hour)) {
		t.Fatalf("after clearing publish_at and moving unpublish_at: %+v", after)
	}
	if got := due(late); len(got) != 0 {
		t.Fatalf("due after the changes moved: %v", got)
	}
	if got := due(late.Add(time.Hour)); !slices.Equal(got, []string{it.ID}) {
		t.Fatalf("due at the new unpublish_at: %v", got)
	}
	// A deleted item is due no more; neither is one that never was.
	inTx(t, s, func(tx app.Tx) error {
		_, err := tx.DeleteItem(ctx, c.ID, it.ID, nil, deleted, base.Add(time.Hour))
		return err
	})
	if got := due(late.Add(24 * time.Hour)); len(got) != 0 {
		t.Fatalf("due after delete: %v (plain item %s)", got, plain.ID)
	}
}

// testClaimsAreDisjoint: schedulers that claim and apply concurrently
// (replicas) apply each due change once.
func testClaimsAreDisjoint(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts")
	const items, workers = 12, 6
	for range items {
		it := app.Item{ID: uuid.NewString(), SiteID: c.SiteID, CollectionID: c.ID, Version: 1, CreatedAt: base, UpdatedAt: base, PublishAt: ptr(base)}
		inTx(t, s, func(tx app.Tx) error { return tx.InsertItem(ctx, it, created, announce(it)) })
	}
	var (
		mu      sync.Mutex
		applied = map[string]int{}
		wg      sync.WaitGroup
	)
	yes := true
	for range workers {
		wg.Go(func() {
			for {
				var got []app.DueItem
				err := s.InTx(ctx, func(tx app.Tx) error {
					var err error
					if got, err = tx.ClaimDue(ctx, base.Add(time.Second), 2); err != nil {
						return err
					}
					for _, d := range got {
						if _, _, err := tx.PatchItem(ctx, d.CollectionID, d.ID, app.ItemPatch{IsPublished: &yes, SetPublishAt: true, At: base}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					applied[d.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(applied) != items {
		t.Fatalf("applied %d items, want %d", len(applied), items)
	}
	for id, n := range applied {
		if n != 1 {
			t.Fatalf("item %s applied %d times, want once", id, n)
		}
	}
}
