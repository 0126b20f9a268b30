// Package memory is the collections store kept in process memory, the
// embedded default, held to the same contract suite as PostgreSQL. The lock,
// undo log and outbox are platform/memdb's.
package memory

import (
	"context"
	"fmt"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// Store is the in-memory collections store.
type Store struct {
	db    *memdb.DB
	sites map[string]app.Site
}

// New returns an empty store on db.
func New(db *memdb.DB) *Store {
	return &Store{db: db, sites: map[string]app.Site{}}
}

// Site implements app.Store.
func (s *Store) Site(_ context.Context, id string) (app.Site, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	site, ok := s.sites[id]
	if !ok {
		return app.Site{}, fmt.Errorf("site %s: %w", id, app.ErrNotFound)
	}
	return site, nil
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *memdb.Tx) error { return fn(&tx{Tx: t, s: s}) })
}

type tx struct {
	*memdb.Tx
	s *Store
}

func (t *tx) InsertSite(_ context.Context, site app.Site) error {
	if _, ok := t.s.sites[site.ID]; ok {
		return fmt.Errorf("site %s: %w", site.ID, app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.sites, site.ID, site)
	return nil
}
