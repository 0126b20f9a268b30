package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

// testRowsOfAnAgency: the rows of a resource that is an agency's
// (action_runs) are read per agency: one agency's read of a client that
// two agencies share returns its own rows only, in its pages, its total,
// its filter totals and its keyset pages; a row that moves to another
// agency moves its count with it.
func testRowsOfAnAgency(t *testing.T, s Store) {
	d, _ := datasets(s)
	client, a, b := uuid.NewString(), uuid.NewString(), uuid.NewString()
	run := func(agency, status string, i int) map[string]any {
		at := base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)
		return map[string]any{"id": uuid.NewString(), "action": "seo_audit", "status": status, "agency_id": agency,
			"credits_data": 1.0, "created_at": at, "updated_at": at}
	}
	var mine, theirs []string
	var writes []map[string]any
	for i := range 7 {
		agency, status := a, "success"
		if i%2 == 1 {
			agency = b
		}
		if i%3 == 0 {
			status = "error"
		}
		r := run(agency, status, i)
		writes = append(writes, r)
		if agency == a {
			mine = append(mine, r["id"].(string))
		} else {
			theirs = append(theirs, r["id"].(string))
		}
	}
	write(t, d, client, upsert("action_runs", writes...))
	slices.Reverse(mine) // newest first

	q := app.Query{Resource: "action_runs", ClientID: client, Agency: a, Order: "created_at", Page: pagination.Page{Limit: 10}}
	got, n := read(t, s, q)
	if !slices.Equal(got, mine) || n != len(mine) {
		t.Fatalf("agency a reads %v (total %d), want its own %v (total %d)", got, n, mine, len(mine))
	}
	q.Agency = b
	if _, n := read(t, s, q); n != len(theirs) {
		t.Fatalf("agency b's total %d, want %d", n, len(theirs))
	}
	q.Agency = uuid.NewString()
	if got, n := read(t, s, q); len(got) != 0 || n != 0 {
		t.Fatalf("a third agency reads %v (total %d), want nothing", got, n)
	}

	// Filter totals are the agency's: a has runs 0, 2, 4, 6, of which 0
	// and 6 are errors.
	q.Agency, q.FilterField, q.FilterValue = a, "status", "error"
	if got, n := read(t, s, q); n != 2 || len(got) != 2 {
		t.Fatalf("agency a's errors: %v (total %d), want 2", got, n)
	}
	q.FilterField, q.FilterValue = "", nil

	// Keyset pages stay within the agency.
	q.Page.Limit = 1
	var paged []string
	for {
		rows, _, err := s.Rows(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			break
		}
		paged = append(paged, rows[0].ID)
		full, err := s.Row(t.Context(), client, "action_runs", rows[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		q.After = &app.After{Key: full.CreatedAt, ID: full.ID}
	}
	if !slices.Equal(paged, mine) {
		t.Fatalf("keyset pages of agency a: %v, want %v", paged, mine)
	}

	// A replaced row that names another agency moves to it, count and all.
	moved := writes[0]
	moved["agency_id"] = b
	write(t, d, client, upsert("action_runs", moved))
	q = app.Query{Resource: "action_runs", ClientID: client, Agency: a, Order: "created_at", Page: pagination.Page{Limit: 10}}
	if got, n := read(t, s, q); n != len(mine)-1 || len(got) != n {
		t.Fatalf("after the move agency a reads %d rows (total %d), want %d", len(got), n, len(mine)-1)
	}
	q.Agency, q.FilterField, q.FilterValue = b, "status", "error"
	if _, n := read(t, s, q); n != 2 {
		t.Fatalf("after the move agency b has %d errors, want 2 (run 3 and the moved run 0)", n)
	}
}
