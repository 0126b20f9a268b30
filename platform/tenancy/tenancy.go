// Package tenancy holds the checks that keep one tenant's request from
// reaching another's data when the answer lives in another service: a
// client must be linked to the caller's agency, an object named in a path
// must exist. The CRM owns agencies, clients and their links; the services
// that ask it (data, actions) pass its lookup in, and every one of them
// answers with the same ids, statuses and texts.
package tenancy

import (
	"context"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
)

// Linked checks, now, that clientID names a client linked to the caller's
// agency, asking lookup (the CRM) with the canonical id. It returns that
// id and what lookup found. An id that is not a UUID, an unknown client
// and an unlinked one all get the same 403 (Denied), so a caller learns
// nothing about other tenants' clients; a lookup that fails is a 503.
func Linked[T any](ctx context.Context, clientID string, lookup func(ctx context.Context, clientID string) (T, bool, error)) (string, T, error) {
	var none T
	id, ok := value.ParseID(clientID)
	if !ok {
		return "", none, Denied(clientID)
	}
	found, ok, err := lookup(ctx, id)
	if err != nil {
		return "", none, apperr.Unavailable(err, "cannot check the client's link to the agency now: the CRM service is unavailable; retry later")
	}
	if !ok {
		return "", none, Denied(clientID)
	}
	return id, found, nil
}

// Denied is the 403 of a client the caller's agency may not reach.
func Denied(clientID string) error {
	return apperr.PermissionDenied("client %q is not linked to this key's agency, or does not exist; an administrator links clients to agencies", clientID)
}

// Existing checks that id, taken from a request path, names a what
// ("client", "agency") that exists now, asking exists (the CRM) with the
// canonical id, which it returns. An id that is not a UUID and one that
// names nothing are the same 404; a lookup that fails is a 503.
func Existing(ctx context.Context, what, id string, exists func(ctx context.Context, id string) (bool, error)) (string, error) {
	canonical, err := value.PathID(what, id)
	if err != nil {
		return "", err
	}
	ok, err := exists(ctx, canonical)
	if err != nil {
		return "", apperr.Unavailable(err, "cannot check the %s now: the CRM service is unavailable; retry later", what)
	}
	if !ok {
		return "", value.NotFound(what, id)
	}
	return canonical, nil
}
