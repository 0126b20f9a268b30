// Package dataforseo is the SEO data port (provider.SearchData) over
// DataForSEO's REST API: measured keyword metrics, local ranks and backlink
// profiles, labelled source "dataforseo". It is chosen with
// --seo-provider=dataforseo and the account's --dataforseo-login and
// --dataforseo-password (HTTP Basic on every request); --dataforseo-base-url
// points it at the sandbox or a test server.
//
// # What each method asks
//
// All requests use DataForSEO's Live mode (one request, the answer in it),
// one task per request:
//
//   - CheckLocation and the location of KeywordIdeas: DataForSEO Labs'
//     locations_and_languages (free; fetched when first needed and once a
//     day after). Labs counts keyword data by country, so a location is a
//     country, by name or ISO code ("United Kingdom", "GB", "uk"), resolved
//     to its location code; anything else is a 400 listing the countries,
//     asked before a run is reserved. No location: --dataforseo-location.
//   - KeywordIdeas: DataForSEO Labs' Google keyword_ideas with the seed and
//     the location code: search volume and CPC from keyword_info, keyword
//     difficulty from keyword_properties, the main intent from
//     search_intent_info; the seed first when Labs has it.
//   - GridSearch: one Google Maps SERP (live, advanced) per point, with
//     location_coordinate "lat,lng,zoom" (the zoom showing about two grid
//     cells), depth 20 and search_places off, all concurrently within the
//     rate limit. The client is the first organic listing (paid listings
//     are ads) on its domain or a subdomain, or titled with its business
//     name. A point with no results (40102) ranks 0.
//   - Backlinks: the Backlinks API's summary (rank as domain authority,
//     target spam score, total backlinks and referring domains), its
//     backlink list (the strongest 100, by rank) and bulk_ranks of the home
//     page (page authority), concurrently, on the 0-to-100 rank scale. The
//     linking domain's platform types fold into blog, directory, news,
//     forum and social (sourceType).
//
// # Money, errors and limits
//
// Every answer's cost is reported to the run's meter (provider.Billed),
// failures DataForSEO charges for included, so that the run records what
// it cost (provider_cost). DataForSEO answers errors inside HTTP 200; the
// status codes become the run's status_code: 40202 (rate limit) 429,
// 40210 (funds), 40200 and 40203 (billing, daily cost limit) 402,
// 40100/40101 401, 40204 403, 40501/40503 (a field it refuses) 400, 5xxxx
// the matching 5xx, anything else 502; an HTTP 401 or 402 its own status,
// a 404 502 (the base URL is wrong), a 5xx its own; an answer that is not
// its documented JSON 502; no answer within the time-out 504; a server
// that cannot be reached 503. The rate limit (HTTP 429 or 40202) and
// server errors are retried with exponential backoff and jitter, at most
// MaxAttempts times and never past the request's time-out.
//
// A process sends at most RatePerMinute requests a minute (a token bucket,
// golang.org/x/time/rate) and MaxConcurrent at once, below DataForSEO's
// account limits of 2,000 a minute and 30 at once; replicas divide the
// account's limit between them.
//
// The password is sent in the Authorization header only: it is in no error,
// no log line and no URL, and a message DataForSEO sends back has it
// removed.
package dataforseo
