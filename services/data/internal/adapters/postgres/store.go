package postgres

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/services/data/internal/app"
)

// Store is the PostgreSQL data store.
type Store struct{ db *pgdb.DB }

// New returns a store on db, whose pool's search path must be the data
// schema.
func New(db *pgdb.DB) *Store { return &Store{db: db} }

// keyColumns are the typed columns, one per order and filter field.
var keyColumns = []string{"fetched_at", "tracked_at", "scored_at", "external_pages", "linking_domains", "appearances",
	"status", "source_type", "source_id", "category_id", "published", "lead_grade", "quality_grade", "sentiment"}

// column maps an order or filter field to its column; the names are the
// fields' own, checked against the list, never taken from a caller as is.
func column(field string) (string, error) {
	switch field {
	case "id", "created_at", "updated_at":
		return field, nil
	}
	if slices.Contains(keyColumns, field) {
		return field, nil
	}
	return "", fmt.Errorf("no column for field %q", field)
}

// Rows implements app.Store: the page and the exact count, the page from
// the (client, resource[, filter], order, id) index and the count from the
// counters kept with the rows. Both statements go to the server in one
// round trip.
func (s *Store) Rows(ctx context.Context, q app.Query) ([]app.Row, int, error) {
	order, err := column(q.Order)
	if err != nil {
		return nil, 0, err
	}
	// The resource is written as a literal so that the planner can use the
	// resource's partial indexes.
	lit, err := resourceLiteral(q.Resource)
	if err != nil {
		return nil, 0, err
	}
	where := `client_id = $1 AND resource = ` + lit
	args := []any{q.ClientID}
	if byAgency(q.Resource) {
		args = append(args, q.Agency)
		where += fmt.Sprintf(` AND agency_id = $%d`, len(args))
	}
	if q.FilterField != "" {
		col, err := column(q.FilterField)
		if err != nil {
			return nil, 0, err
		}
		args = append(args, q.FilterValue)
		where += fmt.Sprintf(` AND %s = $%d`, col, len(args))
	}
	dir := " DESC"
	if q.Asc {
		dir = " ASC"
	}
	b := &pgx.Batch{}
	var total int64
	s.queueCount(b, q, where, args).QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	if q.After != nil {
		// Keyset: the rows after (key, id) in the query's order, NULL keys
		// first descending and last ascending, as the ORDER BY puts them.
		args = append(args, q.After.ID)
		i := len(args)
		switch {
		case q.After.Key == nil && !q.Asc:
			where += fmt.Sprintf(` AND ((%s IS NULL AND id < $%d) OR %s IS NOT NULL)`, order, i, order)
		case q.After.Key == nil:
			where += fmt.Sprintf(` AND %s IS NULL AND id > $%d`, order, i)
		default:
			args = append(args, q.After.Key)
			k := len(args)
			if q.Asc {
				where += fmt.Sprintf(` AND ((%s, id) > ($%d, $%d) OR %s IS NULL)`, order, k, i, order)
			} else {
				where += fmt.Sprintf(` AND (%s, id) < ($%d, $%d)`, order, k, i)
			}
		}
	}
	offset := q.Page.Offset
	if q.After != nil {
		offset = 0
	}
	n := len(args)
	// The order column comes back too: a cursor after the page carries it.
	sql := fmt.Sprintf(`SELECT id, created_at, updated_at, data, %s FROM rows WHERE %s
		ORDER BY %s%s, id%s LIMIT $%d OFFSET $%d`, order, where, order, dir, dir, n+1, n+2)
	out := make([]app.Row, 0, q.Page.Limit)
	keyed := slices.Contains(keyColumns, q.Order)
	b.Queue(sql, append(args, q.Page.Limit, offset)...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			r := app.Row{ClientID: q.ClientID, Resource: q.Resource}
			var key any
			// Scanned as bytes: a json.RawMessage target would make pgx run
			// json.Unmarshal over every row (a quarter of the read's CPU).
			if err := rows.Scan(&r.ID, &r.CreatedAt, &r.UpdatedAt, (*[]byte)(&r.Data), &key); err != nil {
				return err
			}
			r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
			if t, ok := key.(time.Time); ok {
				key = t.UTC()
			}
			// The order value, for a cursor after this row.
			if keyed && key != nil {
				r.Keys = map[string]any{q.Order: key}
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err := s.db.Pool().SendBatch(ctx, b).Close(); err != nil {
		return nil, 0, pgdb.Err(err, "rows")
	}
	return out, int(total), nil
}

// counted are the filter fields whose values have counters; id filters
// match one row at most and are counted from the index.
var counted = []string{"status", "source_type", "source_id", "category_id", "published", "lead_grade", "quality_grade", "sentiment"}

// countValue is a filter value as the counters key it.
func countValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	return fmt.Sprint(v)
}

// byAgency reports whether the resource's rows are an agency's
// (app.Resource.ByAgency): they keep their agency in the agency_id column,
// never NULL for them, and are read and counted per agency.
func byAgency(resource string) bool {
	r, ok := app.Lookup(resource)
	return ok && r.ByAgency
}

// counterValues are the counter values of the dataset's total and of a
// filter value v of a row of agency (or of a read for agency): the rows
// of a resource that is an agency's are counted per agency, "<agency>"
// and "<agency>/<value>"; those of other resources "" and "<value>".
func counterValues(resource, agency string) (total, prefix string) {
	if byAgency(resource) {
		return agency, agency + "/"
	}
	return "", ""
}

// queueCount queues pagination.total: the counter of the client's
// dataset, or of the filter value, kept with the rows; an id filter counts
// its one row.
func (s *Store) queueCount(b *pgx.Batch, q app.Query, where string, args []any) *pgx.QueuedQuery {
	total, prefix := counterValues(q.Resource, q.Agency)
	switch {
	case q.FilterField == "":
		return b.Queue(`SELECT coalesce(sum(count), 0)::bigint FROM row_counts
			WHERE client_id = $1 AND resource = $2 AND field = '' AND value = $3`, q.ClientID, q.Resource, total)
	case slices.Contains(counted, q.FilterField):
		return b.Queue(`SELECT coalesce(sum(count), 0)::bigint FROM row_counts
			WHERE client_id = $1 AND resource = $2 AND field = $3 AND value = $4`,
			q.ClientID, q.Resource, q.FilterField, prefix+countValue(q.FilterValue))
	default:
		return b.Queue(`SELECT count(*) FROM rows WHERE `+where, slices.Clone(args)...)
	}
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *pgdb.Tx) error { return fn(tx{t}) })
}

