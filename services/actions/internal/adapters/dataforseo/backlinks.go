package dataforseo

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The Backlinks API's endpoints: a domain's backlinks, its summary, and the
// rank of any page.
const (
	pathBacklinks = "/v3/backlinks/backlinks/live"
	pathSummary   = "/v3/backlinks/summary/live"
	pathBulkRanks = "/v3/backlinks/bulk_ranks/live"
)

// BacklinksListed is how many backlinks a profile lists, the strongest
// first: DataForSEO bills by the row, and a report shows the top of the
// list; the totals count every link.
const BacklinksListed = 100

// Backlinks' requests ask for ranks on a 0-to-100 scale (rank_scale), the
// scale of the profile's authorities.
const rankScale = "one_hundred"

type summaryResult struct {
	Rank             *float64 `json:"rank"`
	Backlinks        int      `json:"backlinks"`
	SpamScore        *float64 `json:"backlinks_spam_score"`
	ReferringDomains int      `json:"referring_domains"`
	Info             *struct {
		TargetSpamScore *float64 `json:"target_spam_score"`
	} `json:"info"`
}

type backlinksResult struct {
	Items []struct {
		DomainFrom     string   `json:"domain_from"`
		URLFrom        string   `json:"url_from"`
		URLTo          string   `json:"url_to"`
		DomainFromRank *float64 `json:"domain_from_rank"`
		Platforms      []string `json:"domain_from_platform_type"`
		ExternalLinks  *int     `json:"page_from_external_links"`
		Dofollow       *bool    `json:"dofollow"`
		Anchor         *string  `json:"anchor"`
		Alt            *string  `json:"alt"`
		FirstSeen      string   `json:"first_seen"`
	} `json:"items"`
}

type bulkRanksResult struct {
	Items []struct {
		Target string   `json:"target"`
		Rank   *float64 `json:"rank"`
	} `json:"items"`
}

// Backlinks makes three requests at once: the domain's summary (its rank
// as DomainAuthority, its spam score, its totals), its strongest backlinks,
// and the rank of its home page (PageAuthority), all on DataForSEO's
// 0-to-100 scale. Links from the domain itself, or whose URLs cannot be
// read, are left out.
func (p *Provider) Backlinks(ctx context.Context, domain string) (provider.BacklinkProfile, error) {
	if err := ctx.Err(); err != nil {
		return provider.BacklinkProfile{}, err
	}
	d := normalDomain(domain)
	if d == "" || strings.ContainsAny(d, " /@") || !strings.Contains(d, ".") {
		return provider.BacklinkProfile{}, invalid("domain %q is not a domain name such as example.com", domain)
	}
	home := "https://" + d + "/"
	var (
		summary []summaryResult
		links   []backlinksResult
		ranks   []bulkRanksResult
	)
	err := group(ctx,
		func(ctx context.Context) error {
			return p.call(ctx, pathSummary, map[string]any{
				"target": d, "include_subdomains": true, "backlinks_status_type": "live", "rank_scale": rankScale,
			}, &summary)
		},
		func(ctx context.Context) error {
			return p.call(ctx, pathBacklinks, map[string]any{
				"target": d, "mode": "as_is", "limit": BacklinksListed, "order_by": []string{"rank,desc"},
				"include_subdomains": true, "backlinks_status_type": "live", "rank_scale": rankScale,
			}, &links)
		},
		func(ctx context.Context) error {
			return p.call(ctx, pathBulkRanks, map[string]any{"targets": []string{home}, "rank_scale": rankScale}, &ranks)
		})
	if err != nil {
		return provider.BacklinkProfile{}, err
	}
	prof := provider.BacklinkProfile{Domain: d}
	if len(summary) > 0 {
		s := summary[0]
		prof.DomainAuthority = score(s.Rank)
		prof.Total, prof.ReferringDomains = max(s.Backlinks, 0), max(s.ReferringDomains, 0)
		if s.Info != nil && s.Info.TargetSpamScore != nil {
			prof.SpamScore = score(s.Info.TargetSpamScore)
		} else {
			prof.SpamScore = score(s.SpamScore)
		}
	}
	for _, r := range ranks {
		for _, it := range r.Items {
			if strings.TrimSuffix(it.Target, "/") == strings.TrimSuffix(home, "/") {
				prof.PageAuthority = score(it.Rank)
			}
		}
	}
	sources := map[string]bool{}
	for _, r := range links {
		for _, it := range r.Items {
			from, to := normalDomain(it.DomainFrom), normalDomain(it.URLTo)
			if !absolute(it.URLFrom) || !absolute(it.URLTo) || from == "" || from == d || (to != d && !strings.HasSuffix(to, "."+d)) {
				continue
			}
			l := provider.Backlink{
				SourceURL: it.URLFrom, TargetURL: it.URLTo, SourceDomain: from, SourceType: sourceType(from, it.Platforms),
				DomainAuthority: score(it.DomainFromRank), LinkingDomains: provider.NoFigure,
				NoFollow: it.Dofollow != nil && !*it.Dofollow, FirstSeen: seen(it.FirstSeen),
			}
			if it.ExternalLinks != nil && *it.ExternalLinks > 0 {
				l.ExternalPages = *it.ExternalLinks
			}
			switch {
			case it.Anchor != nil && strings.TrimSpace(*it.Anchor) != "":
				l.AnchorText = strings.Join(strings.Fields(*it.Anchor), " ")
			case it.Alt != nil:
				l.AnchorText = strings.Join(strings.Fields(*it.Alt), " ")
			}
			prof.Backlinks = append(prof.Backlinks, l)
			sources[from] = true
		}
	}
	// The totals count at least what is listed.
	prof.Total = max(prof.Total, len(prof.Backlinks))
	prof.ReferringDomains = max(prof.ReferringDomains, len(sources))
	return prof, nil
}

// score is a rank on the 0-to-100 scale, clamped; 0 without one.
func score(v *float64) float64 {
	if v == nil {
		return 0
	}
	return max(0, min(100, *v))
}

func absolute(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

// seen reads DataForSEO's "2019-11-15 12:57:46 +00:00"; a date it could
// not read is the day the profile was fetched.
func seen(s string) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05 -07:00", "2006-01-02 15:04:05 Z07:00", time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Now().UTC().Truncate(24 * time.Hour)
}

// socialSites are the social networks, which DataForSEO classifies as
// organisations or not at all.
var socialSites = []string{"facebook.com", "x.com", "twitter.com", "linkedin.com", "instagram.com", "pinterest.com",
	"youtube.com", "tiktok.com", "tumblr.com", "threads.net", "snapchat.com", "vk.com"}

// sourceType folds DataForSEO's platform types of the linking domain into
// the five kinds of linking site: a social network by its domain; news;
// forums (message boards and wikis: sites their users write); blogs (blogs
// and CMS sites); directories (organisations and shops, which list
// businesses); and a blog for a site DataForSEO has not classified, the
// most common kind of linking site.
func sourceType(domain string, platforms []string) string {
	for _, s := range socialSites {
		if domain == s || strings.HasSuffix(domain, "."+s) {
			return "social"
		}
	}
	for _, kind := range []struct {
		platform, source string
	}{{"news", "news"}, {"message-boards", "forum"}, {"wikis", "forum"}, {"blogs", "blog"}, {"organization", "directory"}, {"ecommerce", "directory"}, {"cms", "blog"}} {
		if slices.Contains(platforms, kind.platform) {
			return kind.source
		}
	}
	return "blog"
}
