package syntheticseo

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Kinds of linking site.
const (
	SourceBlog      = "blog"
	SourceDirectory = "directory"
	SourceNews      = "news"
	SourceForum     = "forum"
	SourceSocial    = "social"
)

// SourceTypes lists the kinds of linking site a backlink may come from.
var SourceTypes = []string{SourceBlog, SourceDirectory, SourceNews, SourceForum, SourceSocial}

// Bounds of a synthetic backlink profile.
const (
	MinBacklinks = 20
	MaxBacklinks = 60
	// backlinkHistoryDays is how far before the reference date links were
	// first seen: three years.
	backlinkHistoryDays = 3 * 365
)

// sourceWeights is how often each kind of site links, and how often its
// links are nofollow: social and forum links mostly are, editorial links
// mostly are not; together about one link in five.
var sourceWeights = []struct {
	kind     string
	share    float64
	nofollow float64
}{
	{SourceBlog, 0.40, 0.10},
	{SourceDirectory, 0.25, 0.20},
	{SourceNews, 0.10, 0.15},
	{SourceForum, 0.12, 0.40},
	{SourceSocial, 0.13, 0.45},
}

// knownSite is a well-known linking site, with an authority close to what
// the commercial tools give it and the host its pages are on.
type knownSite struct {
	domain, host string
	authority    float64
}

var knownSites = map[string][]knownSite{
	SourceBlog: {
		{"medium.com", "medium.com", 95},
	},
	SourceDirectory: {
		{"yelp.com", "www.yelp.com", 93}, {"yellowpages.com", "www.yellowpages.com", 86},
		{"bbb.org", "www.bbb.org", 91}, {"manta.com", "www.manta.com", 73},
		{"hotfrog.com", "www.hotfrog.com", 58}, {"foursquare.com", "foursquare.com", 91},
		{"brownbook.net", "www.brownbook.net", 57}, {"chamberofcommerce.com", "www.chamberofcommerce.com", 73},
		{"merchantcircle.com", "www.merchantcircle.com", 68}, {"mapquest.com", "www.mapquest.com", 90},
		{"nextdoor.com", "nextdoor.com", 84}, {"thumbtack.com", "www.thumbtack.com", 82},
	},
	SourceNews: {
		{"patch.com", "patch.com", 85}, {"prnewswire.com", "www.prnewswire.com", 93},
		{"einpresswire.com", "www.einpresswire.com", 80},
	},
	SourceForum: {
		{"reddit.com", "www.reddit.com", 95}, {"quora.com", "www.quora.com", 93},
	},
	SourceSocial: {
		{"facebook.com", "www.facebook.com", 95}, {"x.com", "x.com", 94},
		{"linkedin.com", "www.linkedin.com", 95}, {"pinterest.com", "www.pinterest.com", 94},
		{"instagram.com", "www.instagram.com", 93}, {"youtube.com", "www.youtube.com", 95},
		{"tumblr.com", "www.tumblr.com", 92},
	},
}

// knownShare is the share of each kind's links that come from the
// well-known sites; social links all do.
var knownShare = map[string]float64{
	SourceBlog: 0.08, SourceDirectory: 0.6, SourceNews: 0.25, SourceForum: 0.35, SourceSocial: 1,
}

