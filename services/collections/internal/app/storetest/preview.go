package storetest

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

func newPreview(c app.Collection, it app.Item, at time.Time, life time.Duration) app.PreviewLink {
	return app.PreviewLink{ID: uuid.NewString(), SiteID: c.SiteID, CollectionID: c.ID, Collection: c.Slug, ItemID: it.ID,
		TokenHash: app.HashToken(uuid.NewString()), CreatedAt: at, ExpiresAt: at.Add(life)}
}

func insertPreview(t *testing.T, s Store, l app.PreviewLink) {
	t.Helper()
	inTx(t, s, func(tx app.Tx) error { return tx.InsertPreviewLink(t.Context(), l) })
}

func previewIDs(ls []app.PreviewLink) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

// testPreviewLinks: a link round-trips by its token's hash with its
// collection's slug; the list is the collection's live links, newest
// first, of one item when asked.
func testPreviewLinks(t *testing.T, s Store) {
	ctx := t.Context()
	site := newSite(t, s)
	c := newCollection(t, s, site.ID, "posts")
	other := newCollection(t, s, site.ID, "pages")
	a, b := newItem(t, s, c, base, nil), newItem(t, s, c, base, nil)
	page := newItem(t, s, other, base, nil)
	first := newPreview(c, a, base, time.Hour)
	second := newPreview(c, b, base.Add(time.Second), time.Hour)
	expired := newPreview(c, a, base.Add(2*time.Second), time.Minute)
	elsewhere := newPreview(other, page, base, time.Hour)
	for _, l := range []app.PreviewLink{first, second, expired, elsewhere} {
		insertPreview(t, s, l)
	}
	got, err := s.PreviewLink(ctx, second.TokenHash)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, second) {
		t.Fatalf("by token: got %+v, want %+v", got, second)
	}
	// An expired link is still found by its token: the use case compares
	// the time, so that expiry needs no write.
	if got, err := s.PreviewLink(ctx, expired.TokenHash); err != nil || got.ID != expired.ID {
		t.Fatalf("expired link by token: %+v, %v", got, err)
	}
	if _, err := s.PreviewLink(ctx, app.HashToken("nothing")); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("unknown token: %v, want ErrNotFound", err)
	}
	now := base.Add(30 * time.Minute)
	list, err := s.PreviewLinks(ctx, c, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{second.ID, first.ID}; !slices.Equal(previewIDs(list), want) {
		t.Fatalf("live links = %v, want %v (newest first, the expired one left out)", previewIDs(list), want)
	}
	if list[0].Collection != "posts" {
		t.Fatalf("listed link's collection = %q", list[0].Collection)
	}
	list, err = s.PreviewLinks(ctx, c, a.ID, base)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{expired.ID, first.ID}; !slices.Equal(previewIDs(list), want) {
		t.Fatalf("links of one item before any expiry = %v, want %v", previewIDs(list), want)
	}
	if list, _ := s.PreviewLinks(ctx, c, "", base.Add(2*time.Hour)); len(list) != 0 {
		t.Fatalf("after every expiry the list = %v, want none", previewIDs(list))
	}
	// Pruning deletes the links expired before the time, a batch at most.
	var n int
	inTx(t, s, func(tx app.Tx) error {
		var err error
		n, err = tx.DeleteExpiredPreviewLinks(ctx, base.Add(30*time.Minute), 10)
		return err
	})
	if n != 1 {
		t.Fatalf("pruned %d links, want the one expired", n)
	}
	if _, err := s.PreviewLink(ctx, expired.TokenHash); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("pruned link: %v, want ErrNotFound", err)
	}
	if _, err := s.PreviewLink(ctx, first.TokenHash); err != nil {
		t.Fatalf("a live link was pruned: %v", err)
	}
	inTx(t, s, func(tx app.Tx) error {
		var err error
		n, err = tx.DeleteExpiredPreviewLinks(ctx, base.Add(2*time.Hour), 2)
		return err
	})
	if n != 2 {
		t.Fatalf("pruned %d links with a limit of 2, want 2", n)
	}
}

// testPreviewLinksRevokeAndTenancy: revoking deletes a link; another
// site's link cannot be revoked; deleting an item takes its links; a
// rolled-back insert leaves nothing.
func testPreviewLinksRevokeAndTenancy(t *testing.T, s Store) {
	ctx := t.Context()
	site, stranger := newSite(t, s), newSite(t, s)
	c := newCollection(t, s, site.ID, "posts")
	it, kept := newItem(t, s, c, base, nil), newItem(t, s, c, base, nil)
	l, k := newPreview(c, it, base, time.Hour), newPreview(c, kept, base, time.Hour)
	insertPreview(t, s, l)
	insertPreview(t, s, k)
	err := s.InTx(ctx, func(tx app.Tx) error { return tx.DeletePreviewLink(ctx, stranger.ID, l.ID) })
	if !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another site's revoke: %v, want ErrNotFound", err)
	}
	if _, err := s.PreviewLink(ctx, l.TokenHash); err != nil {
		t.Fatalf("after another site's revoke the link must live: %v", err)
	}
	inTx(t, s, func(tx app.Tx) error { return tx.DeletePreviewLink(ctx, site.ID, l.ID) })
	if _, err := s.PreviewLink(ctx, l.TokenHash); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("revoked link: %v, want ErrNotFound", err)
	}
	err = s.InTx(ctx, func(tx app.Tx) error { return tx.DeletePreviewLink(ctx, site.ID, l.ID) })
	if !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("second revoke: %v, want ErrNotFound", err)
	}
	inTx(t, s, func(tx app.Tx) error {
		_, err := tx.DeleteItem(ctx, c.ID, kept.ID, nil, deleted, base.Add(time.Hour))
		return err
	})
	if _, err := s.PreviewLink(ctx, k.TokenHash); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("link to a deleted item: %v, want ErrNotFound", err)
	}
	abort := errors.New("abort")
	rolled := newPreview(c, it, base, time.Hour)
	_ = s.InTx(ctx, func(tx app.Tx) error { _ = tx.InsertPreviewLink(ctx, rolled); return abort })
	if _, err := s.PreviewLink(ctx, rolled.TokenHash); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("rolled-back link: %v, want ErrNotFound", err)
	}
	if list, _ := s.PreviewLinks(ctx, c, "", base); len(list) != 0 {
		t.Fatalf("links left = %v, want none", previewIDs(list))
	}
}
