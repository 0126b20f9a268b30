package dataforseo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// pathMaps is the Google Maps SERP (live, advanced): the businesses a Maps
// search finds at a coordinate, in Google's order.
const pathMaps = "/v3/serp/google/maps/live/advanced"

// How a grid question is asked of the SERP API (its limits are the
// catalog's: catalog.GridProblem).
const (
	// gridDepth is how far down each point's results are read: the top 20
	// a rank is reported within. DataForSEO bills a Maps SERP per 100
	// results, so a shallower depth costs the same and answers faster.
	gridDepth = 20
	// mapsLanguage is the language the Maps searches are made in.
	mapsLanguage = "en"
	// competitorsListed is how many competitors a grid names.
	competitorsListed = 5
)

// kmPerDegree is the length of a degree of latitude (and of longitude at
// the equator).
const kmPerDegree = 111.32

// mapsResult is the part of a Maps SERP result Atrium reads.
type mapsResult struct {
	Items []struct {
		Type      string  `json:"type"`
		RankGroup int     `json:"rank_group"`
		Domain    *string `json:"domain"`
		Title     string  `json:"title"`
		URL       *string `json:"url"`
	} `json:"items"`
}

// GridSearch runs one Google Maps search per point of the grid, with the
// point's coordinates and a zoom that shows about two grid cells, all at
// once within the rate limit, and finds the client in each point's top
// 20 by its domain (the listing's website) or its business name. Paid
// listings are ads, not ranks, and are skipped. A point where the search
// found nothing (DataForSEO's 40102) is Rank 0. The first failure ends the
// grid; what its requests cost is reported all the same.
func (p *Provider) GridSearch(ctx context.Context, q provider.GridQuery) (provider.GridResult, error) {
	if err := ctx.Err(); err != nil {
		return provider.GridResult{}, err
	}
	keyword := strings.Join(strings.Fields(q.Keyword), " ")
	size := q.Size
	if size == 0 {
		size = catalog.GridSize
	}
	domain := normalDomain(q.Domain)
	business := normalName(q.BusinessName)
	switch {
	case catalog.GridProblem(q, keyword) != "":
		return provider.GridResult{}, invalid("%s", catalog.GridProblem(q, keyword))
	case domain == "" && business == "":
		return provider.GridResult{}, invalid("the client's domain or business name is required: it is what the ranks are looked up for")
	}
	points := layout(q.Lat, q.Lng, q.RadiusKm, size)
	zoom := zoomFor(q.Lat, q.RadiusKm, size)
	firsts := make([]string, len(points))
	calls := make([]func(context.Context) error, len(points))
	for i := range points {
		calls[i] = func(ctx context.Context) error {
			var results []mapsResult
			err := p.call(ctx, pathMaps, map[string]any{
				"keyword":             keyword,
				"location_coordinate": fmt.Sprintf("%s,%s,%dz", coord(points[i].Lat), coord(points[i].Lng), zoom),
				"language_code":       mapsLanguage, "depth": gridDepth,
				// Off: with it on, a local search can answer for another
				// place than the coordinate (DataForSEO's advice).
				"search_places": false,
			}, &results)
			if errors.Is(err, errNoResults) {
				return nil
			}
			if err != nil {
				return err
			}
			points[i].Rank, firsts[i] = rankIn(results, domain, business)
			return nil
		}
	}
	if err := group(ctx, calls...); err != nil {
		return provider.GridResult{}, err
	}
	res := provider.GridResult{Points: points}
	sum, ranked := 0, 0
	for _, pt := range points {
		if pt.Rank > 0 {
			sum, ranked = sum+pt.Rank, ranked+1
		}
	}
	if ranked > 0 {
		res.AverageRank = math.Round(100*float64(sum)/float64(ranked)) / 100
	}
	res.Competitors = mostOftenFirst(firsts, competitorsListed)
	return res, nil
}

