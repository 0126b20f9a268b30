package app

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/value"
)

// Directory provisions the tenancy the other interfaces rest on: agencies,
// clients and the links that give agencies access to clients (members are
// People's).
type Directory struct {
	store DirectoryStore
	clock Clock
}

// DirectoryStore is the store as Directory uses it.
type DirectoryStore interface {
	DirectoryReader
	InTx(ctx context.Context, fn func(DirectoryTx) error) error
}

// DirectoryReader is what Directory reads outside transactions: the
// operator's lists, and the agency, client and link checks other services
// ask about.
type DirectoryReader interface {
	Agency(ctx context.Context, id string) (Agency, error)
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
	// ClientAgencies lists the ids of the agencies the client is linked
	// to, sorted.
	ClientAgencies(ctx context.Context, clientID string) ([]string, error)
}

// ClientFilter narrows Clients; an empty AgencyID matches every client.
type ClientFilter struct {
	AgencyID string
}

// DirectoryTx is a transaction as Directory uses it (see Tx for what its
// getters lock).
type DirectoryTx interface {
	Agency(ctx context.Context, id string) (Agency, error)
	Client(ctx context.Context, id string) (Client, error)
	Link(ctx context.Context, agencyID, clientID string) (ClientLink, error)
	InsertAgency(ctx context.Context, a Agency) error
	InsertClient(ctx context.Context, c Client) error
	// UpdateClient stores c's status, auto_deploy and updated_at.
	UpdateClient(ctx context.Context, c Client) error
	InsertLink(ctx context.Context, l ClientLink) error
	DeleteLink(ctx context.Context, agencyID, clientID string) error
	// Enqueue adds an event to the outbox; the relay publishes it to NATS
	// after the transaction commits.
	outbox.Enqueuer
}

// NewDirectory returns the directory use cases.
func NewDirectory(store DirectoryStore, clock Clock) *Directory {
	return &Directory{store: store, clock: clock}
}

// CreateAgency creates an agency.
func (d *Directory) CreateAgency(ctx context.Context, name string) (Agency, error) {
	name, err := value.Line("name", name, maxName, false)
	if err != nil {
		return Agency{}, err
	}
	now := d.clock.Now()
	a := Agency{ID: newID(), Name: name, CreatedAt: now, UpdatedAt: now}
	err = d.store.InTx(ctx, func(tx DirectoryTx) error {
		if err := tx.InsertAgency(ctx, a); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.AgencyCreated, events.RecordEvent{ID: a.ID, AgencyID: a.ID, At: now}, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "agency.created", ResourceType: "agency", ResourceID: a.ID,
			Fields: []string{"name"}, AgencyID: a.ID}, now)
	})
	return a, err
}

// ListAgencies lists agencies, newest first: the operator's way back to an
// agency's id.
func (d *Directory) ListAgencies(ctx context.Context, limit, offset *int32) ([]Agency, error) {
	page, err := pagination.Admin.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	return d.store.Agencies(ctx, page)
}

// ListClients lists clients, newest first; with filter.AgencyID, only
// those linked to that agency (none for an agency that does not exist).
func (d *Directory) ListClients(ctx context.Context, filter ClientFilter, limit, offset *int32) ([]Client, error) {
	page, err := pagination.Admin.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	if filter.AgencyID != "" {
		if filter.AgencyID, err = value.BodyID("agency_id", filter.AgencyID); err != nil {
			return nil, err
		}
	}
	return d.store.Clients(ctx, filter, page)
}

func emailAddress(v string) (string, error) {
	v = strings.TrimSpace(v)
	if !value.EmailAddress(v, 0) {
		return "", value.Rule{Kind: value.Email}.Invalid("email", v)
	}
	// Local parts are case-sensitive in theory and never in practice; lower
	// case makes the per-agency uniqueness rule work as people expect.
	return strings.ToLower(v), nil
}

