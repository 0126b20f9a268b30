package catalog

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// TestGridLimitsAreOneRule: at each edge of the grid limits, the catalog's
// validation of run_grid_search and the providers' check (GridProblem)
// agree: a run the catalog accepts is never refused by a provider for its
// values, and one past an edge is refused by both.
func TestGridLimitsAreOneRule(t *testing.T) {
	long := strings.Repeat("k", GridKeywordMaxLength)
	for _, tc := range []struct {
		keyword          string
		lat, lng, radius float64
		ok               bool
	}{
		{long, 0, 0, 5, true},
		{long + "k", 0, 0, 5, false},
		{"rye", GridMaxLatitude, 180, GridMaxRadiusKm, true},
		{"rye", -GridMaxLatitude, -180, GridMinRadiusKm, true},
		{"rye", GridMaxLatitude + 0.001, 0, 5, false},
		{"rye", 0, 0, GridMaxRadiusKm + 0.01, false},
		{"rye", 0, 0, GridMinRadiusKm - 0.01, false},
	} {
		_, err := ParseRequest(body("run_grid_search", "keyword", tc.keyword, "lat", tc.lat, "lng", tc.lng, "radius", tc.radius), &netguard.Guard{})
		problem := GridProblem(provider.GridQuery{Keyword: tc.keyword, Lat: tc.lat, Lng: tc.lng, RadiusKm: tc.radius}, tc.keyword)
		if (err == nil) != tc.ok || (problem == "") != tc.ok {
			t.Errorf("keyword of %d, lat %v, radius %v: catalog %v, providers %q; want accepted = %v",
				len(tc.keyword), tc.lat, tc.radius, err, problem, tc.ok)
		}
	}
	// The size run_grid_search asks for is one the providers take.
	if p := GridProblem(provider.GridQuery{Keyword: "rye", RadiusKm: 5, Size: GridSize}, "rye"); p != "" {
		t.Fatalf("the catalog's own grid size is refused: %s", p)
	}
}