// rankIn finds the client among a point's organic results: its rank (0 if
// not in the top 20) and the first business when that is not the client.
func rankIn(results []mapsResult, domain, business string) (rank int, first string) {
	for _, r := range results {
		for _, it := range r.Items {
			if it.Type != "maps_search" || it.RankGroup < 1 || it.RankGroup > gridDepth {
				continue
			}
			client := isClient(it.Domain, it.URL, it.Title, domain, business)
			if it.RankGroup == 1 && !client {
				first = strings.TrimSpace(it.Title)
			}
			if client && (rank == 0 || it.RankGroup < rank) {
				rank = it.RankGroup
			}
		}
	}
	return rank, first
}

// isClient says whether a listing is the client's: its website is on the
// client's domain (or a subdomain of it), or its title is the business
// name, or starts with it as whole words ("Rye & Co" is "Rye & Co Bakery").
func isClient(itemDomain, itemURL *string, title, domain, business string) bool {
	if domain != "" {
		for _, d := range []*string{itemDomain, itemURL} {
			if d == nil {
				continue
			}
			host := normalDomain(*d)
			if host == domain || strings.HasSuffix(host, "."+domain) {
				return true
			}
		}
	}
	if business == "" {
		return false
	}
	t := normalName(title)
	return t == business || strings.HasPrefix(t, business+" ")
}

// normalDomain is a domain or URL as a bare lower-case host: no scheme,
// no www., no port, no path, no trailing dot.
func normalDomain(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, ":"); i >= 0 && !strings.Contains(s[i:], "]") {
		s = s[:i]
	}
	return strings.TrimPrefix(strings.TrimSuffix(s, "."), "www.")
}

// normalName is a business name for comparison: lower case, "&" as "and",
// punctuation as spaces, spaces collapsed.
func normalName(s string) string {
	s = strings.ReplaceAll(strings.ToLower(s), "&", " and ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return ' '
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// mostOftenFirst names the businesses first at the most points, most often
// first, then by name.
func mostOftenFirst(firsts []string, n int) []string {
	count := map[string]int{}
	for _, f := range firsts {
		if f != "" {
			count[f]++
		}
	}
	names := make([]string, 0, len(count))
	for name := range count {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b)) })
	return names[:min(n, len(names))]
}

// layout is where a grid's points are: size rows from north to south, each
// from west to east, spanning radiusKm each way from the centre, to 7
// decimals (DataForSEO's precision) — the same points the built-in
// provider ranks.
func layout(lat, lng, radiusKm float64, size int) []provider.GridPoint {
	half := (size - 1) / 2
	step := 0.0
	if half > 0 {
		step = radiusKm / float64(half)
	}
	lngKm := kmPerDegree * math.Cos(lat*math.Pi/180)
	points := make([]provider.GridPoint, 0, size*size)
	for row := range size {
		for col := range size {
			y, x := float64(half-row)*step, float64(col-half)*step
			points = append(points, provider.GridPoint{Lat: round7(lat + y/kmPerDegree), Lng: round7(wrapLongitude(lng + x/lngKm))})
		}
	}
	return points
}

// zoomFor is the Maps zoom of each point's search: the map a searcher
// there would see spans about two grid cells, so that neighbouring points
// overlap a little and none sees the whole grid. At zoom z a 1,024-pixel
// wide map spans 4 × 40,075 km × cos(lat) / 2^z; DataForSEO takes 3z to
// 21z.
func zoomFor(lat, radiusKm float64, size int) int {
	cell := 2 * radiusKm
	if size > 1 {
		cell = 2 * radiusKm / float64(size-1)
	}
	z := math.Log2(4 * 40075 * math.Cos(lat*math.Pi/180) / (2 * cell))
	return int(math.Max(3, math.Min(21, math.Round(z))))
}

func round7(v float64) float64 { return math.Round(v*1e7) / 1e7 }

func coord(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func wrapLongitude(lng float64) float64 {
	switch {
	case lng > 180:
		return lng - 360
	case lng < -180:
		return lng + 360
	}
	return lng
}
