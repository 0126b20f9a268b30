package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// cms is a site with a posts collection on the memory store, and its
// scheduler.
type cms struct {
	db        *memdb.DB
	store     app.Store
	content   *app.Content
	scheduler *app.Scheduler
	site      string
}

func newCMS(t *testing.T) *cms {
	t.Helper()
	db := memdb.New(nil)
	st := memory.New(db)
	clock := app.Clock(time.Now)
	c := &cms{db: db, store: st, content: app.NewContent(app.ContentStoreOf(st), clock), scheduler: app.NewScheduler(app.ScheduleStoreOf(st), clock, 0, slog.New(slog.DiscardHandler))}
	site, err := app.NewSites(app.SiteStoreOf(st), nil, clock).Create(t.Context(), app.NewSite{Name: "Bakery"})
	if err != nil {
		t.Fatal(err)
	}
	c.site = site.ID
	if _, err := c.content.CreateCollection(t.Context(), c.site, app.NewCollection{Name: "Posts", Slug: "posts",
		Fields: []app.Field{{Key: "title", Type: app.TypeText}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// itemEvents drains the outbox and returns what it held of the item, by
// the subject's last word, in order.
func (c *cms) itemEvents(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	err := c.db.Outbox().Claim(t.Context(), 1000, func(_ context.Context, es []outbox.Event) int {
		for _, e := range es {
			var p struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(e.Payload, &p) == nil && p.ID == id {
				out = append(out, e.Subject[strings.LastIndexByte(e.Subject, '.')+1:])
			}
		}
		return len(es)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c *cms) item(t *testing.T, id string) app.Item {
	t.Helper()
	_, it, err := c.content.Item(t.Context(), c.site, "posts", id)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func at(t time.Time) *string {
	s := t.Format(time.RFC3339Nano)
	return &s
}

// The scheduler publishes a draft at its publish_at and unpublishes it at
// its unpublish_at, each within a tick (1 s) of its time, with the events
// a PATCH of is_published sends. Fake time: nothing waits for real.
func TestScheduledChangesApplyOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCMS(t)
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.scheduler.Run(ctx) })
		defer wg.Wait()
		defer stop()

		start := time.Now()
		_, it, err := c.content.CreateItem(t.Context(), c.site, "posts", app.NewItem{Data: map[string]any{"title": "Soon"},
			PublishAt: at(start.Add(3 * time.Second)), UnpublishAt: at(start.Add(10 * time.Second))})
		if err != nil {
			t.Fatal(err)
		}
		if it.PublishAt == nil || it.UnpublishAt == nil || it.IsPublished {
			t.Fatalf("created %+v, want a draft with both changes pending", it)
		}
		time.Sleep(2500 * time.Millisecond) // why sleep: fake time in a synctest bubble
		synctest.Wait()
		if got := c.item(t, it.ID); got.IsPublished {
			t.Fatalf("published before its publish_at: %+v", got)
		}
		time.Sleep(1600 * time.Millisecond) // why sleep: fake time in a synctest bubble
		synctest.Wait()
		got := c.item(t, it.ID)
		if !got.IsPublished || got.PublishAt != nil || got.UnpublishAt == nil || got.Version != 2 {
			t.Fatalf("a second after publish_at: %+v, want published, publish_at cleared, unpublish_at kept, version 2", got)
		}
		if ev := c.itemEvents(t, it.ID); !slices.Equal(ev, []string{"created", "updated", "published"}) {
			t.Fatalf("events = %v, want created, updated, published", ev)
		}
		time.Sleep(7 * time.Second) // why sleep: fake time in a synctest bubble
		synctest.Wait()
		got = c.item(t, it.ID)
		if got.IsPublished || got.UnpublishAt != nil {
			t.Fatalf("after unpublish_at: %+v, want a draft with nothing pending", got)
		}
		if ev := c.itemEvents(t, it.ID); !slices.Equal(ev, []string{"updated", "unpublished"}) {
			t.Fatalf("events = %v, want updated, unpublished", ev)
		}
	})
}

// Changes that fell due while no scheduler ran are applied in the order
// of their times.
func TestOverdueChangesApplyInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCMS(t)
		start := time.Now()
		_, it, err := c.content.CreateItem(t.Context(), c.site, "posts", app.NewItem{Data: map[string]any{},
			PublishAt: at(start.Add(time.Second)), UnpublishAt: at(start.Add(2 * time.Second))})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute) // why sleep: fake time in a synctest bubble
		n, err := c.scheduler.ApplyDue(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("ApplyDue = %d, %v", n, err)
		}
		if ev := c.itemEvents(t, it.ID); !slices.Equal(ev, []string{"created", "updated", "published", "updated", "unpublished"}) {
			t.Fatalf("events = %v", ev)
		}
		if got := c.item(t, it.ID); got.IsPublished || got.PublishAt != nil || got.UnpublishAt != nil {
			t.Fatalf("after both: %+v", got)
		}
		if n, _ := c.scheduler.ApplyDue(t.Context()); n != 0 {
			t.Fatalf("a second pass applied %d", n)
		}
	})
}

