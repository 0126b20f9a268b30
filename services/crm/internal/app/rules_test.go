package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// The use cases' rules, on the memory store with a fixed clock. The
// end-to-end suite checks the same rules over HTTP; these name the rule
// that broke.

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// sites maps a site's id to the agency that owns it ("" for none).
type sites map[string]string

func (s sites) SiteOwner(_ context.Context, id string) (string, bool, error) {
	owner, ok := s[id]
	return owner, ok, nil
}

type fixture struct {
	dir      *app.Directory
	pipeline *app.Pipeline
	keys     *app.Keys
	agency   app.Agency
	member   app.Member
	// sites are the collections service's sites as the keys see them;
	// a test adds its own.
	sites sites
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	st := memory.New(memdb.New(nil))
	clock := app.Clock(func() time.Time { return now })
	f := fixture{dir: app.NewDirectory(app.DirectoryStoreOf(st), clock), pipeline: app.NewPipeline(app.PipelineStoreOf(st), clock),
		sites: sites{"0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b": ""}}
	f.keys = app.NewKeys(app.KeyStoreOf(st), f.sites, clock)
	var err error
	if f.agency, err = f.dir.CreateAgency(t.Context(), "Acme"); err != nil {
		t.Fatal(err)
	}
	people := app.NewPeople(app.PeopleStoreOf(st), f.keys, f.sites, clock, app.PeopleConfig{})
	if f.member, _, err = people.CreateMember(t.Context(), app.NewMember{AgencyID: f.agency.ID, Name: "Ana", Email: "ana@example.com"}); err != nil {
		t.Fatal(err)
	}
	return f
}

