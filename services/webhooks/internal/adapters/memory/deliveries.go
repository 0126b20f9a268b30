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
			s.deliveries[d.ID] = &delivery{Delivery: cloneDelivery(d)}
		}
		return nil
	})
}

// Claim implements app.DeliveryStore.
func (s *Store) Claim(ctx context.Context, now time.Time, limit, perEndpoint int, lease time.Duration) ([]app.Delivery, error) {
	var out []app.Delivery
	err := s.db.InTx(ctx, func(*memdb.Tx) error {
		var due []*delivery
		leased := map[string]int{} // by endpoint
		for _, d := range s.deliveries {
			switch {
			case d.Status != app.Pending:
			case d.leasedUntil.After(now):
				leased[d.EndpointID]++
			case !d.NextAttemptAt.After(now):
				due = append(due, d)
			}
		}
		slices.SortFunc(due, func(a, b *delivery) int {
			if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		for _, d := range due {
			if len(out) == limit {
				break
			}
			if perEndpoint > 0 && leased[d.EndpointID] >= perEndpoint {
				continue
			}
			leased[d.EndpointID]++
			d.leasedUntil = now.Add(lease)
			out = append(out, cloneDelivery(d.Delivery))
		}
		return nil
	})
	return out, err
}

// RecordAttempt implements app.DeliveryStore.
func (s *Store) RecordAttempt(ctx context.Context, id string, a app.Attempt, status app.DeliveryStatus, next time.Time) error {
	return s.db.InTx(ctx, func(*memdb.Tx) error {
		d, ok := s.deliveries[id]
		if !ok {
			return fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
		}
		d.Attempts = append(slices.Clip(d.Attempts), a)
		d.Status, d.NextAttemptAt, d.leasedUntil = status, time.Time{}, time.Time{}
		if status == app.Pending {
			d.NextAttemptAt = next
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
		d.Status, d.NextAttemptAt, d.leasedUntil = app.Pending, now, time.Time{}
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
				d.Status, d.NextAttemptAt, d.leasedUntil = app.Pending, now, time.Time{}
				n++
			}
		}
		return nil
	})
	return n, err
}
