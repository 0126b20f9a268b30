// Package memory is the data store kept in process memory, the embedded
// default, held to the same contract suite as PostgreSQL. The lock, undo
// log and outbox are platform/memdb's.
package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

type dataset struct{ client, resource string }

// place is where a row is stored: its dataset and its index in the
// dataset's slice. Rows are never removed, so an index stays valid.
type place struct {
	dataset
	index int
}

// Store is the in-memory data store: each client's dataset is a slice of
// rows, filtered, sorted and paged per read (app.SelectRows), so totals are
// counted from the rows themselves and stay exact through replacements.
type Store struct {
	db   *memdb.DB
	rows map[dataset][]app.Row
	ids  map[string]place
}

// New returns an empty store on db.
func New(db *memdb.DB) *Store {
	return &Store{db: db, rows: map[dataset][]app.Row{}, ids: map[string]place{}}
}

// Rows implements app.Store.
func (s *Store) Rows(_ context.Context, q app.Query) ([]app.Row, int, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	page, total := app.SelectRows(s.rows[dataset{q.ClientID, q.Resource}], q)
	return page, total, nil
}

// Row implements app.Store.
func (s *Store) Row(_ context.Context, clientID, resource, id string) (app.Row, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	p, ok := s.ids[id]
	if !ok || p.dataset != (dataset{clientID, resource}) {
		return app.Row{}, fmt.Errorf("row %s of %s: %w", id, resource, app.ErrNotFound)
	}
	return s.rows[p.dataset][p.index], nil
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *memdb.Tx) error { return fn(&tx{Tx: t, s: s}) })
}

type tx struct {
	*memdb.Tx
	s *Store
}

func (t *tx) InsertRows(_ context.Context, rows []app.Row) error {
	added := map[dataset][]app.Row{}
	for _, r := range rows {
		if _, taken := t.s.ids[r.ID]; taken {
			return fmt.Errorf("row %s: %w", r.ID, app.ErrDuplicate)
		}
		k := dataset{r.ClientID, r.Resource}
		memdb.Put(t.Tx, t.s.ids, r.ID, place{k, len(t.s.rows[k]) + len(added[k])})
		added[k] = append(added[k], r)
	}
	for k, rs := range added {
		// One new slice per dataset, so that a rollback restores the old
		// one untouched and a batch costs one copy, not one per row.
		old := t.s.rows[k]
		next := make([]app.Row, 0, len(old)+len(rs))
		memdb.Put(t.Tx, t.s.rows, k, append(append(next, old...), rs...))
	}
	return nil
}

// LockRows implements app.Tx: the transaction holds the store's write
// lock, which is all the locking it needs.
func (t *tx) LockRows(_ context.Context, ids []string) ([]app.Row, error) {
	var out []app.Row
	for _, id := range ids {
		if p, ok := t.s.ids[id]; ok {
			out = append(out, t.s.rows[p.dataset][p.index])
		}
	}
	slices.SortFunc(out, func(a, b app.Row) int { return strings.Compare(a.ID, b.ID) })
	return slices.CompactFunc(out, func(a, b app.Row) bool { return a.ID == b.ID }), nil
}

// ReplaceRows implements app.Tx. Readers copy what they select under the
// read lock, so a row is replaced in its slice in place; the undo log puts
// the old one back.
func (t *tx) ReplaceRows(_ context.Context, rows []app.Row) error {
	for _, r := range rows {
		if p, ok := t.s.ids[r.ID]; !ok || p.dataset != (dataset{r.ClientID, r.Resource}) {
			return fmt.Errorf("row %s of %s: %w", r.ID, r.Resource, app.ErrNotFound)
		}
	}
	for _, r := range rows {
		p := t.s.ids[r.ID]
		slot := &t.s.rows[p.dataset][p.index]
		old := *slot
		*slot = r
		t.OnRollback(func() { *slot = old })
	}
	return nil
}
