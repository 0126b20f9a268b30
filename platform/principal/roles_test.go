package principal

import (
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/atrium-hq/atrium/platform/apperr"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
)

// TestRolesAsTheProtoDeclaresThem: the roles and what they grant are read
// from the proto, and say what docs/people.md promises.
func TestRolesAsTheProtoDeclaresThem(t *testing.T) {
	if got := Roles(); !slices.Equal(got, []Role{RoleOwner, RoleManager, RoleEditor, RoleViewer, RoleClient}) {
		t.Fatalf("roles %v", got)
	}
	var peopleOnly []Resource
	for _, r := range Resources() {
		if PeopleOnly(r) {
			peopleOnly = append(peopleOnly, r)
		}
		if !RoleOwner.Grants(r, ScopeRead) {
			t.Errorf("an owner cannot read %s", r)
		}
		for _, role := range Roles() {
			if role.Grants(r, ScopeWrite) && !role.Grants(r, ScopeRead) {
				t.Errorf("%s may change %s without reading it", role, r)
			}
		}
		if RoleViewer.Grants(r, ScopeWrite) || RoleClient.Grants(r, ScopeWrite) {
			t.Errorf("a viewer or a client may change %s", r)
		}
		if PeopleOnly(r) && (RoleManager.Grants(r, ScopeRead) || RoleViewer.Grants(r, ScopeRead) || RoleEditor.Grants(r, ScopeRead)) {
			t.Errorf("someone but an owner reads %s", r)
		}
	}
	if want := []Resource{"members", "keys", "audit"}; !slices.Equal(peopleOnly, want) {
		t.Errorf("people-only resources %v, want %v", peopleOnly, want)
	}
	if RoleOwner.Grants("audit", ScopeWrite) {
		t.Error("the audit trail is append-only, yet an owner may change it")
	}
	if _, err := ParseRole("admin"); apperr.KindOf(err) != apperr.KindInvalid || !strings.Contains(err.Error(), "owner, manager, editor, viewer, client") {
		t.Errorf("ParseRole(admin) = %v, want a refusal listing the roles", err)
	}
}

// TestEveryTenantRPCNamesAResource: a tenant rule without a resource is no
// rule (MethodAccess refuses it), so every tenant RPC must name one, or a
// person could call nothing and a key everything.
func TestEveryTenantRPCNamesAResource(t *testing.T) {
	n := 0
	for _, m := range allMethods(t) {
		a, ok := MethodAccess(m)
		if !ok {
			t.Errorf("%s: no valid access rule", m.FullName())
			continue
		}
		if a.Caller == accessv1.Caller_CALLER_TENANT {
			n++
			if a.Resource == "" || !slices.Contains(Resources(), a.Resource) {
				t.Errorf("%s: resource %q", m.FullName(), a.Resource)
			}
		}
	}
	if n < 30 {
		t.Fatalf("found %d tenant RPCs; the registry is not loaded?", n)
	}
}

// TestRolesOnRealRoutes: what each role may do on the API's own routes,
// as a member would try it.
func TestRolesOnRealRoutes(t *testing.T) {
	member := func(role Role) Principal {
		p := Principal{Kind: KindUser, Subject: "u1", AgencyID: "a", Role: role, MemberID: "m1", SessionID: "s1"}
		if role == RoleEditor {
			p.SiteID = "s"
		}
		if role == RoleClient {
			p.ClientID = "c1"
		}
		return p
	}
	rpc := func(name string) Access {
		a, ok := AccessOf(name)
		if !ok {
			t.Fatalf("%s declares no rule", name)
		}
		return a
	}
	const (
		createItem   = "/atrium.collections.v1.CollectionsService/CreateItem"
		listItems    = "/atrium.collections.v1.CollectionsService/ListItems"
		runAction    = "/atrium.actions.v1.ActionsService/RunAction"
		listRuns     = "/atrium.actions.v1.ActionsService/ListRuns"
		getRun       = "/atrium.actions.v1.ActionsService/GetRun"
		readDataset  = "/atrium.data.v1.DataService/ReadDataset"
		createHook   = "/atrium.webhooks.v1.WebhooksService/CreateWebhook"
		listHooks    = "/atrium.webhooks.v1.WebhooksService/ListWebhooks"
		listDeals    = "/atrium.crm.v1.CRMService/ListDeals"
		creditsRead  = "/atrium.actions.v1.ActionsService/GetCreditBalance"
		listenEvents = "/atrium.webhooks.v1.WebhooksService/ListenEvents"
	)
	allowed := map[Role][]string{
		RoleOwner:   {createItem, listItems, runAction, listRuns, getRun, readDataset, createHook, listHooks, listDeals, creditsRead, listenEvents},
		RoleManager: {listItems, runAction, listRuns, getRun, readDataset, createHook, listHooks, listDeals, creditsRead, listenEvents},
		RoleEditor:  {createItem, listItems},
		RoleViewer:  {listItems, listRuns, getRun, readDataset, listHooks, listDeals, creditsRead, listenEvents},
		RoleClient:  {listRuns, getRun, readDataset},
	}
	all := []string{createItem, listItems, runAction, listRuns, getRun, readDataset, createHook, listHooks, listDeals, creditsRead, listenEvents}
	for role, ok := range allowed {
		p := member(role)
		if role != RoleEditor {
			p.SiteID = "s" // the site binding is not what is judged here
		}
		for _, name := range all {
			err := Authorize(p, rpc(name))
			switch want := slices.Contains(ok, name); {
			case want && err != nil:
				t.Errorf("%s refused %s: %v", role, name, err)
			case !want && apperr.KindOf(err) != apperr.KindPermissionDenied:
				t.Errorf("%s on %s: %v, want PermissionDenied", role, name, err)
			case !want && !strings.Contains(err.Error(), "role"):
				t.Errorf("%s on %s: the refusal %q does not say it is the role", role, name, err)
			}
		}
	}
}

