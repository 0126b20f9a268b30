// Package floor is the hand-written comparison point of every list route:
// the smallest reasonable net/http + pgx + encoding/json server that runs
// the same SQL as Atrium's store and returns the same JSON. It does nothing
// else: no authentication, no tracing, no gRPC hop, no error contract. What
// it costs is what the read costs; the gap between it and Atrium is ours.
package floor

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Server serves the floor routes for one tenant.
type Server struct {
	pool     *pgxpool.Pool
	agencyID string
}

// New returns a floor server reading the crm schema of pool's database for
// agencyID (the floor has no keys: it serves one tenant).
func New(pool *pgxpool.Pool, agencyID string) *Server {
	return &Server{pool: pool, agencyID: agencyID}
}

// Handler routes the floor's endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/prospects", s.prospects)
	mux.HandleFunc("GET /api/v1/deals", s.deals)
	return mux
}

// Serve serves on l until ctx ends.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != http.ErrServerClosed {
		return err
	}
	return nil
}

type prospect struct {
	ID            string    `json:"id"`
	BusinessName  string    `json:"business_name"`
	WebsiteURL    string    `json:"website_url"`
	Domain        string    `json:"domain"`
	Industry      string    `json:"industry"`
	HealthScore   float64   `json:"health_score"`
	LeadScore     float64   `json:"lead_score"`
	PipelineStage string    `json:"pipeline_stage"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

type deal struct {
	ID                string     `json:"id"`
	Title             string     `json:"title"`
	Stage             string     `json:"stage"`
	Value             float64    `json:"value"`
	Currency          string     `json:"currency"`
	ExpectedCloseDate string     `json:"expected_close_date"`
	ClosedAt          *time.Time `json:"closed_at"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
}

// page reads limit and offset as the CRM lists do: limit default 50,
// capped at 200.
func page(r *http.Request) (limit, offset int, ok bool) {
	limit = 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, false
		}
		limit = min(n, 200)
	}
	if v := r.URL.Query().Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		offset = n
	}
	return limit, offset, true
}

func (s *Server) prospects(w http.ResponseWriter, r *http.Request) {
	limit, offset, ok := page(r)
	if !ok {
		http.Error(w, `{"error":"bad page"}`, http.StatusBadRequest)
		return
	}
	rows, err := s.pool.Query(r.Context(), `SELECT id, business_name, website_url, domain, industry, health_score,
		lead_score, pipeline_stage, created_at, updated_at FROM prospects WHERE agency_id = $1
		ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`, s.agencyID, limit, offset)
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	out := struct {
		Data []prospect `json:"data"`
	}{Data: []prospect{}}
	for rows.Next() {
		var p prospect
		if err := rows.Scan(&p.ID, &p.BusinessName, &p.WebsiteURL, &p.Domain, &p.Industry, &p.HealthScore,
			&p.LeadScore, &p.PipelineStage, &p.CreatedAt, &p.UpdatedAt); err != nil {
			http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
			return
		}
		p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
		out.Data = append(out.Data, p)
	}
	if rows.Err() != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Server) deals(w http.ResponseWriter, r *http.Request) {
	limit, offset, ok := page(r)
	if !ok {
		http.Error(w, `{"error":"bad page"}`, http.StatusBadRequest)
		return
	}
	rows, err := s.pool.Query(r.Context(), `SELECT id, title, stage, value, currency,
		to_char(expected_close_date, 'YYYY-MM-DD'), closed_at, created_at, updated_at FROM deals
		WHERE agency_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`, s.agencyID, limit, offset)
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	out := struct {
		Data []deal `json:"data"`
	}{Data: []deal{}}
	for rows.Next() {
		var d deal
		if err := rows.Scan(&d.ID, &d.Title, &d.Stage, &d.Value, &d.Currency, &d.ExpectedCloseDate,
			&d.ClosedAt, &d.CreatedAt, &d.UpdatedAt); err != nil {
			http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
			return
		}
		out.Data = append(out.Data, d)
	}
	if rows.Err() != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
