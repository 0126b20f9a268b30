package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
)

// Store is the in-memory webhooks store.
//
// Deliveries change outside memdb's undo log: each of their writes is one
// step that cannot fail half way, done under the write lock.
type Store struct {
	db         *memdb.DB
	endpoints  map[string]app.Endpoint // by id
	deliveries map[string]*delivery    // by id
	// pending holds the pending ones of deliveries, which claims and the
	// backlog scan: the finished ones are most of the log.
	pending map[string]*delivery
	byEvent map[endpointEvent]string
	// heldUntil is when each endpoint held back (app.DeliveryStore.Hold)
	// may be claimed from again; past holds stay until the endpoint goes.
	heldUntil map[string]time.Time
}

// New returns an empty store on db, which holds its lock and outbox.
func New(db *memdb.DB) *Store {
	return &Store{db: db, endpoints: map[string]app.Endpoint{}, deliveries: map[string]*delivery{}, pending: map[string]*delivery{},
		byEvent: map[endpointEvent]string{}, heldUntil: map[string]time.Time{}}
}

// InTx implements app.EndpointStore.
func (s *Store) InTx(ctx context.Context, fn func(app.EndpointTx) error) error {
	return s.db.InTx(ctx, func(t *memdb.Tx) error { return fn(&tx{Tx: t, s: s}) })
}

// Endpoint implements app.EndpointStore.
func (s *Store) Endpoint(_ context.Context, t app.Tenant, id string) (app.Endpoint, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.endpoint(t, id)
}

func (s *Store) endpoint(t app.Tenant, id string) (app.Endpoint, error) {
	e, ok := s.endpoints[id]
	if !ok || e.Tenant != t {
		return app.Endpoint{}, fmt.Errorf("webhook %s: %w", id, store.ErrNotFound)
	}
	return clone(e), nil
}

// Endpoints implements app.EndpointStore.
func (s *Store) Endpoints(_ context.Context, t app.Tenant) ([]app.Endpoint, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.matching(func(e app.Endpoint) bool { return e.Tenant == t }), nil
}

// Subscribers implements app.EndpointStore.
func (s *Store) Subscribers(_ context.Context, t app.Tenant, eventType string) ([]app.Endpoint, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.matching(func(e app.Endpoint) bool { return e.Tenant == t && e.Enabled && e.Subscribes(eventType) }), nil
}

// matching returns the endpoints keep accepts, newest first. A tenant has
// few endpoints (a limit applies), so a scan of all is what a deployment of
// the embedded default affords; an index per tenant is the next step.
func (s *Store) matching(keep func(app.Endpoint) bool) []app.Endpoint {
	var out []app.Endpoint
	for _, e := range s.endpoints {
		if keep(e) {
			out = append(out, clone(e))
		}
	}
	slices.SortFunc(out, func(a, b app.Endpoint) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out
}

func clone(e app.Endpoint) app.Endpoint {
	e.Events = slices.Clone(e.Events)
	return e
}

// tx is a transaction over Store, holding its write lock.
type tx struct {
	*memdb.Tx
	s *Store
}

func (t *tx) Endpoint(_ context.Context, tenant app.Tenant, id string) (app.Endpoint, error) {
	return t.s.endpoint(tenant, id)
}

func (t *tx) CountEndpoints(_ context.Context, tenant app.Tenant) (int, error) {
	n := 0
	for _, e := range t.s.endpoints {
		if e.Tenant == tenant {
			n++
		}
	}
	return n, nil
}

func (t *tx) InsertEndpoint(_ context.Context, e app.Endpoint) error {
	if _, ok := t.s.endpoints[e.ID]; ok {
		return fmt.Errorf("webhook %s: %w", e.ID, store.ErrDuplicate)
	}
	t.put(e.ID, clone(e))
	return nil
}

func (t *tx) UpdateEndpoint(_ context.Context, e app.Endpoint) error {
	if _, err := t.s.endpoint(e.Tenant, e.ID); err != nil {
		return err
	}
	t.put(e.ID, clone(e))
	return nil
}

func (t *tx) DeleteEndpoint(_ context.Context, tenant app.Tenant, id string) error {
	if _, err := t.s.endpoint(tenant, id); err != nil {
		return err
	}
	memdb.Delete(t.Tx, t.s.endpoints, id)
	memdb.Delete(t.Tx, t.s.heldUntil, id)
	// Its deliveries go with it, and come back if the transaction fails.
	for did, d := range t.s.deliveries {
		if d.EndpointID == id {
			memdb.Delete(t.Tx, t.s.deliveries, did)
			if d.Status == app.Pending {
				memdb.Delete(t.Tx, t.s.pending, did)
			}
			memdb.Delete(t.Tx, t.s.byEvent, endpointEvent{id, d.EventID})
		}
	}
	return nil
}

func (t *tx) put(id string, e app.Endpoint) { memdb.Put(t.Tx, t.s.endpoints, id, e) }
