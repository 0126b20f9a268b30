package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

// The records written for the actions service: WriteRecords and GetRecord
// over the store, the way the service runs them.

// clock is a settable clock for one test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func datasets(s Store) (*app.Datasets, *clock) {
	c := &clock{now: base}
	// WriteRecords and GetRecord do not ask the CRM: no ClientAccess.
	return app.NewDatasets(s, nil, c.Now), c
}

func write(t *testing.T, d *app.Datasets, client string, writes ...app.RecordWrite) app.WriteResult {
	t.Helper()
	res, err := d.WriteRecords(t.Context(), client, writes)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func upsert(resource string, rows ...map[string]any) app.RecordWrite {
	return app.RecordWrite{Resource: resource, Mode: app.WriteUpsert, Rows: rows}
}

func update(resource string, rows ...map[string]any) app.RecordWrite {
	return app.RecordWrite{Resource: resource, Mode: app.WriteUpdate, Rows: rows}
}

// object is a stored row's data as JSON values.
func object(t *testing.T, r app.Row) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Data, &m); err != nil {
		t.Fatalf("row %s data %s: %v", r.ID, r.Data, err)
	}
	return m
}

func get(t *testing.T, s Store, client, resource, id string) map[string]any {
	t.Helper()
	r, err := s.Row(t.Context(), client, resource, id)
	if err != nil {
		t.Fatalf("row %s: %v", id, err)
	}
	return object(t, r)
}

// total counts a client's rows of a resource, or those whose filter field
// has the value.
func total(t *testing.T, s Store, client, resource, field string, value any) int {
	t.Helper()
	_, n := read(t, s, app.Query{Resource: resource, ClientID: client, Order: "created_at", Page: pagination.Page{Limit: 1},
		FilterField: field, FilterValue: value})
	return n
}

func wantResult(t *testing.T, got, want app.WriteResult) {
	t.Helper()
	if got != want {
		t.Fatalf("result = %+v, want %+v", got, want)
	}
}

func wantConflict(t *testing.T, err error, words ...string) {
	t.Helper()
	if apperr.KindOf(err) != apperr.KindConflict {
		t.Fatalf("error = %v, want a conflict", err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("message %q does not say %q", err, w)
		}
	}
}

// testUpsertInsertsAndReplaces: rows without id or with a new id are
// inserted; a stored id is replaced whole (data and keys), keeping its
// created_at, and the filter totals follow the row from draft to
// published.
func testUpsertInsertsAndReplaces(t *testing.T, s Store) {
	d, c := datasets(s)
	client := uuid.NewString()
	post := uuid.NewString()
	wantResult(t, write(t, d, client, upsert("blogs",
		map[string]any{"post_title": "Other", "status": "draft"},
		map[string]any{"id": post, "post_title": "First", "status": "draft", "category_id": "news", "published": false},
	)), app.WriteResult{Inserted: 2})
	first := get(t, s, client, "blogs", post)
	if total(t, s, client, "blogs", "status", "draft") != 2 || total(t, s, client, "blogs", "category_id", "news") != 1 {
		t.Fatal("after the inserts, the draft and category totals are wrong")
	}

	c.set(base.Add(time.Hour))
	wantResult(t, write(t, d, client, upsert("blogs",
		map[string]any{"id": post, "post_title": "Published", "status": "published", "published": true},
	)), app.WriteResult{Updated: 1})
	got := get(t, s, client, "blogs", post)
	if got["post_title"] != "Published" || got["status"] != "published" || got["category_id"] != nil {
		t.Fatalf("replaced row = %v, want the new title and status and no category (data fully replaced)", got)
	}
	if got["created_at"] != first["created_at"] || got["updated_at"] != base.Add(time.Hour).Format(time.RFC3339Nano) {
		t.Fatalf("created_at %v → %v, updated_at %v: want created_at kept and updated_at now", first["created_at"], got["created_at"], got["updated_at"])
	}
	for _, tc := range []struct {
		field string
		value any
		want  int
	}{
		{"", nil, 2}, {"status", "draft", 1}, {"status", "published", 1}, {"category_id", "news", 0},
		{"published", false, 0}, {"published", true, 1},
	} {
		if n := total(t, s, client, "blogs", tc.field, tc.value); n != tc.want {
			t.Errorf("total of %s=%v after the replacement = %d, want %d", tc.field, tc.value, n, tc.want)
		}
	}
	ids, _ := read(t, s, app.Query{Resource: "blogs", ClientID: client, Order: "created_at", FilterField: "status", FilterValue: "published", Page: pagination.Page{Limit: 10}})
	if len(ids) != 1 || ids[0] != post {
		t.Fatalf("status=published reads %v, want the replaced row", ids)
	}
}

