package syntheticseo

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// kmPerDegree is the length of a degree of latitude (and of longitude at
// the equator).
const kmPerDegree = 111.32

// GridSearch returns the client's rank at Size×Size points spanning
// RadiusKm each way from the centre: rows from north to south, each from
// west to east, so the centre point is in the middle of the list. The
// client ranks best around a "home" near the centre and worse with the
// distance from it, dropping out of the top 20 (Rank 0) far away.
func (p *Provider) GridSearch(ctx context.Context, q provider.GridQuery) (provider.GridResult, error) {
	if err := ctx.Err(); err != nil {
		return provider.GridResult{}, err
	}
	keyword := normalizePhrase(q.Keyword)
	size := q.Size
	if size == 0 {
		size = catalog.GridSize
	}
	domain := strings.ToLower(strings.TrimSpace(q.Domain))
	business := strings.TrimSpace(q.BusinessName)
	switch {
	case catalog.GridProblem(q, keyword) != "":
		return provider.GridResult{}, invalid("%s", catalog.GridProblem(q, keyword))
	case domain == "" && business == "":
		return provider.GridResult{}, invalid("the client's domain or business name is required: it is what the ranks are looked up for")
	}

	// Size stays out of the seed so that a 3×3 and a 9×9 grid agree on
	// where the business is and on the ranks at the points they share.
	key := []string{keyword, domain, strings.ToLower(business), coord(q.Lat), coord(q.Lng), coord(q.RadiusKm)}
	r := newStream(append([]string{"grid"}, key...)...)
	// Where the business ranks best, in km east and north of the centre,
	// how well it ranks there and how far its reach extends.
	homeX, homeY := r.between(-0.25, 0.25)*q.RadiusKm, r.between(-0.25, 0.25)*q.RadiusKm
	best := 1 + float64(r.intn(3))
	reach := q.RadiusKm * r.between(0.5, 1.3)

	half := (size - 1) / 2
	stepKm := q.RadiusKm / float64(half)
	lngKm := kmPerDegree * math.Cos(q.Lat*math.Pi/180)
	var res provider.GridResult
	ranked, sum := 0, 0
	for row := range size {
		for col := range size {
			y, x := float64(half-row)*stepKm, float64(col-half)*stepKm
			pt := provider.GridPoint{
				Lat: round(q.Lat+y/kmPerDegree, 7),
				Lng: round(wrapLongitude(q.Lng+x/lngKm), 7),
			}
			pr := newStream(append([]string{"grid point", coord(pt.Lat), coord(pt.Lng)}, key...)...)
			d := math.Hypot(x-homeX, y-homeY)
			rank := int(math.Round(best + 11*math.Pow(d/reach, 1.6) + pr.between(-1.5, 1.5)))
			rank = max(rank, 1)
			// Far out, other businesses' own neighbourhoods push the
			// client off the list now and then, whatever the trend.
			if rank > 20 || (d > 0.6*q.RadiusKm && pr.chance(0.08)) {
				rank = 0
			}
			pt.Rank = rank
			if rank > 0 {
				ranked++
				sum += rank
			}
			res.Points = append(res.Points, pt)
		}
	}
	if ranked > 0 {
		res.AverageRank = round(float64(sum)/float64(ranked), 2)
	}
	res.Competitors = competitors(keyword, business, q.Lat, q.Lng)
	return res, nil
}

func coord(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

func wrapLongitude(lng float64) float64 {
	switch {
	case lng > 180:
		return lng - 360
	case lng < -180:
		return lng + 360
	}
	return lng
}

// Parts of local business names.
var (
	nameAreas = []string{
		"Northside", "Southside", "Eastside", "Westside", "Downtown", "Uptown", "Riverside",
		"Lakeside", "Hillside", "Midtown", "Old Town", "Harbor", "Valley", "Parkside",
	}
	nameSurnames = []string{
		"Miller", "Johnson", "Garcia", "Nguyen", "Patel", "Walker", "Reed", "Brooks",
		"Hayes", "Carter", "Foster", "Bennett", "Morales", "Sullivan",
	}
	nameAdjectives = []string{
		"Summit", "Premier", "Evergreen", "Keystone", "Bluebird", "Cornerstone", "Liberty",
		"Pioneer", "Pinnacle", "Heritage", "Trusty", "Bright", "Golden", "Ironwood",
	}
	nameSuffixes = []string{"Pros", "Experts", "Solutions", "& Co.", "Group", "Specialists"}
	// namePatterns each make a name from a core ("Bakery") and a stream.
	namePatterns = []func(core string, r *stream) string{
		func(core string, r *stream) string { return pick(r, nameAreas) + " " + core + " Co." },
		func(core string, r *stream) string { return pick(r, nameSurnames) + " " + core },
		func(core string, r *stream) string { return pick(r, nameAdjectives) + " " + core },
		func(core string, r *stream) string { return core + " " + pick(r, nameSuffixes) },
		func(core string, r *stream) string { return pick(r, nameSurnames) + " & Sons " + core },
		func(core string, r *stream) string { return pick(r, nameAreas) + " " + core },
		func(core string, r *stream) string { return "The " + core + " Place" },
	}
	// nameStopWords are the words of a search that are not the trade.
	nameStopWords = map[string]bool{
		"best": true, "top": true, "rated": true, "cheap": true, "cheapest": true,
		"affordable": true, "near": true, "me": true, "open": true, "now": true, "local": true,
		"the": true, "a": true, "an": true, "for": true, "of": true, "my": true, "and": true,
		"good": true, "professional": true, "reviews": true, "services": true, "service": true,
	}
)

// competitors names 3 to 5 local businesses of the keyword's trade, the
// same for the same keyword and area.
func competitors(keyword, client string, lat, lng float64) []string {
	core := tradeName(keyword)
	r := newStream("competitors", keyword, strconv.FormatFloat(lat, 'f', 2, 64), strconv.FormatFloat(lng, 'f', 2, 64))
	n := 3 + r.intn(3)
	patterns := slices.Clone(namePatterns)
	// A shuffle, so that each name has its own shape.
	for i := len(patterns) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		patterns[i], patterns[j] = patterns[j], patterns[i]
	}
	var names []string
	for _, build := range patterns {
		if len(names) == n {
			break
		}
		name := build(core, r)
		if strings.EqualFold(name, client) || slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
	}
	return names
}

// tradeName is what the keyword searches for, as a business would name
// it: "best bakery near me" is "Bakery", "emergency plumber in austin" is
// "Emergency Plumber".
func tradeName(keyword string) string {
	words := strings.Fields(keyword)
	if i := slices.Index(words, "in"); i > 0 {
		words = words[:i]
	}
	var kept []string
	for _, w := range words {
		if !nameStopWords[w] && !strings.ContainsFunc(w, unicode.IsDigit) {
			kept = append(kept, titleWord(w))
		}
	}
	if len(kept) == 0 {
		return "Local Services"
	}
	return strings.Join(kept[max(0, len(kept)-2):], " ")
}

func titleWord(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:]
}
