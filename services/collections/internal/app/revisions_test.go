package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// asKey is ctx as a request with a write key of the cms's site.
func (c *cms) asKey(ctx context.Context) context.Context {
	return principal.NewContext(ctx, principal.Principal{Kind: principal.KindKey, Subject: "key-1", SiteID: c.site,
		Scopes: []principal.Scope{principal.ScopeRead, principal.ScopeWrite}})
}

func (c *cms) revisions(t *testing.T, ctx context.Context, id string) []app.Revision {
	t.Helper()
	_, page, err := c.content.Revisions(ctx, c.site, "posts", id, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	return page.Revisions
}

func titles(t *testing.T, revs []app.Revision) []string {
	t.Helper()
	var out []string
	for _, r := range revs {
		var s string
		_ = json.Unmarshal(r.Values["title"], &s)
		out = append(out, strconv.FormatInt(r.Version, 10)+":"+r.Change+":"+s)
	}
	return out
}

// audits drains the outbox and returns its audit records, as action and
// the fields' names.
func (c *cms) audits(t *testing.T) []string {
	t.Helper()
	var out []string
	err := c.db.Outbox().Claim(t.Context(), 1000, func(_ context.Context, es []outbox.Event) int {
		for _, e := range es {
			if !strings.HasPrefix(e.Subject, "atrium.audit.") {
				continue
			}
			var p struct {
				Action, ActorKind, ActorID string
				Fields                     []string
			}
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p.Action+" "+strings.Join(p.Fields, ","))
		}
		return len(es)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestoreIsAnUpdate: every write keeps a revision; restoring one is a
// new version with its data, refused on a stale If-Match (nothing
// changes), announced as an update is, and audited.
func TestRestoreIsAnUpdate(t *testing.T) {
	c := newCMS(t)
	ctx := c.asKey(t.Context())
	yes := true
	_, it, err := c.content.CreateItem(ctx, c.site, "posts", app.NewItem{Data: map[string]any{"title": "One"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"Two", "Three"} {
		if _, _, err := c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{"title": title}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{}, IsPublished: &yes}); err != nil {
		t.Fatal(err)
	}
	revs := c.revisions(t, ctx, it.ID)
	if got, want := titles(t, revs), []string{"4:updated:Three", "3:updated:Three", "2:updated:Two", "1:created:One"}; !slices.Equal(got, want) {
		t.Fatalf("revisions %v, want %v", got, want)
	}
	if !revs[0].IsPublished || revs[1].IsPublished || revs[0].Actor != (app.Actor{Kind: "key", ID: "key-1"}) {
		t.Fatalf("newest revision %+v: want published, by key-1", revs[0])
	}
	c.itemEvents(t, it.ID)

	// A stale If-Match: 412, and nothing written.
	_, _, err = c.content.RestoreRevision(ctx, c.site, "posts", it.ID, "1", `"3"`)
	wantKindSays(t, err, apperr.KindPreconditionFailed, "has changed", `"3"`)
	if got := c.revisions(t, ctx, it.ID); len(got) != 4 {
		t.Fatalf("a refused restore kept a revision: %v", titles(t, got))
	}
	if ev := c.itemEvents(t, it.ID); len(ev) != 0 {
		t.Fatalf("a refused restore announced %v", ev)
	}

	_, restored, err := c.content.RestoreRevision(ctx, c.site, "posts", it.ID, "1", `"4"`)
	if err != nil {
		t.Fatal(err)
	}
	if restored.Version != 5 || !restored.IsPublished || string(restored.Values["title"]) != `"One"` {
		t.Fatalf("restored item %+v: want version 5, still published, title One", restored)
	}
	if got := c.item(t, it.ID); got.Version != 5 || string(got.Values["title"]) != `"One"` {
		t.Fatalf("item after the restore: %+v", got)
	}
	if got := titles(t, c.revisions(t, ctx, it.ID)); got[0] != "5:restored:One" {
		t.Fatalf("revisions after the restore: %v", got)
	}
	if ev := c.itemEvents(t, it.ID); !slices.Equal(ev, []string{"updated"}) {
		t.Fatalf("a restore announced %v, want what an update announces: [updated]", ev)
	}

	// Reads of a revision: by version; one that does not exist, or is no
	// version at all, is 404.
	if _, r, err := c.content.Revision(ctx, c.site, "posts", it.ID, "2"); err != nil || r.Version != 2 || string(r.Values["title"]) != `"Two"` {
		t.Fatalf("revision 2 = %+v (%v)", r, err)
	}
	for _, v := range []string{"9", "0", "abc", "-1"} {
		_, _, err := c.content.Revision(ctx, c.site, "posts", it.ID, v)
		wantKindSays(t, err, apperr.KindNotFound, "revision", "not found", v)
		_, _, err = c.content.RestoreRevision(ctx, c.site, "posts", it.ID, v, "")
		wantKindSays(t, err, apperr.KindNotFound, "revision", "not found", v)
	}
}

// TestRevisionPages: newest first, limit and cursor; a cursor of another
// item, a bad limit, and an item that never existed are refused.
func TestRevisionPages(t *testing.T) {
	c := newCMS(t)
	ctx := c.asKey(t.Context())
	_, it, err := c.content.CreateItem(ctx, c.site, "posts", app.NewItem{Data: map[string]any{"title": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	_, other, _ := c.content.CreateItem(ctx, c.site, "posts", app.NewItem{Data: map[string]any{"title": "x"}})
	for i := 1; i < 5; i++ {
		if _, _, err := c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{"title": strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	two := int32(2)
	var seen []int64
	cursor := ""
	for range 5 {
		_, page, err := c.content.Revisions(ctx, c.site, "posts", it.ID, &two, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Revisions {
			seen = append(seen, r.Version)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
		_, _, err = c.content.Revisions(ctx, c.site, "posts", other.ID, &two, cursor)
		wantKindSays(t, err, apperr.KindInvalid, "cursor belongs to another query")
	}
	if !slices.Equal(seen, []int64{5, 4, 3, 2, 1}) {
		t.Fatalf("pages of 2 gave versions %v, want 5 to 1 once each", seen)
	}
	for _, l := range []int32{0, 101} {
		_, _, err := c.content.Revisions(ctx, c.site, "posts", it.ID, &l, "")
		wantKindSays(t, err, apperr.KindInvalid, "limit must be an integer from 1 to 100")
	}
	_, _, err = c.content.Revisions(ctx, c.site, "posts", "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b", nil, "")
	wantKindSays(t, err, apperr.KindNotFound, "not found")
	_, _, err = c.content.Revisions(ctx, c.site, "nope", it.ID, nil, "")
	wantKindSays(t, err, apperr.KindNotFound, `collection "nope" not found`)
}

// TestRestoreADeletedItem: a deleted item's revisions stay, the delete
// among them; a restore without If-Match makes it again with its id as a
// draft, announced as a create; with If-Match it is 412. Past the
// retention the purge takes the revisions, and the item is gone for good.
func TestRestoreADeletedItem(t *testing.T) {
	published := true
	c := newCMS(t)
	ctx := c.asKey(t.Context())
	_, it, err := c.content.CreateItem(ctx, c.site, "posts", app.NewItem{Data: map[string]any{"title": "Kept"}, IsPublished: &published})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.content.DeleteItem(ctx, c.site, "posts", it.ID, ""); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, c.revisions(t, ctx, it.ID)); !slices.Equal(got, []string{"2:deleted:Kept", "1:created:Kept"}) {
		t.Fatalf("revisions of a deleted item: %v", got)
	}
	c.itemEvents(t, it.ID)
	_, _, err = c.content.RestoreRevision(ctx, c.site, "posts", it.ID, "1", "*")
	wantKindSays(t, err, apperr.KindPreconditionFailed, "was deleted", "without If-Match")

	_, back, err := c.content.RestoreRevision(ctx, c.site, "posts", it.ID, "1", "")
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != it.ID || back.IsPublished || back.Version != 3 || string(back.Values["title"]) != `"Kept"` {
		t.Fatalf("restored %+v: want the same id, a draft, version 3", back)
	}
	if ev := c.itemEvents(t, it.ID); !slices.Equal(ev, []string{"created"}) {
		t.Fatalf("restoring a deleted item announced %v, want [created]", ev)
	}
	if got := c.item(t, it.ID); got.Version != 3 {
		t.Fatalf("item after the restore: %+v", got)
	}
	if _, _, err := c.content.RestoreRevision(ctx, c.site, "posts", it.ID, "1", ""); err != nil {
		t.Fatalf("restoring the restored item again: %v", err)
	}

	// Deleted again; the purge keeps its revisions within the retention
	// and takes them after.
	if err := c.content.DeleteItem(ctx, c.site, "posts", it.ID, ""); err != nil {
		t.Fatal(err)
	}
	later := func(d time.Duration) *app.Scheduler {
		return app.NewScheduler(app.ScheduleStoreOf(c.store), func() time.Time { return time.Now().Add(d) }, 0, slog.New(slog.DiscardHandler))
	}
	if n, err := later(app.DefaultRevisionRetention - time.Hour).PurgeRevisions(ctx); err != nil || n != 0 {
		t.Fatalf("a purge within the retention purged %d (%v)", n, err)
	}
	if n, err := later(app.DefaultRevisionRetention + time.Hour).WithRevisionRetention(0).PurgeRevisions(ctx); err != nil || n != 0 {
		t.Fatalf("a purge with retention 0 (for ever) purged %d (%v)", n, err)
	}
	if n, err := later(app.DefaultRevisionRetention + time.Hour).PurgeRevisions(ctx); err != nil || n != 1 {
		t.Fatalf("a purge after the retention purged %d (%v), want 1", n, err)
	}
	_, _, err = c.content.Revisions(ctx, c.site, "posts", it.ID, nil, "")
	wantKindSays(t, err, apperr.KindNotFound, "not found")
	_, _, err = c.content.RestoreRevision(ctx, c.site, "posts", it.ID, "1", "")
	wantKindSays(t, err, apperr.KindNotFound, "revision", "not found")
}

// TestRestoreChecksTheCollectionAsItIsNow: a field since removed is left
// out; a value the collection's rules no longer accept refuses the
// restore (422 naming the field), and nothing changes.
func TestRestoreChecksTheCollectionAsItIsNow(t *testing.T) {
	c := newCMS(t)
	ctx := c.asKey(t.Context())
	admin := principal.NewContext(t.Context(), principal.Principal{Kind: principal.KindAdmin, Subject: "admin"})
	if _, err := c.content.UpdateCollection(admin, c.site, "posts", app.CollectionChange{Add: []app.Field{
		{Key: "kind", Type: app.TypeSelect, Options: []string{"news", "recipe"}}, {Key: "note", Type: app.TypeText}}}); err != nil {
		t.Fatal(err)
	}
	_, it, err := c.content.CreateItem(ctx, c.site, "posts", app.NewItem{Data: map[string]any{"title": "A", "kind": "recipe", "note": "n"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{"title": "B", "kind": "news", "note": nil}}); err != nil {
		t.Fatal(err)
	}
	if got := c.audits(t); !slices.Equal(got[len(got)-2:], []string{"item.created kind,note,title", "item.updated kind,note,title"}) {
		t.Fatalf("audit records %v: want the item's create and update with the fields' names", got)
	}
	if _, err := c.content.UpdateCollection(admin, c.site, "posts", app.CollectionChange{
		Remove: []string{"note"}, Update: []app.Field{{Key: "kind", Type: app.TypeSelect, Options: []string{"news"}}}}); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.content.RestoreRevision(ctx, c.site, "posts", it.ID, "1", "")
	wantKindSays(t, err, apperr.KindInvalid, "revision 1", "data.kind", "restore another revision")
	if got := c.item(t, it.ID); got.Version != 2 {
		t.Fatalf("a refused restore changed the item: %+v", got)
	}
	// Revision 2 has kind news and no note: restorable; the fields it
	// lacks are cleared.
	if _, _, err := c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{"title": "C", "kind": nil}}); err != nil {
		t.Fatal(err)
	}
	_, back, err := c.content.RestoreRevision(ctx, c.site, "posts", it.ID, "2", "")
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Values["title"]) != `"B"` || string(back.Values["kind"]) != `"news"` || len(back.Values) != 2 {
		t.Fatalf("restored values %v, want title B and kind news only", back.Values)
	}
	if got := c.audits(t); got[len(got)-1] != "item.restored kind,title" {
		t.Fatalf("audit records %v: want the restore last, naming every field it wrote", got)
	}
}

// TestScheduledChangeKeepsARevision: the scheduler's publish is a
// revision of its own, by the scheduler, as audited.
func TestScheduledChangeKeepsARevision(t *testing.T) {
	c := newCMS(t)
	ctx := c.asKey(t.Context())
	at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	_, it, err := c.content.CreateItem(ctx, c.site, "posts", app.NewItem{Data: map[string]any{"title": "Timed"}, PublishAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	c.audits(t)
	later := app.NewScheduler(app.ScheduleStoreOf(c.store), func() time.Time { return time.Now().Add(2 * time.Hour) }, 0, slog.New(slog.DiscardHandler))
	if n, err := later.ApplyDue(t.Context()); err != nil || n != 1 {
		t.Fatalf("ApplyDue = %d, %v; want the one item", n, err)
	}
	revs := c.revisions(t, ctx, it.ID)
	if len(revs) != 2 || revs[0].Change != app.ChangeScheduled || !revs[0].IsPublished || revs[0].Version != 2 ||
		revs[0].Actor != (app.Actor{Kind: "service", ID: "collections-scheduler"}) {
		t.Fatalf("revisions after the scheduled publish: %+v", revs)
	}
	if got := c.audits(t); !slices.Equal(got, []string{"item.updated is_published,publish_at"}) {
		t.Fatalf("audit records of the scheduled publish: %v", got)
	}
}