// Words of made-up site names and page slugs.
var (
	blogFirst   = []string{"the", "my", "daily", "urban", "green", "smart", "happy", "simple", "modern", "little", "honest", "weekend"}
	blogSecond  = []string{"home", "kitchen", "maker", "traveler", "garden", "budget", "family", "tech", "wellness", "nomad", "living", "local"}
	blogThird   = []string{"blog", "journal", "notes", "diaries", "life", "hub", "guide", ""}
	siteTLDs    = []string{".com", ".com", ".com", ".net", ".org", ".co"}
	places      = []string{"springfield", "riverton", "fairview", "oakridge", "lakewood", "greenville", "madison", "franklin", "clinton", "georgetown", "salem", "ashland"}
	states      = []string{"tx", "ca", "ny", "fl", "il", "oh", "ga", "nc", "wa", "co", "az", "or"}
	directories = []string{"directory", "business", "listings", "biz", "localguide", "pages"}
	papers      = []string{"gazette", "times", "herald", "tribune", "chronicle", "post", "journal", "news", "observer", "dispatch"}
	forumNames  = []string{"forum", "talk", "community", "boards", "exchange"}
	firstNames  = []string{"jess", "mike", "sarah", "dan", "priya", "alex", "maria", "tom", "lena", "chris", "kim", "sam"}
	lastNames   = []string{"miller", "chen", "garcia", "brooks", "patel", "walsh", "nguyen", "reed", "hayes", "cole", "park", "lopez"}
	subreddits  = []string{"smallbusiness", "HomeImprovement", "AskLocal", "Entrepreneur", "reviews", "DIY", "BuyItForLife", "LocalBusiness"}
	genericText = []string{"click here", "website", "here", "this site", "learn more", "read more", "visit website", "source", "this article"}
	// fallbackTopics stand in for what a site is about when its name says
	// only the brand ("acme.com").
	fallbackTopics = []string{"home services", "web design", "dental care", "landscaping", "auto repair", "coffee roasting", "pet grooming", "yoga classes", "accounting services", "roofing"}
)

// site is the domain the backlinks point to, and what can be read from its
// name.
type site struct {
	domain string
	brand  string // "Acme Plumbing"
	topic  string // "plumbing": what its exact-match anchors say
	slug   string // "acme-plumbing"
}

// Backlinks returns 20 to 60 synthetic links to the domain, strongest
// linking sites first, and the domain's authority and spam score computed
// from them.
func (p *Provider) Backlinks(ctx context.Context, domain string) (provider.BacklinkProfile, error) {
	if err := ctx.Err(); err != nil {
		return provider.BacklinkProfile{}, err
	}
	d, err := normalizeDomain(domain)
	if err != nil {
		return provider.BacklinkProfile{}, err
	}
	s := readSite(d)
	r := newStream("backlinks", d)
	n := MinBacklinks + r.intn(MaxBacklinks-MinBacklinks+1)
	targets := []string{"/", "/about", "/services", "/contact", "/blog", "/" + slugify(s.topic), "/blog/" + slugify(s.topic) + "-guide"}

	links := make([]provider.Backlink, 0, n)
	seen := map[string]bool{}
	exact := 0
	for i := 0; len(links) < n && i < 50*MaxBacklinks; i++ {
		lr := newStream("backlink", d, strconv.Itoa(i))
		link, isExact := p.backlink(lr, s, targets)
		pair := link.SourceURL + " " + link.TargetURL
		if seen[pair] {
			continue
		}
		seen[pair] = true
		if isExact {
			exact++
		}
		links = append(links, link)
	}
	slices.SortFunc(links, func(a, b provider.Backlink) int {
		if c := cmp.Compare(b.DomainAuthority, a.DomainAuthority); c != 0 {
			return c
		}
		if c := b.FirstSeen.Compare(a.FirstSeen); c != 0 {
			return c
		}
		return strings.Compare(a.SourceURL+" "+a.TargetURL, b.SourceURL+" "+b.TargetURL)
	})
	da, pa, spam := scoreProfile(links, exact, "https://"+d+"/")
	domains := map[string]bool{}
	for _, l := range links {
		domains[l.SourceDomain] = true
	}
	return provider.BacklinkProfile{Domain: d, DomainAuthority: da, PageAuthority: pa, SpamScore: spam,
		Total: len(links), ReferringDomains: len(domains), Backlinks: links}, nil
}

