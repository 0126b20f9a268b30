package floor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Collections is the floor of the collections interface for one site: the
// same SQL as Atrium's collections store (the collection by slug, then the
// page of items, or the item), the same JSON, with encoding/json, and no
// validation, authentication, event or gRPC hop.
type Collections struct {
	pool   *pgxpool.Pool
	siteID string
}

// NewCollections returns the floor for siteID, reading the collections
// schema of pool's database.
func NewCollections(pool *pgxpool.Pool, siteID string) *Collections {
	return &Collections{pool: pool, siteID: siteID}
}

// Handler routes the floor's endpoints.
func (s *Collections) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/public/v1/collections/{slug}", s.list)
	mux.HandleFunc("GET /api/public/v1/collections/{slug}/{id}", s.get)
	mux.HandleFunc("POST /api/public/v1/collections/{slug}", s.create)
	return mux
}

type field struct {
	Key       string   `json:"key"`
	Type      string   `json:"type"`
	Required  bool     `json:"required"`
	Options   []string `json:"options"`
	Target    string   `json:"target,omitempty"`
	MaxLength int      `json:"max_length,omitempty"`
}

type collection struct {
	id       string
	Name     string  `json:"name"`
	Slug     string  `json:"slug"`
	Fields   []field `json:"fields"`
	IsSystem bool    `json:"is_system"`
}

func (s *Collections) collection(r *http.Request) (collection, error) {
	return s.collectionBySlug(r, r.PathValue("slug"))
}

func (s *Collections) collectionBySlug(r *http.Request, slug string) (collection, error) {
	var (
		c      collection
		fields []byte
	)
	err := s.pool.QueryRow(r.Context(), `SELECT id, site_id, slug, name, is_system, fields, created_at, updated_at
		FROM collections WHERE site_id = $1 AND slug = $2`, s.siteID, slug).
		Scan(&c.id, new(string), &c.Slug, &c.Name, &c.IsSystem, &fields, new(time.Time), new(time.Time))
	if err != nil {
		return c, err
	}
	err = json.Unmarshal(fields, &c.Fields)
	for i := range c.Fields {
		if c.Fields[i].Options == nil {
			c.Fields[i].Options = []string{}
		}
	}
	return c, err
}

