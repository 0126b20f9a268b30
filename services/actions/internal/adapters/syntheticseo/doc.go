// Package syntheticseo is the built-in SEO data provider (provider.SearchData):
// the embedded default when no commercial SEO data API is configured.
//
// Its answers are synthetic. Every keyword idea, grid rank and backlink is a
// deterministic function of the question, seeded from an FNV-64a hash of the
// inputs (never the global random source, never the clock), so the same
// question always gets the same answer, two different questions get
// different ones, and tests and demos are reproducible. The numbers are
// shaped like the real thing (search volumes in the buckets keyword tools
// report, a long tail below the seed, ranks that worsen away from the
// business, a power law of linking pages) so that everything built on top of
// them looks and behaves as it would with real data; Source returns
// "synthetic" so that whoever shows them can say they are not measured.
//
// # Plugging in a commercial provider
//
// A real provider is another adapter behind the same methods, with Source
// naming it ("dataforseo", "semrush", "ahrefs", "moz"), and CheckLocation
// refusing, before a run is reserved, a location it has no figures for
// (this provider accepts any). The dataforseo adapter is the first; how
// each method maps:
//
//   - KeywordIdeas: one request to the provider's keyword ideas endpoint
//     (DataForSEO Labs keyword ideas or suggestions, Semrush related
//     keywords, Ahrefs Keywords Explorer matching terms, Moz keyword
//     suggestions) with Seed as the keyword, Location resolved to the
//     provider's location code (country when empty) and Limit as the page
//     size. Their search volume, keyword difficulty (0 to 100), CPC (USD)
//     and search intent fill KeywordIdea; a provider that reports several
//     intents gives the main one. The seed goes first even when the
//     provider ranks it elsewhere.
//   - GridSearch: the grid's points are laid out as here (Size rows from
//     north to south, each from west to east, spanning RadiusKm each way
//     from the centre), then one local-pack or Maps search per point (DataForSEO
//     Google Maps SERP with location_coordinate "lat,lng,zoom", or a
//     Maps rank-grid product), up to Size² requests sent concurrently
//     within the provider's rate limit. The client is found in each top 20
//     by Domain (the listing's website) or BusinessName; absent is Rank 0.
//     Competitors are the businesses most often first across the points.
//   - Backlinks: the provider's backlink list for the domain (DataForSEO
//     Backlinks, Ahrefs Site Explorer backlinks, Moz Links API, Semrush
//     backlinks) for the Backlink rows (source and target URLs, anchor,
//     nofollow, first seen, the linking domain's rank and the linking
//     page's outbound links and referring domains), its domain summary for
//     DomainAuthority and SpamScore (Moz DA and Spam Score, Ahrefs DR,
//     Semrush Authority Score, DataForSEO rank scaled to 0 to 100), and
//     the home page's metrics for PageAuthority. SourceType comes from the
//     provider's classification of the linking site (DataForSEO's platform
//     types, for example) folded into blog, directory, news, forum and
//     social.
//
// Failures of a real provider are *provider.Error: its own HTTP status
// (429 when the quota is spent), 502 for an answer that cannot be used, 504
// for a timeout; the API key never appears in the message. This package
// answers every valid question and reports an invalid one as a
// provider.Error with status 400 naming the field and what is allowed, as a
// real API would reject it.
package syntheticseo