// TestClientMemberReadsOnlyTheirClient: a member with the client role
// names their own client, or is refused before the service reads anything.
func TestClientMemberReadsOnlyTheirClient(t *testing.T) {
	p := Principal{Kind: KindUser, Subject: "u", AgencyID: "a", Role: RoleClient, ClientID: "c1", MemberID: "m"}
	read, _ := AccessOf("/atrium.data.v1.DataService/ReadDataset")
	runs, _ := AccessOf("/atrium.actions.v1.ActionsService/ListRuns")
	if err := AuthorizeRequest(p, read, &datav1.ReadDatasetRequest{Resource: "keywords", ClientId: "c1"}); err != nil {
		t.Fatalf("own client refused: %v", err)
	}
	for _, c := range []struct {
		a   Access
		req any
	}{
		{read, &datav1.ReadDatasetRequest{Resource: "keywords", ClientId: "c2"}},
		{read, &datav1.ReadDatasetRequest{Resource: "clients"}},
		{runs, &actionsv1.ListRunsRequest{}},
	} {
		err := AuthorizeRequest(p, c.a, c.req)
		if apperr.KindOf(err) != apperr.KindPermissionDenied || !strings.Contains(err.Error(), `client_id must be "c1"`) {
			t.Errorf("%s with %v: %v, want a refusal naming client_id", c.a.Name, c.req, err)
		}
	}
	// Everyone else is not judged by the field.
	p.ClientID, p.Role = "", RoleViewer
	if err := AuthorizeRequest(p, read, &datav1.ReadDatasetRequest{ClientId: "c2"}); err != nil {
		t.Fatalf("a viewer refused another client: %v", err)
	}
}

// TestKeysNeverReachPeopleOnlyResources: whatever its scopes, a key cannot
// manage members or keys, or read the audit trail; an owner can.
func TestKeysNeverReachPeopleOnlyResources(t *testing.T) {
	key := Principal{Kind: KindKey, Subject: "k", AgencyID: "a", Scopes: []Scope{ScopeRead, ScopeWrite}}
	owner := Principal{Kind: KindUser, Subject: "u", AgencyID: "a", Role: RoleOwner, MemberID: "m"}
	for _, r := range []Resource{"members", "keys", "audit"} {
		a := Access{Caller: accessv1.Caller_CALLER_TENANT, Scope: ScopeRead, Binding: BindingAgency, Resource: r}
		err := Authorize(key, a)
		if apperr.KindOf(err) != apperr.KindPermissionDenied || !strings.Contains(err.Error(), "only people may") {
			t.Errorf("key reading %s: %v, want a refusal saying only people may", r, err)
		}
		if err := Authorize(owner, a); err != nil {
			t.Errorf("owner reading %s: %v", r, err)
		}
	}
	// A person without a valid role or agency is no tenant caller.
	for _, p := range []Principal{
		{Kind: KindUser, Subject: "u", AgencyID: "a"},
		{Kind: KindUser, Subject: "u", Role: RoleOwner},
	} {
		a, _ := AccessOf("/atrium.collections.v1.CollectionsService/ListItems")
		p.SiteID = "s"
		if err := Authorize(p, a); apperr.KindOf(err) != apperr.KindPermissionDenied {
			t.Errorf("%+v admitted: %v", p, err)
		}
	}
}

// allMethods is every RPC of Atrium's services linked into this test.
func allMethods(t *testing.T) []protoreflect.MethodDescriptor {
	t.Helper()
	var out []protoreflect.MethodDescriptor
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "atrium.") {
			return true
		}
		for i := range fd.Services().Len() {
			ms := fd.Services().Get(i).Methods()
			for j := range ms.Len() {
				out = append(out, ms.Get(j))
			}
		}
		return true
	})
	return out
}

// TestPeopleDocTable: docs/people.md's roles table is the proto's grants.
func TestPeopleDocTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/people.md")
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- roles table: generated from proto/atrium/access/v1/access.proto -->\n", "<!-- end of roles table -->"
	_, rest, ok1 := strings.Cut(string(doc), start)
	table, _, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("docs/people.md has no roles table between %q and %q", start, end)
	}
	var b strings.Builder
	b.WriteString("| Resource |")
	for _, role := range Roles() {
		b.WriteString(" " + string(role) + " |")
	}
	b.WriteString(" API key |\n|---|")
	for range Roles() {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, r := range Resources() {
		b.WriteString("| " + string(r) + " |")
		for _, role := range Roles() {
			var s []string
			for _, sc := range Scopes {
				if role.Grants(r, sc) {
					s = append(s, string(sc))
				}
			}
			if len(s) == 0 {
				s = []string{"—"}
			}
			b.WriteString(" " + strings.Join(s, ", ") + " |")
		}
		if PeopleOnly(r) {
			b.WriteString(" never |\n")
		} else {
			b.WriteString(" its scopes |\n")
		}
	}
	if table != b.String() {
		t.Fatalf("docs/people.md's roles table differs from the proto's grants; it should read:\n%s", b.String())
	}
}
