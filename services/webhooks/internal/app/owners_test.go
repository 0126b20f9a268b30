package app_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

// TestKeyBoundToBoth: a key bound to a site and an agency registers each
// webhook for the tenant its event types name, is told how to choose when
// they name both or neither, sees both tenants' webhooks, and finds each
// by id; a key bound to one only ever reaches that one's.
func TestKeyBoundToBoth(t *testing.T) {
	u, _ := newEndpoints(false)
	siteID, agencyID := uuid.NewString(), uuid.NewString()
	both := app.OwnersOf(siteID, agencyID)
	create := func(o app.Owners, events ...string) app.Endpoint {
		t.Helper()
		tenant, err := o.For(events)
		if err != nil {
			t.Fatal(err)
		}
		e, err := u.Create(t.Context(), tenant, app.NewEndpoint{URL: "https://hooks.example.com/" + events[0], Events: events})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	siteHook := create(both, "item.*", "webhook.disabled")
	agencyHook := create(both, "action_run.*")
	if siteHook.Tenant != (app.Tenant{Kind: eventtypes.Site, ID: siteID}) || agencyHook.Tenant != (app.Tenant{Kind: eventtypes.Agency, ID: agencyID}) {
		t.Fatalf("owners %+v and %+v; want the site's and the agency's", siteHook.Tenant, agencyHook.Tenant)
	}
	_, err := both.For([]string{"*"})
	wantInvalid(t, "a key bound to both subscribing to *", err, "does not say whose webhook this is", "item.*", "action_run.*")
	_, err = both.For([]string{"item.created", "deal.created"})
	wantInvalid(t, "a key bound to both mixing families", err, "mixes the site's and the agency's event types", "register one webhook for each")

	all, err := u.ListAll(t.Context(), both)
	if err != nil || len(all) != 2 || all[0].ID != agencyHook.ID || all[1].ID != siteHook.ID {
		t.Fatalf("ListAll = %v, %v; want both, newest first", all, err)
	}
	for _, e := range []app.Endpoint{siteHook, agencyHook} {
		if got := u.Owner(t.Context(), both, e.ID); got != e.Tenant {
			t.Errorf("Owner of %s = %+v, want %+v", e.ID, got, e.Tenant)
		}
	}
	siteOnly := app.OwnersOf(siteID, "")
	if got := u.Owner(t.Context(), siteOnly, agencyHook.ID); got != siteOnly[0] {
		t.Fatalf("a site key's owner of the agency's webhook = %+v; want its site (and so a 404)", got)
	}
	if _, err := u.Get(t.Context(), u.Owner(t.Context(), siteOnly, agencyHook.ID), agencyHook.ID); err == nil {
		t.Fatal("a site key read its agency's webhook")
	}
	if only, err := u.ListAll(t.Context(), siteOnly); err != nil || len(only) != 1 || only[0].ID != siteHook.ID {
		t.Fatalf("a site key lists %v, %v; want the site's one", only, err)
	}
}
