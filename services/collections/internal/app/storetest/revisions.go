package storetest

import (
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// The edits the suite's writes are made with.
var (
	editor  = app.Actor{Kind: "user", ID: "user-1", MemberID: "member-1"}
	created = app.Edit{Change: app.ChangeCreated, Actor: app.Actor{Kind: "key", ID: "key-1"}}
	updated = app.Edit{Change: app.ChangeUpdated, Actor: editor}
	deleted = app.Edit{Change: app.ChangeDeleted, Actor: editor}
)

func revisions(t *testing.T, s Store, c app.Collection, itemID string, before int64, limit int) []app.Revision {
	t.Helper()
	revs, err := s.Revisions(t.Context(), c.ID, itemID, before, limit)
	if err != nil {
		t.Fatal(err)
	}
	return revs
}

func versions(revs []app.Revision) []int64 {
	out := make([]int64, len(revs))
	for i, r := range revs {
		out[i] = r.Version
	}
	return out
}

// testRevisionsOfEveryWrite: every kind of item write keeps a revision in
// its transaction, with the item's whole data and is_published after it,
// its version, change, actor and time; they list newest first, page by
// version, and belong to their collection only.
func testRevisionsOfEveryWrite(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts")
	it := newItem(t, s, c, base, values("title", "Draft", "tag", "bread"))
	yes, no := true, false
	patch := func(p app.ItemPatch) app.Item {
		t.Helper()
		var after app.Item
		inTx(t, s, func(tx app.Tx) error {
			var err error
			_, after, err = tx.PatchItem(ctx, c.ID, it.ID, p)
			return err
		})
		return after
	}
	scheduler := app.Edit{Change: app.ChangeScheduled, Actor: app.Actor{Kind: "service", ID: "collections-scheduler"}}
	patch(app.ItemPatch{Set: values("title", "Rye"), Unset: []string{"tag"}, At: base.Add(time.Minute), Edit: updated})
	patch(app.ItemPatch{IsPublished: &yes, SetPublishAt: true, At: base.Add(2 * time.Minute), Edit: scheduler})
	patch(app.ItemPatch{IsPublished: &no, At: base.Add(3 * time.Minute), Edit: updated})
	// A patch refused (a stale version) and a transaction rolled back
	// keep nothing.
	stale := int64(1)
	if err := s.InTx(ctx, func(tx app.Tx) error {
		_, _, err := tx.PatchItem(ctx, c.ID, it.ID, app.ItemPatch{Set: values("title", "Lost"), IfVersion: &stale, At: base.Add(time.Hour), Edit: updated})
		return err
	}); !errors.Is(err, app.ErrVersionMismatch) {
		t.Fatalf("stale patch = %v, want ErrVersionMismatch", err)
	}
	abort := errors.New("abort")
	_ = s.InTx(ctx, func(tx app.Tx) error {
		_, _, _ = tx.PatchItem(ctx, c.ID, it.ID, app.ItemPatch{Set: values("title", "Lost"), At: base.Add(time.Hour), Edit: updated})
		return abort
	})

	got := revisions(t, s, c, it.ID, 0, 10)
	want := []app.Revision{
		{ItemID: it.ID, CollectionID: c.ID, Version: 4, Values: values("title", "Rye"), IsPublished: false, Change: app.ChangeUpdated, Actor: editor, CreatedAt: base.Add(3 * time.Minute)},
		{ItemID: it.ID, CollectionID: c.ID, Version: 3, Values: values("title", "Rye"), IsPublished: true, Change: app.ChangeScheduled, Actor: scheduler.Actor, CreatedAt: base.Add(2 * time.Minute)},
		{ItemID: it.ID, CollectionID: c.ID, Version: 2, Values: values("title", "Rye"), IsPublished: false, Change: app.ChangeUpdated, Actor: editor, CreatedAt: base.Add(time.Minute)},
		{ItemID: it.ID, CollectionID: c.ID, Version: 1, Values: values("title", "Draft", "tag", "bread"), IsPublished: false, Change: app.ChangeCreated, Actor: created.Actor, CreatedAt: base},
	}
	if len(got) != len(want) {
		t.Fatalf("revisions %v, want versions %v", versions(got), versions(want))
	}
	for i := range want {
		if !reflect.DeepEqual(decoded(t, got[i].Values), decoded(t, want[i].Values)) || !got[i].CreatedAt.Equal(want[i].CreatedAt) {
			t.Fatalf("revision %d = %+v, want %+v", want[i].Version, got[i], want[i])
		}
		got[i].Values, want[i].Values, got[i].CreatedAt, want[i].CreatedAt = nil, nil, time.Time{}, time.Time{}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("revision %d = %+v, want %+v", want[i].Version, got[i], want[i])
		}
	}
	// Paging: a limit, then the versions before the last one read.
	if got := versions(revisions(t, s, c, it.ID, 0, 2)); !reflect.DeepEqual(got, []int64{4, 3}) {
		t.Fatalf("first page of 2 = %v, want [4 3]", got)
	}
	if got := versions(revisions(t, s, c, it.ID, 3, 2)); !reflect.DeepEqual(got, []int64{2, 1}) {
		t.Fatalf("page before 3 = %v, want [2 1]", got)
	}
	if got := revisions(t, s, c, it.ID, 1, 2); len(got) != 0 {
		t.Fatalf("page before 1 = %v, want none", versions(got))
	}
	r, err := s.Revision(ctx, c.ID, it.ID, 1)
	if err != nil || r.Version != 1 || r.Change != app.ChangeCreated || !reflect.DeepEqual(decoded(t, r.Values), map[string]any{"title": "Draft", "tag": "bread"}) {
		t.Fatalf("revision 1 = %+v (%v)", r, err)
	}
	if _, err := s.Revision(ctx, c.ID, it.ID, 5); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("revision 5 = %v, want ErrNotFound", err)
	}
	// Another collection (another site's) sees none of them.
	other := newCollection(t, s, newSite(t, s).ID, "posts")
	if got := revisions(t, s, other, it.ID, 0, 10); len(got) != 0 {
		t.Fatalf("another collection's revisions of the item: %v", versions(got))
	}
	if _, err := s.Revision(ctx, other.ID, it.ID, 1); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another collection's revision 1 = %v, want ErrNotFound", err)
	}

	// The insert that checks the definition keeps one too.
	fast := app.Item{ID: uuid.NewString(), SiteID: c.SiteID, CollectionID: c.ID, Values: values("title", "Fast"), IsPublished: true, Version: 1, CreatedAt: base, UpdatedAt: base}
	if err := s.InsertItem(ctx, c, fast, created, announce(fast)); err != nil {
		t.Fatal(err)
	}
	if got := revisions(t, s, c, fast.ID, 0, 10); len(got) != 1 || got[0].Version != 1 || !got[0].IsPublished || got[0].Change != app.ChangeCreated ||
		!reflect.DeepEqual(decoded(t, got[0].Values), map[string]any{"title": "Fast"}) {
		t.Fatalf("revisions of an item made by Store.InsertItem: %+v", got)
	}
}

