package app

import (
	"context"

	"github.com/atrium-hq/atrium/platform/outbox"
)

// EndpointStore keeps the endpoints. Reads are scoped by the tenant: an
// endpoint of another tenant is store.ErrNotFound, as one that does not
// exist.
type EndpointStore interface {
	// InTx runs fn in a transaction (committed if fn returns nil).
	InTx(ctx context.Context, fn func(EndpointTx) error) error
	// Endpoint returns the tenant's endpoint id.
	Endpoint(ctx context.Context, t Tenant, id string) (Endpoint, error)
	// Endpoints returns the tenant's endpoints, newest first.
	Endpoints(ctx context.Context, t Tenant) ([]Endpoint, error)
	// Subscribers returns the tenant's enabled endpoints subscribed to the
	// event type.
	Subscribers(ctx context.Context, t Tenant, eventType string) ([]Endpoint, error)
}

// EndpointTx is the writes of a transaction, and the reads it makes before
// writing (which lock, on PostgreSQL).
type EndpointTx interface {
	Endpoint(ctx context.Context, t Tenant, id string) (Endpoint, error)
	// CountEndpoints is how many endpoints the tenant has, for the limit.
	CountEndpoints(ctx context.Context, t Tenant) (int, error)
	InsertEndpoint(ctx context.Context, e Endpoint) error
	// UpdateEndpoint replaces the stored endpoint of e's tenant and id.
	UpdateEndpoint(ctx context.Context, e Endpoint) error
	DeleteEndpoint(ctx context.Context, t Tenant, id string) error
	// Enqueue adds an event to the service's outbox (webhook.disabled),
	// published after the transaction commits.
	outbox.Enqueuer
}

// Store is both ports, as each adapter implements them: deliveries belong
// to endpoints and go with them when they are deleted.
type Store interface {
	EndpointStore
	DeliveryStore
}