// NewClient is the input of CreateClient.
type NewClient struct {
	Name   string
	Domain string
	Status string
}

// CreateClient creates a client.
func (d *Directory) CreateClient(ctx context.Context, in NewClient) (Client, error) {
	name, err := value.Line("name", in.Name, maxName, false)
	if err != nil {
		return Client{}, err
	}
	domain, err := hostname("domain", in.Domain)
	if err != nil {
		return Client{}, err
	}
	status := in.Status
	if status == "" {
		status = "active"
	}
	if status, err = oneOf("status", status, ClientStatuses); err != nil {
		return Client{}, err
	}
	now := d.clock.Now()
	c := Client{ID: newID(), Name: name, Domain: domain, Status: status, CreatedAt: now, UpdatedAt: now}
	err = d.store.InTx(ctx, func(tx DirectoryTx) error {
		if err := tx.InsertClient(ctx, c); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.ClientCreated, events.ClientEvent{ID: c.ID, At: now}, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "client.created", ResourceType: "client", ResourceID: c.ID,
			Fields: []string{"name", "domain", "status"}}, now)
	})
	return c, err
}

// LinkClient links a client to an agency. Linking twice returns the first
// link unchanged.
func (d *Directory) LinkClient(ctx context.Context, agencyID, clientID string) (ClientLink, error) {
	agencyID, err := value.PathID("agency", agencyID)
	if err != nil {
		return ClientLink{}, err
	}
	clientID, err = value.PathID("client", clientID)
	if err != nil {
		return ClientLink{}, err
	}
	var link ClientLink
	err = d.store.InTx(ctx, func(tx DirectoryTx) error {
		if _, err := tx.Agency(ctx, agencyID); err != nil {
			return notFound(err, "agency %q not found", agencyID)
		}
		if _, err := tx.Client(ctx, clientID); err != nil {
			return notFound(err, "client %q not found", clientID)
		}
		existing, err := tx.Link(ctx, agencyID, clientID)
		if err == nil {
			link = existing
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		now := d.clock.Now()
		link = ClientLink{AgencyID: agencyID, ClientID: clientID, CreatedAt: now}
		if err := tx.InsertLink(ctx, link); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.ClientLinked, events.LinkEvent{AgencyID: agencyID, ClientID: clientID, At: now}, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "client.linked", ResourceType: "client", ResourceID: clientID, AgencyID: agencyID}, now)
	})
	return link, err
}

// UnlinkClient removes a client's link to an agency.
func (d *Directory) UnlinkClient(ctx context.Context, agencyID, clientID string) error {
	agencyID, err := value.PathID("agency", agencyID)
	if err != nil {
		return err
	}
	clientID, err = value.PathID("client", clientID)
	if err != nil {
		return err
	}
	return d.store.InTx(ctx, func(tx DirectoryTx) error {
		if err := tx.DeleteLink(ctx, agencyID, clientID); err != nil {
			return notFound(err, "client %q is not linked to agency %q", clientID, agencyID)
		}
		now := d.clock.Now()
		if err := outbox.Add(ctx, tx, events.ClientUnlinked, events.LinkEvent{AgencyID: agencyID, ClientID: clientID, At: now}, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "client.unlinked", ResourceType: "client", ResourceID: clientID, AgencyID: agencyID}, now)
	})
}

// notFound turns a store ErrNotFound into a caller-facing not-found error and
// passes any other error through.
func notFound(err error, format string, a ...any) error {
	if errors.Is(err, ErrNotFound) {
		return apperr.NotFound(format, a...)
	}
	return err
}

// Linked reports whether a client is linked to an agency. Ids that are not
// UUIDs name nothing, so they are simply not linked.
func (d *Directory) Linked(ctx context.Context, agencyID, clientID string) (bool, error) {
	a, okA := value.ParseID(agencyID)
	c, okC := value.ParseID(clientID)
	if !okA || !okC {
		return false, nil
	}
	return d.store.Linked(ctx, a, c)
}

