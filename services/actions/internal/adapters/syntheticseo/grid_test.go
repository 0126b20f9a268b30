package syntheticseo_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

func grid(t *testing.T, q provider.GridQuery) provider.GridResult {
	t.Helper()
	got, err := newProvider(t).GridSearch(context.Background(), q)
	if err != nil {
		t.Fatalf("GridSearch(%+v): %v", q, err)
	}
	return got
}

// haversineKm is the great-circle distance on the mean Earth radius,
// independent of the provider's flat approximation.
func haversineKm(lat1, lng1, lat2, lng2 float64) float64 {
	rad := math.Pi / 180
	dLat, dLng := (lat2-lat1)*rad, (lng2-lng1)*rad
	a := math.Pow(math.Sin(dLat/2), 2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Pow(math.Sin(dLng/2), 2)
	return 2 * 6371.0088 * math.Asin(math.Sqrt(a))
}

func TestGridGeometry(t *testing.T) {
	centres := []struct{ lat, lng float64 }{{30.2672, -97.7431}, {59.9139, 10.7522}, {-33.8688, 151.2093}, {0, 0}}
	for _, c := range centres {
		for _, size := range []int{3, 5, 7, 9} {
			for _, radius := range []float64{0.5, 5, 25} {
				g := grid(t, provider.GridQuery{Keyword: "pizza", Lat: c.lat, Lng: c.lng, RadiusKm: radius, Size: size, Domain: "pizza.com"})
				if len(g.Points) != size*size {
					t.Fatalf("size %d: %d points, want %d", size, len(g.Points), size*size)
				}
				mid := g.Points[size*size/2]
				if math.Abs(mid.Lat-c.lat) > 1e-7 || math.Abs(mid.Lng-c.lng) > 1e-7 {
					t.Errorf("size %d: middle point (%v, %v), want the centre (%v, %v)", size, mid.Lat, mid.Lng, c.lat, c.lng)
				}
				// Rows run north to south, each west to east.
				north, south := g.Points[size/2], g.Points[size*size-1-size/2]
				west, east := g.Points[size*(size/2)], g.Points[size*(size/2)+size-1]
				for name, p := range map[string]provider.GridPoint{"north": north, "south": south, "west": west, "east": east} {
					d := haversineKm(c.lat, c.lng, p.Lat, p.Lng)
					if math.Abs(d-radius) > 0.01*radius {
						t.Errorf("centre (%v, %v) size %d radius %v: %s edge %.4f km away, want within 1%%", c.lat, c.lng, size, radius, name, d)
					}
				}
				if !(north.Lat > c.lat && south.Lat < c.lat && west.Lng < c.lng && east.Lng > c.lng) {
					t.Errorf("size %d: edges N %v S %v W %v E %v around (%v, %v): rows are not north to south, west to east", size, north.Lat, south.Lat, west.Lng, east.Lng, c.lat, c.lng)
				}
				for i, p := range g.Points {
					if p.Rank < 0 || p.Rank > 20 {
						t.Errorf("point %d: rank %d, want 0 to 20", i, p.Rank)
					}
					row, col := i/size, i%size
					if col > 0 && math.Abs(p.Lat-g.Points[i-1].Lat) > 1e-6 {
						t.Errorf("point %d: latitude %v differs from its row's %v", i, p.Lat, g.Points[i-1].Lat)
					}
					if row > 0 && math.Abs(p.Lng-g.Points[i-size].Lng) > 1e-6 {
						t.Errorf("point %d: longitude %v differs from its column's %v", i, p.Lng, g.Points[i-size].Lng)
					}
				}
			}
		}
	}
}

func TestGridDefaultSizeIsFive(t *testing.T) {
	g := grid(t, provider.GridQuery{Keyword: "pizza", Lat: 40.71, Lng: -74.0, RadiusKm: 2, BusinessName: "Joe's Pizza"})
	if len(g.Points) != 25 {
		t.Errorf("%d points, want 25 (5×5)", len(g.Points))
	}
}

func TestGridWrapsAroundTheAntimeridian(t *testing.T) {
	g := grid(t, provider.GridQuery{Keyword: "fish market", Lat: -16.5, Lng: 179.99, RadiusKm: 10, Size: 3, Domain: "fiji-fish.com"})
	for _, p := range g.Points {
		if p.Lng < -180 || p.Lng > 180 {
			t.Errorf("longitude %v is not in -180 to 180", p.Lng)
		}
	}
	if east := g.Points[5]; east.Lng > 0 {
		t.Errorf("east edge longitude %v, want it wrapped to the negative side", east.Lng)
	}
}

// The business ranks better near the middle of the grid than at its rim,
// and drops out of the top 20 somewhere far out.
func TestGridRanksWorsenWithDistance(t *testing.T) {
	keywords := []string{"pizza", "dentist", "hair salon", "locksmith", "yoga studio", "car wash", "florist", "vet clinic"}
	var inner, rim []float64
	dropped := 0
	for _, kw := range keywords {
		g := grid(t, provider.GridQuery{Keyword: kw, Lat: 41.8781, Lng: -87.6298, RadiusKm: 6, Size: 9, Domain: strings.ReplaceAll(kw, " ", "") + ".com"})
		for i, p := range g.Points {
			rank := float64(p.Rank)
			if p.Rank == 0 {
				rank = 21
				dropped++
			}
			row, col := i/9, i%9
			switch ring := max(abs(row-4), abs(col-4)); {
			case ring <= 1:
				inner = append(inner, rank)
			case ring == 4:
				rim = append(rim, rank)
			}
		}
	}
	if mean(inner)+5 > mean(rim) {
		t.Errorf("mean rank near the middle %.1f, at the rim %.1f: want the rim clearly worse", mean(inner), mean(rim))
	}
	if dropped == 0 {
		t.Error("the business is in the top 20 at every point of every grid: want it to drop out far away")
	}
}

func abs(x int) int { return max(x, -x) }

func TestGridAverageRankIsOverRankedPoints(t *testing.T) {
	for _, kw := range []string{"pizza", "dentist", "hair salon", "locksmith"} {
		g := grid(t, provider.GridQuery{Keyword: kw, Lat: 47.6062, Lng: -122.3321, RadiusKm: 4, Size: 7, BusinessName: "Emerald " + kw})
		sum, n := 0, 0
		for _, p := range g.Points {
			if p.Rank > 0 {
				sum += p.Rank
				n++
			}
		}
		want := 0.0
		if n > 0 {
			want = math.Round(float64(sum)/float64(n)*100) / 100
		}
		if g.AverageRank != want {
			t.Errorf("%q: average rank %v, want %v (over %d ranked points, rounded to 2 decimals)", kw, g.AverageRank, want, n)
		}
	}
}

// A smaller grid's points are also a larger grid's with the same radius;
// there the ranks agree, as they would on the map.
func TestGridSizesAgreeOnSharedPoints(t *testing.T) {
	q := provider.GridQuery{Keyword: "bakery", Lat: 45.5152, Lng: -122.6784, RadiusKm: 4, Domain: "rosebakery.com"}
	q.Size = 3
	small := grid(t, q)
	q.Size = 9
	large := grid(t, q)
	for i, p := range small.Points {
		row, col := i/3, i%3
		l := large.Points[row*4*9+col*4]
		if p != l {
			t.Errorf("point (%d, %d): 3×3 grid %+v, 9×9 grid %+v", row, col, p, l)
		}
	}
}

func TestGridCompetitorsAreLocalBusinessesOfTheTrade(t *testing.T) {
	for kw, trade := range map[string]string{"best bakery near me": "Bakery", "emergency plumber in denver": "Emergency Plumber", "dentist": "Dentist"} {
		q := provider.GridQuery{Keyword: kw, Lat: 39.7392, Lng: -104.9903, RadiusKm: 5, BusinessName: "Mile High " + trade}
		g := grid(t, q)
		if n := len(g.Competitors); n < 3 || n > 5 {
			t.Errorf("%q: %d competitors, want 3 to 5", kw, n)
		}
		seen := map[string]bool{}
		for _, c := range g.Competitors {
			if !strings.Contains(c, trade) {
				t.Errorf("%q: competitor %q does not name the trade %q", kw, c, trade)
			}
			if seen[c] || strings.EqualFold(c, q.BusinessName) {
				t.Errorf("%q: competitor %q repeated or the client itself", kw, c)
			}
			seen[c] = true
		}
		if !slices.Equal(grid(t, q).Competitors, g.Competitors) {
			t.Errorf("%q: competitors changed between two identical searches", kw)
		}
	}
}

// TestGridLimitsAreTheCatalogs: the provider takes a grid at the catalog's
// edges and refuses one past them with the catalog's message.
func TestGridLimitsAreTheCatalogs(t *testing.T) {
	grid(t, provider.GridQuery{Keyword: strings.Repeat("rye ", catalog.GridKeywordMaxLength/4-1) + "rye", Lat: catalog.GridMaxLatitude,
		Lng: 0, RadiusKm: catalog.GridMaxRadiusKm, Domain: "rye.example"})
	_, err := newProvider(t).GridSearch(context.Background(), provider.GridQuery{Keyword: "rye", RadiusKm: catalog.GridMaxRadiusKm + 1, Domain: "rye.example"})
	if err == nil || !strings.Contains(err.Error(), "allowed: 0.5 to 50 km") {
		t.Fatalf("a radius past the catalog's: %v", err)
	}
}