func wantInvalid(t *testing.T, err error, words ...string) {
	t.Helper()
	if apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("got %v, want InvalidArgument mentioning %q", err, words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

func (f fixture) deal(stage string) app.DealFields {
	return app.DealFields{OwnerMemberID: new(f.member.ID), Title: new("Retainer"), Stage: new(stage),
		Currency: new("usd"), ExpectedCloseDate: new("2026-06-30")}
}

func TestDealCloseFollowsTheStage(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()

	open, err := f.pipeline.CreateDeal(ctx, f.agency.ID, f.deal(""))
	if err != nil || open.Stage != "lead" || open.ClosedAt != nil || open.Currency != "USD" {
		t.Fatalf("open deal: %+v %v; want stage lead, no closed_at, USD", open, err)
	}
	won, err := f.pipeline.CreateDeal(ctx, f.agency.ID, f.deal("won"))
	if err != nil || won.ClosedAt == nil || !won.ClosedAt.Equal(now) {
		t.Fatalf("deal created as won: %+v %v; want closed_at now", won, err)
	}
	back := now.Add(-48 * time.Hour)
	backdated := f.deal("lost")
	backdated.ClosedAt = &back
	if d, err := f.pipeline.CreateDeal(ctx, f.agency.ID, backdated); err != nil || !d.ClosedAt.Equal(back) {
		t.Fatalf("backdated close: %+v %v", d, err)
	}

	openWithClose := f.deal("proposal")
	openWithClose.ClosedAt = &back
	_, err = f.pipeline.CreateDeal(ctx, f.agency.ID, openWithClose)
	wantInvalid(t, err, "closed_at may be set only", "won or lost")
	future := now.Add(time.Hour)
	futureClose := f.deal("won")
	futureClose.ClosedAt = &future
	_, err = f.pipeline.CreateDeal(ctx, f.agency.ID, futureClose)
	wantInvalid(t, err, "closed_at must not be in the future")

	closed, err := f.pipeline.UpdateDeal(ctx, f.agency.ID, open.ID, app.DealFields{Stage: new("won")})
	if err != nil || closed.ClosedAt == nil {
		t.Fatalf("moving to won: %+v %v; want closed_at set", closed, err)
	}
	reopened, err := f.pipeline.UpdateDeal(ctx, f.agency.ID, open.ID, app.DealFields{Stage: new("negotiation")})
	if err != nil || reopened.ClosedAt != nil {
		t.Fatalf("reopening: %+v %v; want closed_at cleared", reopened, err)
	}
	_, err = f.pipeline.UpdateDeal(ctx, f.agency.ID, open.ID, app.DealFields{ClosedAt: &back})
	wantInvalid(t, err, "closed_at cannot be set on update")
}

func TestDealRequiresItsFieldsAndAMemberOfTheAgency(t *testing.T) {
	f := newFixture(t)
	for _, field := range []string{"owner_member_id", "title", "currency", "expected_close_date"} {
		d := f.deal("lead")
		switch field {
		case "owner_member_id":
			d.OwnerMemberID = nil
		case "title":
			d.Title = new("")
		case "currency":
			d.Currency = nil
		case "expected_close_date":
			d.ExpectedCloseDate = nil
		}
		_, err := f.pipeline.CreateDeal(t.Context(), f.agency.ID, d)
		wantInvalid(t, err, field+" is required")
	}
	other := newFixture(t) // a member of another agency (in another store, so unknown here)
	d := f.deal("lead")
	d.OwnerMemberID = new(other.member.ID)
	_, err := f.pipeline.CreateDeal(t.Context(), f.agency.ID, d)
	wantInvalid(t, err, "is not a member of agency")
}

func TestKeyRules(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	key, secret, err := f.keys.Create(ctx, app.NewKey{Name: "reporting", Scopes: []string{"read"}, AgencyID: f.agency.ID})
	if err != nil || !strings.HasPrefix(secret, "atr_") || key.AgencyID != f.agency.ID {
		t.Fatalf("create: %+v %q %v", key, secret, err)
	}
	// A key for an agency and a site: the site must be the agency's; a
	// site alone may be unowned, as every site was before owners.
	const ownSite, otherSite, unownedSite = "0190b7a8-3c1e-7d2f-9a4b-00000000000a", "0190b7a8-3c1e-7d2f-9a4b-00000000000b", "0190b7a8-3c1e-7d2f-9a4b-00000000000c"
	f.sites[ownSite], f.sites[otherSite], f.sites[unownedSite] = f.agency.ID, "0190b7a8-3c1e-7d2f-9a4b-0000000000ff", ""
	if key, _, err := f.keys.Create(ctx, app.NewKey{Name: "site", Scopes: []string{"read"}, AgencyID: f.agency.ID, SiteID: ownSite}); err != nil || key.SiteID != ownSite {
		t.Fatalf("a key for the agency's own site: %+v %v", key, err)
	}
	if key, _, err := f.keys.Create(ctx, app.NewKey{Name: "site", Scopes: []string{"read"}, SiteID: unownedSite}); err != nil || key.SiteID != unownedSite {
		t.Fatalf("a key bound to an unowned site alone: %+v %v", key, err)
	}
	for name, tc := range map[string]struct {
		in    app.NewKey
		words []string
	}{
		"no binding":                    {app.NewKey{Name: "k", Scopes: []string{"read"}}, []string{"must be bound to a site_id", "agency_id"}},
		"unknown scope":                 {app.NewKey{Name: "k", Scopes: []string{"admin"}, AgencyID: f.agency.ID}, []string{"admin", "read", "write"}},
		"published_only without a site": {app.NewKey{Name: "k", Scopes: []string{"read"}, AgencyID: f.agency.ID, PublishedOnly: true}, []string{"published_only", "site_id"}},
		"no scope":                      {app.NewKey{Name: "k", AgencyID: f.agency.ID}, []string{"scopes"}},
		"past expiry":                   {app.NewKey{Name: "k", Scopes: []string{"read"}, AgencyID: f.agency.ID, ExpiresAt: new(now.Add(-time.Second))}, []string{"expires_at must be in the future"}},
		"no name":                       {app.NewKey{Scopes: []string{"read"}, AgencyID: f.agency.ID}, []string{"name is required"}},
		"malformed site":                {app.NewKey{Name: "k", Scopes: []string{"read"}, SiteID: "site-1"}, []string{"site_id"}},
		"unknown site":                  {app.NewKey{Name: "k", Scopes: []string{"read"}, SiteID: "0190b7a8-3c1e-7d2f-9a4b-000000000000"}, []string{"does not name an existing site"}},
		"unknown agency":                {app.NewKey{Name: "k", Scopes: []string{"read"}, AgencyID: "0190b7a8-3c1e-7d2f-9a4b-000000000000"}, []string{"does not name an existing agency"}},
		"another agency's site":         {app.NewKey{Name: "k", Scopes: []string{"read"}, AgencyID: f.agency.ID, SiteID: otherSite}, []string{otherSite, f.agency.ID, "another agency"}},
		"an unowned site":               {app.NewKey{Name: "k", Scopes: []string{"read"}, AgencyID: f.agency.ID, SiteID: unownedSite}, []string{unownedSite, f.agency.ID, "belongs to no agency", "PATCH /admin/v1/sites"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := f.keys.Create(ctx, tc.in)
			wantInvalid(t, err, tc.words...)
		})
	}
}
