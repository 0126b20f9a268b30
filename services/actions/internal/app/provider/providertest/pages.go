package providertest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// auditPage has one of everything an audit reads.
const auditPage = `<!DOCTYPE html>
<html lang="en-GB"><head>
<title>Fresh Coffee Beans Delivered</title>
<meta name="description" content="Beans roasted every week.">
<meta name="robots" content="index, follow">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="canonical" href="/coffee">
</head><body>
<h1>Coffee beans</h1>
<p>Our beans are roasted every week</p>
<h3>Skipped level</h3>
<h2>Origins</h2>
<img src="/a.png" alt="A sack of beans"><img src="b.png"><img src="/c.png" alt="">
<a href="/shop">Shop now</a> <a href="https://other.example/x" rel="nofollow">Partner</a>
</body></html>`

// RunPages runs the page fetcher's contract against fetchers made by
// newFetcher, which must be allowed to fetch the loopback addresses the
// suite serves its pages on: a page is read as the audit needs it, a page
// that answers an error status is a page too (the audit reports it), a
// page that is not HTML has no HTML fields, redirects are followed, a host
// that cannot be reached is a provider failure (502), and the caller's
// context ends a fetch.
func RunPages(t *testing.T, newFetcher func(t *testing.T) provider.PageFetcher) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/coffee":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, auditPage)
		case "/old":
			http.Redirect(w, r, "/coffee", http.StatusMovedPermanently)
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"title": "<h1>not a heading</h1>"}`)
		case "/slow":
			<-r.Context().Done()
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, "<title>Not found</title><h1>Gone</h1>")
		}
	}))
	t.Cleanup(srv.Close)
	base := srv.URL

	fetch := func(t *testing.T, u string) *provider.Page {
		t.Helper()
		p, err := newFetcher(t).Fetch(t.Context(), u)
		if err != nil {
			t.Fatalf("Fetch(%s): %v", u, err)
		}
		return p
	}
	check := func(t *testing.T, field string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v\n want %#v", field, got, want)
		}
	}

	t.Run("ReadsWhatTheAuditChecks", func(t *testing.T) {
		p := fetch(t, base+"/coffee")
		check(t, "URL", p.URL, base+"/coffee")
		check(t, "FinalURL", p.FinalURL, base+"/coffee")
		check(t, "StatusCode", p.StatusCode, 200)
		check(t, "Redirects", p.Redirects, 0)
		check(t, "Bytes", p.Bytes, len(auditPage))
		check(t, "Title", p.Title, "Fresh Coffee Beans Delivered")
		check(t, "MetaDescription", p.MetaDescription, "Beans roasted every week.")
		check(t, "MetaRobots", p.MetaRobots, "index, follow")
		check(t, "Canonical", p.Canonical, base+"/coffee")
		check(t, "Lang", p.Lang, "en-GB")
		check(t, "Viewport", p.Viewport, true)
		check(t, "Headings", p.Headings, []provider.Heading{{Level: 1, Text: "Coffee beans"}, {Level: 3, Text: "Skipped level"}, {Level: 2, Text: "Origins"}})
		check(t, "Images", p.Images, []provider.PageImage{
			{Src: base + "/a.png", Alt: "A sack of beans", HasAlt: true}, {Src: base + "/b.png"}, {Src: base + "/c.png", HasAlt: true},
		})
		check(t, "Links", p.Links, []provider.Link{
			{Href: base + "/shop", Text: "Shop now", Internal: true}, {Href: "https://other.example/x", Text: "Partner", NoFollow: true},
		})
		check(t, "Text", p.Text, "Coffee beans Our beans are roasted every week Skipped level Origins Shop now Partner")
		check(t, "WordCount", p.WordCount, 14)
		if !strings.HasPrefix(p.ContentType, "text/html") || p.Elapsed <= 0 {
			t.Errorf("content type %q, elapsed %v; want text/html and the time the fetch took", p.ContentType, p.Elapsed)
		}
	})
	t.Run("AnErrorStatusIsAPage", func(t *testing.T) {
		p := fetch(t, base+"/missing")
		check(t, "StatusCode", p.StatusCode, 404)
		check(t, "Title", p.Title, "Not found")
	})
	t.Run("FollowsRedirects", func(t *testing.T) {
		p := fetch(t, base+"/old")
		check(t, "URL", p.URL, base+"/old")
		check(t, "FinalURL", p.FinalURL, base+"/coffee")
		check(t, "Redirects", p.Redirects, 1)
		check(t, "StatusCode", p.StatusCode, 200)
	})
	t.Run("APageThatIsNotHTMLHasNoHTMLFields", func(t *testing.T) {
		p := fetch(t, base+"/data.json")
		check(t, "ContentType", p.ContentType, "application/json")
		if p.StatusCode != 200 || p.Title != "" || p.Headings != nil || p.WordCount != 0 {
			t.Errorf("page %+v, want status 200 and no title, headings or words", p)
		}
	})
	t.Run("AnUnreachableHostIsAFailure", func(t *testing.T) {
		_, err := newFetcher(t).Fetch(t.Context(), "http://"+closedAddr(t)+"/")
		wantFailure(t, err, http.StatusBadGateway)
	})
	t.Run("TheCallersContextEndsTheFetch", func(t *testing.T) {
		f := newFetcher(t)
		callerContexts(t, func(ctx context.Context) error {
			_, err := f.Fetch(ctx, base+"/slow")
			return err
		})
	})
}
