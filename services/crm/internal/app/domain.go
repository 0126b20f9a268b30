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

// Member is a person working at an agency; members own deals. A member
// given a role can sign in once they accept their invitation (UserID set).
type Member struct {
	ID       string
	AgencyID string
	Name     string
	Email    string
	// Role is "" for a member who cannot sign in (a deals' owner only).
	Role principal.Role
	// SiteIDs are the sites an editor may edit; empty means every site of
	// the agency.
	SiteIDs []string
	// ClientID is the client a member with the client role belongs to.
	ClientID string
	// UserID is the sign-in that accepted the member's invitation.
	UserID    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Member statuses, derived from the role and the user.
const (
	MemberStatusNone    = "none"
	MemberStatusInvited = "invited"
	MemberStatusActive  = "active"
)

// Status is none without a role, invited until the invitation is accepted,
// active after.
func (m Member) Status() string {
	switch {
	case m.Role == "":
		return MemberStatusNone
	case m.UserID == "":
		return MemberStatusInvited
	}
	return MemberStatusActive
}

// User is a person's sign-in. A user is a member of every agency whose
// invitation they accepted.
type User struct {
	ID    string
	Email string
	Name  string
	// PasswordHash is the PHC string of the password's argon2id hash.
	PasswordHash string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Membership is one agency a user acts for: their member record there and
// the agency's name.
type Membership struct {
	Member     Member
	AgencyName string
}

// Invitation lets a member with a role create their sign-in once. Only the
// SHA-256 of its token is kept.
type Invitation struct {
	ID          string
	AgencyID    string
	MemberID    string
	Email       string
	TokenSHA256 []byte
	ExpiresAt   time.Time
	CreatedAt   time.Time
}

// Session is a signed-in person's session. Only the SHA-256 of its secret
// is kept; the CSRF token is kept as it is, since the page that lost it
// asks for it again (GetCurrentSession) and it is useless without the
// session's cookie.
type Session struct {
	ID            string
	UserID        string
	SecretSHA256  []byte
	CSRFToken     string
	ClientAddress string
	UserAgent     string
	CreatedAt     time.Time
	ExpiresAt     time.Time
}

// PasswordReset lets a user set a new password once, within an hour. Only
// the SHA-256 of its token is kept.
type PasswordReset struct {
	ID          string
	UserID      string
	TokenSHA256 []byte
	ExpiresAt   time.Time
	CreatedAt   time.Time
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
	// CreatedByMemberID is the member (an owner) who issued the key through
	// the public API; removing the member revokes it. Empty for the
	// operator's keys.
	CreatedByMemberID string
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
