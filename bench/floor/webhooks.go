package floor

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Webhooks is the floor of webhook delivery: the smallest durable sender a
// team would write by hand on PostgreSQL. A create inserts the item (the
// same SQL as Atrium's collections store) and one delivery row per endpoint
// of the site in the same transaction; a loop claims due rows with FOR
// UPDATE SKIP LOCKED, POSTs each in a goroutine of its own (so a hanging
// endpoint holds only its own requests) with the same Standard Webhooks
// headers and body, and records the outcome, retrying a failure after 5 s.
// There is no NATS, no gRPC hop, no fan-out service, no per-endpoint bound,
// no delivery log beyond a status: what it costs is what committing and
// sending cost.
type Webhooks struct {
	pool *pgxpool.Pool
	// endpoints are each site's endpoints.
	endpoints map[string][]WebhookEndpoint
	client    *http.Client
	wake      chan struct{}
}

// WebhookEndpoint is where the floor sends a site's events.
type WebhookEndpoint struct {
	URL    string `json:"url"`
	Secret string `json:"secret"` // whsec_...
}

// NewWebhooks returns the floor over pool (whose search path holds the
// collections schema) sending to endpoints, and creates its delivery table.
func NewWebhooks(ctx context.Context, pool *pgxpool.Pool, endpoints map[string][]WebhookEndpoint) (*Webhooks, error) {
	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS floor_deliveries (
		id uuid PRIMARY KEY, url text NOT NULL, secret text NOT NULL, event_id text NOT NULL, body bytea NOT NULL,
		status text NOT NULL, next_attempt_at timestamptz NOT NULL, leased_until timestamptz, attempts int NOT NULL DEFAULT 0);
		CREATE INDEX IF NOT EXISTS floor_deliveries_due ON floor_deliveries (next_attempt_at) WHERE status = 'pending'`)
	if err != nil {
		return nil, err
	}
	return &Webhooks{pool: pool, endpoints: endpoints, wake: make(chan struct{}, 1),
		client: &http.Client{Timeout: 15 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

// Handler serves POST /api/public/v1/collections/{slug} for the site named
// by the X-Site header (the floor has no keys).
func (s *Webhooks) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/public/v1/collections/{slug}", s.create)
	return mux
}

func (s *Webhooks) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Data        map[string]any `json:"data"`
		IsPublished bool           `json:"is_published"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Data == nil {
		http.Error(w, `{"error":"bad body"}`, http.StatusBadRequest)
		return
	}
	site := r.Header.Get("X-Site")
	data, _ := json.Marshal(body.Data)
	now := time.Now().UTC().Truncate(time.Microsecond)
	itemID, eventID := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	var it map[string]any
	err := pgx.BeginFunc(r.Context(), s.pool, func(tx pgx.Tx) error {
		var collectionID string
		if err := tx.QueryRow(r.Context(), `SELECT id FROM collections WHERE site_id = $1 AND slug = $2`, site, r.PathValue("slug")).Scan(&collectionID); err != nil {
			return err
		}
		var (
			createdAt time.Time
			version   int
		)
		if err := tx.QueryRow(r.Context(), `INSERT INTO items (id, collection_id, data, is_published, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 1, $5, $5) RETURNING version, created_at`, itemID, collectionID, data, body.IsPublished, now).Scan(&version, &createdAt); err != nil {
			return err
		}
		payload, _ := json.Marshal(map[string]any{"type": "item.created", "timestamp": now.Format(time.RFC3339Nano), "data": map[string]any{
			"id": itemID, "site_id": site, "collection": r.PathValue("slug"), "is_published": body.IsPublished, "version": version}})
		b := &pgx.Batch{}
		for _, e := range s.endpoints[site] {
			b.Queue(`INSERT INTO floor_deliveries (id, url, secret, event_id, body, status, next_attempt_at) VALUES ($1, $2, $3, $4, $5, 'pending', $6)`,
				uuid.Must(uuid.NewV7()).String(), e.URL, e.Secret, eventID, payload, now)
		}
		it = map[string]any{"id": itemID, "is_published": body.IsPublished, "created_at": createdAt, "updated_at": createdAt}
		for k, v := range body.Data {
			it[k] = v
		}
		return tx.SendBatch(r.Context(), b).Close()
	})
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	writeJSON(w, http.StatusCreated, map[string]any{"item": it})
}

type floorDelivery struct {
	id, url, secret, eventID string
	body                     []byte
	attempts                 int
}

// Run sends due deliveries until ctx ends.
func (s *Webhooks) Run(ctx context.Context) {
	sem := make(chan struct{}, 1024)
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		rows, err := s.pool.Query(ctx, `UPDATE floor_deliveries SET leased_until = now() + interval '45 seconds'
			WHERE id IN (SELECT id FROM floor_deliveries WHERE status = 'pending' AND next_attempt_at <= now()
				AND (leased_until IS NULL OR leased_until <= now()) ORDER BY next_attempt_at LIMIT 256 FOR UPDATE SKIP LOCKED)
			RETURNING id, url, secret, event_id, body, attempts`)
		var due []floorDelivery
		if err == nil {
			// A failed claim is tried again at the next turn.
			due, _ = pgx.CollectRows(rows, func(row pgx.CollectableRow) (floorDelivery, error) {
				var d floorDelivery
				return d, row.Scan(&d.id, &d.url, &d.secret, &d.eventID, &d.body, &d.attempts)
			})
		}
		for _, d := range due {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				s.send(ctx, d)
			})
		}
		if len(due) == 256 {
			continue
		}
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-time.After(time.Second):
		}
	}
}

func (s *Webhooks) send(ctx context.Context, d floorDelivery) {
	ts := time.Now()
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(d.secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(d.eventID + "." + strconv.FormatInt(ts.Unix(), 10) + "." + string(d.body)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(d.body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", d.eventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	status, next := "succeeded", time.Time{}
	resp, err := s.client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		if errors.Is(err, context.Canceled) {
			return
		}
		status, next = "pending", time.Now().Add(5*time.Second)
	}
	_, _ = s.pool.Exec(context.WithoutCancel(ctx), `UPDATE floor_deliveries SET status = $2, next_attempt_at = coalesce($3, next_attempt_at),
		leased_until = NULL, attempts = attempts + 1 WHERE id = $1`, d.id, status, nullTime(next))
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
