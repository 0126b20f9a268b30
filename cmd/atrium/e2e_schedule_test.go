package main

// Scheduled publishing over HTTP: a post scheduled a few seconds ahead goes
// live by itself, with the events a PATCH sends, and is taken down at its
// unpublish_at; refusals change nothing.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/atrium-hq/atrium/platform/natstest"
)

func testCollectionsSchedule(t *testing.T, s *stack) {
	c := s.newCMS(t)
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("atrium.collections." + c.site + ".posts.item.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	publishAt := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
	unpublishAt := publishAt.Add(2 * time.Second)
	item := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Launch"},
		"publish_at": publishAt.Format(time.RFC3339Nano), "unpublish_at": unpublishAt.Format(time.RFC3339Nano)})
	id := item["id"].(string)
	if item["is_published"] != false || !sameTime(item["publish_at"], publishAt) || !sameTime(item["unpublish_at"], unpublishAt) {
		t.Fatalf("created %v, want a draft with both times", item)
	}
	// Wait for the events, as a consumer would: created, then the
	// scheduled publish's updated and published, then the unpublish's.
	var got []string
	var publishedAt time.Time
	deadline := time.Now().Add(15 * time.Second)
	for len(got) < 5 {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("events so far %v: %v", got, err)
		}
		var ev struct {
			ID          string `json:"id"`
			IsPublished bool   `json:"is_published"`
		}
		if json.Unmarshal(msg.Data, &ev) != nil || ev.ID != id {
			continue
		}
		what := msg.Subject[strings.LastIndexByte(msg.Subject, '.')+1:]
		got = append(got, what)
		if what == "published" {
			publishedAt = time.Now()
			// Live by itself: read it as a front end would.
			r := call(t, "GET", c.base+"/posts/"+id, c.read, nil)
			live := r.json["item"].(map[string]any)
			if live["is_published"] != true || live["publish_at"] != nil || live["unpublish_at"] == nil {
				t.Fatalf("after the scheduled publish: %v", live)
			}
			if r.header.Get("ETag") != `"2"` {
				t.Fatalf("ETag after the scheduled publish = %s, want \"2\"", r.header.Get("ETag"))
			}
		}
	}
	if !slices.Equal(got, []string{"created", "updated", "published", "updated", "unpublished"}) {
		t.Fatalf("events = %v, want created, updated, published, updated, unpublished", got)
	}
	if late := publishedAt.Sub(publishAt); late > 5*time.Second {
		t.Fatalf("published %s after its publish_at, want within 5 s", late)
	}
	if r := call(t, "GET", c.base+"/posts/"+id, c.read, nil); r.json["item"].(map[string]any)["is_published"] != false {
		t.Fatalf("after unpublish_at: %s", r)
	}
}

func testCollectionsScheduleRules(t *testing.T, s *stack) {
	c := s.newCMS(t)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"data": map[string]any{"title": "x"}, "publish_at": "2020-01-01T00:00:00Z"}, "publish_at must be in the future"},
		{map[string]any{"data": map[string]any{"title": "x"}, "publish_at": "tomorrow"}, "RFC 3339"},
		{map[string]any{"data": map[string]any{"title": "x"}, "publish_at": future, "unpublish_at": future}, "must be after publish_at"},
	} {
		wantError(t, call(t, "POST", c.base+"/posts", c.write, tc.body), http.StatusBadRequest, tc.want)
	}
	item := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Later"}, "publish_at": future})
	id := item["id"].(string)
	wantError(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{}, "unpublish_at": 5}), http.StatusBadRequest, "unpublish_at")
	// PATCH with null cancels; with is_published, the pending change is
	// replaced.
	r := call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{}, "publish_at": nil})
	wantStatus(t, r, http.StatusOK)
	if got := r.json["item"].(map[string]any); got["publish_at"] != nil {
		t.Fatalf("after publish_at null: %v", got)
	}
	r = call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{}, "publish_at": future})
	if got := r.json["item"].(map[string]any); got["publish_at"] == nil {
		t.Fatalf("after publish_at: %v", got)
	}
	r = call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{}, "is_published": true})
	if got := r.json["item"].(map[string]any); got["publish_at"] != nil || got["is_published"] != true {
		t.Fatalf("after is_published: %v, want the pending publish replaced", got)
	}
	// A field may not be called publish_at: every item has one.
	wantError(t, s.adminCall(t, "POST", "/admin/v1/sites/"+c.site+"/collections", map[string]any{"name": "X", "slug": "x",
		"fields": []map[string]any{{"key": "publish_at", "type": "datetime"}}}), http.StatusBadRequest, "reserved")
	// Another site's item is 404, schedule or not.
	other := s.newCMS(t)
	wantError(t, call(t, "PATCH", other.base+"/posts/"+id, other.write, map[string]any{"data": map[string]any{}, "publish_at": future}), http.StatusNotFound)
}

// sameTime reports whether v is an RFC 3339 string of the instant want.
func sameTime(v any, want time.Time) bool {
	s, _ := v.(string)
	got, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && got.Equal(want)
}

// testWebhooksScheduledPublish: an endpoint subscribed to item.published
// receives the scheduled publish as it receives a PATCH's, signed, once.
func testWebhooksScheduledPublish(t *testing.T, s *stack) {
	c := s.newCMS(t)
	rx := newHookReceiver(t)
	secret := s.register(t, c.write, rx.URL+"/site", "item.published")["secret"].(string)
	id := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Timed"},
		"publish_at": time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)})["id"].(string)
	got := rx.waitCounts(t, map[string]int{"item.published": 1})
	if len(got) != 1 {
		t.Fatalf("deliveries = %d, want the one item.published", len(got))
	}
	verify(t, got[0], secret)
	if d := got[0].data(); d["id"] != id || d["is_published"] != true || d["collection"] != "posts" || d["site_id"] != c.site {
		t.Fatalf("item.published data = %v", d)
	}
}

// TestScheduledPublishSurvivesARestart: on PostgreSQL a schedule is data,
// not a timer. A post is scheduled a few seconds ahead, Atrium is stopped
// before that time and started again on the same database: the new
// process publishes it by itself, once (one version step, as one PATCH
// would make).
func TestScheduledPublishSurvivesARestart(t *testing.T) {
	db, natsURL := migratedDatabase(t), natstest.URL(t)
	flags := []string{"--database-url=" + db, "--nats-url=" + natsURL}
	first := startStack(t, flags...)
	c := first.newCMS(t)
	publishAt := time.Now().Add(5 * time.Second).UTC().Truncate(time.Millisecond)
	item := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "After the restart"},
		"publish_at": publishAt.Format(time.RFC3339Nano)})
	id := item["id"].(string)
	if err := first.stop(); err != nil {
		t.Fatalf("stopping the first stack: %v", err)
	}
	if !time.Now().Before(publishAt) {
		t.Fatalf("the first stack took until %s to stop, past the publish_at %s the test needs it stopped before", time.Now().UTC(), publishAt)
	}

	second := startStack(t, flags...)
	url := second.api + "/api/public/v1/collections/posts/" + id
	var live map[string]any
	eventually(t, 20*time.Second, func() bool {
		r := call(t, "GET", url, c.read, nil)
		live, _ = r.json["item"].(map[string]any)
		return live != nil && live["is_published"] == true
	})
	if live["publish_at"] != nil {
		t.Fatalf("after the restart the scheduled publish left %v", live)
	}
	r := call(t, "GET", url, c.read, nil)
	if r.header.Get("ETag") != `"2"` {
		t.Fatalf("ETag after the scheduled publish = %s, want \"2\" (one change, applied once)", r.header.Get("ETag"))
	}
}