// A PATCH of is_published replaces the pending changes; a PATCH of a
// schedule field replaces that one; null cancels.
func TestPatchReplacesTheSchedule(t *testing.T) {
	c := newCMS(t)
	ctx := t.Context()
	now := time.Now()
	_, it, err := c.content.CreateItem(ctx, c.site, "posts", app.NewItem{Data: map[string]any{},
		PublishAt: at(now.Add(time.Hour)), UnpublishAt: at(now.Add(2 * time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	later := now.Add(90 * time.Minute).UTC().Truncate(time.Microsecond)
	_, got, err := c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{},
		Schedule: app.ScheduleInput{PublishAt: app.GivenTime(at(later))}})
	if err != nil {
		t.Fatal(err)
	}
	if got.PublishAt == nil || !got.PublishAt.Equal(later) || got.UnpublishAt == nil {
		t.Fatalf("after replacing publish_at: %+v", got)
	}
	_, got, err = c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{},
		Schedule: app.ScheduleInput{UnpublishAt: app.GivenTime(nil)}})
	if err != nil || got.UnpublishAt != nil || got.PublishAt == nil {
		t.Fatalf("after unpublish_at null: %+v, %v", got, err)
	}
	yes := true
	_, got, err = c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{}, IsPublished: &yes})
	if err != nil || !got.IsPublished || got.PublishAt != nil || got.UnpublishAt != nil {
		t.Fatalf("after is_published: %+v, %v; want the pending changes gone", got, err)
	}
	// is_published with a new schedule in the same PATCH keeps the new one.
	no := false
	_, got, err = c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{}, IsPublished: &no,
		Schedule: app.ScheduleInput{PublishAt: app.GivenTime(at(later))}})
	if err != nil || got.IsPublished || got.PublishAt == nil {
		t.Fatalf("unpublish and schedule: %+v, %v", got, err)
	}
}

