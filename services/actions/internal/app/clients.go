package app

import (
	"context"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
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
// agency; unknown and unlinked clients get the same answer.
func (a *Actions) linkedClient(ctx context.Context, agencyID, clientID string) (action.Client, error) {
	id, err := uuid.Parse(clientID)
	if err != nil || len(clientID) != 36 {
		return action.Client{}, denied(clientID)
	}
	c, ok, err := a.clients.LinkedClient(ctx, agencyID, id.String())
	if err != nil {
		return action.Client{}, apperr.Unavailable(err, "cannot check the client's link to the agency now: the CRM service is unavailable; retry later")
	}
	if !ok {
		return action.Client{}, denied(clientID)
	}
	return c, nil
}

func denied(clientID string) error {
	return apperr.PermissionDenied("client %q is not linked to this key's agency, or does not exist; an administrator links clients to agencies", clientID)
}

// agency checks that an agency exists, asking the CRM.
func (a *Actions) agency(ctx context.Context, agencyID string) (string, error) {
	id, err := uuid.Parse(agencyID)
	if err != nil || len(agencyID) != 36 {
		return "", apperr.NotFound("agency %q not found", agencyID)
	}
	ok, err := a.clients.AgencyExists(ctx, id.String())
	if err != nil {
		return "", apperr.Unavailable(err, "cannot check the agency now: the CRM service is unavailable; retry later")
	}
	if !ok {
		return "", apperr.NotFound("agency %q not found", agencyID)
	}
	return id.String(), nil
}
