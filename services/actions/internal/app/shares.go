package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"path"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/handlers"
)

// ShareStore keeps the report share links. Like the branding it is no
// part of a run's transaction: a link made for a run that then fails
// shows a report that was stored anyway.
type ShareStore interface {
	// CreateShare stores s (its id and token hash set), and events in the
	// same transaction (the audit trail's record of an agency's create).
	CreateShare(ctx context.Context, s action.Share, events ...outbox.Event) error
	// ListShares lists the agency's links, newest first (by id, which is
	// time-ordered), after the cursor id if any.
	ListShares(ctx context.Context, agencyID string, f ShareFilter) ([]action.Share, error)
	// RevokeShare sets the link's revoked time if it has none and returns
	// the link, enqueueing events in the same transaction; NotFound (and
	// no event) if the agency has no such link.
	RevokeShare(ctx context.Context, agencyID, id string, at time.Time, events ...outbox.Event) (action.Share, error)
	// ShareByToken returns the link whose token hashes to hash; ok false
	// if none.
	ShareByToken(ctx context.Context, hash []byte) (s action.Share, ok bool, err error)
}

// ShareFilter narrows a list of links.
type ShareFilter struct {
	ClientID, RunID string
	// Before is the id of the last link of the page before.
	Before string
	Limit  int
}

// Page sizes of ListShares.
const (
	DefaultSharesLimit = 20
	MaxSharesLimit     = 100
)

// shareTokenBytes is a token's randomness: 128 bits, as the issue asks.
const shareTokenBytes = 16

// Shares are the share-link use cases.
type Shares struct {
	store ShareStore
	now   func() time.Time
	// base is the public URL the links start with (the gateway's).
	base func() string
}

// NewShares returns the share-link use cases on st; base answers the
// public URL of the gateway at the time a link is made.
func NewShares(st ShareStore, now func() time.Time, base func() string) *Shares {
	return &Shares{store: st, now: now, base: base}
}

// HashToken is how a token is kept and looked up.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// MakeShare implements action.ShareMaker: a new random token, kept as its
// hash, and the link's URL.
func (s *Shares) MakeShare(ctx context.Context, sh action.Share, ttl time.Duration) (string, error) {
	return s.makeShare(ctx, &sh, ttl, nil)
}

