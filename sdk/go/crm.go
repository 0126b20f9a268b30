package atrium

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Prospect is a prospect report of the agency's sales pipeline.
type Prospect struct {
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

// Deal is a deal owned by a member of the agency.
type Deal struct {
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

// Page selects a page of a list paged by limit and offset; zero values are
// the API's defaults.
type Page struct {
	Limit, Offset int
}

func (p *Page) query() url.Values {
	q := url.Values{}
	if p != nil && p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p != nil && p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	return q
}

// crmPage is the largest page of the CRM lists.
const crmPage = 200

// ProspectsService reads the agency's prospect reports (GET /api/v1/prospects).
type ProspectsService struct{ t *transport }

// List returns a page of prospects, most recently updated first.
func (s *ProspectsService) List(ctx context.Context, p *Page) ([]Prospect, error) {
	var out struct {
		Data []Prospect `json:"data"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/v1/prospects", query: p.query(), idempotent: true}, &out)
	return out.Data, err
}

// All walks every prospect, most recently updated first. The page starts
// at p's offset (nil: the first).
func (s *ProspectsService) All(ctx context.Context, p *Page) iter.Seq2[Prospect, error] {
	start := 0
	if p != nil {
		start = p.Offset
	}
	return offsetPages(ctx, crmPage, func(ctx context.Context, limit, offset int) ([]Prospect, error) {
		return s.List(ctx, &Page{Limit: limit, Offset: start + offset})
	})
}

// DealsService reads the agency's deals (GET /api/v1/deals).
type DealsService struct{ t *transport }

// List returns a page of deals, most recently updated first.
func (s *DealsService) List(ctx context.Context, p *Page) ([]Deal, error) {
	var out struct {
		Data []Deal `json:"data"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/v1/deals", query: p.query(), idempotent: true}, &out)
	return out.Data, err
}

// All walks every deal, most recently updated first.
func (s *DealsService) All(ctx context.Context, p *Page) iter.Seq2[Deal, error] {
	start := 0
	if p != nil {
		start = p.Offset
	}
	return offsetPages(ctx, crmPage, func(ctx context.Context, limit, offset int) ([]Deal, error) {
		return s.List(ctx, &Page{Limit: limit, Offset: start + offset})
	})
}
