package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/value"
)

// WriteMode says what a write does with rows whose id is stored.
type WriteMode int

const (
	// WriteUpsert inserts rows without id or with an id not stored, and
	// replaces the rows whose id is stored in the same client and
	// resource; an id stored under another client or resource is refused.
	WriteUpsert WriteMode = iota + 1
	// WriteUpdate replaces the rows whose id is stored in the same client
	// and resource and skips the others. Every row names its id.
	WriteUpdate
)

// RecordWrite is the rows of one resource and what to do with them.
type RecordWrite struct {
	Resource string
	Mode     WriteMode
	Rows     []map[string]any
}

// WriteResult counts what a WriteRecords did. Updated counts the stored
// rows matched, including those already as written (which are left
// untouched, so that a retried write changes nothing). Skipped counts the
// rows an update found no row for, and those older than the stored row.
type WriteResult struct {
	Inserted, Updated, Skipped int
}

// maxWriteAttempts bounds the runs of a write whose new ids another
// transaction inserted between this one's look-up and its insert.
const maxWriteAttempts = 3

// errInsertRace is an insert of an id that was absent when the write
// looked it up: another write inserted it since. Run again, the write
// finds it.
var errInsertRace = errors.New("an id was inserted concurrently")

// pendingRow is a validated row of a write, with what its replacement
// needs to know of the request.
type pendingRow struct {
	where        string // "writes[0].rows[2]", for the messages
	resource     *Resource
	mode         WriteMode
	obj          map[string]any
	row          Row
	createdGiven bool
	updatedGiven bool
}

// writable is the dataset named name, for a write or a record read.
func writable(field, name string) (*Resource, error) {
	r, ok := Lookup(name)
	switch {
	case name == "":
		return nil, apperr.Invalid("%s is required; datasets: %s", field, list(ResourceNames()[1:]))
	case !ok:
		return nil, apperr.Invalid("%s: unknown dataset %q; datasets: %s", field, name, list(ResourceNames()[1:]))
	case r.Name == ClientsResource:
		return nil, apperr.Invalid("%s: clients is read from the CRM, not stored; datasets: %s", field, list(ResourceNames()[1:]))
	}
	return r, nil
}

// WriteRecords applies writes to one client's datasets in one transaction:
// every row is validated first, exactly as loads are, and a bad row, a
// taken id or a repeated id refuses the whole request with nothing
// written. It is meant for the actions service, which has checked the
// client's link to the caller's agency; it does not ask the CRM again.
//
// Replacing a row replaces its data and keys; created_at stays the stored
// one unless the row gives one, updated_at is now unless the row gives
// one. A row identical to the stored one (updated_at aside, unless given)
// is left as it is, so that re-applying a write changes nothing. A row
// that gives an updated_at older than the stored row's is skipped: the
// actions service writes a run's row as it is queued, starts and ends,
// from more than one goroutine and replica, and a late write of an earlier
// state must not undo a later one (last writer by updated_at wins).
func (d *Datasets) WriteRecords(ctx context.Context, clientID string, writes []RecordWrite) (WriteResult, error) {
	client, err := value.BodyID("client_id", clientID)
	if err != nil {
		return WriteResult{}, err
	}
	if len(writes) == 0 {
		return WriteResult{}, apperr.Invalid("writes is required: a non-empty array of {resource, mode, rows}")
	}
	now := d.clock.Now()
	var pending []pendingRow
	seen := map[string]string{} // id → where it was written
	for i, w := range writes {
		r, err := writable(fmt.Sprintf("writes[%d].resource", i), w.Resource)
		if err != nil {
			return WriteResult{}, err
		}
		if w.Mode != WriteUpsert && w.Mode != WriteUpdate {
			return WriteResult{}, apperr.Invalid("writes[%d].mode must be upsert or update", i)
		}
		if len(w.Rows) == 0 {
			return WriteResult{}, apperr.Invalid("writes[%d].rows is required: a non-empty array of %s rows", i, r.Name)
		}
		for j, obj := range w.Rows {
			where := fmt.Sprintf("writes[%d].rows[%d]", i, j)
			if w.Mode == WriteUpdate && obj != nil && obj["id"] == nil {
				return WriteResult{}, apperr.Invalid("%s.id is required in update mode: the id of the %s row to replace", where, r.Name)
			}
			row, err := buildRow(r, client, where, obj, now)
			if err != nil {
				return WriteResult{}, err
			}
			if first, ok := seen[row.ID]; ok {
				return WriteResult{}, apperr.Invalid("%s.id %s is also %s.id: a request writes each row once", where, row.ID, first)
			}
			seen[row.ID] = where
			pending = append(pending, pendingRow{where: where, resource: r, mode: w.Mode, obj: obj, row: row,
				createdGiven: obj["created_at"] != nil, updatedGiven: obj["updated_at"] != nil})
		}
	}
	for attempt := 1; ; attempt++ {
		res, err := d.applyWrites(ctx, client, pending, now)
		if !errors.Is(err, errInsertRace) {
			return res, err
		}
		if attempt == maxWriteAttempts {
			return WriteResult{}, apperr.Aborted(err, "the write collided with concurrent writes of the same ids %d times and was not applied; retry it", attempt)
		}
	}
}

