package onpage

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Check categories.
const (
	CategoryContent       = "content"
	CategoryTechnical     = "technical"
	CategoryAccessibility = "accessibility"
	CategoryLinks         = "links"
	CategoryKeyword       = "keyword"
)

// Check severities; a check's weight in the score is 3, 2 or 1.
const (
	SeverityHigh   = "high"
	SeverityMedium = "medium"
	SeverityLow    = "low"
)

// The thresholds of the on-page checks.
const (
	titleMinChars       = 30
	titleMaxChars       = 60
	descriptionMinChars = 70
	descriptionMaxChars = 160
	minWords            = 300
	maxResponseTime     = 1500 * time.Millisecond
	maxPageBytes        = 2 << 20
	keywordWithinWords  = 100
)

// AuditResult is what an on-page audit found.
type AuditResult struct {
	Score  float64 // 0–100, weighted share of passed checks, rounded to one decimal
	Checks []Check // every check run, in a stable order
}

// Check is one on-page check and its outcome.
type Check struct {
	ID       string // stable, snake_case: title_length
	Title    string // "Title length"
	Category string // content, technical, accessibility, links, keyword
	Severity string // high, medium, low (weights 3, 2, 1)
	Passed   bool
	// Message says what was found and, when the check failed, how to fix
	// it, with numbers: "The title has 12 characters; aim for 30 to 60."
	Message string
}

// Issues returns the failed checks, highest severity first, in check order
// within a severity.
func (r AuditResult) Issues() []Check {
	var failed []Check
	for _, c := range r.Checks {
		if !c.Passed {
			failed = append(failed, c)
		}
	}
	slices.SortStableFunc(failed, func(a, b Check) int { return weight(b.Severity) - weight(a.Severity) })
	return failed
}

func weight(severity string) int {
	switch severity {
	case SeverityHigh:
		return 3
	case SeverityMedium:
		return 2
	case SeverityLow:
		return 1
	}
	return 0
}

// check is one check's definition. document marks the checks that read
// the HTML document, as against the response (status, scheme, time, size,
// URL).
type check struct {
	id, title, category, severity string
	document                      bool
	run                           func(a *audit) (bool, string)
}

var pageChecks = []check{
	{"http_status", "HTTP status", CategoryTechnical, SeverityHigh, false, (*audit).httpStatus},
	{"https", "HTTPS", CategoryTechnical, SeverityHigh, false, (*audit).https},
	{"title_present", "Title present", CategoryContent, SeverityHigh, true, (*audit).titlePresent},
	{"title_length", "Title length", CategoryContent, SeverityMedium, true, (*audit).titleLength},
	{"meta_description_present", "Meta description present", CategoryContent, SeverityHigh, true, (*audit).descriptionPresent},
	{"meta_description_length", "Meta description length", CategoryContent, SeverityMedium, true, (*audit).descriptionLength},
	{"single_h1", "Single h1", CategoryContent, SeverityHigh, true, (*audit).singleH1},
	{"heading_order", "Heading order", CategoryAccessibility, SeverityLow, true, (*audit).headingOrder},
	{"image_alt", "Image alt text", CategoryAccessibility, SeverityMedium, true, (*audit).imageAlt},
	{"canonical", "Canonical URL", CategoryTechnical, SeverityMedium, true, (*audit).canonical},
	{"lang", "Language attribute", CategoryAccessibility, SeverityLow, true, (*audit).lang},
	{"viewport", "Viewport", CategoryTechnical, SeverityMedium, true, (*audit).viewport},
	{"word_count", "Word count", CategoryContent, SeverityMedium, true, (*audit).wordCount},
	{"indexable", "Indexable", CategoryTechnical, SeverityHigh, true, (*audit).indexable},
	{"internal_links", "Internal links", CategoryLinks, SeverityLow, true, (*audit).internalLinks},
	{"response_time", "Response time", CategoryTechnical, SeverityLow, false, (*audit).responseTime},
	{"page_size", "Page size", CategoryTechnical, SeverityLow, false, (*audit).pageSize},
}

