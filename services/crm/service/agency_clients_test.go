package service

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// TestAgencyClientsOverGRPC: GET /api/v1/clients lists the clients linked
// to the caller's agency, by name, and never another agency's: the agency
// is the principal's, and the request names none. Members read it when
// their role grants the clients; an editor or a client member is refused,
// and so is a key bound to no agency.
func TestAgencyClientsOverGRPC(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	conn, err := rpc.Dial(c.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	list := crmv1.NewAgencyClientsServiceClient(conn)

	agency := func(name string) string {
		t.Helper()
		a, err := c.admin.CreateAgency(c.as(ctx, admin), &crmv1.CreateAgencyRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return a.Agency.Id
	}
	client := func(name, domain string, agencies ...string) string {
		t.Helper()
		cl, err := c.admin.CreateClient(c.as(ctx, admin), &crmv1.CreateClientRequest{Name: name, Domain: domain})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range agencies {
			if _, err := c.admin.LinkClient(c.as(ctx, admin), &crmv1.LinkClientRequest{AgencyId: a, ClientId: cl.Client.Id}); err != nil {
				t.Fatal(err)
			}
		}
		return cl.Client.Id
	}
	a, b, none := agency("A"), agency("B"), agency("Without clients")
	// Made out of name order, so that the list's order is its own.
	zed := client("Zed Bakery", "zed.example", a)
	shared := client("Bakery Shared", "shared.example", a, b)
	lower := client("alpha florist", "alpha.example", a)
	onlyB := client("B's own", "bown.example", b)
	client("Linked to nobody", "nobody.example")

	names := func(p principal.Principal) ([]string, []string, error) {
		t.Helper()
		got, err := list.ListClients(c.as(ctx, p), &crmv1.AgencyClientsServiceListClientsRequest{})
		var ids, ns []string
		for _, cl := range got.GetClients() {
			ids, ns = append(ids, cl.Id), append(ns, cl.Name)
		}
		return ids, ns, err
	}
	ids, ns, err := names(keyOf(a, principal.ScopeRead))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{shared, zed, lower}; !slices.Equal(ids, want) {
		t.Fatalf("agency A's clients = %v %q, want Bakery Shared, Zed Bakery, alpha florist (by name)", ids, ns)
	}
	if ids, ns, err = names(keyOf(b, principal.ScopeRead)); err != nil || !slices.Equal(ids, []string{onlyB, shared}) {
		t.Fatalf("agency B's clients = %v %q (%v), want only its own two", ids, ns, err)
	}
	if ids, _, err = names(keyOf(none, principal.ScopeRead)); err != nil || len(ids) != 0 {
		t.Fatalf("an agency without clients lists %v (%v)", ids, err)
	}

	member := func(role principal.Role) principal.Principal {
		p := principal.Principal{Kind: principal.KindUser, Subject: "u-" + string(role), AgencyID: a, Role: role, MemberID: "m-" + string(role)}
		if role == principal.RoleClient {
			p.ClientID = zed
		}
		return p
	}
	for _, role := range []principal.Role{principal.RoleOwner, principal.RoleManager, principal.RoleViewer} {
		if ids, _, err := names(member(role)); err != nil || len(ids) != 3 {
			t.Fatalf("a member with the %s role lists %v (%v), want agency A's three clients", role, ids, err)
		}
	}
	for _, role := range []principal.Role{principal.RoleEditor, principal.RoleClient} {
		_, _, err := names(member(role))
		wantCode(t, err, codes.PermissionDenied, string(role)+" role")
	}
	_, _, err = names(principal.Principal{Kind: principal.KindKey, Subject: "k", SiteID: "0b9d6f0e-8d5e-4c1a-9a6e-2f1f3c4d5e6f", Scopes: []principal.Scope{principal.ScopeRead}})
	wantCode(t, err, codes.PermissionDenied, "not bound to an agency")
	_, _, err = names(admin)
	wantCode(t, err, codes.PermissionDenied, "API key")
}
