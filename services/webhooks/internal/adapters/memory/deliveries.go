package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
)

// delivery is a stored delivery and its lease.
type delivery struct {
	app.Delivery
	leasedUntil time.Time
}

type endpointEvent struct{ endpoint, event string }

func cloneDelivery(d app.Delivery) app.Delivery {
	d.Attempts = slices.Clone(d.Attempts)
	return d
}

// AddDeliveries implements app.DeliveryStore.
func (s *Store) AddDeliveries(ctx context.Context, ds []app.Delivery) error {
	return s.db.InTx(ctx, func(*memdb.Tx) error {
		for _, d := range ds {
			k := endpointEvent{d.EndpointID, d.EventID}
			if _, dup := s.byEvent[k]; dup {
				continue
			}
			if _, ok := s.endpoints[d.EndpointID]; !ok {
				continue // its endpoint was deleted meanwhile
			}
			s.byEvent[k] = d.ID
			stored := &delivery{Delivery: cloneDelivery(d)}
			if held := s.heldUntil[d.EndpointID]; d.Status == app.Pending && held.After(stored.NextAttemptAt) {
				stored.NextAttemptAt = held
			}
			s.deliveries[d.ID] = stored
			s.setStatus(stored, d.Status)
		}
		return nil
	})
}

// setStatus sets d's status and keeps the pending index; the caller holds
// the write lock.
func (s *Store) setStatus(d *delivery, status app.DeliveryStatus) {
	d.Status = status
	if status == app.Pending {
		s.pending[d.ID] = d
	} else {
		delete(s.pending, d.ID)
	}
}