// testCreatedAt: a replacement keeps the stored created_at, in the
// resource's form (a date for keywords), unless it gives one.
func testCreatedAt(t *testing.T, s Store) {
	d, c := datasets(s)
	client := uuid.NewString()
	kw, task := uuid.NewString(), uuid.NewString()
	write(t, d, client, upsert("keywords", map[string]any{"id": kw, "keyword": "bread", "position": 4.0}),
		upsert("seo_tasks", map[string]any{"id": task, "title": "Fix titles"}))
	c.set(base.AddDate(0, 0, 3))
	wantResult(t, write(t, d, client, update("keywords", map[string]any{"id": kw, "keyword": "bread", "position": 2.0}),
		update("seo_tasks", map[string]any{"id": task, "title": "Fix titles", "created_at": "2020-05-06T07:08:09Z"})),
		app.WriteResult{Updated: 2})
	if got := get(t, s, client, "keywords", kw); got["created_at"] != base.Format(time.DateOnly) || got["position"] != 2.0 {
		t.Fatalf("keyword = %v, want created_at %s kept and position 2", got, base.Format(time.DateOnly))
	}
	r, err := s.Row(t.Context(), client, "seo_tasks", task)
	if err != nil {
		t.Fatal(err)
	}
	if got := object(t, r); got["created_at"] != "2020-05-06T07:08:09Z" || !r.CreatedAt.Equal(time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)) {
		t.Fatalf("task created_at = %v (%v), want the given one", got["created_at"], r.CreatedAt)
	}
	// The order follows the stored created_at.
	other := uuid.NewString()
	write(t, d, client, upsert("seo_tasks", map[string]any{"id": other, "title": "Later"}))
	ids, _ := read(t, s, app.Query{Resource: "seo_tasks", ClientID: client, Order: "created_at", Asc: true, Page: pagination.Page{Limit: 10}})
	if len(ids) != 2 || ids[0] != task {
		t.Fatalf("by created_at asc = %v, want %s (created 2020) first", ids, task)
	}
}

// testUpdateSkipsMissing: update mode replaces what is stored and skips
// the rest, inserting nothing.
func testUpdateSkipsMissing(t *testing.T, s Store) {
	d, _ := datasets(s)
	client := uuid.NewString()
	stored, missing := uuid.NewString(), uuid.NewString()
	write(t, d, client, upsert("geo_articles", map[string]any{"id": stored, "title": "Bakeries in Leeds", "status": "draft"}))
	wantResult(t, write(t, d, client, update("geo_articles",
		map[string]any{"id": stored, "title": "Bakeries in Leeds", "status": "published", "published": true},
		map[string]any{"id": missing, "title": "Nowhere", "status": "published"},
	)), app.WriteResult{Updated: 1, Skipped: 1})
	if _, err := s.Row(t.Context(), client, "geo_articles", missing); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("the skipped row: %v, want ErrNotFound", err)
	}
	if n := total(t, s, client, "geo_articles", "", nil); n != 1 {
		t.Fatalf("total = %d, want 1", n)
	}
	if n := total(t, s, client, "geo_articles", "status", "published"); n != 1 {
		t.Fatalf("status=published total = %d, want 1", n)
	}
}

// testTakenID: an id stored under another client, or another resource of
// the same client, cannot be taken; the message does not say whose it is,
// and nothing of the request is written. An update skips such a row as if
// it were absent.
func testTakenID(t *testing.T, s Store) {
	d, _ := datasets(s)
	owner, other := uuid.NewString(), uuid.NewString()
	id := uuid.NewString()
	write(t, d, owner, upsert("blogs", map[string]any{"id": id, "post_title": "Owner's", "status": "draft"}))

	_, err := d.WriteRecords(t.Context(), other, []app.RecordWrite{
		upsert("blogs", map[string]any{"post_title": "Fresh"}, map[string]any{"id": id, "post_title": "Stolen", "status": "published"}),
	})
	wantConflict(t, err, "writes[0].rows[1].id", id, "is taken")
	if strings.Contains(err.Error(), owner) {
		t.Fatalf("message %q names the owner", err)
	}
	_, err = d.WriteRecords(t.Context(), owner, []app.RecordWrite{upsert("seo_tasks", map[string]any{"id": id, "title": "Same id"})})
	wantConflict(t, err, "is taken")
	wantResult(t, write(t, d, other, update("blogs", map[string]any{"id": id, "post_title": "Stolen"})), app.WriteResult{Skipped: 1})

	if n := total(t, s, other, "blogs", "", nil); n != 0 {
		t.Fatalf("the refused request wrote %d rows", n)
	}
	if n := total(t, s, owner, "seo_tasks", "", nil); n != 0 {
		t.Fatalf("the refused request wrote %d seo_tasks", n)
	}
	if got := get(t, s, owner, "blogs", id); got["post_title"] != "Owner's" {
		t.Fatalf("owner's row = %v, want untouched", got)
	}
	if _, err := s.Row(t.Context(), other, "blogs", id); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another client's Row: %v, want ErrNotFound", err)
	}
}

