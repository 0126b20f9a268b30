package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// agencies is the CRM as the site use cases see it: agency ids to the
// clients linked to each; down makes every answer an error.
type agencies struct {
	linked map[string][]string
	down   bool
	calls  int
}

func (a *agencies) AgencyExists(_ context.Context, id string) (bool, error) {
	a.calls++
	if a.down {
		return false, errors.New("connection refused")
	}
	_, ok := a.linked[id]
	return ok, nil
}

func (a *agencies) ClientLinked(_ context.Context, agency, client string) (bool, error) {
	a.calls++
	if a.down {
		return false, errors.New("connection refused")
	}
	for _, c := range a.linked[agency] {
		if c == client {
			return true, nil
		}
	}
	return false, nil
}

const (
	agencyA = "0190b7a8-3c1e-7d2f-9a4b-00000000000a"
	agencyB = "0190b7a8-3c1e-7d2f-9a4b-00000000000b"
	clientA = "0190b7a8-3c1e-7d2f-9a4b-0000000000c1"
	clientB = "0190b7a8-3c1e-7d2f-9a4b-0000000000c2"
	unknown = "0190b7a8-3c1e-7d2f-9a4b-0000000000ff"
)

func wantKindSays(t *testing.T, err error, kind apperr.Kind, words ...string) {
	t.Helper()
	if apperr.KindOf(err) != kind {
		t.Fatalf("error %v, want kind %v mentioning %q", err, kind, words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

// TestSiteOwnerRules: an owner is checked with the CRM on create and on
// change, the owner a change ends with is checked whole, a refused
// request writes nothing, and each write announces the owner it leaves.
func TestSiteOwnerRules(t *testing.T) {
	db := memdb.New(nil)
	st := memory.New(db)
	crm := &agencies{linked: map[string][]string{agencyA: {clientA}, agencyB: {clientB}}}
	sites := app.NewSites(app.SiteStoreOf(st), crm, app.Clock(time.Now))
	// An operator, as through the admin API.
	ctx := principal.NewContext(t.Context(), principal.Principal{Kind: principal.KindAdmin, Subject: "admin"})

	// Ids arrive in any case; the site keeps them canonical.
	s, err := sites.Create(ctx, app.NewSite{Name: "Bakery", AgencyID: strings.ToUpper(agencyA), ClientID: clientA})
	if err != nil || s.AgencyID != agencyA || s.ClientID != clientA {
		t.Fatalf("create with an owner: %+v %v", s, err)
	}
	loose, err := sites.Create(ctx, app.NewSite{Name: "Loose"})
	if err != nil || loose.AgencyID != "" || loose.ClientID != "" {
		t.Fatalf("create without an owner: %+v %v", loose, err)
	}
	calls := crm.calls
	if _, err := sites.Create(ctx, app.NewSite{Name: "X", ClientID: clientA}); err == nil {
		t.Fatal("a client without an agency was accepted")
	} else {
		wantKindSays(t, err, apperr.KindInvalid, "client_id needs agency_id")
	}
	if crm.calls != calls {
		t.Fatal("the CRM was asked about an owner refused on its face")
	}
	_, err = sites.Create(ctx, app.NewSite{Name: "X", AgencyID: unknown})
	wantKindSays(t, err, apperr.KindInvalid, "agency_id", unknown)
	_, err = sites.Create(ctx, app.NewSite{Name: "X", AgencyID: agencyA, ClientID: clientB})
	wantKindSays(t, err, apperr.KindInvalid, "client_id", clientB, agencyA)
	_, err = sites.Create(ctx, app.NewSite{Name: "X", AgencyID: "acme"})
	wantKindSays(t, err, apperr.KindInvalid, "agency_id must be a UUID")

	str := func(v string) *string { return &v }
	// Moving to B keeps client A, which B does not have: refused, and
	// the message says how to remove it.
	_, err = sites.Update(ctx, s.ID, app.SiteChange{AgencyID: str(agencyB)})
	wantKindSays(t, err, apperr.KindInvalid, "client_id", clientA, agencyB, "remove")
	_, err = sites.Update(ctx, loose.ID, app.SiteChange{ClientID: str(clientA)})
	wantKindSays(t, err, apperr.KindInvalid, "client_id needs agency_id")
	_, err = sites.Update(ctx, unknown, app.SiteChange{AgencyID: str(agencyA)})
	wantKindSays(t, err, apperr.KindNotFound, unknown)
	crm.down = true
	_, err = sites.Update(ctx, loose.ID, app.SiteChange{AgencyID: str(agencyA)})
	wantKindSays(t, err, apperr.KindUnavailable, "agency_id", "retry")
	crm.down = false
	if got, _ := sites.Get(ctx, s.ID); got.AgencyID != agencyA || got.ClientID != clientA || !got.UpdatedAt.Equal(s.UpdatedAt) {
		t.Fatalf("after refused changes the site is %+v", got)
	}
	drain(t, db) // the creates' events

	// A rename alone asks the CRM nothing.
	calls = crm.calls
	if got, err := sites.Update(ctx, s.ID, app.SiteChange{Name: str("Bakery blog")}); err != nil || got.Name != "Bakery blog" || got.AgencyID != agencyA {
		t.Fatalf("rename: %+v %v", got, err)
	}
	if crm.calls != calls {
		t.Fatal("a rename asked the CRM")
	}
	moved, err := sites.Update(ctx, s.ID, app.SiteChange{AgencyID: str(agencyB), ClientID: str(clientB)})
	if err != nil || moved.AgencyID != agencyB || moved.ClientID != clientB {
		t.Fatalf("move: %+v %v", moved, err)
	}
	cleared, err := sites.Update(ctx, s.ID, app.SiteChange{AgencyID: str("")})
	if err != nil || cleared.AgencyID != "" || cleared.ClientID != "" {
		t.Fatalf("clearing the agency: %+v %v, want no agency and no client", cleared, err)
	}
	listed, err := sites.List(ctx, app.SiteFilter{AgencyID: agencyB}, nil, nil)
	if err != nil || len(listed) != 0 {
		t.Fatalf("sites of B after the clear: %+v %v", listed, err)
	}
	// Each write has its audit record beside its event, naming the site,
	// its owner then and the fields written (an operator is bound to no
	// tenant, so the record names them).
	audit := func(agency, fields string) string {
		owner := ""
		if agency != "" {
			owner = `"agency_id":"` + agency + `",`
		}
		return "atrium.audit.collections.recorded " + `{"action":"site.updated","actor_id":"admin","actor_kind":"admin",` + owner +
			`"fields":[` + fields + `],"resource_id":"` + s.ID + `","resource_type":"site","service":"collections","site_id":"` + s.ID + `"}`
	}
	want := []string{
		"atrium.collections.site.updated " + `{"agency_id":"` + agencyA + `","client_id":"` + clientA + `","id":"` + s.ID + `"}`,
		audit(agencyA, `"name"`),
		"atrium.collections.site.updated " + `{"agency_id":"` + agencyB + `","client_id":"` + clientB + `","id":"` + s.ID + `"}`,
		audit(agencyB, `"agency_id","client_id"`),
		"atrium.collections.site.updated " + `{"id":"` + s.ID + `"}`,
		audit("", `"agency_id","client_id"`),
	}
	if got := drain(t, db); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// drain empties the outbox and returns each event's subject and payload
// without its time (keys sorted).
func drain(t *testing.T, db *memdb.DB) []string {
	t.Helper()
	var out []string
	err := db.Outbox().Claim(t.Context(), 1000, func(_ context.Context, es []outbox.Event) int {
		for _, e := range es {
			var p map[string]any
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			delete(p, "at")
			b, _ := json.Marshal(p)
			out = append(out, e.Subject+" "+string(b))
		}
		return len(es)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
