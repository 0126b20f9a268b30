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

// indexDDL is the index part of the rows migration, from the catalog.
func indexDDL() string {
	var b strings.Builder
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
		for _, o := range orders {
			cols := "client_id, " + o + ", id"
			if o == "id" {
				cols = "client_id, id"
			}
			fmt.Fprintf(&b, "CREATE INDEX rows_%s_by_%s ON rows (%s) WHERE resource = '%s';\n", r.Name, o, cols, r.Name)
		}
		for _, f := range r.Filters() {
			if f == "id" {
				continue
			}
			for _, o := range append([]string{"created_at"}, special...) {
				fmt.Fprintf(&b, "CREATE INDEX rows_%s_%s_by_%s ON rows (client_id, %s, %s, id) WHERE resource = '%s';\n", r.Name, f, o, f, o, r.Name)
			}
		}
	}
	return b.String()
}
