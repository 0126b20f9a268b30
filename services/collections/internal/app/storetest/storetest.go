// Package storetest is the contract every collections store adapter must
// meet; each adapter's test is one call to RunAll.
package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// Store is what the suite needs of an adapter. Transactions, events and
// the outbox are platform/txtest's contract; this suite checks the
// collections domain only.
type Store = app.Store

// RunAll runs the contract against fresh stores made by newStore.
func RunAll(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, Store)
	}{
		{"SiteRoundTrip", testSiteRoundTrip},
		{"RollbackLeavesNoTrace", testRollback},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

var base = time.Date(2026, 11, 1, 9, 30, 0, 123456000, time.UTC)

func testSiteRoundTrip(t *testing.T, s Store) {
	site := app.Site{ID: uuid.NewString(), Name: "Bakery blog", CreatedAt: base, UpdatedAt: base}
	if err := s.InTx(t.Context(), func(tx app.Tx) error { return tx.InsertSite(t.Context(), site) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Site(t.Context(), site.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, site) {
		t.Fatalf("got %+v, want %+v", got, site)
	}
	if _, err := s.Site(t.Context(), uuid.NewString()); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("unknown site: error = %v, want ErrNotFound", err)
	}
	err = s.InTx(t.Context(), func(tx app.Tx) error { return tx.InsertSite(t.Context(), site) })
	if !errors.Is(err, app.ErrDuplicate) {
		t.Fatalf("duplicate site: error = %v, want ErrDuplicate", err)
	}
}

func testRollback(t *testing.T, s Store) {
	site := app.Site{ID: uuid.NewString(), Name: "Gone", CreatedAt: base, UpdatedAt: base}
	abort := errors.New("abort")
	err := s.InTx(t.Context(), func(tx app.Tx) error {
		if err := tx.InsertSite(t.Context(), site); err != nil {
			return err
		}
		return abort
	})
	if !errors.Is(err, abort) {
		t.Fatalf("error = %v, want the closure's", err)
	}
	if _, err := s.Site(t.Context(), site.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("rolled-back site: error = %v, want ErrNotFound", err)
	}
}
