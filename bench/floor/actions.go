package floor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Submissions is the floor of an asynchronous submission (POST /api/v1/data
// with Prefer: respond-async): the body decoded, the run queued with its
// cost reserved and its queued event in the outbox, in the statements
// Atrium's PostgreSQL store sends (one round trip between BEGIN and
// COMMIT), and the 202's JSON. It serves one agency and one client of the
// actions schema and checks nothing else: no key, no client link, no
// catalog, no idempotency, no tracing.
type Submissions struct {
	pool             *pgxpool.Pool
	agency, client   string
	maxQueued        int64
	costAI, costData int64
}

// NewSubmissions returns the floor for agency's generate_blog runs on
// client (2 AI credits each, as the catalog has it).
func NewSubmissions(pool *pgxpool.Pool, agency, client string, maxQueued int64) *Submissions {
	return &Submissions{pool: pool, agency: agency, client: client, maxQueued: maxQueued, costAI: 2}
}

// Handler routes the floor's endpoint.
func (s *Submissions) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/data", s.submit)
	return mux
}

const floorInsertRun = `INSERT INTO runs (id, agency_id, client_id, action, status, status_code, cost_ai, cost_data,
	idempotency_key, request_hash, started_at, lease_until, created_at, async, request)
	VALUES ($1, $2, $3, $4, 'queued', 0, $5, $6, NULL, NULL, $7, $7, $7, true, $8)`

func (s *Submissions) submit(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["action"] != "generate_blog" || body["client_id"] != s.client {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	request, _ := json.Marshal(body)
	id, now := uuid.Must(uuid.NewV7()).String(), time.Now().UTC()
	event, _ := json.Marshal(map[string]any{"run_id": id, "action": "generate_blog", "client_id": s.client, "agency_id": s.agency,
		"state": "queued", "credits_reserved": map[string]int64{"ai": s.costAI, "data": s.costData}, "at": now})
	var (
		queued         int64
		ai, data       int64
		reserved, full bool
	)
	err := pgx.BeginFunc(r.Context(), s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SET LOCAL synchronous_commit TO off`)
		b.Queue(`SELECT coalesce((SELECT queued FROM queue_depth WHERE agency_id = $1), 0)`, s.agency).QueryRow(func(row pgx.Row) error { return row.Scan(&queued) })
		b.Queue(floorInsertRun, id, s.agency, s.client, "generate_blog", s.costAI, s.costData, now, request)
		b.Queue(`UPDATE credits SET ai = ai - $2, data = data - $3, updated_at = now()
			WHERE agency_id = $1 AND ai >= $2 AND data >= $3 RETURNING ai, data`, s.agency, s.costAI, s.costData).
			QueryRow(func(row pgx.Row) error {
				err := row.Scan(&ai, &data)
				reserved = err == nil
				if err == pgx.ErrNoRows {
					return nil
				}
				return err
			})
		b.Queue(`INSERT INTO outbox (id, subject, payload, created_at) VALUES ($1, $2, $3, $4)`,
			uuid.NewString(), "atrium.actions.queued.generate_blog", event, now)
		if err := tx.SendBatch(r.Context(), b).Close(); err != nil {
			return err
		}
		if full = queued >= s.maxQueued; full || !reserved {
			return errRefused
		}
		return nil
	})
	switch {
	case full:
		http.Error(w, `{"error":"queue full"}`, http.StatusTooManyRequests)
		return
	case err == errRefused:
		http.Error(w, `{"error":"insufficient credits"}`, http.StatusPaymentRequired)
		return
	case err != nil:
		http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
		return
	}
	url := "/api/v1/runs/" + id
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", url)
	w.Header().Set("Retry-After", "2")
	w.Header().Set("Preference-Applied", "respond-async")
	w.Header().Set("Atrium-AI-Credits-Remaining", fmt.Sprint(ai))
	w.Header().Set("Atrium-Data-Credits-Remaining", fmt.Sprint(data))
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]any{"action": "generate_blog", "client_id": s.client, "status": "pending", "status_code": 202,
		"data": map[string]any{"run_id": id, "state": "queued", "url": url}})
}

var errRefused = fmt.Errorf("refused")
