// Package storetest is the contract every CRM store adapter must meet. Each
// adapter's test is one call to RunAll; a behaviour the memory store and the
// PostgreSQL store disagree on fails here rather than in production.
package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// Store is what the suite needs of an adapter. Transactions, events and
// the outbox are platform/txtest's contract, met once by the cores every
// adapter is built on; this suite checks the CRM domain.
type Store = app.Store

// RunAll runs the contract against fresh stores made by newStore.
func RunAll(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, Store)
	}{
		{"AgencyRoundTrip", testAgencyRoundTrip},
		{"MemberRules", testMemberRules},
		{"ClientLinks", testClientLinks},
		{"AgencyAndClientListsOrderAndPaging", testAgencyAndClientLists},
		{"KeyRoundTripAndRevoke", testKeyRoundTripAndRevoke},
		{"KeyListFilterAndOrder", testKeyListFilterAndOrder},
		{"ProspectListOrderPagingAndTenancy", testProspectList},
		{"ProspectUpdate", testProspectUpdate},
		{"DealOwnershipAndClose", testDealOwnershipAndClose},
		{"DealListOrderAndTenancy", testDealList},
		{"RollbackUndoesRowsAndListOrder", testRollback},
		{"ConcurrentUpdatesAreSerialised", testConcurrentUpdates},
	}
	tests = append(tests, peopleTests()...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

var base = time.Date(2026, 11, 1, 9, 30, 0, 123456000, time.UTC)

func id() string { return uuid.Must(uuid.NewV7()).String() }

func ctx(t *testing.T) context.Context { return t.Context() }

func mustTx(t *testing.T, s app.Store, fn func(app.Tx) error) {
	t.Helper()
	if err := s.InTx(ctx(t), fn); err != nil {
		t.Fatalf("InTx: %v", err)
	}
}

func newAgency(t *testing.T, s app.Store) app.Agency {
	t.Helper()
	a := app.Agency{ID: id(), Name: "Agency " + id()[:8], CreatedAt: base, UpdatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertAgency(ctx(t), a) })
	return a
}

func newMember(t *testing.T, s app.Store, agencyID string) app.Member {
	t.Helper()
	m := app.Member{ID: id(), AgencyID: agencyID, Name: "Ana", Email: id()[:8] + "@example.com", CreatedAt: base, UpdatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertMember(ctx(t), m) })
	return m
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func wantEqual(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func testAgencyRoundTrip(t *testing.T, s Store) {
	a := newAgency(t, s)
	got, err := s.Agency(ctx(t), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, a)
	_, err = s.Agency(ctx(t), id())
	wantErr(t, err, app.ErrNotFound)
	err = s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertAgency(ctx(t), a) })
	wantErr(t, err, app.ErrDuplicate)
}

func testMemberRules(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	m := newMember(t, s, a.ID)
	// Members are read only in transactions (a deal's owner is checked in
	// the deal's).
	var got app.Member
	mustTx(t, s, func(tx app.Tx) (err error) {
		got, err = tx.Member(ctx(t), a.ID, m.ID)
		return err
	})
	wantEqual(t, got, m)

	// Another agency's id never reaches the member.
	err := s.InTx(ctx(t), func(tx app.Tx) error {
		_, err := tx.Member(ctx(t), b.ID, m.ID)
		return err
	})
	wantErr(t, err, app.ErrNotFound)

	dup := m
	dup.ID = id()
	err = s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertMember(ctx(t), dup) })
	wantErr(t, err, app.ErrDuplicate)

	// The same email in another agency is a different person's seat.
	dup.AgencyID = b.ID
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertMember(ctx(t), dup) })

	orphan := app.Member{ID: id(), AgencyID: id(), Name: "X", Email: "x@example.com", CreatedAt: base, UpdatedAt: base}
	err = s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertMember(ctx(t), orphan) })
	wantErr(t, err, app.ErrNotFound)
}