type tx struct{ *pgdb.Tx }

var insertColumns = append(append([]string{"id", "client_id", "resource", "created_at", "updated_at", "data"}, keyColumns...), "agency_id")

// InsertRows copies the rows in with COPY, in the transaction.
// copyThreshold is the batch size from which COPY beats INSERTs: a COPY
// costs three round trips and its setup, a pipelined batch of INSERTs one
// round trip (the actions service writes a few rows at a time).
const copyThreshold = 64

var insertSQL = func() string {
	ps := make([]string, len(insertColumns))
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return "INSERT INTO rows (" + strings.Join(insertColumns, ", ") + ") VALUES (" + strings.Join(ps, ", ") + ")"
}()

// InsertRows inserts the rows in the transaction: with COPY for bulk
// loads, with one pipelined batch of INSERTs (the counters in the same
// batch) for a few rows.
func (t tx) InsertRows(ctx context.Context, rows []app.Row) error {
	if len(rows) < copyThreshold {
		b := &pgx.Batch{}
		for i := range rows {
			vals, err := insertValues(&rows[i])
			if err != nil {
				return err
			}
			b.Queue(insertSQL, vals...)
		}
		queueCounts(b, rowCounts(rows))
		if err := t.SendBatch(ctx, b).Close(); err != nil {
			return pgdb.Err(err, "insert rows")
		}
		return nil
	}
	_, err := t.CopyFrom(ctx, pgx.Identifier{"rows"}, insertColumns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		return insertValues(&rows[i])
	}))
	if err != nil {
		return pgdb.Err(err, "insert rows")
	}
	return t.applyCounts(ctx, rowCounts(rows))
}

