package syntheticseo_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

var testDomains = []string{"acme-plumbing.com", "example.org", "www.bluebird-bakery.co.uk", "joes-pizza.net", "tax.io", "shop.brightsmile-dental.com", "xn--bcher-kva.de", "a1roofing.us"}

func backlinks(t *testing.T, domain string) provider.BacklinkProfile {
	t.Helper()
	got, err := newProvider(t).Backlinks(context.Background(), domain)
	if err != nil {
		t.Fatalf("Backlinks(%q): %v", domain, err)
	}
	return got
}

func TestBacklinkProfileInvariants(t *testing.T) {
	ref := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range testDomains {
		p := backlinks(t, d)
		if p.Domain != d {
			t.Errorf("%s: profile domain %q", d, p.Domain)
		}
		if n := len(p.Backlinks); n < 20 || n > 60 {
			t.Errorf("%s: %d backlinks, want 20 to 60", d, n)
		}
		for name, v := range map[string]float64{"domain authority": p.DomainAuthority, "page authority": p.PageAuthority, "spam score": p.SpamScore} {
			if v < 0 || v > 100 {
				t.Errorf("%s: %s %v, want 0 to 100", d, name, v)
			}
		}
		if p.DomainAuthority == 0 {
			t.Errorf("%s: domain authority 0 with %d links", d, len(p.Backlinks))
		}
		pairs := map[string]bool{}
		for _, l := range p.Backlinks {
			pair := l.SourceURL + " -> " + l.TargetURL
			if pairs[pair] {
				t.Errorf("%s: link %s appears twice", d, pair)
			}
			pairs[pair] = true
			if !slices.Contains([]string{"blog", "directory", "news", "forum", "social"}, l.SourceType) {
				t.Errorf("%s: source type %q", d, l.SourceType)
			}
			tu, err := url.Parse(l.TargetURL)
			if err != nil || tu.Scheme != "https" || tu.Host != d || !strings.HasPrefix(tu.Path, "/") {
				t.Errorf("%s: target %q is not a page of https://%s/", d, l.TargetURL, d)
			}
			su, err := url.Parse(l.SourceURL)
			if err != nil || su.Scheme != "https" || (su.Host != l.SourceDomain && !strings.HasSuffix(su.Host, "."+l.SourceDomain)) || su.Path == "" {
				t.Errorf("%s: source %q is not a page on %q", d, l.SourceURL, l.SourceDomain)
			}
			if l.SourceDomain == d {
				t.Errorf("%s: a link from the domain itself", d)
			}
			if strings.TrimSpace(l.AnchorText) == "" {
				t.Errorf("%s: link from %s has no anchor text", d, l.SourceURL)
			}
			if l.DomainAuthority < 5 || l.DomainAuthority > 95 {
				t.Errorf("%s: %s has authority %v, want 5 to 95", d, l.SourceDomain, l.DomainAuthority)
			}
			if l.ExternalPages < 1 || l.ExternalPages > 200 {
				t.Errorf("%s: %s links out %d times, want 1 to 200", d, l.SourceURL, l.ExternalPages)
			}
			if l.LinkingDomains < 0 || l.LinkingDomains > 5000 {
				t.Errorf("%s: %s has %d linking domains, want 0 to 5000", d, l.SourceURL, l.LinkingDomains)
			}
			if !l.FirstSeen.Before(ref) || l.FirstSeen.Before(ref.AddDate(-3, 0, 0)) || l.FirstSeen.Location() != time.UTC {
				t.Errorf("%s: first seen %v, want a UTC date in the three years before %s", d, l.FirstSeen, ref.Format(time.DateOnly))
			}
		}
		if !slices.IsSortedFunc(p.Backlinks, func(a, b provider.Backlink) int { return int(b.DomainAuthority - a.DomainAuthority) }) {
			t.Errorf("%s: backlinks are not strongest first", d)
		}
	}
}

// Across many profiles the links look like a real small business's: every
// kind of site, about one in five nofollow, anchors that mix the brand,
// keywords, generic words and bare URLs, links to the home page and inner
// pages, and a long tail of weak linking pages.
func TestBacklinkProfilesHaveARealisticMix(t *testing.T) {
	kinds := map[string]int{}
	total, nofollow, home, inner, brand, naked, generic, exact, weakPages := 0, 0, 0, 0, 0, 0, 0, 0, 0
	domains := []string{"acme-plumbing.com", "bright-dental-care.com", "joes-pizza.net", "summit-roofing.org", "green-lawn-care.com", "city-auto-repair.com"}
	for _, d := range domains {
		p := backlinks(t, d)
		words := strings.Split(strings.TrimSuffix(d, "."+d[strings.LastIndex(d, ".")+1:]), "-")
		brandName := strings.ToLower(strings.Join(words, " "))
		topic := strings.Join(words[1:], " ")
		for _, l := range p.Backlinks {
			total++
			kinds[l.SourceType]++
			if l.NoFollow {
				nofollow++
			}
			if l.TargetURL == "https://"+d+"/" {
				home++
			} else {
				inner++
			}
			if l.LinkingDomains <= 10 {
				weakPages++
			}
			a := strings.ToLower(l.AnchorText)
			switch {
			case strings.Contains(a, d):
				naked++
			case strings.Contains(a, brandName):
				brand++
			case strings.Contains(a, topic):
				exact++
			case slices.Contains([]string{"click here", "website", "here", "this site", "learn more", "read more", "visit website", "source", "this article"}, a):
				generic++
			default:
				t.Errorf("%s: anchor %q is neither brand, keyword, generic nor URL", d, l.AnchorText)
			}
		}
	}
	for _, k := range []string{"blog", "directory", "news", "forum", "social"} {
		if kinds[k] == 0 {
			t.Errorf("no %s links in %d", k, total)
		}
	}
	if share := float64(nofollow) / float64(total); share < 0.12 || share > 0.30 {
		t.Errorf("nofollow share %.2f, want about 0.20", share)
	}
	for name, n := range map[string]int{"home page": home, "inner page": inner, "brand anchor": brand, "bare URL anchor": naked, "generic anchor": generic, "keyword anchor": exact} {
		if float64(n) < 0.1*float64(total) {
			t.Errorf("%d of %d links are %s links: want at least a tenth", n, total, name)
		}
	}
	if float64(weakPages) < 0.5*float64(total) {
		t.Errorf("%d of %d linking pages have at most 10 linking domains: want most, a power law", weakPages, total)
	}
}

func TestBacklinksNormalizeTheDomain(t *testing.T) {
	p := backlinks(t, " Acme-Plumbing.COM. ")
	if p.Domain != "acme-plumbing.com" {
		t.Errorf("domain %q, want %q", p.Domain, "acme-plumbing.com")
	}
	if want := backlinks(t, "acme-plumbing.com"); len(p.Backlinks) != len(want.Backlinks) || p.Backlinks[0] != want.Backlinks[0] {
		t.Error("the same host written differently got a different profile")
	}
}