func testClientLinks(t *testing.T, s Store) {
	a := newAgency(t, s)
	c := app.Client{ID: id(), Name: "Bakery", Domain: "bakery.example", Status: "active", CreatedAt: base, UpdatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertClient(ctx(t), c) })
	got, err := s.Client(ctx(t), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, c)

	link := app.ClientLink{AgencyID: a.ID, ClientID: c.ID, CreatedAt: base}
	if _, err := s.LinkedClient(ctx(t), a.ID, c.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("LinkedClient before the link: %v, want ErrNotFound", err)
	}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertLink(ctx(t), link) })
	if got, err := s.LinkedClient(ctx(t), a.ID, c.ID); err != nil {
		t.Fatal(err)
	} else {
		wantEqual(t, got, c)
	}
	if _, err := s.LinkedClient(ctx(t), newAgency(t, s).ID, c.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("LinkedClient under another agency: %v, want ErrNotFound", err)
	}
	// The links seen from the client: each agency once, sorted.
	b := newAgency(t, s)
	mustTx(t, s, func(tx app.Tx) error {
		return tx.InsertLink(ctx(t), app.ClientLink{AgencyID: b.ID, ClientID: c.ID, CreatedAt: base})
	})
	agencies, err := s.ClientAgencies(ctx(t), c.ID)
	if want := []string{a.ID, b.ID}; err != nil || !slices.Equal(agencies, slices.Sorted(slices.Values(want))) {
		t.Fatalf("ClientAgencies = %v, %v; want %v sorted", agencies, err, want)
	}
	mustTx(t, s, func(tx app.Tx) error { return tx.DeleteLink(ctx(t), b.ID, c.ID) })
	if agencies, err := s.ClientAgencies(ctx(t), id()); err != nil || agencies == nil || len(agencies) != 0 {
		t.Fatalf("ClientAgencies of an unknown client = %#v, %v; want an empty list", agencies, err)
	}
	mustTx(t, s, func(tx app.Tx) error {
		got, err := tx.Link(ctx(t), a.ID, c.ID)
		if err != nil {
			return err
		}
		wantEqual(t, got, link)
		return nil
	})
	err = s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertLink(ctx(t), link) })
	wantErr(t, err, app.ErrDuplicate)
	err = s.InTx(ctx(t), func(tx app.Tx) error {
		return tx.InsertLink(ctx(t), app.ClientLink{AgencyID: a.ID, ClientID: id(), CreatedAt: base})
	})
	wantErr(t, err, app.ErrNotFound)

	mustTx(t, s, func(tx app.Tx) error { return tx.DeleteLink(ctx(t), a.ID, c.ID) })
	err = s.InTx(ctx(t), func(tx app.Tx) error { _, err := tx.Link(ctx(t), a.ID, c.ID); return err })
	wantErr(t, err, app.ErrNotFound)
	err = s.InTx(ctx(t), func(tx app.Tx) error { return tx.DeleteLink(ctx(t), a.ID, c.ID) })
	wantErr(t, err, app.ErrNotFound)
	if _, err := s.LinkedClient(ctx(t), a.ID, c.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("LinkedClient after the unlink: %v, want ErrNotFound", err)
	}
}

func testAgencyAndClientLists(t *testing.T, s Store) {
	agencies := func(page pagination.Page) []string {
		t.Helper()
		as, err := s.Agencies(ctx(t), page)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	clients := func(f app.ClientFilter, page pagination.Page) []string {
		t.Helper()
		cs, err := s.Clients(ctx(t), f, page)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	wantEqual(t, agencies(pagination.Page{Limit: 10}), []string{})
	wantEqual(t, clients(app.ClientFilter{}, pagination.Page{Limit: 10}), []string{})

	// created_at: a0 at +0, a1 and a2 at +1m. Newest first, ties by id
	// descending (ids are time-ordered: the later insert first).
	var as []app.Agency
	for i := range 3 {
		a := app.Agency{ID: id(), Name: fmt.Sprint("Agency ", i), CreatedAt: base.Add(time.Duration(min(i, 1)) * time.Minute), UpdatedAt: base}
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertAgency(ctx(t), a) })
		as = append(as, a)
	}
	order := []string{as[2].ID, as[1].ID, as[0].ID}
	wantEqual(t, agencies(pagination.Page{Limit: 10}), order)
	wantEqual(t, agencies(pagination.Page{Limit: 1, Offset: 1}), order[1:2])
	wantEqual(t, agencies(pagination.Page{Limit: 10, Offset: 3}), []string{})
	got, err := s.Agencies(ctx(t), pagination.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, []app.Agency{as[2]})

	// c0 and c2 linked to a0, c1 to a1, c3 to none; created_at: c0 at +0,
	// c1 at +2m, c2 and c3 at +1m.
	var cs []app.Client
	for i, minutes := range []int{0, 2, 1, 1} {
		c := app.Client{ID: id(), Name: fmt.Sprint("Client ", i), Domain: "c.example", Status: "active",
			CreatedAt: base.Add(time.Duration(minutes) * time.Minute), UpdatedAt: base}
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertClient(ctx(t), c) })
		cs = append(cs, c)
	}
	for _, l := range [][2]int{{0, 0}, {0, 2}, {1, 1}} {
		mustTx(t, s, func(tx app.Tx) error {
			return tx.InsertLink(ctx(t), app.ClientLink{AgencyID: as[l[0]].ID, ClientID: cs[l[1]].ID, CreatedAt: base})
		})
	}
	all := []string{cs[1].ID, cs[3].ID, cs[2].ID, cs[0].ID}
	wantEqual(t, clients(app.ClientFilter{}, pagination.Page{Limit: 10}), all)
	wantEqual(t, clients(app.ClientFilter{}, pagination.Page{Limit: 2, Offset: 1}), all[1:3])
	wantEqual(t, clients(app.ClientFilter{AgencyID: as[0].ID}, pagination.Page{Limit: 10}), []string{cs[2].ID, cs[0].ID})
	wantEqual(t, clients(app.ClientFilter{AgencyID: as[0].ID}, pagination.Page{Limit: 1, Offset: 1}), []string{cs[0].ID})
	wantEqual(t, clients(app.ClientFilter{AgencyID: as[1].ID}, pagination.Page{Limit: 10}), []string{cs[1].ID})
	wantEqual(t, clients(app.ClientFilter{AgencyID: as[2].ID}, pagination.Page{Limit: 10}), []string{})
	wantEqual(t, clients(app.ClientFilter{AgencyID: id()}, pagination.Page{Limit: 10}), []string{})
	full, err := s.Clients(ctx(t), app.ClientFilter{AgencyID: as[1].ID}, pagination.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, full, []app.Client{cs[1]})
}

