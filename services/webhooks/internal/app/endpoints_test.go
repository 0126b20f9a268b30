package app_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

var (
	site   = app.Tenant{Kind: eventtypes.Site, ID: uuid.NewString()}
	agency = app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
)

func newEndpoints(allowPrivate bool) (*app.Endpoints, *time.Time) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	return &app.Endpoints{
		Store: memory.New(memdb.New(nil)),
		Guard: &netguard.Guard{AllowPrivate: allowPrivate},
		Now:   func() time.Time { return now },
	}, &now
}

func ptr[T any](v T) *T { return &v }

// wantInvalid checks err is a 400 whose message says each of says.
func wantInvalid(t *testing.T, what string, err error, says ...string) {
	t.Helper()
	if apperr.KindOf(err) != apperr.KindInvalid {
		t.Errorf("%s = %v, want a 400", what, err)
		return
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s = %q, want it to say %q", what, err, s)
		}
	}
}

func TestCreate(t *testing.T) {
	u, _ := newEndpoints(false)
	e, err := u.Create(t.Context(), site, app.NewEndpoint{URL: "https://hooks.example.com/atrium", Events: []string{"item.published"}, Description: " rebuild the site "})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Enabled || e.Description != "rebuild the site" || !strings.HasPrefix(e.Secret.String(), "whsec_") || e.URL != "https://hooks.example.com/atrium" {
		t.Fatalf("created %+v: want enabled, the description trimmed, a whsec_ secret, the URL", e)
	}
	got, err := u.Get(t.Context(), site, e.ID)
	if err != nil || got.Secret.String() != e.Secret.String() {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	off, err := u.Create(t.Context(), agency, app.NewEndpoint{URL: "https://crm.example.com/in", Events: []string{"*"}, Enabled: ptr(false)})
	if err != nil || off.Enabled {
		t.Fatalf("created with enabled false: %+v, %v", off, err)
	}
}

// TestEventsAreKeptOnce: a name given twice is stored once, where it
// first appeared, on create and on update; the list keeps its order.
func TestEventsAreKeptOnce(t *testing.T) {
	u, _ := newEndpoints(false)
	e, err := u.Create(t.Context(), agency, app.NewEndpoint{URL: "https://hooks.example.com/",
		Events: []string{"deal.*", "action_run.*", "deal.*", "client.*", "action_run.*", "deal.*"}})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := u.Get(t.Context(), agency, e.ID)
	if want := []string{"deal.*", "action_run.*", "client.*"}; err != nil || !slices.Equal(e.Events, want) || !slices.Equal(stored.Events, want) {
		t.Fatalf("created with %v, stored %v (%v); want each name once in the order given: %v", e.Events, stored.Events, err, want)
	}
	got, err := u.Update(t.Context(), agency, e.ID, app.EndpointChange{Events: []string{"*", "*", "deal.*", "*"}})
	stored, _ = u.Get(t.Context(), agency, e.ID)
	if want := []string{"*", "deal.*"}; err != nil || !slices.Equal(got.Events, want) || !slices.Equal(stored.Events, want) {
		t.Fatalf("updated to %v, stored %v (%v); want %v", got.Events, stored.Events, err, want)
	}
}

// TestBadRegistrationsChangeNothing: every refused registration is a 400
// naming the field and what is allowed, and nothing is stored.
func TestBadRegistrationsChangeNothing(t *testing.T) {
	u, _ := newEndpoints(false)
	for _, tc := range []struct {
		name string
		in   app.NewEndpoint
		says []string
	}{
		{"plain http", app.NewEndpoint{URL: "http://hooks.example.com/", Events: []string{"*"}}, []string{"url must be an absolute https URL", "--allow-private-fetch"}},
		{"loopback", app.NewEndpoint{URL: "https://127.0.0.1/", Events: []string{"*"}}, []string{"url must be an absolute https URL on a public address", "private"}},
		{"legacy numeric", app.NewEndpoint{URL: "https://2130706433/", Events: []string{"*"}}, []string{"url must be"}},
		{"CGNAT", app.NewEndpoint{URL: "https://100.64.0.1/", Events: []string{"*"}}, []string{"private"}},
		{"relative", app.NewEndpoint{URL: "/hooks", Events: []string{"*"}}, []string{"url must be"}},
		{"no events", app.NewEndpoint{URL: "https://hooks.example.com/"}, []string{"events must list at least one"}},
		{"another owner's events", app.NewEndpoint{URL: "https://hooks.example.com/", Events: []string{"deal.created"}}, []string{`events[0] "deal.created"`, "allowed: item.created"}},
		{"description on two lines", app.NewEndpoint{URL: "https://hooks.example.com/", Events: []string{"*"}, Description: "a\nb"}, []string{"description"}},
		{"description too long", app.NewEndpoint{URL: "https://hooks.example.com/", Events: []string{"*"}, Description: strings.Repeat("x", 501)}, []string{"description", "500"}},
	} {
		_, err := u.Create(t.Context(), site, tc.in)
		wantInvalid(t, tc.name, err, tc.says...)
	}
	if eps, _ := u.List(t.Context(), site); len(eps) != 0 {
		t.Fatalf("%d endpoints stored after refused registrations", len(eps))
	}
}

func TestAllowPrivateLetsLocalReceiversIn(t *testing.T) {
	u, _ := newEndpoints(true)
	for _, url := range []string{"http://127.0.0.1:9000/hook", "http://localhost:8080/", "https://10.0.0.5/in"} {
		if _, err := u.Create(t.Context(), agency, app.NewEndpoint{URL: url, Events: []string{"*"}}); err != nil {
			t.Errorf("%s with --allow-private-fetch: %v", url, err)
		}
	}
}

func TestLimitPerTenant(t *testing.T) {
	u, _ := newEndpoints(false)
	for i := range app.MaxEndpoints {
		if _, err := u.Create(t.Context(), agency, app.NewEndpoint{URL: "https://hooks.example.com/" + string(rune('a'+i%26)), Events: []string{"*"}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := u.Create(t.Context(), agency, app.NewEndpoint{URL: "https://hooks.example.com/one-more", Events: []string{"*"}})
	if apperr.KindOf(err) != apperr.KindConflict || !strings.Contains(err.Error(), "50 webhooks") {
		t.Fatalf("endpoint %d = %v, want a 409 saying the limit", app.MaxEndpoints+1, err)
	}
	if _, err := u.Create(t.Context(), site, app.NewEndpoint{URL: "https://hooks.example.com/", Events: []string{"*"}}); err != nil {
		t.Fatalf("another tenant is not held by this one's limit: %v", err)
	}
}

// TestAnotherTenantsWebhookIsNotFound: every use case answers another
// tenant's id, and an id that is not one, with the same 404.
func TestAnotherTenantsWebhookIsNotFound(t *testing.T) {
	u, _ := newEndpoints(false)
	e, err := u.Create(t.Context(), agency, app.NewEndpoint{URL: "https://hooks.example.com/", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	other := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	for _, id := range []string{e.ID, "not-an-id"} {
		_, getErr := u.Get(t.Context(), other, id)
		_, updErr := u.Update(t.Context(), other, id, app.EndpointChange{URL: ptr("https://evil.example.com/")})
		_, rotErr := u.RotateSecret(t.Context(), other, id, 0)
		delErr := u.Delete(t.Context(), other, id)
		for name, err := range map[string]error{"get": getErr, "update": updErr, "rotate": rotErr, "delete": delErr} {
			if apperr.KindOf(err) != apperr.KindNotFound || !strings.Contains(err.Error(), `webhook "`+id+`" not found`) {
				t.Errorf("%s of %s by another tenant = %v, want 404 webhook %q not found", name, id, err, id)
			}
		}
	}
	got, err := u.Get(t.Context(), agency, e.ID)
	if err != nil || got.URL != e.URL || got.Secret.String() != e.Secret.String() {
		t.Fatalf("the owner's webhook after the attempts: %+v, %v; want it unchanged", got, err)
	}
}

func TestUpdate(t *testing.T) {
	u, now := newEndpoints(false)
	e, err := u.Create(t.Context(), agency, app.NewEndpoint{URL: "https://hooks.example.com/", Events: []string{"*"}, Description: "x"})
	if err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Minute)
	got, err := u.Update(t.Context(), agency, e.ID, app.EndpointChange{Events: []string{"action_run.*"}, Description: ptr(""), Enabled: ptr(false)})
	if err != nil || got.URL != e.URL || got.Events[0] != "action_run.*" || got.Description != "" || got.Enabled || !got.UpdatedAt.Equal(*now) {
		t.Fatalf("Update = %+v, %v", got, err)
	}
	_, err = u.Update(t.Context(), agency, e.ID, app.EndpointChange{URL: ptr("http://hooks.example.com/")})
	wantInvalid(t, "a PATCH to plain http", err, "https")
	if stored, _ := u.Get(t.Context(), agency, e.ID); stored.URL != e.URL {
		t.Fatalf("a refused PATCH changed the URL to %s", stored.URL)
	}
}

// TestRotation: the previous secret keeps signing beside the new one for
// the time asked, none when 0; out of range is a 400.
func TestRotation(t *testing.T) {
	u, now := newEndpoints(false)
	e, err := u.Create(t.Context(), site, app.NewEndpoint{URL: "https://hooks.example.com/", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := u.RotateSecret(t.Context(), site, e.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if r.Secret.String() == e.Secret.String() || r.Previous.String() != e.Secret.String() {
		t.Fatalf("after rotation: secret %s previous %s; want a new one and the old one", r.Secret, r.Previous)
	}
	if s := r.Secrets(now.Add(59 * time.Minute)); len(s) != 2 {
		t.Errorf("within the hour a delivery is signed with %d secrets, want 2", len(s))
	}
	if s := r.Secrets(now.Add(time.Hour)); len(s) != 1 || s[0].String() != r.Secret.String() {
		t.Errorf("after the hour: %d secrets, want the new one only", len(s))
	}
	r2, err := u.RotateSecret(t.Context(), site, e.ID, 0)
	if err != nil || len(r2.Secrets(*now)) != 1 || r2.Secret.String() == r.Secret.String() {
		t.Fatalf("rotation with no overlap = %v: want one new secret at once", err)
	}
	for _, d := range []time.Duration{-time.Second, 24*time.Hour + time.Second} {
		_, err := u.RotateSecret(t.Context(), site, e.ID, d)
		wantInvalid(t, "previous validity "+d.String(), err, "previous_expires_in_seconds must be an integer between 0 and 86400")
	}
}

func TestDelete(t *testing.T) {
	u, _ := newEndpoints(false)
	e, err := u.Create(t.Context(), site, app.NewEndpoint{URL: "https://hooks.example.com/", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Delete(t.Context(), site, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Get(t.Context(), site, e.ID); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("a deleted webhook = %v, want 404", err)
	}
}
