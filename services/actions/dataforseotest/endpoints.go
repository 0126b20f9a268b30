package dataforseotest

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Country is a location of DataForSEO Labs: Labs counts keyword data by
// country only.
type Country struct {
	Code int // DataForSEO's location code: 2000 + the ISO 3166 numeric code
	Name string
	ISO  string
}

// Countries are the locations the server knows.
var Countries = []Country{
	{2840, "United States", "US"}, {2826, "United Kingdom", "GB"}, {2124, "Canada", "CA"}, {2036, "Australia", "AU"},
	{2372, "Ireland", "IE"}, {2554, "New Zealand", "NZ"}, {2276, "Germany", "DE"}, {2250, "France", "FR"},
	{2724, "Spain", "ES"}, {2380, "Italy", "IT"}, {2528, "Netherlands", "NL"}, {2056, "Belgium", "BE"},
	{2756, "Switzerland", "CH"}, {2040, "Austria", "AT"}, {2752, "Sweden", "SE"}, {2616, "Poland", "PL"},
	{2356, "India", "IN"}, {2076, "Brazil", "BR"}, {2484, "Mexico", "MX"}, {2392, "Japan", "JP"},
	{2710, "South Africa", "ZA"},
}

func countryByCode(code int) (Country, bool) {
	i := slices.IndexFunc(Countries, func(c Country) bool { return c.Code == code })
	if i < 0 {
		return Country{}, false
	}
	return Countries[i], true
}

func locationsResult() []any {
	out := make([]any, len(Countries))
	for i, c := range Countries {
		out[i] = map[string]any{
			"location_code": c.Code, "location_name": c.Name, "location_code_parent": nil, "country_iso_code": c.ISO,
			"location_type": "Country",
			"available_languages": []any{map[string]any{
				"available_sources": []any{"google", "bing"}, "language_name": "English", "language_code": "en",
				"keywords": 1000000 + c.Code, "serps": 500000 + c.Code,
			}},
		}
	}
	return out
}

// ideaTemplates make a seed's ideas, in the order of relevance the server
// answers with: the seed itself is not first, as it is often not with
// DataForSEO. Informational searches have no advertisers, so no CPC.
var ideaTemplates = []struct {
	text, intent string
	noCPC        bool
}{
	{"best %s", "commercial", false}, {"%s near me", "transactional", false}, {"%s", "commercial", false},
	{"cheap %s", "transactional", false}, {"%s prices", "transactional", false}, {"how to choose %s", "informational", true},
	{"%s reviews", "commercial", false}, {"%s services", "transactional", false}, {"what is %s", "informational", true},
	{"%s for beginners", "informational", true}, {"%s cost", "commercial", false}, {"local %s", "transactional", false},
	{"%s open now", "navigational", false}, {"top %s", "commercial", false}, {"%s deals", "transactional", false},
	{"affordable %s", "transactional", false}, {"%s online", "transactional", false}, {"%s guide", "informational", true},
	{"buy %s", "transactional", false}, {"%s companies", "commercial", false}, {"%s comparison", "commercial", false},
	{"%s tips", "informational", true}, {"%s ideas", "informational", true}, {"%s examples", "", true},
	{"%s jobs", "navigational", false},
}

// KeywordIdeaCount is how many ideas the server has for any seed.
var KeywordIdeaCount = len(ideaTemplates)

// keywordIdeas answers DataForSEO Labs' keyword ideas: the seed's ideas
// with their keyword_info, keyword_properties and search_intent_info.
// "%s examples" has no intent and "%s jobs" no difficulty, as some rare
// keywords have none at DataForSEO.
func keywordIdeas(task map[string]any) answer {
	kws, _ := task["keywords"].([]any)
	code, _ := num(task, "location_code")
	country, known := countryByCode(int(code))
	if len(kws) == 0 {
		return answer{status: StatusInvalidField, msg: "Invalid Field: 'keywords'."}
	}
	if !known {
		return answer{status: StatusInvalidField, msg: "Invalid Field: 'location_code'."}
	}
	seed, _ := kws[0].(string)
	seed = strings.ToLower(strings.Join(strings.Fields(seed), " "))
	limit := 700
	if l, ok := num(task, "limit"); ok {
		limit = int(l)
	}
	n := min(limit, len(ideaTemplates))
	items := make([]any, 0, n)
	for _, t := range ideaTemplates[:n] {
		kw := fmt.Sprintf(t.text, seed)
		items = append(items, keywordItem(kw, seed, t.intent, t.noCPC, country))
	}
	return answer{
		cost: PriceKeywordIdeas + PriceKeywordIdeasRow*float64(len(items)),
		//nolint:gosec // G101: DataForSEO's pagination token in a test double, not a credential
		result: map[string]any{
			"se_type": "google", "seed_keywords": []any{seed}, "location_code": country.Code, "language_code": "en",
			"total_count": len(ideaTemplates), "items_count": len(items), "offset": 0, "offset_token": "eyJvZmZzZXQiOjB9", "items": items,
		},
	}
}