// backlink makes one link, and reports whether its anchor is an
// exact-match keyword.
func (p *Provider) backlink(r *stream, s site, targets []string) (provider.Backlink, bool) {
	kind, nofollow := SourceBlog, 0.0
	x := r.float()
	for _, w := range sourceWeights {
		kind, nofollow = w.kind, w.nofollow
		if x -= w.share; x < 0 {
			break
		}
	}
	// Half the links go to the home page, as on most small sites.
	target := "/"
	if r.chance(0.5) {
		target = pick(r, targets[1:])
	}
	targetURL := "https://" + s.domain + target
	seen := p.ref.AddDate(0, 0, -(1 + r.intn(backlinkHistoryDays)))
	src := sourcePage(r, kind, s, seen)

	var anchor string
	isExact := false
	switch x := r.float(); {
	case x < 0.35:
		anchor = pick(r, []string{s.brand, strings.ToLower(s.brand), s.brand + " website"})
	case x < 0.55:
		isExact = true
		anchor = pick(r, []string{s.topic, "best " + s.topic, s.topic + " near me", "affordable " + s.topic, s.topic + " company", s.topic + " tips"})
	case x < 0.80:
		anchor = pick(r, genericText)
	default:
		anchor = pick(r, []string{"https://" + s.domain, s.domain, targetURL})
	}

	// The linking page's own link counts: most pages link out a little and
	// are linked to by a handful of domains; a few are hubs.
	u := r.float()
	linking := int(math.Pow(5001, math.Pow(u, 2.5)*(0.6+0.4*src.authority/95))) - 1
	external := int(math.Pow(200, math.Pow(r.float(), 1.5)))
	return provider.Backlink{
		SourceURL:       src.url,
		TargetURL:       targetURL,
		AnchorText:      anchor,
		SourceType:      kind,
		SourceDomain:    src.domain,
		DomainAuthority: src.authority,
		ExternalPages:   min(max(external, 1), 200),
		LinkingDomains:  min(max(linking, 0), 5000),
		NoFollow:        r.chance(nofollow),
		FirstSeen:       seen,
	}, isExact
}

// page is a linking page.
type page struct {
	domain, url string
	authority   float64
}

