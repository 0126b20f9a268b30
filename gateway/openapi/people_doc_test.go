package openapi

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/principal"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
)

// peopleRoutesTable is docs/people.md's table of every public route and
// who may call it, computed from the access rules the routes' RPCs declare
// (the rules the judge reads), so that the page cannot drift from them.
func peopleRoutesTable(t *testing.T) string {
	t.Helper()
	doc := loadDoc(t, Public)
	type row struct{ path, method, cells string }
	var rows []row
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			id, _ := op.(map[string]any)["operationId"].(string)
			md := methodOf(id)
			if md == nil {
				continue
			}
			a, ok := principal.MethodAccess(md)
			if !ok {
				t.Fatalf("%s declares no access rule", md.FullName())
			}
			var cells []string
			switch a.Caller {
			case accessv1.Caller_CALLER_ANYONE:
				for range principal.Roles() {
					cells = append(cells, "anyone")
				}
				cells = append(cells, "anyone")
			case accessv1.Caller_CALLER_PERSON:
				for range principal.Roles() {
					cells = append(cells, "✓")
				}
				cells = append(cells, "—")
			case accessv1.Caller_CALLER_TENANT:
				for _, role := range principal.Roles() {
					cell := "—"
					switch {
					case role == principal.RoleClient && !a.OpenToClient:
					case !role.Grants(a.Resource, a.Scope):
					case role == principal.RoleClient:
						cell = "own client"
					case role == principal.RoleEditor && a.Resource == "content" && a.Scope == principal.ScopeWrite:
						cell = "its sites"
					default:
						cell = "✓"
					}
					cells = append(cells, cell)
				}
				key := string(a.Scope)
				switch {
				case principal.PeopleOnly(a.Resource):
					key = "never"
				case a.OpenToPublishedOnly:
					key += ", published-only too"
				}
				cells = append(cells, key)
			default:
				t.Fatalf("%s %s: caller %s on the public listener", strings.ToUpper(method), path, a.Caller)
			}
			rows = append(rows, row{path, strings.ToUpper(method), strings.Join(cells, " | ")})
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.method, b.method)
	})
	var b strings.Builder
	b.WriteString("| Route |")
	for _, role := range principal.Roles() {
		b.WriteString(" " + string(role) + " |")
	}
	b.WriteString(" API key |\n|---|")
	for range principal.Roles() {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, r := range rows {
		b.WriteString("| `" + r.method + " " + r.path + "` | " + r.cells + " |\n")
	}
	return b.String()
}

// TestPeopleRoutesTable: docs/people.md lists every public route with the
// roles that may call it, as the proto's access rules and the roles'
// grants decide. ATRIUM_UPDATE_DOCS=1 rewrites the table.
func TestPeopleRoutesTable(t *testing.T) {
	const file = "../../docs/people.md"
	const start, end = "<!-- routes table: generated from the access rules; ATRIUM_UPDATE_DOCS=1 go test ./openapi -run TestPeopleRoutesTable rewrites it -->\n", "<!-- end of routes table -->"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(raw), start)
	table, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("docs/people.md has no routes table between %q and %q", start, end)
	}
	want := peopleRoutesTable(t)
	if table == want {
		return
	}
	if os.Getenv("ATRIUM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(file, []byte(before+start+want+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("docs/people.md's routes table differs from the access rules; run ATRIUM_UPDATE_DOCS=1 go test ./openapi -run TestPeopleRoutesTable in gateway/. It should read:\n%s", want)
}