// applyWrites is one run of a write's transaction: lock the ids, sort the
// rows into inserts, replacements and skips, write them with their events.
func (d *Datasets) applyWrites(ctx context.Context, client string, pending []pendingRow, now time.Time) (WriteResult, error) {
	var res WriteResult
	err := d.store.InTx(ctx, func(tx Tx) error {
		res = WriteResult{} // a retried transaction starts again
		ids := make([]string, len(pending))
		for i := range pending {
			ids[i] = pending[i].row.ID
		}
		slices.Sort(ids)
		locked, err := tx.LockRows(ctx, ids)
		if err != nil {
			return err
		}
		stored := make(map[string]Row, len(locked))
		for _, r := range locked {
			stored[r.ID] = r
		}
		var inserts, replaces []Row
		// Counts per resource, in the order the request names them, for
		// the events.
		var order []string
		inserted, replaced := map[string]int{}, map[string]int{}
		for _, p := range pending {
			if !slices.Contains(order, p.resource.Name) {
				order = append(order, p.resource.Name)
			}
			old, found := stored[p.row.ID]
			if found && (old.ClientID != client || old.Resource != p.resource.Name) {
				// Another tenant's or dataset's row: an update skips it as if
				// absent, an upsert may not take its id. Neither says whose.
				if p.mode == WriteUpdate {
					res.Skipped++
					continue
				}
				return apperr.Conflict("%s.id %s is taken; omit id to have one assigned", p.where, p.row.ID)
			}
			if !found {
				if p.mode == WriteUpdate {
					res.Skipped++
					continue
				}
				inserts = append(inserts, p.row)
				inserted[p.resource.Name]++
				res.Inserted++
				continue
			}
			if p.updatedGiven && p.row.UpdatedAt.Before(old.UpdatedAt) {
				res.Skipped++ // an earlier state, written late
				continue
			}
			res.Updated++
			row, err := p.replacement(old)
			if err != nil {
				return err
			}
			same, err := sameRow(old, row, p.updatedGiven)
			if err != nil {
				return err
			}
			if !same {
				replaces = append(replaces, row)
				replaced[p.resource.Name]++
			}
		}
		if len(inserts) > 0 {
			if err := tx.InsertRows(ctx, inserts); err != nil {
				if errors.Is(err, ErrDuplicate) {
					return fmt.Errorf("%w: %w", errInsertRace, err)
				}
				return err
			}
		}
		if len(replaces) > 0 {
			if err := tx.ReplaceRows(ctx, replaces); err != nil {
				return err
			}
		}
		for _, name := range order {
			if n := inserted[name]; n > 0 {
				if err := enqueueInserted(ctx, tx, client, name, n, now); err != nil {
					return err
				}
			}
			if n := replaced[name]; n > 0 {
				if err := outbox.Add(ctx, tx, events.RowsUpdated, events.RowsEvent{ClientID: client, Resource: name, Count: n, At: now}, now); err != nil {
					return err
				}
			}
			if inserted[name]+replaced[name] > 0 {
				if err := audit.Record(ctx, tx, auditService, datasetChange("records.written", client, name), now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return res, err
}

// replacement is the row that replaces old: the validated row, with old's
// created_at unless the request gave one.
func (p pendingRow) replacement(old Row) (Row, error) {
	if p.createdGiven {
		return p.row, nil
	}
	obj := maps.Clone(p.obj)
	obj["id"] = p.row.ID
	obj["created_at"] = old.CreatedAt.UTC().Format(time.RFC3339Nano)
	if fd, _ := p.resource.Field("created_at"); fd.Type == TDate {
		obj["created_at"] = old.CreatedAt.UTC().Format(time.DateOnly)
	}
	return buildRow(p.resource, p.row.ClientID, p.where, obj, p.row.UpdatedAt)
}

// sameRow reports whether row would store what old holds: the same object,
// updated_at aside unless the request gave it.
func sameRow(old, row Row, updatedGiven bool) (bool, error) {
	var a, b map[string]any
	if err := json.Unmarshal(old.Data, &a); err != nil {
		return false, fmt.Errorf("stored row %s: %w", old.ID, err)
	}
	if err := json.Unmarshal(row.Data, &b); err != nil {
		return false, fmt.Errorf("row %s: %w", row.ID, err)
	}
	if !updatedGiven {
		delete(a, "updated_at")
		delete(b, "updated_at")
	}
	return reflect.DeepEqual(a, b), nil
}

// GetRecord returns one row of a client's dataset, for the actions
// service; NotFound if the client's resource has no row with that id.
func (d *Datasets) GetRecord(ctx context.Context, clientID, resource, id string) (Row, error) {
	client, err := value.BodyID("client_id", clientID)
	if err != nil {
		return Row{}, err
	}
	r, err := writable("resource", resource)
	if err != nil {
		return Row{}, err
	}
	rid, err := value.BodyID("id", id)
	if err != nil {
		return Row{}, err
	}
	row, err := d.store.Row(ctx, client, r.Name, rid)
	if errors.Is(err, ErrNotFound) {
		return Row{}, apperr.NotFound("client %s has no %s row %s", client, r.Name, rid)
	}
	return row, err
}

// MaxListRecords is the most rows ListRecords returns at once.
const MaxListRecords = 1000

// ListRecords returns a page of a client's rows of a resource, oldest
// first, for the actions service (a client report reads them), and whether
// more follow.
func (d *Datasets) ListRecords(ctx context.Context, clientID, resource string, limit, offset int32) ([]Row, bool, error) {
	client, err := value.BodyID("client_id", clientID)
	if err != nil {
		return nil, false, err
	}
	r, err := writable("resource", resource)
	if err != nil {
		return nil, false, err
	}
	if limit < 1 || limit > MaxListRecords {
		return nil, false, apperr.Invalid("limit must be 1 to %d; got %d", MaxListRecords, limit)
	}
	if offset < 0 {
		return nil, false, apperr.Invalid("offset must be 0 or more; got %d", offset)
	}
	rows, _, err := d.store.Rows(ctx, Query{Resource: r.Name, ClientID: client, Page: pagination.Page{Limit: limit + 1, Offset: offset}, Order: "created_at", Asc: true})
	if err != nil {
		return nil, false, err
	}
	more := len(rows) > int(limit)
	return rows[:min(len(rows), int(limit))], more, nil
}
