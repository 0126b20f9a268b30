package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/tenancy"
	"github.com/atrium-hq/atrium/platform/value"
)

// Store is the data service's persistence port, met by the memory and
// postgres adapters under the contract suite in storetest.
type Store interface {
	// Rows returns the page q selects and how many rows match its filter.
	Rows(ctx context.Context, q Query) ([]Row, int, error)
	// Row returns the row with that id of the client's resource;
	// ErrNotFound when the id is absent or stored under another client or
	// resource.
	Row(ctx context.Context, clientID, resource, id string) (Row, error)
	// InTx runs fn in a transaction: all of its writes and events, or none.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Tx is a transaction.
type Tx interface {
	// InsertRows inserts rows; ErrDuplicate if an id exists.
	InsertRows(ctx context.Context, rows []Row) error
	// LockRows returns the stored rows with these ids, whatever their
	// client and resource, in id order, and keeps other transactions from
	// changing them until this one ends. Absent ids are left out.
	LockRows(ctx context.Context, ids []string) ([]Row, error)
	// ReplaceRows replaces stored rows by id: timestamps, keys and data.
	// Each must be stored under the same client and resource (ErrNotFound
	// otherwise, and nothing is replaced). Filter-value totals move with
	// the keys.
	ReplaceRows(ctx context.Context, rows []Row) error
	outbox.Enqueuer
}

// Client is a client as the CRM describes it.
type Client struct {
	ID, Name, Domain, Status string
	AutoDeploy               bool
	CreatedAt, UpdatedAt     time.Time
}

// ClientAccess answers, at the time of each request, which clients an
// agency may reach. The CRM owns the links; the data service asks it.
type ClientAccess interface {
	Linked(ctx context.Context, agencyID, clientID string) (bool, error)
	Exists(ctx context.Context, clientID string) (bool, error)
	Clients(ctx context.Context, agencyID string) ([]Client, error)
}

// Store errors, shared with every service.
var (
	ErrNotFound  = store.ErrNotFound
	ErrDuplicate = store.ErrDuplicate
)

// Clock returns the current time; store.Clock fixes its precision.
type Clock = store.Clock

var readPolicy = pagination.Policy{DefaultLimit: 100, MaxLimit: 1000, Clamp: true}

// Datasets reads and loads dataset rows.
type Datasets struct {
	store  Store
	access ClientAccess
	clock  Clock
}

// NewDatasets returns the data use cases.
func NewDatasets(store Store, access ClientAccess, clock Clock) *Datasets {
	return &Datasets{store: store, access: access, clock: clock}
}

// ReadParams are the read's parameters as the caller sent them.
type ReadParams struct {
	Resource, ClientID       string
	Limit, Offset            *int32
	Order, Direction         string
	FilterField, FilterValue string
	Cursor                   string
}

// Page is a read's answer.
type Page struct {
	Resource *Resource
	Query    Query
	Rows     []Row
	Total    int
	// NextCursor continues after this page when there is more.
	NextCursor string
	more       bool
}

// HasMore reports whether a further page exists: at offset + limit, or
// after this page's last row for a cursor read.
func (p Page) HasMore() bool { return p.more }

// Read checks the parameters in the spec's order, then the client's link
// to the agency, and reads the page.
func (d *Datasets) Read(ctx context.Context, agencyID string, p ReadParams) (Page, error) {
	if p.Resource == "" {
		return Page{}, apperr.Invalid("resource is required; one of: %s", list(ResourceNames()))
	}
	r, ok := Lookup(p.Resource)
	if !ok {
		return Page{}, apperr.Invalid("unknown resource %q; valid resources: %s", p.Resource, list(ResourceNames()))
	}
	if r.Name != ClientsResource && p.ClientID == "" {
		return Page{}, apperr.Invalid("client_id is required for resource %s (every resource but clients)", r.Name)
	}
	if r.Name == ClientsResource && p.ClientID != "" {
		return Page{}, apperr.Invalid("client_id does not apply to resource clients, which lists the clients the key can reach; filter by id instead")
	}
	page, err := readPolicy.Parse(p.Limit, p.Offset)
	if err != nil {
		return Page{}, err
	}
	q := Query{Resource: r.Name, Page: page, Order: "created_at"}
	switch p.Direction {
	case "", "desc":
	case "asc":
		q.Asc = true
	default:
		return Page{}, apperr.Invalid("direction must be asc or desc (default desc); got %q", p.Direction)
	}
	if p.Order != "" {
		if !slices.Contains(OrderFields, p.Order) {
			return Page{}, apperr.Invalid("Invalid order field. Allowed: %s", list(OrderFields))
		}
		if !slices.Contains(r.Orders(), p.Order) {
			return Page{}, apperr.Invalid("resource %s has no field %s to order by; it can be ordered by: %s", r.Name, p.Order, list(r.Orders()))
		}
		q.Order = p.Order
	}
	if (p.FilterField == "") != (p.FilterValue == "") {
		return Page{}, apperr.Invalid("filter_field and filter_value go together: give both or neither")
	}
	if p.FilterField != "" {
		if !slices.Contains(FilterFields, p.FilterField) {
			return Page{}, apperr.Invalid("Invalid filter field. Allowed: %s", list(FilterFields))
		}
		if !slices.Contains(r.Filters(), p.FilterField) {
			return Page{}, apperr.Invalid("resource %s has no field %s to filter by; it can be filtered by: %s", r.Name, p.FilterField, list(r.Filters()))
		}
		fd, _ := r.Field(p.FilterField)
		v, err := fd.rule().ParseFilter(fd.Name, p.FilterValue)
		if err != nil {
			return Page{}, err
		}
		q.FilterField, q.FilterValue = fd.Name, keyForm(v)
	}
	if r.Name != ClientsResource {
		if q.ClientID, _, err = tenancy.Linked(ctx, p.ClientID, func(ctx context.Context, id string) (struct{}, bool, error) {
			ok, err := d.access.Linked(ctx, agencyID, id)
			return struct{}{}, ok, err
		}); err != nil {
			return Page{}, err
		}
	}
	if r.ByAgency {
		q.Agency = agencyID
	}
	if p.Cursor != "" {
		if p.Offset != nil && *p.Offset != 0 {
			return Page{}, apperr.Invalid("cursor and offset cannot be combined: a cursor continues where its page ended")
		}
		if q.After, err = readCursor(p.Cursor, r, p, q); err != nil {
			return Page{}, err
		}
	}
	var (
		rows  []Row
		total int
	)
	read := q
	if q.After != nil {
		read.Page.Limit++ // one row more says whether another page follows
	}
	if r.Name == ClientsResource {
		rows, total, err = d.clients(ctx, agencyID, read)
	} else {
		rows, total, err = d.store.Rows(ctx, read)
	}
	if err != nil {
		return Page{}, err
	}
	pg := Page{Resource: r, Query: q, Total: total}
	if q.After == nil {
		pg.more = int(q.Page.Offset)+int(q.Page.Limit) < total
	} else if len(rows) > int(q.Page.Limit) {
		pg.more, rows = true, rows[:q.Page.Limit]
	}
	pg.Rows = rows
	if pg.more && len(rows) > 0 {
		pg.NextCursor = nextCursor(p, q, &rows[len(rows)-1])
	}
	return pg, nil
}

// clients is the clients resource: the agency's linked clients, from the
// CRM, as rows.
func (d *Datasets) clients(ctx context.Context, agencyID string, q Query) ([]Row, int, error) {
	cs, err := d.access.Clients(ctx, agencyID)
	if err != nil {
		return nil, 0, apperr.Unavailable(err, "cannot list the agency's clients now: the CRM service is unavailable; retry later")
	}
	r, _ := Lookup(ClientsResource)
	rows := make([]Row, 0, len(cs))
	for i, c := range cs {
		row, err := buildRow(r, "", fmt.Sprintf("clients[%d]", i), map[string]any{
			"id": c.ID, "name": c.Name, "domain": c.Domain, "status": c.Status, "auto_deploy": c.AutoDeploy,
			"created_at": c.CreatedAt.Format(time.RFC3339Nano), "updated_at": c.UpdatedAt.Format(time.RFC3339Nano),
		}, c.CreatedAt)
		if err != nil {
			return nil, 0, fmt.Errorf("client %s from the CRM: %w", c.ID, err)
		}
		rows = append(rows, row)
	}
	page, total := SelectRows(rows, q)
	return page, total, nil
}

// Insert validates every row, then inserts them all in one transaction;
// a bad row is refused with its index, field and expected type, and
// nothing is written.
func (d *Datasets) Insert(ctx context.Context, clientID, resource string, objs []map[string]any) (int, error) {
	r, ok := Lookup(resource)
	if !ok || r.Name == ClientsResource {
		return 0, apperr.NotFound("unknown dataset %q; datasets: %s", resource, list(ResourceNames()[1:]))
	}
	if _, err := value.PathID("client", clientID); err != nil {
		return 0, err
	}
	if len(objs) == 0 {
		return 0, apperr.Invalid("rows is required: a non-empty array of %s rows", r.Name)
	}
	id, err := tenancy.Existing(ctx, "client", clientID, d.access.Exists)
	if err != nil {
		return 0, err
	}
	now := d.clock.Now()
	rows := make([]Row, len(objs))
	for i, o := range objs {
		if rows[i], err = buildRow(r, id, fmt.Sprintf("rows[%d]", i), o, now); err != nil {
			return 0, err
		}
	}
	err = d.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertRows(ctx, rows); err != nil {
			if errors.Is(err, ErrDuplicate) {
				return apperr.Conflict("a row with one of these ids already exists in %s", r.Name)
			}
			return err
		}
		if err := enqueueInserted(ctx, tx, id, r.Name, len(rows), now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, datasetChange("rows.inserted", id, r.Name), now)
	})
	return len(rows), err
}

// auditService is the service the audit trail names for these writes.
const auditService = "data"

// datasetChange is the audit trail's record of a write to a client's
// dataset: the dataset is the resource, client_id/resource its id. The
// rows' values are never recorded.
func datasetChange(action, clientID, resource string) audit.Change {
	return audit.Change{Action: action, ResourceType: "dataset", ResourceID: clientID + "/" + resource}
}

func enqueueInserted(ctx context.Context, tx Tx, clientID, resource string, n int, at time.Time) error {
	return outbox.Add(ctx, tx, events.RowsInserted, events.RowsEvent{ClientID: clientID, Resource: resource, Count: n, At: at}, at)
}
