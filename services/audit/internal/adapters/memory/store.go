package memory

import (
	"context"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
)

// Store is the in-memory audit trail: the events in the trail's order
// (newest first), and their ids.
type Store struct {
	db     *memdb.DB
	events []app.Event
	ids    map[string]struct{}
}

// New returns an empty store on db, which holds its lock.
func New(db *memdb.DB) *Store { return &Store{db: db, ids: map[string]struct{}{}} }

// newer orders the trail: at, then id, descending.
func newer(a, b app.Event) int {
	if c := b.At.Compare(a.At); c != 0 {
		return c
	}
	switch {
	case a.ID > b.ID:
		return -1
	case a.ID < b.ID:
		return 1
	}
	return 0
}

// Add implements app.Store.
func (s *Store) Add(ctx context.Context, e app.Event) (bool, error) {
	added := false
	err := s.db.InTx(ctx, func(t *memdb.Tx) error {
		if _, ok := s.ids[e.ID]; ok {
			return nil
		}
		e.Fields = slices.Clone(e.Fields)
		i, _ := slices.BinarySearchFunc(s.events, e, newer)
		s.events = slices.Insert(s.events, i, e)
		memdb.Put(t, s.ids, e.ID, struct{}{})
		t.OnRollback(func() { s.events = slices.Delete(s.events, i, i+1) })
		added = true
		return nil
	})
	return added, err
}

// Events implements app.Store.
func (s *Store) Events(_ context.Context, f app.Filter) ([]app.Event, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	start := 0
	if f.After != nil {
		start, _ = slices.BinarySearchFunc(s.events, *f.After, func(e app.Event, p app.Position) int {
			if p.Before(e) {
				return 1
			}
			return -1
		})
	}
	var out []app.Event
	for _, e := range s.events[start:] {
		if len(out) >= f.Limit {
			break
		}
		if !f.Since.IsZero() && e.At.Before(f.Since) {
			break // only older ones follow
		}
		if f.Matches(e) {
			e.Fields = slices.Clone(e.Fields)
			out = append(out, e)
		}
	}
	return out, nil
}

// DeleteBefore implements app.Store.
func (s *Store) DeleteBefore(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	n := 0
	err := s.db.InTx(ctx, func(t *memdb.Tx) error {
		// The oldest are last.
		end := len(s.events)
		for n < limit && end > 0 && s.events[end-1].At.Before(cutoff) {
			end--
			memdb.Delete(t, s.ids, s.events[end].ID)
			n++
		}
		removed := slices.Clone(s.events[end:])
		s.events = s.events[:end]
		t.OnRollback(func() { s.events = append(s.events, removed...) })
		return nil
	})
	return n, err
}