// sourcePage picks a linking site of the kind and a page on it that could
// carry the link, dated around when the link was first seen.
func sourcePage(r *stream, kind string, s site, seen time.Time) page {
	slug := articleSlug(r, s, seen)
	digits := func(n int) string {
		b := make([]byte, n)
		b[0] = "123456789"[r.intn(9)]
		for i := 1; i < n; i++ {
			b[i] = "0123456789"[r.intn(10)]
		}
		return string(b)
	}
	ymd := seen.AddDate(0, 0, -r.intn(30)).Format("2006/01/02")
	handle := pick(r, firstNames) + pick(r, lastNames)
	if r.chance(0.3) {
		handle = strings.ReplaceAll(s.slug, "-", "")
	}
	place := pick(r, places)

	if r.chance(knownShare[kind]) {
		k := pick(r, knownSites[kind])
		u := "https://" + k.host
		switch k.domain {
		case "medium.com":
			u += "/@" + handle + "/" + slug + "-" + fmt.Sprintf("%012x", r.next()>>16)
		case "yelp.com":
			u += "/biz/" + s.slug + "-" + place
		case "yellowpages.com":
			u += "/" + place + "-" + pick(r, states) + "/mip/" + s.slug + "-" + digits(9)
		case "bbb.org":
			u += "/us/" + pick(r, states) + "/" + place + "/profile/" + slugify(s.topic) + "/" + s.slug + "-" + digits(4) + "-" + digits(8)
		case "patch.com":
			u += "/" + pick(r, []string{"texas", "california", "new-york", "florida", "illinois", "ohio"}) + "/" + place + "/" + slug
		case "prnewswire.com":
			u += "/news-releases/" + slug + "-" + digits(9) + ".html"
		case "einpresswire.com":
			u += "/article/" + digits(6) + "/" + slug
		case "reddit.com":
			u += "/r/" + pick(r, subreddits) + "/comments/" + strconv.FormatUint(r.next()%(36*36*36*36*36*36), 36) + "/" + strings.ReplaceAll(slug, "-", "_") + "/"
		case "quora.com":
			u += "/" + titleSlug("what-is-the-best-"+slugify(s.topic)+"-company-in-"+place)
		case "facebook.com":
			u += "/" + handle + "/posts/" + digits(16)
		case "x.com":
			u += "/" + handle + "/status/" + digits(19)
		case "linkedin.com":
			u += "/posts/" + handle + "_" + slug + "-activity-" + digits(19) + "-" + fmt.Sprintf("%04x", r.next()>>48)
		case "pinterest.com":
			u += "/pin/" + digits(18) + "/"
		case "instagram.com":
			u += "/" + handle + "/"
		case "youtube.com":
			u += "/watch?v=" + videoID(r)
		case "tumblr.com":
			u = "https://" + handle + ".tumblr.com/post/" + digits(12) + "/" + slug
			return page{domain: handle + ".tumblr.com", url: u, authority: k.authority}
		default: // directories
			u += "/" + pick(r, []string{"biz", "business", "listing", "company"}) + "/" + s.slug + "-" + digits(7)
		}
		return page{domain: k.domain, url: u, authority: k.authority}
	}

	var domain, path string
	switch kind {
	case SourceBlog:
		switch x := r.float(); {
		case x < 0.15:
			domain = pick(r, blogFirst) + pick(r, blogSecond) + pick(r, blogThird) + ".wordpress.com"
			path = "/" + ymd + "/" + slug + "/"
		case x < 0.25:
			domain = pick(r, blogFirst) + pick(r, blogSecond) + ".blogspot.com"
			path = "/" + ymd[:7] + "/" + slug + ".html"
		default:
			domain = pick(r, blogFirst) + pick(r, blogSecond) + pick(r, blogThird) + pick(r, siteTLDs)
			path = pick(r, []string{"/" + ymd[:7] + "/" + slug + "/", "/blog/" + slug, "/" + slug + "/"})
		}
	case SourceDirectory:
		domain = pick(r, places) + pick(r, directories) + pick(r, siteTLDs)
		path = "/" + pick(r, []string{"listing", "business", "biz"}) + "/" + s.slug + "-" + digits(5)
	case SourceNews:
		domain = place + pick(r, papers) + pick(r, []string{".com", ".com", ".net"})
		path = pick(r, []string{"/news/" + ymd + "/" + slug, "/local/" + slug + "-" + digits(8) + ".html", "/business/" + slug})
	case SourceForum:
		topic := strings.ReplaceAll(slugify(s.topic), "-", "")
		domain = topic + pick(r, forumNames) + pick(r, siteTLDs)
		path = pick(r, []string{"/threads/" + slug + "." + digits(5) + "/", "/t/" + slug + "/" + digits(4), "/viewtopic.php?t=" + digits(5)})
	}
	// A made-up site has the same host and authority in every profile it
	// appears in; most are small.
	dr := newStream("site", domain)
	host := domain
	if strings.Count(domain, ".") == 1 && dr.chance(0.5) {
		host = "www." + domain
	}
	span := madeUpAuthority[kind]
	authority := math.Round(span[0] + (span[1]-span[0])*math.Pow(dr.float(), 2))
	return page{domain: domain, url: "https://" + host + path, authority: authority}
}

// madeUpAuthority is the range of authority of made-up sites of each
// kind; squaring a uniform draw puts most of them at the weak end.
var madeUpAuthority = map[string][2]float64{
	SourceBlog: {5, 60}, SourceDirectory: {10, 45}, SourceNews: {25, 75}, SourceForum: {10, 50},
}

// articleSlug is the slug of a page that would mention the site.
func articleSlug(r *stream, s site, seen time.Time) string {
	topic := slugify(s.topic)
	place := pick(r, places)
	return pick(r, []string{
		strconv.Itoa(5+r.intn(16)) + "-best-" + topic + "-tips",
		"how-to-choose-a-" + topic + "-company",
		topic + "-guide-" + strconv.Itoa(seen.Year()),
		"our-favorite-local-businesses-in-" + place,
		"weekend-roundup-" + strconv.Itoa(1+r.intn(60)),
		place + "-small-business-spotlight",
		"why-we-switched-to-" + s.slug,
		topic + "-cost-breakdown",
		"best-" + topic + "-in-" + place,
		s.slug + "-review",
	})
}

