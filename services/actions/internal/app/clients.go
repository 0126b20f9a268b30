package app

import (
	"context"

	"github.com/atrium-hq/atrium/platform/tenancy"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// ClientDirectory answers, at the time of each request, which clients an
// agency may reach and which agencies exist. The CRM owns both; the
// actions service asks it.
type ClientDirectory interface {
	// LinkedClient returns the client if it is linked to the agency;
	// ok is false for unknown and unlinked clients alike.
	LinkedClient(ctx context.Context, agencyID, clientID string) (c action.Client, ok bool, err error)
	AgencyExists(ctx context.Context, agencyID string) (bool, error)
}

// linkedClient asks the CRM, now, whether the client is linked to the
// agency, by the platform's linked-client check (its 403 and 503).
func (a *Actions) linkedClient(ctx context.Context, agencyID, clientID string) (action.Client, error) {
	_, c, err := tenancy.Linked(ctx, clientID, func(ctx context.Context, id string) (action.Client, bool, error) {
		return a.clients.LinkedClient(ctx, agencyID, id)
	})
	return c, err
}

// agency checks that the agency a path names exists, asking the CRM, and
// returns its canonical id.
func (a *Actions) agency(ctx context.Context, agencyID string) (string, error) {
	return tenancy.Existing(ctx, "agency", agencyID, a.clients.AgencyExists)
}
