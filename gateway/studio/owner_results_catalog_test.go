package studio

import (
	"slices"
	"testing"

	"github.com/atrium-hq/atrium/gateway/openapi"
)

// TestResultDatasetsAreTheCatalogs: the client results page shows every
// dataset of the data service's catalog (as the gateway embeds it,
// gateway/openapi/catalog/datasets.json) that holds a client's results,
// each under its heading, and names none the catalog lacks: a dataset the
// data service adds fails here until the page has a heading for it.
func TestResultDatasetsAreTheCatalogs(t *testing.T) {
	catalog, err := openapi.Datasets()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range catalog {
		// clients is the agency's list of its clients, not a client's results.
		if d.Name != "clients" {
			want = append(want, d.Name)
		}
	}
	var got []string
	for _, d := range resultDatasets {
		if d.Label == "" {
			t.Errorf("dataset %s has no heading", d.Name)
		}
		got = append(got, d.Name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the results page lists %v;\nthe data service's catalog has %v", got, want)
	}
}
