package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/tenancy"
)

// LoadBatch is how many rows the bulk path commits at a time.
const LoadBatch = 5000

// Loader is one bulk load: NDJSON chunks in, rows validated and committed
// in batches of LoadBatch. A bad line stops it; what was committed before
// stays, and Loaded says how much that is, so a load can resume after it.
//
// One batch commits while the next is parsed, so that the service's CPU
// (reading the JSON, checking the rows) and the database's (COPY and index
// upkeep) overlap: a load takes about the longer of the two, not the sum.
type Loader struct {
	d        *Datasets
	resource *Resource
	clientID string
	partial  []byte
	batch    []Row
	line     int64
	loaded   int64
	// committing is the batch being committed, if any: its result, and
	// its size.
	committing chan error
	pending    int
}

// NewLoader starts a bulk load of resource rows for a client.
func (d *Datasets) NewLoader(ctx context.Context, clientID, resource string) (*Loader, error) {
	r, ok := Lookup(resource)
	if !ok || r.Name == ClientsResource {
		return nil, apperr.NotFound("unknown dataset %q; datasets: %s", resource, list(ResourceNames()[1:]))
	}
	id, err := tenancy.Existing(ctx, "client", clientID, d.access.Exists)
	if err != nil {
		return nil, err
	}
	return &Loader{d: d, resource: r, clientID: id, batch: make([]Row, 0, LoadBatch)}, nil
}

// Loaded is how many rows are committed.
func (l *Loader) Loaded() int64 { return l.loaded }

// Write takes the next chunk of NDJSON.
func (l *Loader) Write(ctx context.Context, chunk []byte) error {
	data := chunk
	if len(l.partial) > 0 {
		data = append(l.partial, chunk...)
		l.partial = nil
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			l.partial = append([]byte(nil), data...)
			return nil
		}
		if err := l.addLine(ctx, data[:i]); err != nil {
			return err
		}
		data = data[i+1:]
	}
}

func (l *Loader) addLine(ctx context.Context, line []byte) error {
	l.line++
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		if werr := l.wait(); werr != nil {
			return werr
		}
		return apperr.Invalid("line %d is not a JSON object (%d rows committed before it)", l.line, l.loaded)
	}
	row, err := buildRow(l.resource, l.clientID, "", obj, l.d.clock.Now())
	if err != nil {
		if werr := l.wait(); werr != nil {
			return werr
		}
		return apperr.Invalid("line %d: %s (%d rows committed before it)", l.line, err.Error(), l.loaded)
	}
	l.batch = append(l.batch, row)
	if len(l.batch) == LoadBatch {
		return l.flush(ctx)
	}
	return nil
}

// flush hands the batch to be committed while the next one is read, once
// the one before it has committed.
func (l *Loader) flush(ctx context.Context) error {
	if err := l.wait(); err != nil {
		return err
	}
	if len(l.batch) == 0 {
		return nil
	}
	batch, line, loaded := l.batch, l.line, l.loaded
	l.batch = make([]Row, 0, LoadBatch)
	l.pending = len(batch)
	done := make(chan error, 1)
	l.committing = done
	go func() { done <- l.commit(ctx, batch, line, loaded) }()
	return nil
}

// wait returns once no batch is being committed, with the error of the
// last one.
func (l *Loader) wait() error {
	if l.committing == nil {
		return nil
	}
	err := <-l.committing
	l.committing = nil
	if err == nil {
		l.loaded += int64(l.pending)
	}
	l.pending = 0
	return err
}

// commit inserts one batch, whose last line is line, in a transaction.
func (l *Loader) commit(ctx context.Context, batch []Row, line, loaded int64) error {
	return l.d.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertRows(ctx, batch); err != nil {
			if errors.Is(err, ErrDuplicate) {
				return apperr.Conflict("a row before line %d has an id that already exists in %s (%d rows committed before its batch)", line+1, l.resource.Name, loaded)
			}
			return err
		}
		now := l.d.clock.Now()
		if err := enqueueInserted(ctx, tx, l.clientID, l.resource.Name, len(batch), now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, datasetChange("rows.loaded", l.clientID, l.resource.Name), now)
	})
}

// Close commits what is left; a last line without a newline counts.
func (l *Loader) Close(ctx context.Context) error {
	if len(bytes.TrimSpace(l.partial)) > 0 {
		line := l.partial
		l.partial = nil
		if err := l.addLine(ctx, line); err != nil {
			return err
		}
	}
	if err := l.flush(ctx); err != nil {
		return err
	}
	return l.wait()
}

// Abort waits for the batch being committed, if any, for a load that ends
// without Close.
func (l *Loader) Abort() { _ = l.wait() }