// Claim implements app.DeliveryStore.
func (s *Store) Claim(ctx context.Context, now time.Time, limit int, bound app.Bound, lease time.Duration) ([]app.Due, error) {
	var out []app.Due
	err := s.db.InTx(ctx, func(*memdb.Tx) error {
		var due []*delivery
		for _, d := range s.pending {
			if !d.leasedUntil.After(now) && !d.NextAttemptAt.After(now) && !s.heldUntil[d.EndpointID].After(now) {
				due = append(due, d)
			}
		}
		slices.SortFunc(due, func(a, b *delivery) int {
			if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		taken := map[string]int{}
		for _, d := range due {
			if len(out) == limit {
				break
			}
			if taken[d.EndpointID] >= bound.Allows(d.EndpointID) {
				continue
			}
			ep, ok := s.endpoints[d.EndpointID]
			if !ok {
				continue
			}
			taken[d.EndpointID]++
			d.leasedUntil = now.Add(lease)
			out = append(out, app.Due{Delivery: cloneDelivery(d.Delivery), Endpoint: clone(ep)})
		}
		return nil
	})
	return out, err
}

// RecordAttempts implements app.DeliveryStore.
func (s *Store) RecordAttempts(ctx context.Context, rs []app.AttemptRecord) error {
	return s.db.InTx(ctx, func(*memdb.Tx) error {
		for _, r := range rs {
			d, ok := s.deliveries[r.ID]
			if !ok {
				continue // gone with its endpoint
			}
			d.Attempts = append(slices.Clip(d.Attempts), r.Attempt)
			d.NextAttemptAt, d.leasedUntil = time.Time{}, time.Time{}
			if r.Status == app.Pending {
				d.NextAttemptAt = r.Next
			}
			s.setStatus(d, r.Status)
		}
		return nil
	})
}

// owned returns the tenant's endpoint's delivery id; the caller holds a
// lock.
func (s *Store) owned(t app.Tenant, endpointID, id string) (*delivery, error) {
	d, ok := s.deliveries[id]
	if !ok || d.Tenant != t || d.EndpointID != endpointID {
		return nil, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	return d, nil
}

// Delivery implements app.DeliveryStore.
func (s *Store) Delivery(_ context.Context, t app.Tenant, endpointID, id string) (app.Delivery, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	d, err := s.owned(t, endpointID, id)
	if err != nil {
		return app.Delivery{}, err
	}
	return cloneDelivery(d.Delivery), nil
}

// Deliveries implements app.DeliveryStore: newest first by id (ids are
// UUIDv7, so in creation order), the cursor the last id of a page.
func (s *Store) Deliveries(_ context.Context, t app.Tenant, endpointID string, f app.DeliveryFilter) (app.DeliveryPage, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	var all []app.Delivery
	for _, d := range s.deliveries {
		if d.Tenant == t && d.EndpointID == endpointID && (f.Status == "" || d.Status == f.Status) &&
			(f.After == "" || d.ID < f.After) {
			all = append(all, d.Delivery)
		}
	}
	slices.SortFunc(all, func(a, b app.Delivery) int { return strings.Compare(b.ID, a.ID) })
	var page app.DeliveryPage
	for _, d := range all[:min(f.Limit, len(all))] {
		page.Deliveries = append(page.Deliveries, cloneDelivery(d))
	}
	if len(all) > f.Limit && f.Limit > 0 {
		page.Next = all[f.Limit-1].ID
	}
	return page, nil
}

// Resend implements app.DeliveryStore.
func (s *Store) Resend(ctx context.Context, t app.Tenant, endpointID, id string, now time.Time) (app.Delivery, error) {
	var out app.Delivery
	err := s.db.InTx(ctx, func(*memdb.Tx) error {
		d, err := s.owned(t, endpointID, id)
		if err != nil {
			return err
		}
		d.NextAttemptAt, d.leasedUntil = now, time.Time{}
		s.setStatus(d, app.Pending)
		out = cloneDelivery(d.Delivery)
		return nil
	})
	return out, err
}

// Recover implements app.DeliveryStore.
func (s *Store) Recover(ctx context.Context, t app.Tenant, endpointID string, since, until, now time.Time) (int, error) {
	n := 0
	err := s.db.InTx(ctx, func(*memdb.Tx) error {
		for _, d := range s.deliveries {
			if d.Tenant == t && d.EndpointID == endpointID && d.Status == app.Failed &&
				!d.CreatedAt.Before(since) && d.CreatedAt.Before(until) {
				d.NextAttemptAt, d.leasedUntil = now, time.Time{}
				s.setStatus(d, app.Pending)
				n++
			}
		}
		return nil
	})
	return n, err
}

// Hold implements app.DeliveryStore.
func (s *Store) Hold(ctx context.Context, endpointID string, now, until time.Time) (int, error) {
	n := 0
	err := s.db.InTx(ctx, func(*memdb.Tx) error {
		if _, ok := s.endpoints[endpointID]; !ok {
			return nil // deleted meanwhile
		}
		if until.After(s.heldUntil[endpointID]) {
			s.heldUntil[endpointID] = until
		}
		until := s.heldUntil[endpointID] // a longer hold stays
		for _, d := range s.pending {
			if d.EndpointID == endpointID && d.NextAttemptAt.Before(until) && !d.leasedUntil.After(now) {
				d.NextAttemptAt = until
				n++
			}
		}
		return nil
	})
	return n, err
}

// Release implements app.DeliveryStore.
func (s *Store) Release(ctx context.Context, endpointID string, now time.Time) (int, error) {
	n := 0
	err := s.db.InTx(ctx, func(*memdb.Tx) error {
		until := s.heldUntil[endpointID]
		if !until.After(now) {
			return nil
		}
		delete(s.heldUntil, endpointID)
		for _, d := range s.pending {
			if d.EndpointID == endpointID && d.NextAttemptAt.Equal(until) && !d.leasedUntil.After(now) {
				d.NextAttemptAt = now
				n++
			}
		}
		return nil
	})
	return n, err
}

// Backlog implements app.DeliveryStore.
func (s *Store) Backlog(_ context.Context, now time.Time) (app.Backlog, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	var b app.Backlog
	for _, d := range s.pending {
		b.Pending++
		if b.OldestPending.IsZero() || d.CreatedAt.Before(b.OldestPending) {
			b.OldestPending = d.CreatedAt
		}
		if !d.NextAttemptAt.After(now) {
			b.Due++
			if b.OldestDue.IsZero() || d.NextAttemptAt.Before(b.OldestDue) {
				b.OldestDue = d.NextAttemptAt
			}
		}
	}
	return b, nil
}

// Prune implements app.DeliveryStore.
func (s *Store) Prune(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := s.db.InTx(ctx, func(*memdb.Tx) error {
		for id, d := range s.deliveries {
			if d.Status != app.Pending && d.CreatedAt.Before(before) {
				delete(s.deliveries, id)
				delete(s.byEvent, endpointEvent{d.EndpointID, d.EventID})
				n++
			}
		}
		return nil
	})
	return n, err
}