func digest(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}

func testKeyRoundTripAndRevoke(t *testing.T, s Store) {
	a := newAgency(t, s)
	exp := base.Add(24 * time.Hour)
	k := app.APIKey{
		ID: id(), Name: "reporting", Prefix: "atr_abcdefgh", SecretSHA256: digest("secret-1"),
		Scopes: []principal.Scope{principal.ScopeRead, principal.ScopeWrite}, SiteID: id(), AgencyID: a.ID,
		ExpiresAt: &exp, CreatedAt: base,
	}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertKey(ctx(t), k) })
	got, err := s.KeyBySecretSHA256(ctx(t), digest("secret-1"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, k)

	_, err = s.KeyBySecretSHA256(ctx(t), digest("secret-2"))
	wantErr(t, err, app.ErrNotFound)

	again := k
	again.ID = id()
	err = s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertKey(ctx(t), again) })
	wantErr(t, err, app.ErrDuplicate)

	siteOnly := app.APIKey{ID: id(), Name: "site", Prefix: "atr_zzzzzzzz", SecretSHA256: digest("secret-3"),
		Scopes: []principal.Scope{principal.ScopeRead}, SiteID: id(), CreatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertKey(ctx(t), siteOnly) })
	got, err = s.KeyBySecretSHA256(ctx(t), digest("secret-3"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, got, siteOnly)

	orphan := app.APIKey{ID: id(), Name: "o", Prefix: "atr_oooooooo", SecretSHA256: digest("secret-4"),
		Scopes: []principal.Scope{principal.ScopeRead}, AgencyID: id(), CreatedAt: base}
	err = s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertKey(ctx(t), orphan) })
	wantErr(t, err, app.ErrNotFound)

	revoked := base.Add(time.Hour)
	mustTx(t, s, func(tx app.Tx) error {
		k, err := tx.Key(ctx(t), k.ID)
		if err != nil {
			return err
		}
		k.RevokedAt = &revoked
		return tx.UpdateKey(ctx(t), k)
	})
	got, err = s.KeyBySecretSHA256(ctx(t), digest("secret-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.RevokedAt == nil || !got.RevokedAt.Equal(revoked) {
		t.Fatalf("RevokedAt = %v, want %v", got.RevokedAt, revoked)
	}
	err = s.InTx(ctx(t), func(tx app.Tx) error { return tx.UpdateKey(ctx(t), app.APIKey{ID: id()}) })
	wantErr(t, err, app.ErrNotFound)
}