// KeywordVolume is the search volume the server reports for a keyword idea
// of a seed in a country, for tests to compare records with.
func KeywordVolume(keyword, seed string, countryCode int) int {
	u := unit("volume", keyword, seed, strconv.Itoa(countryCode))
	return int(math.Round(math.Pow(10, 1+3.5*u)/10)) * 10
}

func keywordItem(kw, seed, intent string, noCPC bool, c Country) map[string]any {
	vol := KeywordVolume(kw, seed, c.Code)
	info := map[string]any{
		"se_type": "google", "last_updated_time": "2026-01-15 12:00:00 +00:00", "competition": nil, "competition_level": nil,
		"cpc": nil, "search_volume": vol, "low_top_of_page_bid": nil, "high_top_of_page_bid": nil, "categories": []any{10021, 10178},
		"monthly_searches": []any{
			map[string]any{"year": 2025, "month": 12, "search_volume": vol},
			map[string]any{"year": 2025, "month": 11, "search_volume": vol},
		},
		"search_volume_trend": map[string]any{"monthly": 0, "quarterly": 5, "yearly": 12},
	}
	if !noCPC {
		comp := math.Round(unit("competition", kw)*100) / 100
		cpc := math.Round((0.3+8*unit("cpc", kw, c.ISO))*100) / 100
		info["competition"], info["cpc"] = comp, cpc
		info["competition_level"] = map[bool]string{true: "HIGH", false: "LOW"}[comp > 0.5]
		info["low_top_of_page_bid"], info["high_top_of_page_bid"] = math.Round(cpc*40)/100, math.Round(cpc*180)/100
	}
	props := map[string]any{
		"se_type": "google", "core_keyword": nil, "synonym_clustering_algorithm": "text_processing",
		"keyword_difficulty": int(math.Round(100 * unit("difficulty", kw))), "detected_language": "en", "is_another_language": false,
		"words_count": len(strings.Fields(kw)),
	}
	if strings.HasSuffix(kw, " jobs") {
		props["keyword_difficulty"] = nil
	}
	var intentInfo any
	if intent != "" {
		intentInfo = map[string]any{"se_type": "google", "main_intent": intent, "foreign_intent": []any{"commercial"}, "last_updated_time": "2026-01-10 08:00:00 +00:00"}
	}
	return map[string]any{
		"se_type": "google", "keyword": kw, "location_code": c.Code, "language_code": "en",
		"keyword_info": info, "keyword_properties": props, "serp_info": nil,
		"avg_backlinks_info": map[string]any{"se_type": "google", "backlinks": 120.5, "dofollow": 80.1, "referring_pages": 90.2, "referring_domains": 40.3,
			"referring_main_domains": 35.3, "rank": 210.4, "main_domain_rank": 380.2, "last_updated_time": "2026-01-12 10:00:00 +00:00"},
		"search_intent_info": intentInfo,
	}
}

// Neighbourhood is n businesses scattered within about 8 km of a point,
// named after the keyword: what a Maps search finds where a test placed
// nothing.
func Neighbourhood(keyword string, lat, lng float64, n int) []Business {
	out := make([]Business, n)
	words := []string{"Corner", "Village", "Artisan", "Golden", "Riverside", "Hillside", "Family", "Old Town", "Market", "Station"}
	for i := range out {
		id := strconv.Itoa(i)
		name := fmt.Sprintf("%s %s %d", words[i%len(words)], titleCase(keyword), i+1)
		domain := ""
		if unit("site", keyword, id) < 0.8 {
			domain = strings.ToLower(strings.ReplaceAll(words[i%len(words)], " ", "")) + strings.ReplaceAll(strings.ToLower(keyword), " ", "") + id + ".example"
		}
		out[i] = Business{
			Title: name, Domain: domain,
			Lat: lat + (unit("lat", keyword, id)-0.5)*0.15, Lng: lng + (unit("lng", keyword, id)-0.5)*0.25,
		}
	}
	return out
}

