package floor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Data is the floor of the data read for the keyword reads the benchmark
// makes: the same count (the counter kept with the rows) and page SQL as
// Atrium's data store, sent in one round trip as Atrium does (resource as a
// literal, client, optional status filter, tracked_at order, ties by id,
// keyset after a position), the rows as stored, encoding/json around them.
// No key, no client-link check, no parameter rules beyond these.
type Data struct {
	pool *pgxpool.Pool
}

// NewData returns the floor over the data schema of pool's database.
func NewData(pool *pgxpool.Pool) *Data { return &Data{pool: pool} }

// Handler routes GET /api/v1/data.
func (s *Data) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/data", s.read)
	return mux
}

func (s *Data) read(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("resource") != "keywords" || q.Get("order") != "tracked_at" {
		http.Error(w, `{"error":"the floor serves resource=keywords&order=tracked_at"}`, http.StatusBadRequest)
		return
	}
	client := q.Get("client_id")
	limit, offset := 100, 0
	if v := q.Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
		limit = min(max(limit, 1), 1000)
	}
	if v := q.Get("offset"); v != "" {
		offset, _ = strconv.Atoi(v)
	}
	where := `client_id = $1 AND resource = 'keywords'`
	args := []any{client}
	field, value := "", ""
	if f := q.Get("filter_field"); f == "status" {
		args = append(args, q.Get("filter_value"))
		where += ` AND status = $2`
		field, value = "status", q.Get("filter_value")
	}
	page := where
	if k, id := q.Get("after_tracked_at"), q.Get("after_id"); k != "" && id != "" {
		at, err := time.Parse(time.RFC3339Nano, k)
		if err != nil {
			http.Error(w, `{"error":"bad after_tracked_at"}`, http.StatusBadRequest)
			return
		}
		args = append(args, at, id)
		page += fmt.Sprintf(` AND (tracked_at, id) < ($%d, $%d)`, len(args)-1, len(args))
		offset = 0
	}
	n := len(args)
	// The total from the same counter Atrium keeps with the rows, and the
	// page, in one round trip as Atrium sends them.
	var total int64
	data := make([]json.RawMessage, 0, limit)
	b := &pgx.Batch{}
	b.Queue(`SELECT coalesce(sum(count), 0)::bigint FROM row_counts
		WHERE client_id = $1 AND resource = 'keywords' AND field = $2 AND value = $3`, client, field, value).
		QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	b.Queue(fmt.Sprintf(`SELECT id, created_at, updated_at, data, tracked_at FROM rows
		WHERE %s ORDER BY tracked_at DESC, id DESC LIMIT $%d OFFSET $%d`, page, n+1, n+2), append(args, limit, offset)...).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var (
					id               string
					created, updated time.Time
					raw              []byte
					tracked          *time.Time
				)
				if err := rows.Scan(&id, &created, &updated, &raw, &tracked); err != nil {
					return err
				}
				data = append(data, raw)
			}
			return rows.Err()
		})
	if err := s.pool.SendBatch(r.Context(), b).Close(); err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource": "keywords", "client_id": client, "data": data,
		"pagination": map[string]any{"total": total, "limit": limit, "offset": offset, "has_more": int64(offset+limit) < total},
	})
}
