package action

import (
	"context"
	"time"
)

// Share is a link to a report run's files that a client opens without a
// key (/r/{token}) until it expires or is revoked. Only the token's
// SHA-256 is kept: a leaked database names no working link.
type Share struct {
	ID        string
	AgencyID  string
	ClientID  string
	RunID     string
	TokenHash []byte
	// HTMLName and PDFName are the report's files (platform/publicfile).
	HTMLName  string
	PDFName   string
	CreatedAt time.Time
	ExpiresAt time.Time
	// RevokedAt is zero while the link is not revoked.
	RevokedAt time.Time
}

// The states of a share link.
const (
	ShareActive  = "active"
	ShareExpired = "expired"
	ShareRevoked = "revoked"
)

// State is the link's state at now.
func (s Share) State(now time.Time) string {
	switch {
	case !s.RevokedAt.IsZero():
		return ShareRevoked
	case !now.Before(s.ExpiresAt):
		return ShareExpired
	}
	return ShareActive
}

// ShareMaker makes a share link for a report a run has just stored, and
// answers its URL (generate_report).
type ShareMaker interface {
	MakeShare(ctx context.Context, s Share, ttl time.Duration) (url string, err error)
}
