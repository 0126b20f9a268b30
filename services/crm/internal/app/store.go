package app

import (
	"context"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/store"
)

// Store errors (platform/store's). Adapters return them, possibly wrapped, so
// that use cases can turn them into messages for the caller.
var (
	// ErrNotFound: no row matches.
	ErrNotFound = store.ErrNotFound
	// ErrDuplicate: a unique rule (member email within an agency, link of a
	// client to an agency, key digest) already holds for another row.
	ErrDuplicate = store.ErrDuplicate
)

// Store is the CRM service's persistence port. The memory and postgres
// adapters both satisfy it and are held to the same contract suite
// (storetest.RunAll).
type Store interface {
	Reader
	// InTx runs fn in a transaction: either all of its writes (including the
	// events it enqueues) happen, or none do.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Reader reads committed state. Every tenant-owned read takes the tenant's
// id, so no query can cross agencies.
type Reader interface {
	Agency(ctx context.Context, id string) (Agency, error)
	Member(ctx context.Context, agencyID, id string) (Member, error)
	Client(ctx context.Context, id string) (Client, error)
	// Agencies lists agencies by created_at descending, then id descending.
	Agencies(ctx context.Context, page pagination.Page) ([]Agency, error)
	// Clients lists clients by created_at descending, then id descending;
	// with filter.AgencyID, only the clients linked to that agency.
	Clients(ctx context.Context, filter ClientFilter, page pagination.Page) ([]Client, error)
	// Linked reports whether the client is linked to the agency.
	Linked(ctx context.Context, agencyID, clientID string) (bool, error)
	// LinkedClient returns the client if it is linked to the agency, in one
	// read; ErrNotFound otherwise.
	LinkedClient(ctx context.Context, agencyID, clientID string) (Client, error)
	// LinkedClients lists the clients linked to the agency, by id.
	LinkedClients(ctx context.Context, agencyID string) ([]Client, error)
	// Prospects lists an agency's prospects by updated_at descending, then
	// id descending.
	Prospects(ctx context.Context, agencyID string, page pagination.Page) ([]Prospect, error)
	// Deals lists an agency's deals by updated_at descending, then id
	// descending.
	Deals(ctx context.Context, agencyID string, page pagination.Page) ([]Deal, error)
	KeyBySecretSHA256(ctx context.Context, digest []byte) (APIKey, error)
	// Keys lists keys by created_at descending, then id descending.
	Keys(ctx context.Context, filter KeyFilter, page pagination.Page) ([]APIKey, error)
}

// ClientFilter narrows Clients; an empty AgencyID matches every client.
type ClientFilter struct {
	AgencyID string
}

// KeyFilter narrows Keys; empty fields match every key.
type KeyFilter struct {
	AgencyID string
	SiteID   string
}

// Tx is a transaction. Its getters see the transaction's own writes and, in
// PostgreSQL, lock the row they return until the transaction ends, so that
// read-modify-write use cases do not lose updates.
type Tx interface {
	Agency(ctx context.Context, id string) (Agency, error)
	Member(ctx context.Context, agencyID, id string) (Member, error)
	Client(ctx context.Context, id string) (Client, error)
	Link(ctx context.Context, agencyID, clientID string) (ClientLink, error)
	Key(ctx context.Context, id string) (APIKey, error)
	Prospect(ctx context.Context, agencyID, id string) (Prospect, error)
	Deal(ctx context.Context, agencyID, id string) (Deal, error)

	InsertAgency(ctx context.Context, a Agency) error
	InsertMember(ctx context.Context, m Member) error
	InsertClient(ctx context.Context, c Client) error
	// UpdateClient stores c's status, auto_deploy and updated_at.
	UpdateClient(ctx context.Context, c Client) error
	InsertLink(ctx context.Context, l ClientLink) error
	DeleteLink(ctx context.Context, agencyID, clientID string) error
	InsertKey(ctx context.Context, k APIKey) error
	UpdateKey(ctx context.Context, k APIKey) error
	InsertProspect(ctx context.Context, p Prospect) error
	UpdateProspect(ctx context.Context, p Prospect) error
	InsertDeal(ctx context.Context, d Deal) error
	UpdateDeal(ctx context.Context, d Deal) error

	// Enqueue adds an event to the outbox; the relay publishes it to NATS
	// after the transaction commits.
	outbox.Enqueuer
}

// SiteDirectory answers whether a site exists. Sites belong to the
// collections service; the CRM asks it when a key is bound to a site.
type SiteDirectory interface {
	// SiteExists reports whether the site exists. An error means the answer
	// is unknown (the collections service is unreachable).
	SiteExists(ctx context.Context, id string) (bool, error)
}