func testKeyListFilterAndOrder(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	site := id()
	var want []string
	for i := range 5 {
		k := app.APIKey{ID: id(), Name: fmt.Sprint("k", i), Prefix: "atr_", SecretSHA256: digest(fmt.Sprint("list", i, a.ID)),
			Scopes: []principal.Scope{principal.ScopeRead}, AgencyID: a.ID, CreatedAt: base.Add(time.Duration(i%3) * time.Minute)}
		if i == 4 {
			k.SiteID = site
		}
		mustTx(t, s, func(tx app.Tx) error { return tx.InsertKey(ctx(t), k) })
		want = append(want, k.ID)
	}
	other := app.APIKey{ID: id(), Name: "other", Prefix: "atr_", SecretSHA256: digest("other" + b.ID),
		Scopes: []principal.Scope{principal.ScopeRead}, AgencyID: b.ID, CreatedAt: base}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertKey(ctx(t), other) })

	// created_at: k0,k3 at +0; k1,k4 at +1m; k2 at +2m. Newest first, ties by id
	// descending (ids are time-ordered, so the later insert first).
	order := []string{want[2], want[4], want[1], want[3], want[0]}
	got, err := s.Keys(ctx(t), app.KeyFilter{AgencyID: a.ID}, pagination.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, keyIDs(got), order)

	got, err = s.Keys(ctx(t), app.KeyFilter{AgencyID: a.ID}, pagination.Page{Limit: 2, Offset: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, keyIDs(got), order[2:4])

	got, err = s.Keys(ctx(t), app.KeyFilter{SiteID: site}, pagination.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, keyIDs(got), []string{want[4]})
}

func keyIDs(ks []app.APIKey) []string {
	out := []string{}
	for _, k := range ks {
		out = append(out, k.ID)
	}
	return out
}

func newProspect(t *testing.T, s app.Store, agencyID string, updated time.Time) app.Prospect {
	t.Helper()
	p := app.Prospect{ID: id(), AgencyID: agencyID, BusinessName: "Bakery", WebsiteURL: "https://bakery.example/",
		Domain: "bakery.example", Industry: "food", HealthScore: 71.5, LeadScore: 42, PipelineStage: "new",
		CreatedAt: base, UpdatedAt: updated}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertProspect(ctx(t), p) })
	return p
}

func prospectIDs(ps []app.Prospect) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

