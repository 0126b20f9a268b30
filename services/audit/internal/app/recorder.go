package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/atrium-hq/atrium/platform/events"
)

// SiteOwners says which agency owns a site ("" for an unowned or unknown
// site): collections' SiteOwnerService.
type SiteOwners interface {
	SiteOwner(ctx context.Context, siteID string) (agencyID string, err error)
}

// ErrMalformed is an event that can never be kept (not an audit event):
// the consumer drops it instead of retrying it.
var ErrMalformed = errors.New("malformed audit event")

// Recorder keeps each audit event of the stream once.
type Recorder struct {
	Store Store
	Sites SiteOwners
}

// Handle keeps the event id published on subject. A site's event that
// names no agency (a key bound to the site alone, the operator's write)
// is given the agency that owns the site now, when the event is kept: the
// owner's trail shows the changes of its sites, and an event keeps the
// owner it had when it was made.
func (r *Recorder) Handle(ctx context.Context, id, subject string, payload []byte) (bool, error) {
	a, err := events.AuditRecorded.Parse(subject, payload)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if id == "" || a.At.IsZero() {
		return false, fmt.Errorf("%w: on %s without an id or a time", ErrMalformed, subject)
	}
	if a.SiteID != "" && a.AgencyID == "" && r.Sites != nil {
		if a.AgencyID, err = r.Sites.SiteOwner(ctx, a.SiteID); err != nil {
			return false, fmt.Errorf("owner of site %s: %w", a.SiteID, err)
		}
	}
	a.At = a.At.UTC().Truncate(Precision)
	return r.Store.Add(ctx, Event{ID: id, AuditEvent: a})
}