// insertValues are a row's values in insertColumns' order.
func insertValues(r *app.Row) ([]any, error) {
	// Ids as 16 bytes: pgx would otherwise try, and fail, to encode the
	// strings in binary first, building an error for each (a tenth of a
	// bulk load's CPU).
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return nil, fmt.Errorf("row id %q: %w", r.ID, err)
	}
	client, err := uuid.Parse(r.ClientID)
	if err != nil {
		return nil, fmt.Errorf("client id %q: %w", r.ClientID, err)
	}
	vals := make([]any, 0, len(insertColumns))
	vals = append(vals, id, client, r.Resource, r.CreatedAt, r.UpdatedAt, []byte(r.Data))
	for _, c := range keyColumns {
		vals = append(vals, r.Keys[c])
	}
	return append(vals, agencyColumn(r)), nil
}

// agencyColumn is a row's agency_id column: its agency for a resource whose
// rows are an agency's, NULL for others.
func agencyColumn(r *app.Row) any {
	if byAgency(r.Resource) {
		return r.Agency()
	}
	return nil
}

type countKey struct{ client, resource, field, value string }

// count adds delta to the counters of a row: its dataset's total and its
// filter values'.
func count(counts map[countKey]int64, r *app.Row, delta int64) {
	total, prefix := counterValues(r.Resource, r.Agency())
	counts[countKey{r.ClientID, r.Resource, "", total}] += delta
	for _, f := range counted {
		if v, ok := r.Keys[f]; ok && v != nil {
			counts[countKey{r.ClientID, r.Resource, f, prefix + countValue(v)}] += delta
		}
	}
}

// rowCounts are the counter deltas of inserting rows.
func rowCounts(rows []app.Row) map[countKey]int64 {
	counts := map[countKey]int64{}
	for i := range rows {
		count(counts, &rows[i], 1)
	}
	return counts
}

// applyCounts adds each delta to its counter.
func (t tx) applyCounts(ctx context.Context, counts map[countKey]int64) error {
	b := &pgx.Batch{}
	if queueCounts(b, counts) == 0 {
		return nil
	}
	if err := t.SendBatch(ctx, b).Close(); err != nil {
		return pgdb.Err(err, "count rows")
	}
	return nil
}

// countShards is how many rows each counter is spread over (migration
// 0004): concurrent writers of one dataset lock different rows.
const countShards = 16

// queueCounts queues the counter updates, all to one shard picked at
// random, in key order so that concurrent writers lock counters in the
// same order and cannot deadlock, and returns how many it queued.
func queueCounts(b *pgx.Batch, counts map[countKey]int64) int {
	shard := rand.IntN(countShards) //nolint:gosec // G404: spreads writers over shards, not a secret
	maps.DeleteFunc(counts, func(_ countKey, n int64) bool { return n == 0 })
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b countKey) int {
		return cmp.Or(strings.Compare(a.client, b.client), strings.Compare(a.resource, b.resource),
			strings.Compare(a.field, b.field), strings.Compare(a.value, b.value))
	})
	for _, k := range keys {
		b.Queue(`INSERT INTO row_counts (client_id, resource, field, value, shard, count) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (client_id, resource, field, value, shard) DO UPDATE SET count = row_counts.count + EXCLUDED.count`,
			k.client, k.resource, k.field, k.value, shard, counts[k])
	}
	return len(keys)
}