var keywordChecks = []check{
	{"keyword_in_title", "Keyword in title", CategoryKeyword, SeverityHigh, true, (*audit).keywordInTitle},
	{"keyword_in_h1", "Keyword in h1", CategoryKeyword, SeverityMedium, true, (*audit).keywordInH1},
	{"keyword_in_meta_description", "Keyword in meta description", CategoryKeyword, SeverityMedium, true, (*audit).keywordInDescription},
	{"keyword_in_first_100_words", "Keyword in the first 100 words", CategoryKeyword, SeverityMedium, true, (*audit).keywordInOpening},
	{"keyword_in_url", "Keyword in URL", CategoryKeyword, SeverityLow, false, (*audit).keywordInURL},
}

// audit is one page under audit.
type audit struct {
	p       *provider.Page
	keyword string   // as given, trimmed
	kw      []string // its words, lower case
}

// Audit runs the on-page checks on p; keyword, when not empty, adds the
// keyword placement checks. The keyword matches whole words, ignoring case
// and punctuation ("coffee beans" is in "Coffee-beans, roasted"); a keyword
// without a letter or a digit adds no checks.
//
// A page that did not answer 2xx, or whose content type is not HTML, has no
// document to judge: its error page or file is not the page that was meant
// to be audited, and judging it would let checks pass on nothing (no images
// without alt text, no noindex). Every check that reads the document fails
// on such a page, its message saying why and to make the URL answer 2xx
// with HTML; the checks of the response itself (status, HTTPS, response
// time, size, keyword in URL) are judged as usual. A Page without a
// content type is taken for HTML.
func Audit(p *provider.Page, keyword string) AuditResult {
	if p == nil {
		p = &provider.Page{}
	}
	a := &audit{p: p, keyword: strings.TrimSpace(keyword), kw: words(keyword)}
	checks := pageChecks
	if len(a.kw) > 0 {
		checks = append(slices.Clip(checks), keywordChecks...)
	}
	unread := a.unreadable()

	var res AuditResult
	var passed, total int
	for _, c := range checks {
		ok, msg := false, unread
		if !c.document || unread == "" {
			ok, msg = c.run(a)
		}
		res.Checks = append(res.Checks, Check{ID: c.id, Title: c.title, Category: c.category, Severity: c.severity, Passed: ok, Message: msg})
		total += weight(c.severity)
		if ok {
			passed += weight(c.severity)
		}
	}
	res.Score = math.Round(1000*float64(passed)/float64(total)) / 10
	return res
}

// unreadable says why the page has no document to check, or "".
func (a *audit) unreadable() string {
	if s := a.p.StatusCode; s < 200 || s > 299 {
		return fmt.Sprintf("Not checked: the page answered with HTTP %d, so it has no content to audit; make the URL answer 200 with the page, then audit it again.", s)
	}
	ct := strings.ToLower(strings.TrimSpace(strings.Split(a.p.ContentType, ";")[0]))
	if ct != "" && ct != "text/html" && ct != "application/xhtml+xml" {
		return fmt.Sprintf("Not checked: the page is %s, not HTML; audit the URL of an HTML page, or serve this one as text/html.", ct)
	}
	return ""
}

func (a *audit) httpStatus() (bool, string) {
	s := a.p.StatusCode
	if s >= 200 && s <= 299 {
		return true, fmt.Sprintf("The page answered with HTTP %d.", s)
	}
	return false, fmt.Sprintf("The page answered with HTTP %d; make it answer with a 2xx status (restore the page or fix the link), or redirect it to a page that does.", s)
}

// finalURL is where the page was found: FinalURL, or URL for a Page that
// was not fetched.
func (a *audit) finalURL() string {
	if a.p.FinalURL != "" {
		return a.p.FinalURL
	}
	return a.p.URL
}

func (a *audit) https() (bool, string) {
	u, err := url.Parse(a.finalURL())
	if err == nil && strings.EqualFold(u.Scheme, "https") {
		return true, "The page is served over HTTPS."
	}
	scheme := "an unknown scheme"
	if err == nil && u.Scheme != "" {
		scheme = u.Scheme
	}
	return false, fmt.Sprintf("The page is served over %s; serve it over HTTPS and redirect http:// to https://.", scheme)
}

func (a *audit) titlePresent() (bool, string) {
	if t := strings.TrimSpace(a.p.Title); t != "" {
		return true, fmt.Sprintf("The page has a title: %q.", t)
	}
	return false, "The page has no title; add a <title> that names the page's topic."
}

