package app

import (
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/principal"
)

// Agency is a marketing agency: the tenant of the CRM, data and action
// interfaces.
type Agency struct {
	ID        string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Member is a person working at an agency; members own deals.
type Member struct {
	ID        string
	AgencyID  string
	Name      string
	Email     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Client is a business whose data agencies manage. A client can be linked to
// several agencies.
type Client struct {
	ID     string
	Name   string
	Domain string
	Status string
	// AutoDeploy lets actions publish or deploy generated content without
	// review.
	AutoDeploy bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Client statuses.
var ClientStatuses = []string{"active", "paused", "archived"}

// ClientLink gives an agency access to a client's data.
type ClientLink struct {
	AgencyID  string
	ClientID  string
	CreatedAt time.Time
}

// APIKey is an issued key. Only the SHA-256 digest of its secret is kept.
type APIKey struct {
	ID           string
	Name         string
	Prefix       string
	SecretSHA256 []byte
	Scopes       []principal.Scope
	SiteID       string
	AgencyID     string
	ExpiresAt    *time.Time
	RevokedAt    *time.Time
	CreatedAt    time.Time
	// PublishedOnly keys read only published content and cannot write:
	// keys safe to embed in a web page.
	PublishedOnly bool
}

// Prospect is a prospect report in an agency's sales pipeline.
type Prospect struct {
	ID            string
	AgencyID      string
	BusinessName  string
	WebsiteURL    string
	Domain        string
	Industry      string
	HealthScore   float64
	LeadScore     float64
	PipelineStage string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// PipelineStages are the allowed prospect pipeline stages, in pipeline order.
var PipelineStages = []string{"new", "contacted", "qualified", "proposal_sent", "negotiation", "won", "lost"}

// Deal is a deal owned by a member of an agency.
type Deal struct {
	ID                string
	AgencyID          string
	OwnerMemberID     string
	Title             string
	Stage             string
	Value             float64
	Currency          string
	ExpectedCloseDate string // YYYY-MM-DD
	ClosedAt          *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// DealStages are the allowed deal stages, in pipeline order. The last two
// close a deal.
var DealStages = []string{"lead", "qualified", "proposal", "negotiation", "won", "lost"}

// dealClosed reports whether stage ends a deal, which sets its closed_at.
func dealClosed(stage string) bool { return stage == "won" || stage == "lost" }

// allowed reports whether v is one of vs.
func allowed(v string, vs []string) bool { return slices.Contains(vs, v) }
