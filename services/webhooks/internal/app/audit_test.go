package app_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

// TestWritesAreAudited: each write to an endpoint puts one audit event in
// the outbox of its transaction, naming the key that made it, the
// endpoint's tenant and the fields set, and never a secret's value.
func TestWritesAreAudited(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	ctx := principal.NewContext(t.Context(), principal.Principal{Kind: principal.KindKey, Subject: "key-1", AgencyID: agency.ID})
	r := newReceiver(t, 200)
	e, err := w.eps.Create(ctx, agency, app.NewEndpoint{URL: r.URL + "/hook", Events: []string{"deal.*"}})
	if err != nil {
		t.Fatal(err)
	}
	desc := "the CRM's"
	if _, err := w.eps.Update(ctx, agency, e.ID, app.EndpointChange{Description: &desc}); err != nil {
		t.Fatal(err)
	}
	rotated, err := w.eps.RotateSecret(ctx, agency, e.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.del.Test(ctx, agency, e.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.eps.Delete(ctx, agency, e.ID); err != nil {
		t.Fatal(err)
	}
	// A refused write records nothing.
	if _, err := w.eps.Update(ctx, agency, uuid.NewString(), app.EndpointChange{Description: &desc}); err == nil {
		t.Fatal("an update of an unknown webhook succeeded")
	}
	w.published()
	var got []string
	for _, a := range w.audit {
		got = append(got, a.Action+"("+strings.Join(a.Fields, ",")+")")
		if a.ResourceID != e.ID || a.AgencyID != agency.ID || a.ActorKind != "key" || a.ActorID != "key-1" || a.Service != "webhooks" {
			t.Errorf("audit event %+v, want the webhook %s of agency %s by key-1", a, e.ID, agency.ID)
		}
		for _, secret := range []string{e.Secret.String(), rotated.Secret.String()} {
			if strings.Contains(strings.Join(a.Fields, " ")+a.UserAgent+a.ResourceID, secret) {
				t.Fatalf("an audit event carries a secret: %+v", a)
			}
		}
	}
	want := "webhook.created(description,enabled,events,secret,url) webhook.updated(description) webhook.secret_rotated(secret) webhook.tested() webhook.deleted()"
	if strings.Join(got, " ") != want {
		t.Fatalf("audit trail %s, want %s", strings.Join(got, " "), want)
	}
}