func (a *audit) titleLength() (bool, string) {
	return lengthCheck("title", a.p.Title, titleMinChars, titleMaxChars)
}

func (a *audit) descriptionPresent() (bool, string) {
	if strings.TrimSpace(a.p.MetaDescription) != "" {
		return true, "The page has a meta description."
	}
	return false, `The page has no meta description; add <meta name="description" content="..."> that sums the page up.`
}

func (a *audit) descriptionLength() (bool, string) {
	return lengthCheck("meta description", a.p.MetaDescription, descriptionMinChars, descriptionMaxChars)
}

func lengthCheck(what, s string, lo, hi int) (bool, string) {
	n := utf8.RuneCountInString(strings.TrimSpace(s))
	if n >= lo && n <= hi {
		return true, fmt.Sprintf("The %s has %d characters.", what, n)
	}
	return false, fmt.Sprintf("The %s has %d characters; aim for %d to %d.", what, n, lo, hi)
}

func (a *audit) singleH1() (bool, string) {
	n := 0
	for _, h := range a.p.Headings {
		if h.Level == 1 {
			n++
		}
	}
	switch n {
	case 1:
		return true, "The page has one h1."
	case 0:
		return false, "The page has no h1; add one h1 that states the page's topic."
	}
	return false, fmt.Sprintf("The page has %d h1 headings; keep one h1 and make the others h2.", n)
}

func (a *audit) headingOrder() (bool, string) {
	hs := a.p.Headings
	skips, first := 0, -1
	for i := 1; i < len(hs); i++ {
		if hs[i].Level > hs[i-1].Level+1 {
			skips++
			if first < 0 {
				first = i
			}
		}
	}
	switch {
	case len(hs) == 0:
		return true, "The page has no headings to order."
	case skips == 0:
		return true, fmt.Sprintf("The %d headings do not skip a level.", len(hs))
	}
	from, to := hs[first-1], hs[first]
	return false, fmt.Sprintf("The headings skip a level %d %s, first from h%d %q to h%d %q; use h%d there, so that each heading is one level below the one it belongs to.",
		skips, plural(skips, "time", "times"), from.Level, from.Text, to.Level, to.Text, from.Level+1)
}

func (a *audit) imageAlt() (bool, string) {
	missing, first := 0, ""
	for _, img := range a.p.Images {
		if strings.TrimSpace(img.Alt) == "" {
			if missing == 0 {
				first = img.Src
			}
			missing++
		}
	}
	n := len(a.p.Images)
	switch {
	case n == 0:
		return true, "The page has no images."
	case missing == 0:
		return true, fmt.Sprintf("All %d %s have alt text.", n, plural(n, "image", "images"))
	}
	return false, fmt.Sprintf("%d of %d %s %s no alt text (the first is %s); describe each image in its alt attribute.",
		missing, n, plural(n, "image", "images"), plural(missing, "has", "have"), first)
}

func (a *audit) canonical() (bool, string) {
	c := strings.TrimSpace(a.p.Canonical)
	if c == "" {
		return false, `The page has no canonical link; add <link rel="canonical" href="..."> with the page's absolute URL.`
	}
	u, err := url.Parse(c)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false, fmt.Sprintf("The canonical link %q is not an absolute URL; write it in full, with https:// and the host.", c)
	}
	return true, fmt.Sprintf("The canonical URL is %s.", c)
}

func (a *audit) lang() (bool, string) {
	if l := strings.TrimSpace(a.p.Lang); l != "" {
		return true, fmt.Sprintf("The page's language is %s.", l)
	}
	return false, `The <html> element has no lang attribute; add the page's language, such as <html lang="en">.`
}

func (a *audit) viewport() (bool, string) {
	if a.p.Viewport {
		return true, "The page has a viewport meta tag."
	}
	return false, `The page has no viewport meta tag; add <meta name="viewport" content="width=device-width, initial-scale=1"> so that it fits phone screens.`
}

func (a *audit) wordCount() (bool, string) {
	n := a.p.WordCount
	if n >= minWords {
		return true, fmt.Sprintf("The page has %d words.", n)
	}
	return false, fmt.Sprintf("The page has %d %s; write at least %d words of content.", n, plural(n, "word", "words"), minWords)
}

