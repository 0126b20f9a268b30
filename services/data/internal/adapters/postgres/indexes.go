package postgres

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/services/data/internal/app"
)

// resourceName guards the resource literal written into statements (the
// partial indexes match only a literal); names come from the catalog.
var resourceName = regexp.MustCompile(`^[a-z_]{1,40}$`)

func resourceLiteral(name string) (string, error) {
	if _, ok := app.Lookup(name); !ok || !resourceName.MatchString(name) {
		return "", fmt.Errorf("unknown resource %q", name)
	}
	return "'" + name + "'", nil
}

// catalogIndexes are the indexes the catalog's reads need, one CREATE
// INDEX statement each: for each resource, one per order field it offers
// (client, value, id) and one per filter field and order (client, filter
// value, value, id), each partial on the resource.
func catalogIndexes() []string {
	var out []string
	for _, r := range app.Catalog {
		if r.Name == app.ClientsResource {
			continue
		}
		orders := r.Orders()
		var special []string // order fields beyond the three every resource has
		for _, o := range orders {
			if !slices.Contains([]string{"created_at", "updated_at", "id"}, o) {
				special = append(special, o)
			}
		}
		// A resource whose rows are an agency's is read per agency too.
		scope := "client_id"
		if r.ByAgency {
			scope = "client_id, agency_id"
		}
		for _, o := range orders {
			cols := scope + ", " + o + ", id"
			if o == "id" {
				cols = scope + ", id"
			}
			out = append(out, fmt.Sprintf("CREATE INDEX rows_%s_by_%s ON rows (%s) WHERE resource = '%s';", r.Name, o, cols, r.Name))
		}
		for _, f := range r.Filters() {
			if f == "id" {
				continue
			}
			for _, o := range append([]string{"created_at"}, special...) {
				out = append(out, fmt.Sprintf("CREATE INDEX rows_%s_%s_by_%s ON rows (%s, %s, %s, id) WHERE resource = '%s';", r.Name, f, o, scope, f, o, r.Name))
			}
		}
	}
	return out
}

// indexStatement reads a line of a migration that creates or drops an
// index, as the generated sections write them.
func indexStatement(line string) (name string, create, ok bool) {
	fields := strings.Fields(line)
	switch {
	case len(fields) >= 3 && fields[0] == "CREATE" && fields[1] == "INDEX":
		return fields[2], true, true
	case len(fields) == 3 && fields[0] == "DROP" && fields[1] == "INDEX":
		return strings.TrimSuffix(fields[2], ";"), false, true
	}
	return "", false, false
}

// builtIndexes applies the index lines of migration SQL to the indexes
// the migrations before it left: name → statement.
func builtIndexes(built map[string]string, sql string) {
	for _, line := range strings.Split(sql, "\n") {
		name, create, ok := indexStatement(line)
		switch {
		case !ok:
		case create:
			built[name] = strings.TrimSpace(line)
		default:
			delete(built, name)
		}
	}
}

// indexSection is the generated part of the newest migration: the indexes
// the catalog needs that the migrations before it do not leave (created
// again if their definition changed), after dropping those it no longer
// needs.
func indexSection(built map[string]string) string {
	want := catalogIndexes()
	needed := map[string]bool{}
	var b strings.Builder
	for _, stmt := range want {
		name, _, _ := indexStatement(stmt)
		needed[name] = built[name] == stmt
	}
	var stale []string
	for name := range built {
		if !needed[name] { // not wanted, or wanted as another statement
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	for _, name := range stale {
		fmt.Fprintf(&b, "DROP INDEX %s;\n", name)
	}
	for _, stmt := range want {
		if name, _, _ := indexStatement(stmt); !needed[name] {
			b.WriteString(stmt + "\n")
		}
	}
	return b.String()
}