// makeShare stores a new link for sh, which it completes (id, token hash,
// expiry); audited names the audit trail's action for the write, or ""
// for a link a report run makes (the run's own record covers it).
func (s *Shares) makeShare(ctx context.Context, sh *action.Share, ttl time.Duration, audited func(action.Share) audit.Change) (string, error) {
	b := make([]byte, shareTokenBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	token := base64.RawURLEncoding.EncodeToString(b)
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	if sh.CreatedAt.IsZero() {
		sh.CreatedAt = s.now()
	}
	sh.ID, sh.TokenHash, sh.ExpiresAt = id.String(), HashToken(token), sh.CreatedAt.Add(ttl)
	var events []outbox.Event
	if audited != nil {
		e, err := auditEvent(ctx, audited(*sh), sh.CreatedAt)
		if err != nil {
			return "", err
		}
		events = append(events, e)
	}
	if err := s.store.CreateShare(ctx, *sh, events...); err != nil {
		return "", err
	}
	return s.base() + "/r/" + token, nil
}

// Bounds of a link's life, in days.
const (
	DefaultShareDays = handlers.DefaultShareDays
	MaxShareDays     = 365
)

// RunReader reads an agency's run (NotFound for another agency's).
type RunReader func(ctx context.Context, agencyID, id string) (Run, error)

// Create makes a new link for the agency's successful generate_report run
// runID, working days days (0: the default), and answers it with its URL.
func (s *Shares) Create(ctx context.Context, runs RunReader, agencyID, runID string, days int) (action.Share, string, error) {
	if days == 0 {
		days = DefaultShareDays
	}
	if days < 1 || days > MaxShareDays {
		return action.Share{}, "", apperr.Invalid("expires_in_days must be 1 to %d; got %d", MaxShareDays, days)
	}
	if runID == "" {
		return action.Share{}, "", apperr.Invalid("run_id is required: a successful generate_report run's id")
	}
	run, err := runs(ctx, agencyID, runID)
	if err != nil {
		return action.Share{}, "", err
	}
	htmlURL, _ := run.Data["html_url"].(string)
	pdfURL, _ := run.Data["pdf_url"].(string)
	if run.Action != "generate_report" || run.Status != StatusSuccess || htmlURL == "" || pdfURL == "" {
		return action.Share{}, "", apperr.Invalid("run %s is not a successful generate_report run: only a report can be shared (its action is %s)", runID, run.Action)
	}
	sh := action.Share{AgencyID: agencyID, ClientID: run.ClientID, RunID: run.ID, HTMLName: path.Base(htmlURL), PDFName: path.Base(pdfURL), CreatedAt: s.now()}
	url, err := s.makeShare(ctx, &sh, time.Duration(days)*24*time.Hour, func(sh action.Share) audit.Change {
		return shareChange(sh.ID, agencyID, "share.created", []string{"expires_in_days", "run_id"})
	})
	return sh, url, err
}

// List lists the agency's links, a page of limit (1..MaxSharesLimit), and
// the id to list before for the next page ("" on the last).
func (s *Shares) List(ctx context.Context, agencyID string, f ShareFilter) ([]action.Share, string, error) {
	if f.Limit == 0 {
		f.Limit = DefaultSharesLimit
	}
	if f.Limit < 1 || f.Limit > MaxSharesLimit {
		return nil, "", apperr.Invalid("limit must be 1 to %d; got %d", MaxSharesLimit, f.Limit)
	}
	for _, v := range []struct{ name, id string }{{"client_id", f.ClientID}, {"run_id", f.RunID}} {
		if v.id != "" && uuid.Validate(v.id) != nil {
			return nil, "", apperr.Invalid("%s must be a UUID; got %q", v.name, v.id)
		}
	}
	limit := f.Limit
	f.Limit++ // one more tells whether a next page exists
	out, err := s.store.ListShares(ctx, agencyID, f)
	if err != nil || len(out) <= limit {
		return out, "", err
	}
	return out[:limit], out[limit-1].ID, nil
}

// Revoke ends the agency's link id now.
func (s *Shares) Revoke(ctx context.Context, agencyID, id string) (action.Share, error) {
	if uuid.Validate(id) != nil {
		return action.Share{}, apperr.NotFound("no report share %q: ids are UUIDs from GET /api/v1/report-shares", id)
	}
	now := s.now()
	e, err := auditEvent(ctx, shareChange(id, agencyID, "share.revoked", nil), now)
	if err != nil {
		return action.Share{}, err
	}
	return s.store.RevokeShare(ctx, agencyID, id, now, e)
}

// shareChange is the audit trail's record of an agency's write to one of
// its report share links (never the token).
func shareChange(id, agencyID, act string, fields []string) audit.Change {
	return audit.Change{Action: act, ResourceType: "report_share", ResourceID: id, Fields: fields, AgencyID: agencyID}
}

// Resolve answers the link of token and its state now; NotFound if no link
// has that token.
func (s *Shares) Resolve(ctx context.Context, token string) (action.Share, string, error) {
	if token == "" || len(token) > 64 {
		return action.Share{}, "", apperr.NotFound("no report share link with this token")
	}
	sh, ok, err := s.store.ShareByToken(ctx, HashToken(token))
	if err != nil {
		return action.Share{}, "", err
	}
	if !ok {
		return action.Share{}, "", apperr.NotFound("no report share link with this token")
	}
	return sh, sh.State(s.now()), nil
}

// Now is the use cases' clock, for the states the server answers.
func (s *Shares) Now() time.Time { return s.now() }
