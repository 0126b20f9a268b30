// Package onpage is the on-page SEO audit: the checks seo_audit and
// optimize_page run on a fetched page (title, meta description, headings,
// image alt texts, canonical, status, links, keyword placement...), each
// with a severity that weighs it in a score out of 100 and a message that
// says what was found and how to fix it.
//
// It judges a provider.Page and knows nothing of runs, records or HTTP, so
// that the web fetcher's tests can audit what it reads.
package onpage
