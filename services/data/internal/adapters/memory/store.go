// Package memory is the data store kept in process memory, the embedded
// default, held to the same contract suite as PostgreSQL. The lock, undo
// log and outbox are platform/memdb's.
package memory

import (
	"context"
	"fmt"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

type dataset struct{ client, resource string }

// Store is the in-memory data store: each client's dataset is a slice of
// rows, filtered, sorted and paged per read (app.SelectRows).
type Store struct {
	db   *memdb.DB
	rows map[dataset][]app.Row
	ids  map[string]bool
}

// New returns an empty store on db.
func New(db *memdb.DB) *Store {
	return &Store{db: db, rows: map[dataset][]app.Row{}, ids: map[string]bool{}}
}

// Rows implements app.Store.
func (s *Store) Rows(_ context.Context, q app.Query) ([]app.Row, int, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	page, total := app.SelectRows(s.rows[dataset{q.ClientID, q.Resource}], q)
	return page, total, nil
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
		if t.s.ids[r.ID] {
			return fmt.Errorf("row %s: %w", r.ID, app.ErrDuplicate)
		}
		memdb.Put(t.Tx, t.s.ids, r.ID, true)
		k := dataset{r.ClientID, r.Resource}
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