// An item created published is announced as created, then published: a
// hook that rebuilds on publish hears of it however it got there. A draft
// is announced as created only.
func TestCreatedPublishedIsAnnouncedAsPublished(t *testing.T) {
	c := newCMS(t)
	_, draft, err := c.content.CreateItem(t.Context(), c.site, "posts", app.NewItem{Data: map[string]any{"title": "Draft"}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := c.itemEvents(t, draft.ID); strings.Join(ev, ",") != "created" {
		t.Fatalf("events of a draft = %v, want created", ev)
	}
	yes := true
	_, live, err := c.content.CreateItem(t.Context(), c.site, "posts", app.NewItem{Data: map[string]any{"title": "Live"}, IsPublished: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if ev := c.itemEvents(t, live.ID); strings.Join(ev, ",") != "created,published" {
		t.Fatalf("events of an item created published = %v, want created, published", ev)
	}
}

func TestScheduleRefusals(t *testing.T) {
	c := newCMS(t)
	ctx := t.Context()
	now := time.Now()
	_, it, err := c.content.CreateItem(ctx, c.site, "posts", app.NewItem{Data: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	bad := "tomorrow"
	for name, tc := range map[string]struct {
		in   app.NewItem
		want string
	}{
		"past":            {app.NewItem{Data: map[string]any{}, PublishAt: at(now.Add(-time.Minute))}, "publish_at must be in the future"},
		"not a date-time": {app.NewItem{Data: map[string]any{}, UnpublishAt: &bad}, "unpublish_at must be an RFC 3339 date-time"},
		"out of order": {app.NewItem{Data: map[string]any{}, PublishAt: at(now.Add(2 * time.Hour)), UnpublishAt: at(now.Add(time.Hour))},
			"unpublish_at"},
	} {
		_, _, err := c.content.CreateItem(ctx, c.site, "posts", tc.in)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Kind != apperr.KindInvalid || !strings.Contains(ae.Message, tc.want) {
			t.Errorf("%s: error = %v, want 400 saying %q", name, err, tc.want)
		}
	}
	// A PATCH that would unpublish before the pending publish changes
	// nothing.
	if _, _, err := c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{},
		Schedule: app.ScheduleInput{PublishAt: app.GivenTime(at(now.Add(2 * time.Hour)))}}); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.content.UpdateItem(ctx, c.site, "posts", it.ID, app.ItemUpdate{Data: map[string]any{"title": "x"},
		Schedule: app.ScheduleInput{UnpublishAt: app.GivenTime(at(now.Add(time.Hour)))}})
	if err == nil || !strings.Contains(err.Error(), "must be after publish_at") {
		t.Fatalf("out of order PATCH: %v", err)
	}
	if got := c.item(t, it.ID); got.UnpublishAt != nil || got.Values["title"] != nil || got.Version != 2 {
		t.Fatalf("a refused PATCH changed the item: %+v", got)
	}
}

// docs/collections.md says a change is applied within a second of its
// time: the default tick.
func TestSchedulerDefaultInterval(t *testing.T) {
	if got := app.NewScheduler(nil, nil, 0, nil).Interval(); got != time.Second || app.DefaultScheduleInterval != time.Second {
		t.Fatalf("default interval = %s, want 1s as documented", got)
	}
}

// The scheduler deletes expired preview links at its first tick and about
// once a minute after.
func TestSchedulerPrunesExpiredLinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCMS(t)
		_, it, err := c.content.CreateItem(t.Context(), c.site, "posts", app.NewItem{Data: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		previews := app.NewPreviews(app.PreviewStoreOf(c.store), c.content, app.Clock(time.Now))
		short, long := int32(1), int32(3600)
		_, shortToken, err := previews.Create(t.Context(), c.site, "posts", it.ID, &short)
		if err != nil {
			t.Fatal(err)
		}
		_, longToken, err := previews.Create(t.Context(), c.site, "posts", it.ID, &long)
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.scheduler.Run(ctx) })
		defer wg.Wait()
		defer stop()
		time.Sleep(2 * time.Second) // why sleep: fake time in a synctest bubble
		synctest.Wait()
		if _, err := c.store.PreviewLink(t.Context(), app.HashToken(shortToken)); err != nil {
			t.Fatalf("the expired link was deleted before a minute passed: %v", err)
		}
		time.Sleep(time.Minute) // why sleep: fake time in a synctest bubble
		synctest.Wait()
		if _, err := c.store.PreviewLink(t.Context(), app.HashToken(shortToken)); !errors.Is(err, app.ErrNotFound) {
			t.Fatalf("a minute on, the expired link is still stored: %v", err)
		}
		if _, err := c.store.PreviewLink(t.Context(), app.HashToken(longToken)); err != nil {
			t.Fatalf("the live link was deleted: %v", err)
		}
	})
}
