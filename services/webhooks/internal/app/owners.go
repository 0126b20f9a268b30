package app

import (
	"context"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

// Owners are the tenants a caller acts for: its key's site, its agency,
// or both (in that order). Each tenant has its own endpoints; a key bound
// to both manages both sets.
type Owners []Tenant

// OwnersOf returns the owners of a key bound to site and agency ("" for
// none).
func OwnersOf(site, agency string) Owners {
	var o Owners
	if site != "" {
		o = append(o, Tenant{Kind: eventtypes.Site, ID: site})
	}
	if agency != "" {
		o = append(o, Tenant{Kind: eventtypes.Agency, ID: agency})
	}
	return o
}

// For returns the tenant a new endpoint subscribing to events belongs to:
// the caller's only tenant, or, for a caller with two, the one whose event
// types the patterns name. A list that names both, or neither, is a 400
// that says how to choose.
func (o Owners) For(events []string) (Tenant, error) {
	switch len(o) {
	case 0:
		return Tenant{}, apperr.PermissionDenied("this key is bound to neither a site nor an agency, and webhooks belong to one of them")
	case 1:
		return o[0], nil
	}
	kinds := eventtypes.OwnersOf(events)
	if len(kinds) == 1 {
		i := slices.IndexFunc(o, func(t Tenant) bool { return t.Kind == kinds[0] })
		return o[i], nil
	}
	choose := "list the event types of one of them: the site's (" + eventtypes.Families(eventtypes.Site) + ") or the agency's (" +
		eventtypes.Families(eventtypes.Agency) + ")"
	if len(kinds) == 0 || slices.Contains(events, "*") {
		return Tenant{}, apperr.Invalid("this key is bound to both a site and an agency, and events %s does not say whose webhook this is: %s", value.Describe(strings.Join(events, ",")), choose)
	}
	return Tenant{}, apperr.Invalid("events mixes the site's and the agency's event types; a webhook receives one tenant's events, so register one webhook for each: %s", choose)
}

// Owner returns which of the caller's tenants owns endpoint id: the one
// whose endpoint it is, or the first when none is (the use case then
// answers 404, as for an id that names nothing).
func (u *Endpoints) Owner(ctx context.Context, o Owners, id string) Tenant {
	if len(o) == 0 {
		return Tenant{}
	}
	if len(o) > 1 {
		if cid, ok := value.ParseID(id); ok {
			for _, t := range o {
				if _, err := u.Store.Endpoint(ctx, t, cid); err == nil {
					return t
				}
			}
		}
	}
	return o[0]
}

// ListAll returns the endpoints of each of the caller's tenants, newest
// first.
func (u *Endpoints) ListAll(ctx context.Context, o Owners) ([]Endpoint, error) {
	var out []Endpoint
	for _, t := range o {
		eps, err := u.List(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, eps...)
	}
	if len(o) > 1 {
		slices.SortStableFunc(out, func(a, b Endpoint) int {
			if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
	}
	return out, nil
}