func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// DistanceKm is the great-circle distance between two points.
func DistanceKm(lat1, lng1, lat2, lng2 float64) float64 {
	rad := math.Pi / 180
	dLat, dLng := (lat2-lat1)*rad, (lng2-lng1)*rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * 6371 * math.Asin(math.Sqrt(a))
}

// Sponsored is the advertiser whose paid listing tops every Maps search:
// it is an ad, not a rank.
var Sponsored = Business{Title: "Sponsored Listing Co", Domain: "sponsored.example"}

// maps answers the Google Maps SERP for a location_coordinate
// ("lat,lng,zoom"): a paid listing, then the businesses nearest the point
// first, up to depth.
func (s *Server) maps(task map[string]any) answer {
	kw := str(task, "keyword")
	lat, lng, ok := parseCoordinate(str(task, "location_coordinate"))
	switch {
	case strings.TrimSpace(kw) == "":
		return answer{status: StatusInvalidField, msg: "Invalid Field: 'keyword'."}
	case !ok:
		return answer{status: StatusInvalidField, msg: "Invalid Field: 'location_coordinate'."}
	case str(task, "language_code") == "" && str(task, "language_name") == "":
		return answer{status: StatusInvalidField, msg: "Invalid Field: 'language_code'."}
	}
	depth := 100
	if d, ok := num(task, "depth"); ok {
		depth = int(d)
	}
	s.mu.Lock()
	places := slices.Clone(s.cfg.Businesses)
	s.mu.Unlock()
	if len(places) == 0 {
		places = Neighbourhood(kw, lat, lng, 30)
	}
	slices.SortStableFunc(places, func(a, b Business) int {
		da, db := DistanceKm(lat, lng, a.Lat, a.Lng), DistanceKm(lat, lng, b.Lat, b.Lng)
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return strings.Compare(a.Title, b.Title)
	})
	places = places[:min(depth, len(places))]
	ad := Sponsored
	ad.Lat, ad.Lng = lat, lng
	items := []any{mapsItem("maps_paid_item", 1, 1, ad)}
	for i, p := range places {
		items = append(items, mapsItem("maps_search", i+1, i+2, p))
	}
	types := []any{"maps_paid_item", "maps_search"}
	return answer{cost: PriceMaps, result: map[string]any{
		"keyword": kw, "type": "maps", "se_domain": "google.com", "location_code": 2840, "language_code": str(task, "language_code"),
		"check_url": "https://google.com/maps/search/" + strings.ReplaceAll(kw, " ", "+") + "/@" + str(task, "location_coordinate") + "?hl=en",
		"datetime":  "2026-01-20 10:00:00 +00:00", "spell": nil, "refinement_chips": nil, "item_types": types,
		"se_results_count": 0, "items_count": len(items), "items": items,
	}}
}

func mapsItem(kind string, group, absolute int, b Business) map[string]any {
	var domain, url any
	if b.Domain != "" {
		domain, url = "www."+b.Domain, "https://www."+b.Domain+"/"
	}
	return map[string]any{
		"type": kind, "rank_group": group, "rank_absolute": absolute, "domain": domain, "title": b.Title, "original_title": nil,
		"url": url, "contact_url": nil, "book_online_url": nil,
		"rating":  map[string]any{"rating_type": "Max5", "value": 3.5 + math.Round(unit("rating", b.Title)*15)/10, "votes_count": 10 + int(unit("votes", b.Title)*300), "rating_max": nil},
		"snippet": "1 High Street", "address": "1 High Street", "address_info": map[string]any{"address": "1 High Street", "city": "Town", "zip": "00000", "country_code": "GB"},
		"place_id": fmt.Sprintf("ChIJ%016x", hash("place", b.Title)), "phone": nil, "main_image": nil, "total_photos": 3,
		"category": "Bakery", "additional_categories": nil, "category_ids": []any{"bakery"},
		"work_hours": map[string]any{"timetable": nil, "current_status": "open"}, "feature_id": fmt.Sprintf("0x%x:0x%x", hash("f", b.Title), hash("g", b.Title)),
		"cid": strconv.FormatUint(hash("cid", b.Title)>>1, 10), "latitude": b.Lat, "longitude": b.Lng, "is_claimed": true,
		"local_justifications": nil, "is_directory_item": false, "price_level": nil, "hotel_rating": nil,
	}
}

