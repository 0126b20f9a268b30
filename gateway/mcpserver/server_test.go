package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/principal"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
)

// The tools a key sees follow its scopes and its binding, by the access
// rules of the routes they call; read-only mode takes the writes away
// from everyone.
func TestToolsFollowTheKey(t *testing.T) {
	withGetRun := func(names ...string) []string {
		if _, ok := principal.AccessOf(getRun); ok {
			names = append(names, "get_run")
		}
		slices.Sort(names)
		return names
	}
	agencyReads := []string{"list_datasets", "read_dataset", "list_clients", "list_actions", "list_prospects", "list_deals"}
	siteReads := []string{"list_collections", "list_items", "get_item", "list_assets", "get_asset"}
	key := func(site, agency string, scopes ...principal.Scope) principal.Principal {
		return principal.Principal{Kind: principal.KindKey, Subject: "k", Scopes: scopes, SiteID: site, AgencyID: agency}
	}
	read, write := principal.ScopeRead, principal.ScopeWrite
	for _, tc := range []struct {
		name     string
		p        principal.Principal
		readOnly bool
		want     []string
	}{
		{"an agency's read key", key("", "a", read), false, withGetRun(agencyReads...)},
		{"an agency's write key", key("", "a", read, write), false, withGetRun(append(agencyReads, "run_action")...)},
		{"a site's read key", key("s", "", read), false, sorted(siteReads)},
		{"a site's write key", key("s", "", read, write), false, sorted(append(siteReads, "create_item", "update_item", "update_asset"))},
		{"a write key bound to both", key("s", "a", read, write), false, withGetRun(append(append(agencyReads, siteReads...), "run_action", "create_item", "update_item", "update_asset")...)},
		{"a write key in read-only mode", key("s", "a", read, write), true, withGetRun(append(agencyReads, siteReads...)...)},
		{"the admin", principal.Principal{Kind: principal.KindAdmin, Subject: "admin"}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{ReadOnly: tc.readOnly})
			if err != nil {
				t.Fatal(err)
			}
			if got := sorted(s.ToolNames(tc.p)); !slices.Equal(got, tc.want) {
				t.Fatalf("tools = %v, want %v", got, tc.want)
			}
		})
	}
}

func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// TestNoToolForPeopleOrSessions: MCP clients call with API keys, which can
// never manage members or keys, read the audit trail, or use a person's
// session; no tool calls such a route, so none is offered that could only
// fail. The session routes open to anyone (sign in, invitations, password
// resets) are a browser's, not a tool's.
func TestNoToolForPeopleOrSessions(t *testing.T) {
	tools, err := buildTools()
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		a, ok := principal.AccessOf(tl.method)
		if !ok {
			continue // hidden: this build lacks its route
		}
		if principal.PeopleOnly(a.Resource) || a.Caller != accessv1.Caller_CALLER_TENANT ||
			strings.HasPrefix(tl.method, "/atrium.crm.v1.SessionService/") || strings.HasPrefix(tl.method, "/atrium.crm.v1.PeopleService/") {
			t.Errorf("tool %s calls %s (resource %q, caller %s), which no API key may call", tl.def.Name, tl.method, a.Resource, a.Caller)
		}
	}
}