func (a *audit) indexable() (bool, string) {
	robots := strings.TrimSpace(a.p.MetaRobots)
	for _, d := range strings.FieldsFunc(strings.ToLower(robots), func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		if d == "noindex" || d == "none" {
			return false, fmt.Sprintf("The meta robots tag says %q, which keeps the page out of search results; remove %s from it.", robots, d)
		}
	}
	return true, "Search engines may index the page."
}

func (a *audit) internalLinks() (bool, string) {
	n := 0
	for _, l := range a.p.Links {
		if l.Internal {
			n++
		}
	}
	if n > 0 {
		return true, fmt.Sprintf("The page has %d %s to its own site.", n, plural(n, "link", "links"))
	}
	return false, "The page has no links to other pages of its site; link to related pages of the site."
}

func (a *audit) responseTime() (bool, string) {
	s := a.p.Elapsed.Seconds()
	if a.p.Elapsed < maxResponseTime {
		return true, fmt.Sprintf("The page loaded in %.2f s.", s)
	}
	return false, fmt.Sprintf("The page took %.2f s to load; make it load in under %.1f s (caching, a CDN, a lighter page).", s, maxResponseTime.Seconds())
}

func (a *audit) pageSize() (bool, string) {
	n := a.p.Bytes
	if n < maxPageBytes {
		return true, fmt.Sprintf("The page is %s.", size(n))
	}
	return false, fmt.Sprintf("The page is %s; keep it under %s (move inline scripts, styles and images to their own files).", size(n), size(maxPageBytes))
}

func size(n int) string {
	unit, div := "bytes", 1.0
	switch {
	case n >= 1<<20:
		unit, div = "MiB", 1<<20
	case n >= 1<<10:
		unit, div = "KiB", 1<<10
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/div), ".0") + " " + unit
}

func (a *audit) keywordInTitle() (bool, string) {
	if a.has(a.p.Title) {
		return true, fmt.Sprintf("The title contains %q.", a.keyword)
	}
	return false, fmt.Sprintf("The title does not contain %q; put the keyword in the title, near its start.", a.keyword)
}

func (a *audit) keywordInH1() (bool, string) {
	for _, h := range a.p.Headings {
		if h.Level == 1 && a.has(h.Text) {
			return true, fmt.Sprintf("The h1 contains %q.", a.keyword)
		}
	}
	return false, fmt.Sprintf("No h1 contains %q; put the keyword in the page's h1.", a.keyword)
}

func (a *audit) keywordInDescription() (bool, string) {
	if a.has(a.p.MetaDescription) {
		return true, fmt.Sprintf("The meta description contains %q.", a.keyword)
	}
	return false, fmt.Sprintf("The meta description does not contain %q; use the keyword in the meta description.", a.keyword)
}

func (a *audit) keywordInOpening() (bool, string) {
	opening := strings.Fields(a.p.Text)
	opening = opening[:min(len(opening), keywordWithinWords)]
	if a.has(strings.Join(opening, " ")) {
		return true, fmt.Sprintf("The first %d words contain %q.", keywordWithinWords, a.keyword)
	}
	return false, fmt.Sprintf("The first %d words do not contain %q; use the keyword in the opening paragraph.", keywordWithinWords, a.keyword)
}

func (a *audit) keywordInURL() (bool, string) {
	path := ""
	if u, err := url.Parse(a.finalURL()); err == nil {
		path = u.Path // decoded; words() reads "-", "_" and "/" as spaces
	}
	if a.has(path) {
		return true, fmt.Sprintf("The URL path contains %q.", a.keyword)
	}
	return false, fmt.Sprintf("The URL path %q does not contain %q; use the keyword in the URL, with hyphens between its words (/%s).",
		path, a.keyword, strings.Join(a.kw, "-"))
}

// has reports whether s contains the keyword's words in a row.
func (a *audit) has(s string) bool {
	ws := words(s)
	for i := 0; i+len(a.kw) <= len(ws); i++ {
		if slices.Equal(ws[i:i+len(a.kw)], a.kw) {
			return true
		}
	}
	return false
}

// words splits s into its words, lower case: runs of letters and digits
// (marks included, so accented letters in decomposed form stay whole).
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