func parseCoordinate(s string) (lat, lng float64, ok bool) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, false
	}
	lat, err1 := strconv.ParseFloat(parts[0], 64)
	lng, err2 := strconv.ParseFloat(parts[1], 64)
	if err1 != nil || err2 != nil || math.Abs(lat) > 90 || math.Abs(lng) > 180 {
		return 0, 0, false
	}
	if len(parts) == 3 {
		z, err := strconv.Atoi(strings.TrimSuffix(parts[2], "z"))
		if err != nil || z < 3 || z > 21 {
			return 0, 0, false
		}
	}
	return lat, lng, true
}

// linkingSites are where a target's backlinks come from: a site's domain
// and DataForSEO's platform types for it.
var linkingSites = []struct {
	domain   string
	platform []any
}{
	{"medium.com", []any{"blogs", "cms"}}, {"yelp.com", []any{"organization"}}, {"reddit.com", []any{"message-boards"}},
	{"facebook.com", []any{"organization"}}, {"localnews.example", []any{"news"}}, {"bakersforum.example", []any{"message-boards"}},
	{"wikipedia.org", []any{"wikis"}}, {"shopdirectory.example", []any{"ecommerce"}}, {"homecookblog.example", []any{"blogs"}},
	{"cityguide.example", nil}, {"linkedin.com", nil}, {"foodjournal.example", []any{"cms"}},
}

// rankScale scales a 0-to-1000 rank to the task's rank_scale.
func rankScale(task map[string]any, r int) int {
	if str(task, "rank_scale") == "one_hundred" {
		return int(math.Round(float64(r) / 10))
	}
	return r
}

// backlinks answers the Backlinks API's backlink list of a domain, the
// strongest first.
func (s *Server) backlinks(task map[string]any) answer {
	target := str(task, "target")
	if target == "" || strings.Contains(target, "://") && !strings.HasPrefix(target, "http") {
		return answer{status: StatusInvalidField, msg: "Invalid Field: 'target'."}
	}
	limit := 100
	if l, ok := num(task, "limit"); ok {
		limit = int(l)
	}
	links := s.links(target)
	items := make([]any, 0, min(limit, len(links)))
	for _, l := range links[:min(limit, len(links))] {
		item := map[string]any{}
		for k, v := range l {
			item[k] = v
		}
		for _, k := range []string{"rank", "page_from_rank", "domain_from_rank"} {
			item[k] = rankScale(task, l[k].(int))
		}
		items = append(items, item)
	}
	//nolint:gosec // G101: DataForSEO's pagination token in a test double, not a credential
	return answer{cost: PriceBacklinks + PriceBacklinksRow*float64(len(items)), result: map[string]any{
		"target": target, "mode": "as_is", "custom_mode": nil, "total_count": len(links) * 41, "items_count": len(items), "items": items,
		"search_after_token": "eyJzZWFyY2hfYWZ0ZXIiOjF9",
	}}
}

