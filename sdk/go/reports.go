package atrium

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Branding is how the agency's client reports look.
type Branding struct {
	// Name signs the reports: one line, 1 to 100 characters.
	Name        string  `json:"name"`
	LogoAssetID *string `json:"logo_asset_id,omitempty"`
	// Colors are #rrggbb; empty ones are the defaults on Put.
	Colors BrandColors `json:"colors"`
}

// BrandColors are a report's two colours.
type BrandColors struct {
	Primary string `json:"primary,omitempty"`
	Accent  string `json:"accent,omitempty"`
}

// BrandingService reads and replaces the agency's report branding.
type BrandingService struct{ t *transport }

const brandingPath = "/api/v1/branding"

func (s *BrandingService) one(ctx context.Context, r request) (*Branding, error) {
	var out struct {
		Branding Branding `json:"branding"`
	}
	if _, err := s.t.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out.Branding, nil
}

// Get returns the agency's branding ("Atrium" in the default colours
// until one is put).
func (s *BrandingService) Get(ctx context.Context) (*Branding, error) {
	return s.one(ctx, request{method: "GET", path: brandingPath, idempotent: true})
}

// Put replaces the whole branding; every report made afterwards is drawn
// with it.
func (s *BrandingService) Put(ctx context.Context, b Branding) (*Branding, error) {
	return s.one(ctx, request{method: "PUT", path: brandingPath, body: b, idempotent: true})
}

// ReportShare is a link a client opens without a key to a report run's
// HTML page and PDF.
type ReportShare struct {
	ID       string `json:"id"`
	RunID    string `json:"run_id"`
	ClientID string `json:"client_id"`
	// URL is set only in the answer of Create: the server keeps only a
	// hash of the token.
	URL string `json:"url,omitempty"`
	// State is active, expired or revoked.
	State     string     `json:"state"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// ReportShareQuery filters List; empty fields select all.
type ReportShareQuery struct {
	ClientID, RunID string
}

// ReportSharesService manages the agency's report share links.
type ReportSharesService struct{ t *transport }

const sharesPath = "/api/v1/report-shares"

func (s *ReportSharesService) one(ctx context.Context, r request) (*ReportShare, error) {
	var out struct {
		Share ReportShare `json:"share"`
	}
	if _, err := s.t.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out.Share, nil
}

// NewReportShare asks for a link to a successful generate_report run.
type NewReportShare struct {
	RunID string `json:"run_id"`
	// ExpiresInDays is 1 to 365; 0 is the server's default, 90.
	ExpiresInDays int `json:"expires_in_days,omitempty"`
}

// Create makes a new link to a report run (how an agency answers a client
// whose link expired). The answer's URL is the only time the link is
// shown. Not sent again unless it cannot have reached the server: a retry
// could make two links.
func (s *ReportSharesService) Create(ctx context.Context, n NewReportShare) (*ReportShare, error) {
	return s.one(ctx, request{method: "POST", path: sharesPath, body: n})
}

// Revoke ends a link at once (revoking again keeps the first time).
func (s *ReportSharesService) Revoke(ctx context.Context, id string) (*ReportShare, error) {
	return s.one(ctx, request{method: "DELETE", path: sharesPath + path(id), idempotent: true})
}

// List walks the agency's links, newest first.
func (s *ReportSharesService) List(ctx context.Context, q ReportShareQuery) iter.Seq2[ReportShare, error] {
	return cursorPages(ctx, func(ctx context.Context, cursor string) ([]ReportShare, string, error) {
		v := url.Values{"limit": {strconv.Itoa(100)}}
		for k, val := range map[string]string{"client_id": q.ClientID, "run_id": q.RunID, "cursor": cursor} {
			if val != "" {
				v.Set(k, val)
			}
		}
		var out struct {
			Shares     []ReportShare `json:"shares"`
			NextCursor string        `json:"next_cursor"`
		}
		_, err := s.t.do(ctx, request{method: "GET", path: sharesPath, query: v, idempotent: true}, &out)
		return out.Shares, out.NextCursor, err
	})
}