// LinkedClients lists the clients linked to an agency.
func (d *Directory) LinkedClients(ctx context.Context, agencyID string) ([]Client, error) {
	a, ok := value.ParseID(agencyID)
	if !ok {
		return []Client{}, nil
	}
	return d.store.LinkedClients(ctx, a)
}

// AgencyClients lists the clients linked to an agency by name (byte by
// byte), then id: the agency's own list of whom it works for, read with
// the caller's agency, never a request's. The store's LinkedClients reads
// them (by id, the order the internal callers rely on); an agency links
// tens of clients, so sorting them here costs nothing.
func (d *Directory) AgencyClients(ctx context.Context, agencyID string) ([]Client, error) {
	cs, err := d.LinkedClients(ctx, agencyID)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(cs, func(a, b Client) int { return strings.Compare(a.Name, b.Name) })
	return cs, nil
}

// ClientAgencies lists the ids of the agencies a client is linked to; an
// id that is not a UUID names no client, so none.
func (d *Directory) ClientAgencies(ctx context.Context, clientID string) ([]string, error) {
	c, ok := value.ParseID(clientID)
	if !ok {
		return []string{}, nil
	}
	return d.store.ClientAgencies(ctx, c)
}

// LinkedClient returns the client if it is linked to the agency, with the
// settings actions follow (auto_deploy). ok is false for an unlinked or
// unknown client alike.
func (d *Directory) LinkedClient(ctx context.Context, agencyID, clientID string) (Client, bool, error) {
	a, okA := value.ParseID(agencyID)
	c, okC := value.ParseID(clientID)
	if !okA || !okC {
		return Client{}, false, nil
	}
	cl, err := d.store.LinkedClient(ctx, a, c)
	if errors.Is(err, ErrNotFound) {
		return Client{}, false, nil
	}
	return cl, err == nil, err
}

// AgencyExists reports whether an agency exists.
func (d *Directory) AgencyExists(ctx context.Context, agencyID string) (bool, error) {
	a, ok := value.ParseID(agencyID)
	if !ok {
		return false, nil
	}
	_, err := d.store.Agency(ctx, a)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// ClientExists reports whether a client exists.
func (d *Directory) ClientExists(ctx context.Context, clientID string) (bool, error) {
	c, ok := value.ParseID(clientID)
	if !ok {
		return false, nil
	}
	_, err := d.store.Client(ctx, c)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// ClientSettings is the input of UpdateClient; nil fields are kept.
type ClientSettings struct {
	Status     *string
	AutoDeploy *bool
}

// UpdateClient changes a client's settings.
func (d *Directory) UpdateClient(ctx context.Context, clientID string, in ClientSettings) (Client, error) {
	id, err := value.PathID("client", clientID)
	if err != nil {
		return Client{}, err
	}
	if in.Status != nil {
		if _, err := oneOf("status", *in.Status, ClientStatuses); err != nil {
			return Client{}, err
		}
	}
	var c Client
	err = d.store.InTx(ctx, func(tx DirectoryTx) error {
		if c, err = tx.Client(ctx, id); err != nil {
			return notFound(err, "client %q not found", id)
		}
		if in.Status != nil {
			c.Status = *in.Status
		}
		if in.AutoDeploy != nil {
			c.AutoDeploy = *in.AutoDeploy
		}
		c.UpdatedAt = d.clock.Now()
		if err := tx.UpdateClient(ctx, c); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.ClientUpdated, events.ClientEvent{ID: c.ID, At: c.UpdatedAt}, c.UpdatedAt); err != nil {
			return err
		}
		var fields []string
		if in.Status != nil {
			fields = append(fields, "status")
		}
		if in.AutoDeploy != nil {
			fields = append(fields, "auto_deploy")
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "client.updated", ResourceType: "client", ResourceID: c.ID, Fields: fields}, c.UpdatedAt)
	})
	return c, err
}