// testRevisionsOutliveTheItem: a delete keeps a revision (the data the
// item had, one version more, not published) and every earlier one; the
// purge deletes a deleted item's revisions once the delete is older than
// the cutoff, not before, not those of an item restored since, and once.
func testRevisionsOutliveTheItem(t *testing.T, s Store) {
	ctx := t.Context()
	c := newCollection(t, s, newSite(t, s).ID, "posts")
	gone := newItem(t, s, c, base, values("title", "Gone"))
	back := newItem(t, s, c, base, values("title", "Back"))
	live := newItem(t, s, c, base, values("title", "Live"))
	at := base.Add(24 * time.Hour)
	for _, it := range []app.Item{gone, back} {
		inTx(t, s, func(tx app.Tx) error { _, err := tx.DeleteItem(ctx, c.ID, it.ID, nil, deleted, at); return err })
	}
	revs := revisions(t, s, c, gone.ID, 0, 10)
	if len(revs) != 2 || revs[0].Version != 2 || revs[0].Change != app.ChangeDeleted || revs[0].IsPublished || !revs[0].CreatedAt.Equal(at) ||
		!reflect.DeepEqual(decoded(t, revs[0].Values), map[string]any{"title": "Gone"}) || revs[0].Actor != editor {
		t.Fatalf("revisions after a delete: %+v", revs)
	}
	var latest app.Revision
	inTx(t, s, func(tx app.Tx) error { var err error; latest, err = tx.LatestRevision(ctx, c.ID, gone.ID); return err })
	if latest.Version != 2 || latest.Change != app.ChangeDeleted {
		t.Fatalf("latest revision of a deleted item = %+v", latest)
	}
	if err := s.InTx(ctx, func(tx app.Tx) error { _, err := tx.LatestRevision(ctx, c.ID, uuid.NewString()); return err }); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("latest revision of no item = %v, want ErrNotFound", err)
	}
	// back is made again (a restore): its newest revision is no delete.
	again := app.Item{ID: back.ID, SiteID: c.SiteID, CollectionID: c.ID, Values: values("title", "Back"), Version: 3, CreatedAt: at.Add(time.Minute), UpdatedAt: at.Add(time.Minute)}
	restored := app.Edit{Change: app.ChangeRestored, Actor: editor}
	inTx(t, s, func(tx app.Tx) error { return tx.InsertItem(ctx, again, restored, announce(again)) })
	if got := versions(revisions(t, s, c, back.ID, 0, 10)); !reflect.DeepEqual(got, []int64{3, 2, 1}) {
		t.Fatalf("revisions of a restored item = %v, want [3 2 1]", got)
	}

	purge := func(before time.Time) int {
		t.Helper()
		var n int
		inTx(t, s, func(tx app.Tx) error { var err error; n, err = tx.PurgeRevisions(ctx, before, 100); return err })
		return n
	}
	if n := purge(at); n != 0 {
		t.Fatalf("purge of deletes before the delete's time purged %d items", n)
	}
	if got := revisions(t, s, c, gone.ID, 0, 10); len(got) != 2 {
		t.Fatalf("revisions of a deleted item within the retention: %v", versions(got))
	}
	if n := purge(at.Add(time.Second)); n != 1 {
		t.Fatalf("purge after the retention purged %d items, want 1 (the deleted one, not the restored one)", n)
	}
	if got := revisions(t, s, c, gone.ID, 0, 10); len(got) != 0 {
		t.Fatalf("revisions of a purged item: %v", versions(got))
	}
	if _, err := s.Revision(ctx, c.ID, gone.ID, 1); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("a purged revision = %v, want ErrNotFound", err)
	}
	for _, it := range []app.Item{back, live} {
		if got := revisions(t, s, c, it.ID, 0, 10); len(got) == 0 {
			t.Fatalf("the purge took the revisions of item %s, which exists", it.ID)
		}
	}
	if n := purge(at.Add(time.Hour)); n != 0 {
		t.Fatalf("a second purge purged %d items, want 0", n)
	}
}

// testPurgesAreDisjoint: purges running at once (replicas) purge each
// deleted item once between them, and fail on none.
func testPurgesAreDisjoint(t *testing.T, s Store) {
	ctx := t.Context()
	c := newCollection(t, s, newSite(t, s).ID, "posts")
	const items, workers = 12, 6
	for range items {
		it := newItem(t, s, c, base, values("title", "x"))
		inTx(t, s, func(tx app.Tx) error { _, err := tx.DeleteItem(ctx, c.ID, it.ID, nil, deleted, base); return err })
	}
	var (
		total atomic.Int64
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				var n int
				err := s.InTx(ctx, func(tx app.Tx) error {
					var err error
					n, err = tx.PurgeRevisions(ctx, base.Add(time.Second), 2)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
				total.Add(int64(n))
			}
		})
	}
	wg.Wait()
	if total.Load() != items {
		t.Fatalf("purged %d items in all, want %d", total.Load(), items)
	}
}