func testProspectList(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	p0 := newProspect(t, s, a.ID, base)
	p1 := newProspect(t, s, a.ID, base.Add(2*time.Minute))
	p2 := newProspect(t, s, a.ID, base.Add(time.Minute))
	p3 := newProspect(t, s, a.ID, base.Add(time.Minute)) // ties with p2; larger id
	newProspect(t, s, b.ID, base.Add(time.Hour))

	got, err := s.Prospects(ctx(t), a.ID, pagination.Page{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, prospectIDs(got), []string{p1.ID, p3.ID, p2.ID, p0.ID})
	wantEqual(t, got[0], p1)

	got, err = s.Prospects(ctx(t), a.ID, pagination.Page{Limit: 2, Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, prospectIDs(got), []string{p3.ID, p2.ID})

	got, err = s.Prospects(ctx(t), a.ID, pagination.Page{Limit: 2, Offset: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, prospectIDs(got), []string{})

	got, err = s.Prospects(ctx(t), id(), pagination.Page{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, prospectIDs(got), []string{})
}

func testProspectUpdate(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	p0 := newProspect(t, s, a.ID, base)
	p1 := newProspect(t, s, a.ID, base.Add(time.Minute))
	mustTx(t, s, func(tx app.Tx) error {
		p, err := tx.Prospect(ctx(t), a.ID, p0.ID)
		if err != nil {
			return err
		}
		p.PipelineStage = "qualified"
		p.LeadScore = 90
		p.UpdatedAt = base.Add(time.Hour)
		return tx.UpdateProspect(ctx(t), p)
	})
	got, err := s.Prospects(ctx(t), a.ID, pagination.Page{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, prospectIDs(got), []string{p0.ID, p1.ID})
	if got[0].PipelineStage != "qualified" || got[0].LeadScore != 90 || !got[0].CreatedAt.Equal(base) {
		t.Fatalf("updated prospect = %+v", got[0])
	}
	// Another agency's id never reaches the prospect, for reading or writing.
	err = s.InTx(ctx(t), func(tx app.Tx) error { _, err := tx.Prospect(ctx(t), b.ID, p0.ID); return err })
	wantErr(t, err, app.ErrNotFound)
	err = s.InTx(ctx(t), func(tx app.Tx) error {
		p := p0
		p.AgencyID = b.ID
		return tx.UpdateProspect(ctx(t), p)
	})
	wantErr(t, err, app.ErrNotFound)
}

func newDeal(t *testing.T, s app.Store, m app.Member, updated time.Time) app.Deal {
	t.Helper()
	d := app.Deal{ID: id(), AgencyID: m.AgencyID, OwnerMemberID: m.ID, Title: "Retainer", Stage: "proposal",
		Value: 1250.5, Currency: "EUR", ExpectedCloseDate: "2026-12-31", CreatedAt: base, UpdatedAt: updated}
	mustTx(t, s, func(tx app.Tx) error { return tx.InsertDeal(ctx(t), d) })
	return d
}

func testDealOwnershipAndClose(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	m, outsider := newMember(t, s, a.ID), newMember(t, s, b.ID)
	d := newDeal(t, s, m, base)
	mustTx(t, s, func(tx app.Tx) error {
		got, err := tx.Deal(ctx(t), a.ID, d.ID)
		if err != nil {
			return err
		}
		wantEqual(t, got, d)
		return nil
	})

	// A deal's owner must be a member of the deal's agency.
	bad := d
	bad.ID, bad.OwnerMemberID = id(), outsider.ID
	err := s.InTx(ctx(t), func(tx app.Tx) error { return tx.InsertDeal(ctx(t), bad) })
	wantErr(t, err, app.ErrNotFound)

	closed := base.Add(time.Hour)
	mustTx(t, s, func(tx app.Tx) error {
		got, err := tx.Deal(ctx(t), a.ID, d.ID)
		if err != nil {
			return err
		}
		got.Stage, got.ClosedAt, got.UpdatedAt = "won", &closed, closed
		return tx.UpdateDeal(ctx(t), got)
	})
	got, err := s.Deals(ctx(t), a.ID, pagination.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ClosedAt == nil || !got[0].ClosedAt.Equal(closed) || got[0].Stage != "won" {
		t.Fatalf("deals after close = %+v", got)
	}
	err = s.InTx(ctx(t), func(tx app.Tx) error { _, err := tx.Deal(ctx(t), b.ID, d.ID); return err })
	wantErr(t, err, app.ErrNotFound)
}

func testDealList(t *testing.T, s Store) {
	a, b := newAgency(t, s), newAgency(t, s)
	ma, mb := newMember(t, s, a.ID), newMember(t, s, b.ID)
	d0 := newDeal(t, s, ma, base)
	d1 := newDeal(t, s, ma, base.Add(time.Minute))
	d2 := newDeal(t, s, ma, base.Add(time.Minute))
	newDeal(t, s, mb, base.Add(time.Hour))
	got, err := s.Deals(ctx(t), a.ID, pagination.Page{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, d := range got {
		ids = append(ids, d.ID)
	}
	wantEqual(t, ids, []string{d2.ID, d1.ID, d0.ID})
	if got[2].ClosedAt != nil {
		t.Fatalf("open deal has closed_at %v", got[2].ClosedAt)
	}
}

var errAbort = errors.New("abort")

func testRollback(t *testing.T, s Store) {
	a := newAgency(t, s)
	m := newMember(t, s, a.ID)
	p := newProspect(t, s, a.ID, base)
	fresh := app.Agency{ID: id(), Name: "Gone", CreatedAt: base, UpdatedAt: base}
	err := s.InTx(ctx(t), func(tx app.Tx) error {
		if err := tx.InsertAgency(ctx(t), fresh); err != nil {
			return err
		}
		changed := p
		changed.BusinessName, changed.UpdatedAt = "Changed", base.Add(time.Hour)
		if err := tx.UpdateProspect(ctx(t), changed); err != nil {
			return err
		}
		d := app.Deal{ID: id(), AgencyID: a.ID, OwnerMemberID: m.ID, Title: "T", Stage: "lead", Currency: "USD",
			ExpectedCloseDate: "2027-01-01", CreatedAt: base, UpdatedAt: base}
		if err := tx.InsertDeal(ctx(t), d); err != nil {
			return err
		}
		return errAbort
	})
	wantErr(t, err, errAbort)
	_, err = s.Agency(ctx(t), fresh.ID)
	wantErr(t, err, app.ErrNotFound)
	ps, _ := s.Prospects(ctx(t), a.ID, pagination.Page{Limit: 10})
	wantEqual(t, ps, []app.Prospect{p})
	ds, _ := s.Deals(ctx(t), a.ID, pagination.Page{Limit: 10})
	if len(ds) != 0 {
		t.Fatalf("rolled-back deal is visible: %+v", ds)
	}
}

func testConcurrentUpdates(t *testing.T, s Store) {
	a := newAgency(t, s)
	p := newProspect(t, s, a.ID, base)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			errs <- s.InTx(ctx(t), func(tx app.Tx) error {
				cur, err := tx.Prospect(ctx(t), a.ID, p.ID)
				if err != nil {
					return err
				}
				cur.LeadScore++
				return tx.UpdateProspect(ctx(t), cur)
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Prospects(ctx(t), a.ID, pagination.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].LeadScore != p.LeadScore+n {
		t.Fatalf("lead_score after %d concurrent increments = %v, want %v (an update was lost)", n, got[0].LeadScore, p.LeadScore+n)
	}
}