// item flattens a row into the item object: system properties and every
// defined field, null when unset. Values stay raw JSON, as in Atrium's
// store: the floor does not decode what it only passes through.
func item(c collection, row pgx.Row) (map[string]any, error) {
	var (
		id, collectionID string
		data             []byte
		published        bool
		version          int64
		created, updated time.Time
	)
	if err := row.Scan(&id, &collectionID, &data, &published, &version, &created, &updated); err != nil {
		return nil, err
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(data, &values); err != nil {
		return nil, err
	}
	out := make(map[string]any, 4+len(c.Fields))
	out["id"], out["is_published"] = id, published
	out["created_at"], out["updated_at"] = created.UTC(), updated.UTC()
	for _, f := range c.Fields {
		if v, ok := values[f.Key]; ok {
			out[f.Key] = v
		} else {
			out[f.Key] = nil
		}
	}
	return out, nil
}

const itemCols = `id, collection_id, data, is_published, version, created_at, updated_at`

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func (s *Collections) list(w http.ResponseWriter, r *http.Request) {
	limit, offset := 100, 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			http.Error(w, `{"error":"bad limit"}`, http.StatusBadRequest)
			return
		}
		limit = min(n, 1000)
	}
	if v := r.URL.Query().Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, `{"error":"bad offset"}`, http.StatusBadRequest)
			return
		}
		offset = n
	}
	c, err := s.collection(r)
	if err != nil {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	sql, args := `SELECT `+itemCols+` FROM items WHERE collection_id = $1`, []any{c.id}
	if q := r.URL.Query().Get("q"); q != "" {
		// The search as Atrium's store writes it (simple language), so
		// that the collection's search index serves it.
		doc := searchDocument(c)
		if doc == "" {
			http.Error(w, `{"error":"no text fields"}`, http.StatusBadRequest)
			return
		}
		args = append(args, q)
		sql += ` AND collection_id = '` + c.id + `' AND ` + doc + ` @@ plainto_tsquery('simple'::regconfig, $2)`
	}
	args = append(args, limit, offset)
	sql += fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d OFFSET $%d`, len(args)-1, len(args))
	rows, err := s.pool.Query(r.Context(), sql, args...)
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	items := make([]map[string]any, 0, limit)
	for rows.Next() {
		it, err := item(c, rows)
		if err != nil {
			http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
			return
		}
		items = append(items, it)
	}
	if rows.Err() != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	rows.Close()
	if expand := r.URL.Query().Get("expand"); expand != "" {
		if err := s.expand(r, c, items, strings.Split(expand, ",")); err != nil {
			http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"collection": c, "items": items, "limit": limit, "offset": offset})
}

// searchDocument is Atrium's search expression over c's text fields.
func searchDocument(c collection) string {
	var parts []string
	for _, f := range c.Fields {
		if f.Type == "text" || f.Type == "rich_text" {
			parts = append(parts, "coalesce(data->>'"+f.Key+"', '')")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "to_tsvector('simple'::regconfig, " + strings.Join(parts, " || ' ' || ") + ")"
}

// expand replaces the named reference fields' ids in items with the items
// they name, one level, by hand: per field, the target collection and one
// query for the page's ids. Missing targets become null.
func (s *Collections) expand(r *http.Request, c collection, items []map[string]any, keys []string) error {
	for _, key := range keys {
		var target string
		for _, f := range c.Fields {
			if f.Key == key && f.Type == "reference" {
				target = f.Target
			}
		}
		if target == "" {
			continue
		}
		tc, err := s.collectionBySlug(r, target)
		if err != nil {
			return err
		}
		var ids []string
		for _, it := range items {
			var id string
			if raw, ok := it[key].(json.RawMessage); ok && json.Unmarshal(raw, &id) == nil {
				ids = append(ids, id)
			}
		}
		rows, err := s.pool.Query(r.Context(), `SELECT `+itemCols+` FROM items WHERE collection_id = $1 AND id = ANY($2::uuid[])`, tc.id, ids)
		if err != nil {
			return err
		}
		found := map[string]map[string]any{}
		for rows.Next() {
			t, err := item(tc, rows)
			if err != nil {
				rows.Close()
				return err
			}
			found[t["id"].(string)] = t
		}
		rows.Close()
		if rows.Err() != nil {
			return rows.Err()
		}
		for _, it := range items {
			var id string
			if raw, ok := it[key].(json.RawMessage); ok && json.Unmarshal(raw, &id) == nil && found[id] != nil {
				it[key] = found[id]
			} else {
				it[key] = nil
			}
		}
	}
	return nil
}

func (s *Collections) get(w http.ResponseWriter, r *http.Request) {
	c, err := s.collection(r)
	if err != nil {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	it, err := item(c, s.pool.QueryRow(r.Context(), `SELECT `+itemCols+` FROM items WHERE collection_id = $1 AND id = $2`, c.id, r.PathValue("id")))
	if err != nil {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"item": it})
}

func (s *Collections) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Data        map[string]any `json:"data"`
		IsPublished bool           `json:"is_published"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Data == nil {
		http.Error(w, `{"error":"bad body"}`, http.StatusBadRequest)
		return
	}
	c, err := s.collection(r)
	if err != nil {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	data, _ := json.Marshal(body.Data)
	now := time.Now().UTC().Truncate(time.Microsecond)
	it, err := item(c, s.pool.QueryRow(r.Context(), `INSERT INTO items (`+itemCols+`) VALUES ($1, $2, $3, $4, 1, $5, $5)
		RETURNING `+itemCols, uuid.Must(uuid.NewV7()).String(), c.id, data, body.IsPublished, now))
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"item": it})
}
