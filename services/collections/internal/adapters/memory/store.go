// Package memory is the collections store kept in process memory, the
// embedded default, held to the same contract suite as PostgreSQL.
package memory

import (
	"context"
	"fmt"
	"sync"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// Store is the in-memory collections store. A transaction holds the write
// lock throughout and undoes its changes if it fails.
type Store struct {
	mu       sync.RWMutex
	sites    map[string]app.Site
	outbox   *outbox.Memory
	onCommit func()
}

// New returns an empty store; onCommit is called after a transaction that
// enqueued events commits.
func New(onCommit func()) *Store {
	return &Store{sites: map[string]app.Site{}, outbox: &outbox.Memory{}, onCommit: onCommit}
}

// Outbox is the store's event outbox.
func (s *Store) Outbox() outbox.Source { return s.outbox }

// Site implements app.Store.
func (s *Store) Site(_ context.Context, id string) (app.Site, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	site, ok := s.sites[id]
	if !ok {
		return app.Site{}, fmt.Errorf("site %s: %w", id, app.ErrNotFound)
	}
	return site, nil
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	committed, err := s.run(fn)
	if err == nil && committed && s.onCommit != nil {
		s.onCommit()
	}
	return err
}

func (s *Store) run(fn func(app.Tx) error) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &tx{s: s}
	ok := false
	defer func() {
		if !ok {
			for i := len(t.undo) - 1; i >= 0; i-- {
				t.undo[i]()
			}
		}
	}()
	if err := fn(t); err != nil {
		return false, err
	}
	ok = true
	s.outbox.Append(t.events...)
	return len(t.events) > 0, nil
}

type tx struct {
	s      *Store
	undo   []func()
	events []outbox.Event
}

func (t *tx) InsertSite(_ context.Context, site app.Site) error {
	if _, ok := t.s.sites[site.ID]; ok {
		return fmt.Errorf("site %s: %w", site.ID, app.ErrDuplicate)
	}
	t.s.sites[site.ID] = site
	t.undo = append(t.undo, func() { delete(t.s.sites, site.ID) })
	return nil
}

func (t *tx) Enqueue(_ context.Context, e outbox.Event) error {
	t.events = append(t.events, e)
	return nil
}