// links are a target's listed backlinks, ranks on the 0-to-1000 scale,
// strongest first.
func (s *Server) links(target string) []map[string]any {
	n := s.cfg.BacklinksPerTarget
	anchors := []string{target, "click here", strings.Split(target, ".")[0], "best bakery in town", "website", "https://" + target + "/"}
	out := make([]map[string]any, n)
	for i := range out {
		id := strconv.Itoa(i)
		site := linkingSites[i%len(linkingSites)]
		from := site.domain
		if i >= len(linkingSites) {
			from = fmt.Sprintf("site%d-%s", i, site.domain)
		}
		nofollow := unit("nofollow", target, id) < 0.25
		var attrs any
		if nofollow {
			attrs = []any{"nofollow"}
		}
		to := "https://" + target + "/"
		if i%3 == 1 {
			to = "https://www." + target + "/menu"
		}
		day := 1 + int(unit("day", target, id)*27)
		out[i] = map[string]any{
			"type": "backlink", "domain_from": from, "url_from": fmt.Sprintf("https://%s/posts/%s-%d", from, strings.Split(target, ".")[0], i),
			"url_from_https": true, "domain_to": strings.TrimPrefix(strings.Split(strings.TrimPrefix(to, "https://"), "/")[0], "www."),
			"url_to": to, "url_to_https": true, "tld_from": from[strings.LastIndex(from, ".")+1:], "is_new": false, "is_lost": false,
			"backlink_spam_score": int(unit("spam", target, id) * 40), "rank": 1000 - i*25, "page_from_rank": 900 - i*20,
			"domain_from_rank": 950 - i*15, "domain_from_platform_type": site.platform, "domain_from_is_ip": false,
			"domain_from_ip": "198.51.100.7", "domain_from_country": "US", "page_from_external_links": 3 + int(unit("ext", target, id)*60),
			"page_from_internal_links": 40, "page_from_size": 63357, "page_from_encoding": "utf-8", "page_from_language": "en",
			"page_from_title": "A post about " + target, "page_from_status_code": 200,
			"first_seen": fmt.Sprintf("2024-%02d-%02d 09:30:00 +00:00", 1+i%12, day),
			"prev_seen":  "2025-12-01 09:30:00 +00:00", "last_seen": "2026-01-10 09:30:00 +00:00", "item_type": "anchor",
			"attributes": attrs, "dofollow": !nofollow, "original": true, "alt": nil, "image_url": nil,
			"anchor": anchors[i%len(anchors)], "text_pre": "see", "text_post": "for more", "semantic_location": "article",
			"links_count": 1, "group_count": 0, "is_broken": false, "url_to_status_code": 200, "url_to_spam_score": 2,
			"url_to_redirect_target": nil, "ranked_keywords_info": nil, "is_indirect_link": false, "indirect_link_path": nil,
		}
	}
	return out
}

// Rank is the rank (0 to 1000) the server gives a target: a domain in the
// summary, a page in bulk ranks.
func Rank(target string) int { return 100 + int(unit("rank", target)*800) }

// SpamScore is the target_spam_score the server gives a domain.
func SpamScore(target string) int { return int(unit("target spam", target) * 30) }

// ReferringDomains is how many domains the summary says link to a target.
func (s *Server) ReferringDomains(target string) int { return s.cfg.BacklinksPerTarget * 7 }

// TotalBacklinks is how many backlinks the summary counts for a target.
func (s *Server) TotalBacklinks(target string) int { return s.cfg.BacklinksPerTarget * 41 }

func (s *Server) summary(task map[string]any) answer {
	target := str(task, "target")
	if target == "" {
		return answer{status: StatusInvalidField, msg: "Invalid Field: 'target'."}
	}
	refs := s.ReferringDomains(target)
	return answer{cost: PriceSummary, result: map[string]any{
		"target": target, "first_seen": "2019-03-01 00:00:00 +00:00", "lost_date": nil, "rank": rankScale(task, Rank(target)),
		"backlinks": s.TotalBacklinks(target), "backlinks_spam_score": 12, "crawled_pages": 84,
		"info": map[string]any{"server": "nginx", "cms": "wordpress", "platform_type": []any{"cms"}, "ip_address": "192.0.2.10",
			"country": "US", "is_ip": false, "target_spam_score": SpamScore(target)},
		"internal_links_count": 900, "external_links_count": 120, "broken_backlinks": 3, "broken_pages": 1,
		"referring_domains": refs, "referring_domains_nofollow": refs / 5, "referring_main_domains": refs - 10,
		"referring_main_domains_nofollow": refs / 6, "referring_ips": refs - 20, "referring_subnets": refs - 30,
		"referring_pages": refs * 3, "referring_pages_nofollow": refs / 2,
		"referring_links_tld": map[string]any{"com": refs}, "referring_links_types": map[string]any{"anchor": refs * 3},
		"referring_links_attributes": map[string]any{"nofollow": refs / 5}, "referring_links_platform_types": map[string]any{"blogs": refs / 2},
		"referring_links_semantic_locations": map[string]any{"article": refs}, "referring_links_countries": map[string]any{"US": refs},
	}}
}

func bulkRanks(task map[string]any) answer {
	targets, _ := task["targets"].([]any)
	if len(targets) == 0 {
		return answer{status: StatusInvalidField, msg: "Invalid Field: 'targets'."}
	}
	items := make([]any, len(targets))
	for i, t := range targets {
		s, _ := t.(string)
		items[i] = map[string]any{"target": s, "rank": rankScale(task, Rank(s))}
	}
	return answer{cost: PriceBulkRanks + PriceBulkRanksRow*float64(len(items)), result: map[string]any{"items_count": len(items), "items": items}}
}