// testReapply: a write applied twice (a retry after a crash) leaves the
// same rows, timestamps and totals as applying it once.
func testReapply(t *testing.T, s Store) {
	d, c := datasets(s)
	client := uuid.NewString()
	w := []app.RecordWrite{
		upsert("seo_reports", map[string]any{"id": uuid.NewString(), "url": "https://bakery.example/", "score": 71.0,
			"issues": []any{map[string]any{"check": "title", "severity": "high"}}, "fetched_at": "2026-11-01T09:00:00Z"}),
		upsert("seo_tasks",
			map[string]any{"id": uuid.NewString(), "title": "Fix title", "status": "open", "source_id": "r1"},
			map[string]any{"id": uuid.NewString(), "title": "Add h1", "status": "open", "source_id": "r1"}),
	}
	wantResult(t, write(t, d, client, w...), app.WriteResult{Inserted: 3})
	before := map[string]map[string]any{}
	for _, wr := range w {
		for _, r := range wr.Rows {
			before[r["id"].(string)] = get(t, s, client, wr.Resource, r["id"].(string))
		}
	}
	c.set(base.Add(time.Minute))
	wantResult(t, write(t, d, client, w...), app.WriteResult{Updated: 3})
	for _, wr := range w {
		for _, r := range wr.Rows {
			if got, want := get(t, s, client, wr.Resource, r["id"].(string)), before[r["id"].(string)]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after re-applying, %v\nwant %v", got, want)
			}
		}
	}
	if total(t, s, client, "seo_tasks", "", nil) != 2 || total(t, s, client, "seo_tasks", "source_id", "r1") != 2 ||
		total(t, s, client, "seo_tasks", "status", "open") != 2 || total(t, s, client, "seo_reports", "", nil) != 1 {
		t.Fatal("re-applying changed the totals")
	}
}

// testLateWriteSkipped: a row whose updated_at is older than the stored
// row's (a run's "running" row arriving after its final one) changes
// nothing; a newer one replaces it, and without updated_at a write
// replaces whatever is stored.
func testLateWriteSkipped(t *testing.T, s Store) {
	d, _ := datasets(s)
	client, run := uuid.NewString(), uuid.NewString()
	state := func(status, at string) map[string]any {
		return map[string]any{"id": run, "action": "generate_blog", "status": status, "created_at": "2026-11-01T09:00:00Z", "updated_at": at}
	}
	write(t, d, client, upsert("action_runs", state("queued", "2026-11-01T09:00:00Z")))
	wantResult(t, write(t, d, client, upsert("action_runs", state("success", "2026-11-01T09:00:05.5Z"))), app.WriteResult{Updated: 1})
	wantResult(t, write(t, d, client, upsert("action_runs", state("running", "2026-11-01T09:00:01Z"))), app.WriteResult{Skipped: 1})
	got := get(t, s, client, "action_runs", run)
	if got["status"] != "success" || got["updated_at"] != "2026-11-01T09:00:05.5Z" {
		t.Fatalf("after a late write of an earlier state: %v, want the success row", got)
	}
	if n := total(t, s, client, "action_runs", "status", "success"); n != 1 {
		t.Fatalf("status=success total = %d, want 1", n)
	}
	undated := state("error", "")
	delete(undated, "updated_at")
	wantResult(t, write(t, d, client, upsert("action_runs", undated)), app.WriteResult{Updated: 1})
	if got := get(t, s, client, "action_runs", run); got["status"] != "error" {
		t.Fatalf("a write without updated_at left %v", got)
	}
}

// testWritesAllOrNothing: one request's writes of several resources
// commit together or not at all.
func testWritesAllOrNothing(t *testing.T, s Store) {
	d, _ := datasets(s)
	client, other := uuid.NewString(), uuid.NewString()
	taken := uuid.NewString()
	write(t, d, other, upsert("action_runs", map[string]any{"id": taken, "action": "seo_audit"}))
	_, err := d.WriteRecords(t.Context(), client, []app.RecordWrite{
		upsert("blog_images", map[string]any{"title": "Loaf", "url": "https://cdn.example/loaf.png", "width": 1200.0}),
		upsert("action_runs", map[string]any{"id": taken, "action": "generate_blog_image", "status": "success"}),
	})
	wantConflict(t, err, "writes[1].rows[0].id")
	if total(t, s, client, "blog_images", "", nil) != 0 || total(t, s, client, "action_runs", "", nil) != 0 {
		t.Fatal("a refused request left rows")
	}
	wantResult(t, write(t, d, client,
		upsert("blog_images", map[string]any{"title": "Loaf", "url": "https://cdn.example/loaf.png"}),
		upsert("action_runs", map[string]any{"action": "generate_blog_image", "status": "success", "data": map[string]any{"w": 1200.0}}),
	), app.WriteResult{Inserted: 2})
	if total(t, s, client, "blog_images", "", nil) != 1 || total(t, s, client, "action_runs", "status", "success") != 1 {
		t.Fatal("an accepted request did not write both resources")
	}
}

