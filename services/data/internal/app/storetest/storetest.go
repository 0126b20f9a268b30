// Package storetest is the contract every data store adapter must meet;
// each adapter's test is one call to RunAll.
package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

// Store is what the suite needs of an adapter.
type Store = app.Store

// RunAll runs the contract against fresh stores made by newStore.
func RunAll(t *testing.T, newStore func(t *testing.T) Store) {
	for _, tt := range []struct {
		name string
		fn   func(*testing.T, Store)
	}{
		{"PagingReadsEveryRowOnce", testPaging},
		{"OrderAndFilter", testOrderAndFilter},
		{"DatasetsAreSeparate", testSeparate},
		{"InsertIsAllOrNothing", testAllOrNothing},
		{"KeysetPaging", testKeyset},
		{"ConcurrentTotals", testConcurrentTotals},
		{"UpsertInsertsAndReplaces", testUpsertInsertsAndReplaces},
		{"ReplacementKeepsCreatedAt", testCreatedAt},
		{"UpdateSkipsMissing", testUpdateSkipsMissing},
		{"TakenIDIsRefused", testTakenID},
		{"ReapplyingAWriteChangesNothing", testReapply},
		{"AnEarlierStateWrittenLateIsSkipped", testLateWriteSkipped},
		{"WritesAreAllOrNothing", testWritesAllOrNothing},
		{"ConcurrentUpsertsOfOneID", testConcurrentUpserts},
		{"RowNotFound", testRowNotFound},
		{"ReplaceRowsChecksOwner", testReplaceRowsChecksOwner},
		{"RowsOfAnAgency", testRowsOfAnAgency},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

var base = time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)

func row(client, resource string, at time.Time, keys map[string]any) app.Row {
	id := uuid.NewString()
	if keys == nil {
		keys = map[string]any{}
	}
	return app.Row{ID: id, ClientID: client, Resource: resource, CreatedAt: at, UpdatedAt: at, Keys: keys,
		Data: []byte(fmt.Sprintf(`{"id": %q}`, id))}
}

func insert(t *testing.T, s Store, rows ...app.Row) {
	t.Helper()
	if err := s.InTx(t.Context(), func(tx app.Tx) error { return tx.InsertRows(t.Context(), rows) }); err != nil {
		t.Fatal(err)
	}
}

func ids(rows []app.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func read(t *testing.T, s Store, q app.Query) ([]string, int) {
	t.Helper()
	rows, total, err := s.Rows(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	return ids(rows), total
}

func testPaging(t *testing.T, s Store) {
	client := uuid.NewString()
	var all []app.Row
	for i := range 25 {
		all = append(all, row(client, "keywords", base.Add(time.Duration(i/4)*time.Hour), nil)) // ties in fours
	}
	insert(t, s, all...)
	for _, asc := range []bool{false, true} {
		var got []string
		for off := int32(0); off < 25; off += 6 {
			page, total := read(t, s, app.Query{Resource: "keywords", ClientID: client, Order: "created_at", Asc: asc, Page: pagination.Page{Limit: 6, Offset: off}})
			if total != 25 {
				t.Fatalf("total = %d, want 25", total)
			}
			got = append(got, page...)
		}
		want := slices.Clone(all)
		slices.SortFunc(want, func(a, b app.Row) int {
			if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
				return c
			}
			if a.ID < b.ID {
				return -1
			}
			return 1
		})
		if !asc {
			slices.Reverse(want)
		}
		if !slices.Equal(got, ids(want)) {
			t.Fatalf("asc=%v: pages read %v\nwant %v", asc, got, ids(want))
		}
	}
}

func testOrderAndFilter(t *testing.T, s Store) {
	client := uuid.NewString()
	tracked := func(h int) time.Time { return base.Add(time.Duration(h) * time.Hour) }
	a := row(client, "keywords", base, map[string]any{"status": "active", "tracked_at": tracked(3)})
	b := row(client, "keywords", base, map[string]any{"status": "Active", "tracked_at": tracked(1)})
	c := row(client, "keywords", base, map[string]any{"status": "active", "tracked_at": tracked(2)})
	d := row(client, "keywords", base, map[string]any{"status": "active"}) // never tracked
	insert(t, s, a, b, c, d)
	got, total := read(t, s, app.Query{Resource: "keywords", ClientID: client, Order: "tracked_at", FilterField: "status", FilterValue: "active", Page: pagination.Page{Limit: 10}})
	if want := []string{d.ID, a.ID, c.ID}; total != 3 || !slices.Equal(got, want) {
		t.Fatalf("status=active by tracked_at desc = %v (total %d), want %v (no value first, exact case)", got, total, want)
	}
	got, _ = read(t, s, app.Query{Resource: "keywords", ClientID: client, Order: "tracked_at", Asc: true, Page: pagination.Page{Limit: 10}})
	if want := []string{b.ID, c.ID, a.ID, d.ID}; !slices.Equal(got, want) {
		t.Fatalf("by tracked_at asc = %v, want %v (no value last)", got, want)
	}
	backlinks := []app.Row{
		row(client, "backlinks", base, map[string]any{"external_pages": 5.0, "published": true}),
		row(client, "backlinks", base, map[string]any{"external_pages": 50.0}),
		row(client, "backlinks", base, map[string]any{"external_pages": 7.0}),
	}
	insert(t, s, backlinks...)
	got, _ = read(t, s, app.Query{Resource: "backlinks", ClientID: client, Order: "external_pages", Page: pagination.Page{Limit: 10}})
	if want := []string{backlinks[1].ID, backlinks[2].ID, backlinks[0].ID}; !slices.Equal(got, want) {
		t.Fatalf("backlinks by external_pages desc = %v, want %v (numerically)", got, want)
	}
	got, total = read(t, s, app.Query{Resource: "backlinks", ClientID: client, Order: "created_at", FilterField: "id", FilterValue: backlinks[2].ID, Page: pagination.Page{Limit: 10}})
	if total != 1 || !slices.Equal(got, []string{backlinks[2].ID}) {
		t.Fatalf("filter by id = %v (total %d)", got, total)
	}
	_, total = read(t, s, app.Query{Resource: "backlinks", ClientID: client, Order: "created_at", FilterField: "published", FilterValue: true, Page: pagination.Page{Limit: 10}})
	if total != 1 {
		t.Fatalf("filter published=true total = %d, want 1", total)
	}
}

func testSeparate(t *testing.T, s Store) {
	one, two := uuid.NewString(), uuid.NewString()
	insert(t, s, row(one, "keywords", base, nil), row(two, "keywords", base, nil), row(one, "reviews", base, nil))
	for _, q := range []app.Query{
		{Resource: "keywords", ClientID: one}, {Resource: "keywords", ClientID: two}, {Resource: "reviews", ClientID: one},
	} {
		q.Order, q.Page = "created_at", pagination.Page{Limit: 10}
		if got, total := read(t, s, q); total != 1 || len(got) != 1 {
			t.Fatalf("%s of %s: %d rows, total %d; want only its own one", q.Resource, q.ClientID, len(got), total)
		}
	}
	if got, total := read(t, s, app.Query{Resource: "reviews", ClientID: two, Order: "created_at", Page: pagination.Page{Limit: 10}}); total != 0 || len(got) != 0 {
		t.Fatalf("an empty dataset: %v, total %d", got, total)
	}
}

func testAllOrNothing(t *testing.T, s Store) {
	client := uuid.NewString()
	first := row(client, "keywords", base, nil)
	insert(t, s, first)
	again := first
	err := s.InTx(t.Context(), func(tx app.Tx) error {
		return tx.InsertRows(t.Context(), []app.Row{row(client, "keywords", base, nil), again})
	})
	if !errors.Is(err, app.ErrDuplicate) {
		t.Fatalf("a duplicate id: %v, want ErrDuplicate", err)
	}
	if _, total := read(t, s, app.Query{Resource: "keywords", ClientID: client, Order: "created_at", Page: pagination.Page{Limit: 10}}); total != 1 {
		t.Fatalf("after a refused insert, %d rows; want the first only", total)
	}
}

// testKeyset walks with After positions in every order, ties and missing
// keys included: the same rows as offset paging, each once.
func testKeyset(t *testing.T, s Store) {
	client := uuid.NewString()
	var all []app.Row
	for i := range 23 {
		keys := map[string]any{"status": []string{"a", "b"}[i%2]}
		if i%5 != 0 {
			keys["tracked_at"] = base.Add(time.Duration(i%3) * time.Hour)
		}
		all = append(all, row(client, "keywords", base.Add(time.Duration(i%4)*time.Minute), keys))
	}
	insert(t, s, all...)
	for _, q := range []app.Query{
		{Order: "created_at"}, {Order: "created_at", Asc: true}, {Order: "tracked_at"}, {Order: "tracked_at", Asc: true},
		{Order: "id"}, {Order: "tracked_at", FilterField: "status", FilterValue: "a"},
	} {
		q.Resource, q.ClientID = "keywords", client
		q.Page = pagination.Page{Limit: 100}
		want, _ := read(t, s, q)
		var got []string
		q.Page.Limit = 4
		for range 20 {
			rows, _, err := s.Rows(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 {
				break
			}
			got = append(got, ids(rows)...)
			last := rows[len(rows)-1]
			var key any
			switch q.Order {
			case "created_at":
				key = last.CreatedAt
			case "id":
				key = last.ID
			default:
				key = last.Keys[q.Order]
			}
			// Every row comes back with the order key it was sorted by: the
			// use case may continue after any of them (it reads one row more
			// than the page to learn whether another follows).
			for _, got := range rows {
				for _, r := range all {
					if r.ID == got.ID && q.Order == "tracked_at" && fmt.Sprint(r.Keys[q.Order]) != fmt.Sprint(got.Keys[q.Order]) {
						t.Fatalf("row %s came back with %s = %v, stored %v", r.ID, q.Order, got.Keys[q.Order], r.Keys[q.Order])
					}
				}
			}
			q.After = &app.After{Key: key, ID: last.ID}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s asc=%v filter=%v: keyset walk %v\nwant %v", q.Order, q.Asc, q.FilterValue, got, want)
		}
	}
}

// testConcurrentTotals loads one dataset from several writers at once: the
// total and the per-value totals stay exact (no lost update, no deadlock).
func testConcurrentTotals(t *testing.T, s Store) {
	client := uuid.NewString()
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			var rows []app.Row
			for i := range 50 {
				rows = append(rows, row(client, "keywords", base.Add(time.Duration(w*50+i)*time.Second),
					map[string]any{"status": []string{"active", "paused"}[i%2]}))
			}
			errs <- s.InTx(t.Context(), func(tx app.Tx) error { return tx.InsertRows(t.Context(), rows) })
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	q := app.Query{Resource: "keywords", ClientID: client, Order: "created_at", Page: pagination.Page{Limit: 1}}
	if _, total := read(t, s, q); total != 400 {
		t.Fatalf("total after 8 concurrent loads of 50 = %d, want 400", total)
	}
	q.FilterField, q.FilterValue = "status", "paused"
	if _, total := read(t, s, q); total != 200 {
		t.Fatalf("status=paused total = %d, want 200", total)
	}
}
