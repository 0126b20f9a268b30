package floor

import (
	"encoding/json"
	"errors"
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
// Atrium's PostgreSQL store sends (one statement, committed alone: Atrium
// also commits concurrent ones together, which is its own doing), and the
// 202's JSON. It serves one agency and one client of the
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

// floorSubmitRun is the statement of Atrium's PostgreSQL store
// (services/actions/internal/adapters/postgres SubmitRun): the
// reservation if the agency has room, the run if reserved, its event if
// stored, and the balance after.
const floorSubmitRun = `WITH reserve AS (
		UPDATE credits SET ai = ai - $5, data = data - $6, updated_at = now()
		WHERE agency_id = $2 AND ai >= $5 AND data >= $6
			AND coalesce((SELECT queued FROM queue_depth WHERE agency_id = $2), 0) < $13
		RETURNING ai, data),
	run AS (
		INSERT INTO runs (id, agency_id, client_id, action, status, status_code, cost_ai, cost_data,
			idempotency_key, request_hash, started_at, lease_until, created_at, async, request)
		SELECT $1::uuid, $2::uuid, $3::uuid, $4::text, 'queued', 0, $5::bigint, $6::bigint, $7::text, $8::text,
			$9::timestamptz, $10::timestamptz, $11::timestamptz, true, $12::jsonb FROM reserve
		RETURNING id)
	INSERT INTO outbox (id, subject, payload, created_at, traceparent, tracestate)
		SELECT $14::uuid, $15::text, $16::bytea, $17::timestamptz, '', '' FROM run
	RETURNING (SELECT ai FROM reserve), (SELECT data FROM reserve)`

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
	var ai, data int64
	err := s.pool.QueryRow(r.Context(), floorSubmitRun, id, s.agency, s.client, "generate_blog", s.costAI, s.costData, nil, nil,
		now, now, now, request, s.maxQueued, uuid.NewString(), "atrium.actions.queued.generate_blog", event, now).Scan(&ai, &data)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		http.Error(w, `{"error":"queue full or insufficient credits"}`, http.StatusTooManyRequests)
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