// testConcurrentUpserts: writers upserting the same id at once, the first
// inserting it, all succeed, one after the other: one row, and the filter
// totals count it once, under its final status.
func testConcurrentUpserts(t *testing.T, s Store) {
	d, _ := datasets(s)
	client := uuid.NewString()
	id := uuid.NewString()
	statuses := []string{"draft", "review", "published"}
	errs := make(chan error, 9)
	for w := range 9 {
		go func() {
			_, err := d.WriteRecords(t.Context(), client, []app.RecordWrite{
				upsert("blogs", map[string]any{"id": id, "post_title": fmt.Sprint("take ", w), "status": statuses[w%3]}),
			})
			errs <- err
		}()
	}
	for range 9 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	final := get(t, s, client, "blogs", id)["status"]
	if n := total(t, s, client, "blogs", "", nil); n != 1 {
		t.Fatalf("total = %d, want 1", n)
	}
	for _, st := range statuses {
		want := 0
		if st == final {
			want = 1
		}
		if n := total(t, s, client, "blogs", "status", st); n != want {
			t.Errorf("status=%s total = %d, want %d (the row is %s)", st, n, want, final)
		}
	}
}

// testRowNotFound: Row answers only for the client and resource the row is
// stored under.
func testRowNotFound(t *testing.T, s Store) {
	d, _ := datasets(s)
	client := uuid.NewString()
	id := uuid.NewString()
	write(t, d, client, upsert("integrations", map[string]any{"id": id, "name": "Search Console", "config": map[string]any{"site": "sc-domain:bakery.example"}}))
	if got := get(t, s, client, "integrations", id); fmt.Sprint(got["config"]) != "map[site:sc-domain:bakery.example]" {
		t.Fatalf("config = %v", got["config"])
	}
	for _, q := range []struct{ client, resource, id string }{
		{client, "integrations", uuid.NewString()}, {uuid.NewString(), "integrations", id}, {client, "citations", id},
	} {
		if _, err := s.Row(t.Context(), q.client, q.resource, q.id); !errors.Is(err, app.ErrNotFound) {
			t.Errorf("Row(%s, %s, %s): %v, want ErrNotFound", q.client, q.resource, q.id, err)
		}
	}
	_, err := d.GetRecord(t.Context(), client, "integrations", uuid.NewString())
	if apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("GetRecord of an absent id: %v, want not found", err)
	}
}

// testReplaceRowsChecksOwner: the store itself replaces only a row stored
// under the same client and resource, and replaces nothing otherwise.
func testReplaceRowsChecksOwner(t *testing.T, s Store) {
	client := uuid.NewString()
	a, b := row(client, "reviews", base, map[string]any{"sentiment": "positive"}), row(client, "reviews", base, nil)
	insert(t, s, a, b)
	good := a
	good.Keys = map[string]any{"sentiment": "negative"}
	stranger := b
	stranger.ClientID = uuid.NewString()
	err := s.InTx(t.Context(), func(tx app.Tx) error { return tx.ReplaceRows(t.Context(), []app.Row{good, stranger}) })
	if !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("replacing a row under another client: %v, want ErrNotFound", err)
	}
	if total(t, s, client, "reviews", "sentiment", "positive") != 1 || total(t, s, client, "reviews", "sentiment", "negative") != 0 {
		t.Fatal("a refused replacement changed a row")
	}
	if err := s.InTx(t.Context(), func(tx app.Tx) error { return tx.ReplaceRows(t.Context(), []app.Row{good}) }); err != nil {
		t.Fatal(err)
	}
	if total(t, s, client, "reviews", "sentiment", "positive") != 0 || total(t, s, client, "reviews", "sentiment", "negative") != 1 {
		t.Fatal("a replacement did not move the sentiment totals")
	}
	var locked []app.Row
	err = s.InTx(t.Context(), func(tx app.Tx) error {
		var err error
		locked, err = tx.LockRows(t.Context(), []string{b.ID, uuid.NewString(), a.ID})
		return err
	})
	if err != nil || len(locked) != 2 || locked[0].ID > locked[1].ID || locked[0].ClientID != client {
		t.Fatalf("LockRows = %v (%v), want the two stored rows in id order", locked, err)
	}
}