// rowColumns are what a whole row is read with; scanRow reads them.
var rowColumns = "id, client_id, resource, created_at, updated_at, data, " + strings.Join(keyColumns, ", ") + ", agency_id"

func scanRow(row pgx.Row) (app.Row, error) {
	var r app.Row
	keys := make([]any, len(keyColumns))
	dest := []any{&r.ID, &r.ClientID, &r.Resource, &r.CreatedAt, &r.UpdatedAt, (*[]byte)(&r.Data)}
	for i := range keys {
		dest = append(dest, &keys[i])
	}
	var agency *string
	if err := row.Scan(append(dest, &agency)...); err != nil {
		return app.Row{}, err
	}
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	r.Keys = map[string]any{}
	for i, v := range keys {
		if t, ok := v.(time.Time); ok {
			v = t.UTC()
		}
		if v != nil {
			r.Keys[keyColumns[i]] = v
		}
	}
	if agency != nil && *agency != "" {
		r.Keys[app.AgencyField] = *agency
	}
	return r, nil
}

// Row implements app.Store.
func (s *Store) Row(ctx context.Context, clientID, resource, id string) (app.Row, error) {
	r, err := scanRow(s.db.Pool().QueryRow(ctx, `SELECT `+rowColumns+` FROM rows
		WHERE id = $1 AND client_id = $2 AND resource = $3`, id, clientID, resource))
	return r, pgdb.Err(err, "row")
}

// LockRows implements app.Tx: FOR UPDATE, in id order (the rows are locked
// as the sorted scan returns them), so that writers of the same rows queue
// rather than deadlock.
func (t tx) LockRows(ctx context.Context, ids []string) ([]app.Row, error) {
	// Planned with the ids (QueryExecModeExec): a plan cached while the
	// table was small scans it whole, and stays cached as it grows
	// (measured: 656 pages read per call at 11,000 rows, instead of 4).
	rows, err := t.Query(ctx, `SELECT `+rowColumns+` FROM rows WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`, pgx.QueryExecModeExec, ids)
	if err != nil {
		return nil, pgdb.Err(err, "lock rows")
	}
	out, err := pgdb.Collect(rows, len(ids), scanRow)
	return out, pgdb.Err(err, "lock rows")
}

// ReplaceRows implements app.Tx: it reads the stored rows' filter values
// (locking them), rewrites the rows and moves their counters from the old
// values to the new ones, in one more round trip.
func (t tx) ReplaceRows(ctx context.Context, rows []app.Row) error {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	old, err := t.LockRows(ctx, ids)
	if err != nil {
		return err
	}
	stored := make(map[string]app.Row, len(old))
	for _, r := range old {
		stored[r.ID] = r
	}
	counts := map[countKey]int64{}
	b := &pgx.Batch{}
	set := make([]string, len(keyColumns))
	for i, c := range keyColumns {
		set[i] = fmt.Sprintf("%s = $%d", c, i+5)
	}
	update := fmt.Sprintf(`UPDATE rows SET created_at = $2, updated_at = $3, data = $4, %s, agency_id = $%d WHERE id = $1`,
		strings.Join(set, ", "), len(keyColumns)+5)
	for _, r := range rows {
		o, ok := stored[r.ID]
		if !ok || o.ClientID != r.ClientID || o.Resource != r.Resource {
			return fmt.Errorf("replace row %s of %s: %w", r.ID, r.Resource, app.ErrNotFound)
		}
		count(counts, &o, -1)
		count(counts, &r, 1)
		args := []any{r.ID, r.CreatedAt, r.UpdatedAt, []byte(r.Data)}
		for _, c := range keyColumns {
			args = append(args, r.Keys[c])
		}
		b.Queue(update, append(args, agencyColumn(&r))...)
	}
	if err := t.SendBatch(ctx, b).Close(); err != nil {
		return pgdb.Err(err, "replace rows")
	}
	return t.applyCounts(ctx, counts)
}
