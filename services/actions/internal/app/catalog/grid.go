package catalog

import (
	"fmt"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The limits of a grid search, declared once. run_grid_search's fields are
// declared with them (so validation, discovery and the input schemas
// follow), and every SEO adapter checks a GridQuery with GridProblem,
// so that the catalog never accepts what a provider then refuses.
const (
	GridKeywordMaxLength = 100
	GridMaxLatitude      = 85
	GridMinRadiusKm      = 0.5
	GridMaxRadiusKm      = 50
	// GridSize is the points per side of the grid run_grid_search asks
	// for; a provider takes any odd size from GridMinSize to GridMaxSize
	// (a grid needs a centre and a point on each side of it).
	GridSize    = 5
	GridMinSize = 3
	GridMaxSize = 9
)

// GridProblem says what is wrong with a grid question, or "" when it is
// within the limits: keyword is the question's keyword as the provider
// normalised it, and a Size of 0 means GridSize.
func GridProblem(q provider.GridQuery, keyword string) string {
	size := q.Size
	if size == 0 {
		size = GridSize
	}
	switch n := utf8.RuneCountInString(keyword); {
	case keyword == "":
		return "keyword is required: the search to check the ranks of"
	case n > GridKeywordMaxLength:
		return fmt.Sprintf("keyword is %d characters long; at most %d are allowed", n, GridKeywordMaxLength)
	case size < GridMinSize || size > GridMaxSize || size%2 == 0:
		return fmt.Sprintf("size %d is not allowed: the points per side must be odd, from %d to %d (default %d)", q.Size, GridMinSize, GridMaxSize, GridSize)
	case !(q.RadiusKm >= GridMinRadiusKm && q.RadiusKm <= GridMaxRadiusKm):
		return fmt.Sprintf("radius %v km is out of range; allowed: %v to %v km", q.RadiusKm, GridMinRadiusKm, GridMaxRadiusKm)
	case !(q.Lat >= -GridMaxLatitude && q.Lat <= GridMaxLatitude):
		return fmt.Sprintf("latitude %v is out of range; allowed: %d to %d", q.Lat, -GridMaxLatitude, GridMaxLatitude)
	case !(q.Lng >= -180 && q.Lng <= 180):
		return fmt.Sprintf("longitude %v is out of range; allowed: -180 to 180", q.Lng)
	}
	return ""
}
