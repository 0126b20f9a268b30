package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

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

// Rows implements app.Store: the page and the exact count, both from the
// (client, resource[, filter], order, id) index.
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
	if q.FilterField != "" {
		col, err := column(q.FilterField)
		if err != nil {
			return nil, 0, err
		}
		args = append(args, q.FilterValue)
		where += fmt.Sprintf(` AND %s = $2`, col)
	}
	dir := " DESC"
	if q.Asc {
		dir = " ASC"
	}
	var total int
	if err := s.db.Pool().QueryRow(ctx, `SELECT count(*) FROM rows WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, pgdb.Err(err, "count rows")
	}
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
	sql := fmt.Sprintf(`SELECT id, client_id, resource, created_at, updated_at, data, %s FROM rows WHERE %s
		ORDER BY %s%s, id%s LIMIT $%d OFFSET $%d`, order, where, order, dir, dir, n+1, n+2)
	rows, err := s.db.Pool().Query(ctx, sql, append(args, q.Page.Limit, offset)...)
	if err != nil {
		return nil, 0, pgdb.Err(err, "rows")
	}
	out, err := pgdb.Collect(rows, int(q.Page.Limit), func(row pgx.Row) (app.Row, error) {
		var (
			r   app.Row
			key any
		)
		err := row.Scan(&r.ID, &r.ClientID, &r.Resource, &r.CreatedAt, &r.UpdatedAt, &r.Data, &key)
		r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
		if t, ok := key.(time.Time); ok {
			key = t.UTC()
		}
		if key != nil && slices.Contains(keyColumns, q.Order) {
			r.Keys = map[string]any{q.Order: key}
		}
		return r, err
	})
	return out, total, pgdb.Err(err, "rows")
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *pgdb.Tx) error { return fn(tx{t}) })
}

type tx struct{ *pgdb.Tx }

var insertColumns = append([]string{"id", "client_id", "resource", "created_at", "updated_at", "data"}, keyColumns...)

// InsertRows copies the rows in with COPY, in the transaction.
func (t tx) InsertRows(ctx context.Context, rows []app.Row) error {
	_, err := t.CopyFrom(ctx, pgx.Identifier{"rows"}, insertColumns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := rows[i]
		vals := make([]any, 0, len(insertColumns))
		vals = append(vals, r.ID, r.ClientID, r.Resource, r.CreatedAt, r.UpdatedAt, []byte(r.Data))
		for _, c := range keyColumns {
			v := r.Keys[c]
			if tm, ok := v.(time.Time); ok {
				v = tm
			}
			vals = append(vals, v)
		}
		return vals, nil
	}))
	return pgdb.Err(err, "insert rows")
}