// readSite reads the brand and what the site is about from its name:
// "acme-plumbing.co.uk" is Acme Plumbing, about plumbing.
func readSite(domain string) site {
	labels := strings.Split(strings.TrimPrefix(domain, "www."), ".")
	name := labels[len(labels)-2]
	// A country's second level ("co.uk", "com.au") is not the name.
	if len(labels) >= 3 && len(labels[len(labels)-1]) == 2 &&
		slices.Contains([]string{"co", "com", "org", "net", "ac", "gov", "edu"}, labels[len(labels)-2]) {
		name = labels[len(labels)-3]
	}
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '-' })
	// An internationalised name's dashes are its encoding, not word breaks.
	if strings.HasPrefix(name, "xn--") || len(words) == 0 {
		words = []string{name}
	}
	var title []string
	for _, w := range words {
		title = append(title, titleWord(w))
	}
	topic := strings.Join(words[1:], " ")
	if topic == "" {
		topic = pick(newStream("topic", domain), fallbackTopics)
	}
	return site{domain: domain, brand: strings.Join(title, " "), topic: topic, slug: strings.Join(words, "-")}
}

// normalizeDomain checks that s is a bare host name and returns it lower
// case.
func normalizeDomain(s string) (string, error) {
	d := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	if d == "" {
		return "", invalid("domain is required: a host name such as example.com")
	}
	if strings.ContainsAny(d, "/:?#@ ") {
		return "", invalid("domain %q is not a bare host name: give it without scheme, path or port, such as example.com", s)
	}
	labels := strings.Split(d, ".")
	if len(d) > 253 || len(labels) < 2 {
		return "", invalid("domain %q is not a host name: it needs a name and a top-level domain, such as example.com", s)
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' ||
			strings.ContainsFunc(l, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') }) {
			return "", invalid("domain %q is not a host name: each dot-separated part must be 1 to 63 letters, digits or inner hyphens", s)
		}
	}
	tld := labels[len(labels)-1]
	if !strings.HasPrefix(tld, "xn--") && (len(tld) < 2 || strings.ContainsFunc(tld, func(r rune) bool { return r < 'a' || r > 'z' })) {
		return "", invalid("domain %q is not a host name: its top-level domain %q must be letters", s, tld)
	}
	return d, nil
}

// scoreProfile derives the domain's authority, its home page's authority
// and its spam score from its links, as the commercial tools do in spirit:
// authority grows with the logarithm of strong, followed referring
// domains; spam with the share of weak sites, link-heavy pages and
// keyword-stuffed anchors.
func scoreProfile(links []provider.Backlink, exactAnchors int, home string) (da, pa, spam float64) {
	if len(links) == 0 {
		return 0, 0, 0
	}
	type source struct {
		authority float64
		followed  bool
	}
	sources := map[string]source{}
	homeFollowed, weak, heavy := 0, 0, 0
	for _, l := range links {
		s := sources[l.SourceDomain]
		s.authority = math.Max(s.authority, l.DomainAuthority)
		s.followed = s.followed || !l.NoFollow
		sources[l.SourceDomain] = s
		if l.TargetURL == home && !l.NoFollow {
			homeFollowed++
		}
		if l.DomainAuthority < 15 {
			weak++
		}
		if l.ExternalPages > 100 {
			heavy++
		}
	}
	strength := 0.0
	for _, s := range sources {
		w := (s.authority / 100) * (s.authority / 100)
		if !s.followed {
			w *= 0.25
		}
		strength += w
	}
	n := float64(len(links))
	da = clamp(math.Round(9*math.Log(1+4*strength)), 1, 100)
	pa = clamp(math.Round(0.55*da+5*math.Log(1+float64(homeFollowed))), 1, 100)
	spam = clamp(math.Round(100*(0.45*float64(weak)/n+0.35*float64(heavy)/n+0.5*math.Max(0, float64(exactAnchors)/n-0.1))), 0, 100)
	return da, pa, spam
}

// slugify makes words a URL path segment.
func slugify(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), "-")
}

// titleSlug is a slug with capitalised words, as Quora's question paths
// are.
func titleSlug(slug string) string {
	parts := strings.Split(slug, "-")
	for i, p := range parts {
		parts[i] = titleWord(p)
	}
	return strings.Join(parts, "-")
}

const videoAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// videoID is an 11-character video id.
func videoID(r *stream) string {
	b := make([]byte, 11)
	for i := range b {
		b[i] = videoAlphabet[r.intn(len(videoAlphabet))]
	}
	return string(b)
}
