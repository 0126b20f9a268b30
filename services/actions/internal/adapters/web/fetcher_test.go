package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/web"
	"github.com/atrium-hq/atrium/services/actions/internal/app/onpage"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Every server here listens on 127.0.0.1, which the fetcher refuses unless
// AllowPrivate is set or the test marks the server's address public.

func newFetcher(t *testing.T, cfg web.Config) *web.Fetcher {
	t.Helper()
	f, err := web.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func fetch(t *testing.T, f *web.Fetcher, url string) *provider.Page {
	t.Helper()
	p, err := f.Fetch(context.Background(), url)
	if err != nil {
		t.Fatalf("Fetch(%s): %v", url, err)
	}
	return p
}

// wantProviderError checks err is a ProviderError with code whose message
// holds every one of parts.
func wantProviderError(t *testing.T, err error, code int, parts ...string) {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want a ProviderError with status %d", err, err, code)
	}
	if pe.StatusCode != code {
		t.Errorf("status = %d, want %d (message %q)", pe.StatusCode, code, pe.Message)
	}
	if pe.Provider != web.Provider {
		t.Errorf("provider = %q, want %q", pe.Provider, web.Provider)
	}
	for _, s := range parts {
		if !strings.Contains(pe.Message, s) {
			t.Errorf("message %q does not say %q", pe.Message, s)
		}
	}
}

func html(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

const richPage = `<!DOCTYPE html>
<html lang=" en-GB ">
<head>
<meta charset="utf-8">
<title>
  Best   Coffee Beans — Roasters &amp; Co
</title>
<meta name="Description" content="  Fresh coffee beans,
  roasted weekly. ">
<meta name="description" content="A second description is ignored.">
<meta name="robots" content="index, follow">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/style.css">
<link rel="Canonical" href="/coffee/beans">
<style>body { color: red }</style>
<script>var words = "script words";</script>
</head>
<body>
<h1>Coffee <em>beans</em></h1>
<p>Our beans are roasted<br>every week — 7 days a week.</p>
<noscript>Enable JavaScript please</noscript>
<template><p>template words</p></template>
<div hidden>hidden words</div>
<h3>Skipped   level</h3>
<h2>Origins</h2>
<img src="img/a.png" alt="A sack of beans">
<img src="/img/b.png">
<img src="//cdn.example.net/c.png" alt="">
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" alt="dot">
<a href="/shop">Shop <b>now</b></a>
<a href="https://other.example/x" rel="nofollow noopener">Partner</a>
<a href="javascript:void(0)">JS</a>
<a href="mailto:a@example.com">Mail</a>
<a href="tel:+15550100">Call</a>
<a href="#top">Top</a>
<a href="?page=2"><img src="/next.png" alt="Next page"></a>
<a>No href</a>
<svg><title>Icon title</title></svg>
</body></html>`

func TestFetchReadsAPage(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/coffee/index.html" {
			http.NotFound(w, r)
			return
		}
		html(w, http.StatusOK, richPage)
	})
	f := newFetcher(t, web.Config{AllowPrivate: true})
	p := fetch(t, f, srv.URL+"/coffee/index.html#reviews")
	base := srv.URL

	check := func(field string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v\n want %#v", field, got, want)
		}
	}
	check("URL", p.URL, base+"/coffee/index.html#reviews")
	check("FinalURL", p.FinalURL, base+"/coffee/index.html")
	check("StatusCode", p.StatusCode, 200)
	check("Redirects", p.Redirects, 0)
	check("ContentType", p.ContentType, "text/html; charset=utf-8")
	check("Bytes", p.Bytes, len(richPage))
	check("Title", p.Title, "Best Coffee Beans — Roasters & Co")
	check("MetaDescription", p.MetaDescription, "Fresh coffee beans, roasted weekly.")
	check("MetaRobots", p.MetaRobots, "index, follow")
	check("Canonical", p.Canonical, base+"/coffee/beans")
	check("Lang", p.Lang, "en-GB")
	check("Viewport", p.Viewport, true)
	check("Headings", p.Headings, []provider.Heading{{Level: 1, Text: "Coffee beans"}, {Level: 3, Text: "Skipped level"}, {Level: 2, Text: "Origins"}})
	check("Images", p.Images, []provider.PageImage{
		{Src: base + "/coffee/img/a.png", Alt: "A sack of beans", HasAlt: true},
		{Src: base + "/img/b.png"},
		{Src: "http://cdn.example.net/c.png", Alt: "", HasAlt: true},
		{Src: "data:image/png;base64,…", Alt: "dot", HasAlt: true},
		{Src: base + "/next.png", Alt: "Next page", HasAlt: true},
	})
	check("Links", p.Links, []provider.Link{
		{Href: base + "/shop", Text: "Shop now", Internal: true},
		{Href: "https://other.example/x", Text: "Partner", NoFollow: true},
		{Href: base + "/coffee/index.html?page=2", Text: "Next page", Internal: true},
	})
	check("Text", p.Text, "Coffee beans Our beans are roasted every week — 7 days a week. Skipped level Origins Shop now Partner JS Mail Call Top No href")
	// "—" is not a word; "7" is.
	check("WordCount", p.WordCount, 24)
	if p.Elapsed <= 0 {
		t.Errorf("Elapsed = %v, want the time the fetch took", p.Elapsed)
	}
}

func TestFetchResolvesAgainstBaseHref(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		html(w, http.StatusOK, `<html><head><base href="https://static.example.com/docs/"><link rel="canonical" href="guide"></head>
<body><a href="intro">Intro</a><img src="pic.png" alt="x"></body></html>`)
	})
	p := fetch(t, newFetcher(t, web.Config{AllowPrivate: true}), srv.URL+"/page")
	if p.Canonical != "https://static.example.com/docs/guide" {
		t.Errorf("Canonical = %q, want it resolved against <base href>", p.Canonical)
	}
	if len(p.Links) != 1 || p.Links[0].Href != "https://static.example.com/docs/intro" || p.Links[0].Internal {
		t.Errorf("Links = %+v, want one external link to https://static.example.com/docs/intro", p.Links)
	}
	if len(p.Images) != 1 || p.Images[0].Src != "https://static.example.com/docs/pic.png" {
		t.Errorf("Images = %+v, want https://static.example.com/docs/pic.png", p.Images)
	}
}

func TestFetchDecodesCharsets(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/header":
			w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
			_, _ = w.Write([]byte("<html><head><title>Caf\xe9</title></head><body><p>Na\xefve cr\xe8me</p></body></html>"))
		case "/invalid":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<html><head><title>Bad \xff\xfe bytes</title></head><body><a href=\"/x\">\xc3</a></body></html>"))
		case "/meta":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><head><meta charset=\"windows-1252\"><title>Caf\xe9 \x93quoted\x94</title></head><body></body></html>"))
		}
	})
	f := newFetcher(t, web.Config{AllowPrivate: true})
	if p := fetch(t, f, srv.URL+"/header"); p.Title != "Café" || p.Text != "Naïve crème" {
		t.Errorf("charset from the header: title %q, text %q, want Café and Naïve crème", p.Title, p.Text)
	}
	// Invalid UTF-8 would make the page's strings unusable in protobuf
	// messages and JSON.
	if p := fetch(t, f, srv.URL+"/invalid"); !utf8.ValidString(p.Title) || !utf8.ValidString(p.Links[0].Text) || !utf8.ValidString(p.Text) {
		t.Errorf("invalid UTF-8 kept: title %q, link %q, text %q", p.Title, p.Links[0].Text, p.Text)
	}
	if p := fetch(t, f, srv.URL+"/meta"); p.Title != "Café “quoted”" {
		t.Errorf("charset from <meta>: title %q, want Café “quoted”", p.Title)
	}
}

// hops serves /hop/N, which redirects to /hop/N-1 (301, 302, 307 in turn)
// until /hop/0, a page; it records the last request's headers.
func hops(t *testing.T) (*httptest.Server, *atomic.Value) {
	var last atomic.Value
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if n > 0 {
			codes := []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), codes[n%3])
			return
		}
		last.Store(r.Header.Clone())
		html(w, http.StatusOK, "<title>Arrived</title>")
	})
	return srv, &last
}

func TestFetchFollowsRedirects(t *testing.T) {
	srv, last := hops(t)
	f := newFetcher(t, web.Config{AllowPrivate: true, MaxRedirects: 3})
	p := fetch(t, f, srv.URL+"/hop/3")
	if p.Redirects != 3 || p.FinalURL != srv.URL+"/hop/0" || p.URL != srv.URL+"/hop/3" || p.Title != "Arrived" {
		t.Errorf("got redirects %d, final %q, url %q, title %q; want 3, %s/hop/0, %s/hop/3, Arrived",
			p.Redirects, p.FinalURL, p.URL, p.Title, srv.URL, srv.URL)
	}
	h := last.Load().(http.Header)
	if h.Get("User-Agent") != web.DefaultUserAgent || !strings.HasPrefix(h.Get("Accept"), "text/html") {
		t.Errorf("the last hop got User-Agent %q and Accept %q, want %q and text/html first", h.Get("User-Agent"), h.Get("Accept"), web.DefaultUserAgent)
	}
}

func TestFetchStopsAfterTooManyRedirects(t *testing.T) {
	srv, _ := hops(t)
	f := newFetcher(t, web.Config{AllowPrivate: true, MaxRedirects: 3})
	_, err := f.Fetch(context.Background(), srv.URL+"/hop/4")
	wantProviderError(t, err, http.StatusBadGateway, "too many redirects", "more than 3")

	def := newFetcher(t, web.Config{AllowPrivate: true})
	if p := fetch(t, def, srv.URL+"/hop/5"); p.Redirects != 5 {
		t.Errorf("default limit: %d redirects, want 5 followed", p.Redirects)
	}
	_, err = def.Fetch(context.Background(), srv.URL+"/hop/6")
	wantProviderError(t, err, http.StatusBadGateway, "too many redirects", "more than 5")
}

// TestFetchRefusesRedirectsToPrivateAddresses plays a public site (a
// loopback server marked public) that redirects to private addresses, as
// literals and as names resolving to them.
func TestFetchRefusesRedirectsToPrivateAddresses(t *testing.T) {
	var innerHits atomic.Int32
	inner := serve(t, func(w http.ResponseWriter, r *http.Request) {
		innerHits.Add(1)
		html(w, http.StatusOK, "<title>Secret admin page</title>")
	})
	_, innerPort, _ := net.SplitHostPort(inner.Listener.Addr().String())
	public := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		html(w, http.StatusOK, "<title>Public page</title>")
	})
	f := newFetcher(t, web.Config{})
	web.MarkPublic(f, public.Listener.Addr().String())
	web.SetHosts(f, map[string][]string{
		"intranet.test": {"127.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"private.test":  {"10.0.0.1", "fd00::1"},
	})

	// The control: a redirect within the public site is followed.
	if p := fetch(t, f, public.URL+"/?to="+public.URL+"/landing"); p.Title != "Public page" || p.Redirects != 1 {
		t.Fatalf("redirect within the public site: title %q, %d redirects; want Public page, 1", p.Title, p.Redirects)
	}

	for _, target := range []struct{ to, host string }{
		{inner.URL + "/admin", "127.0.0.1"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254"},
		{"http://[::1]:" + innerPort + "/", "::1"},
		{"http://10.0.0.1/", "10.0.0.1"},
		{"http://[::ffff:127.0.0.1]:" + innerPort + "/", "::ffff:127.0.0.1"},
		{"http://2130706433:" + innerPort + "/", "2130706433"},
		{"http://localhost:" + innerPort + "/", "localhost"},
		{"http://intranet.test:" + innerPort + "/", "intranet.test"},
		{"http://metadata.test/latest/meta-data/", "metadata.test"},
		{"http://private.test/", "private.test"},
		{"http://127.1:" + innerPort + "/", "127.1"},
		{"http://0x7f000001:" + innerPort + "/", "0x7f000001"},
		{"http://[::127.0.0.1]:" + innerPort + "/", "::127.0.0.1"},
		{"http://[64:ff9b::127.0.0.1]:" + innerPort + "/", "64:ff9b::127.0.0.1"},
		{"http://198.18.0.1/", "198.18.0.1"},
		{"http://255.255.255.255/", "255.255.255.255"},
		{"http://[fec0::1]/", "fec0::1"},
	} {
		t.Run(target.to, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), public.URL+"/?to="+target.to)
			wantProviderError(t, err, http.StatusForbidden, "host "+target.host+" ",
				"private network addresses may not be fetched", "--allow-private-fetch")
		})
	}
	if n := innerHits.Load(); n != 0 {
		t.Errorf("the private server was reached %d times, want never", n)
	}
}

func TestFetchRefusesNamesResolvingToPrivateAddresses(t *testing.T) {
	var hits atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		html(w, http.StatusOK, "<title>Reached</title>")
	})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f := newFetcher(t, web.Config{})
	web.SetHosts(f, map[string][]string{
		"intranet.test": {"127.0.0.1"},
		"mixed.test":    {"10.0.0.1", "127.0.0.1"},
		// Names resolving to the addresses the probe found past the old
		// request-time check.
		"compat.test":    {"::127.0.0.1"},
		"nat64.test":     {"64:ff9b::127.0.0.1"},
		"bench.test":     {"198.18.0.1"},
		"broadcast.test": {"255.255.255.255"},
		"sitelocal.test": {"fec0::1"},
	})

	for _, u := range []string{"http://intranet.test:" + port + "/", srv.URL + "/", "http://localhost:" + port + "/",
		"http://compat.test:" + port + "/", "http://nat64.test:" + port + "/", "http://bench.test/", "http://broadcast.test/", "http://sitelocal.test/"} {
		_, err := f.Fetch(context.Background(), u)
		wantProviderError(t, err, http.StatusForbidden, "private network addresses may not be fetched")
	}
	_, err := f.Fetch(context.Background(), "http://intranet.test:"+port+"/")
	wantProviderError(t, err, http.StatusForbidden, "host intranet.test resolves to a private network address")
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server was reached %d times, want never", n)
	}

	// A name with a private and a public address: only the public one is
	// dialled (here the server, marked public).
	web.MarkPublic(f, srv.Listener.Addr().String())
	if p := fetch(t, f, "http://mixed.test:"+port+"/"); p.Title != "Reached" {
		t.Errorf("mixed.test: title %q, want Reached", p.Title)
	}

	// The operator's switch lets a local server be audited.
	allowed := newFetcher(t, web.Config{AllowPrivate: true})
	if p := fetch(t, allowed, "http://localhost:"+port+"/"); p.Title != "Reached" {
		t.Errorf("AllowPrivate, localhost: title %q, want Reached", p.Title)
	}
}

// blocking serves a handler that holds the request until the client gives
// up or the test ends; withHeaders sends the headers and part of the body
// first.
func blocking(t *testing.T, withHeaders bool) *httptest.Server {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if withHeaders {
			html(w, http.StatusOK, "<html><title>Slow</title><body>")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv
}

func TestFetchTimesOut(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         web.Config
		withHeaders bool
		say         string
	}{
		{"no headers, overall limit", web.Config{AllowPrivate: true, Timeout: 200 * time.Millisecond}, false, "took longer than 200ms"},
		{"body stalls, overall limit", web.Config{AllowPrivate: true, Timeout: 200 * time.Millisecond}, true, "took longer than 200ms"},
		{"no headers, header limit", web.Config{AllowPrivate: true, ResponseHeaderTimeout: 100 * time.Millisecond}, false, "did not answer in time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := blocking(t, tc.withHeaders)
			f := newFetcher(t, tc.cfg)
			start := time.Now()
			_, err := f.Fetch(context.Background(), srv.URL)
			took := time.Since(start)
			wantProviderError(t, err, http.StatusGatewayTimeout, "127.0.0.1", tc.say)
			if took > 3*time.Second {
				t.Errorf("the fetch gave up after %v, want soon after its limit", took)
			}
		})
	}
}

func TestFetchReturnsTheCallersContextError(t *testing.T) {
	srv := blocking(t, false)
	f := newFetcher(t, web.Config{AllowPrivate: true})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := f.Fetch(ctx, srv.URL); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller's deadline: error %v, want context.DeadlineExceeded", err)
	}
	var pe *provider.Error
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := f.Fetch(ctx, srv.URL); !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Errorf("caller canceled: error %v, want context.Canceled", err)
	}
}

func TestFetchRefusesLargePages(t *testing.T) {
	body := strings.Repeat("<p>word</p>", 200) // 2,200 bytes
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/declared":
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			fmt.Fprint(w, body)
		case "/chunked":
			fmt.Fprint(w, body[:600])
			w.(http.Flusher).Flush()
			fmt.Fprint(w, body[600:])
		case "/gzip":
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write(make([]byte, 64<<10))
			zw.Close()
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(buf.Bytes())
		case "/exact":
			fmt.Fprint(w, body[:1024])
		}
	})
	f := newFetcher(t, web.Config{AllowPrivate: true, MaxBytes: 1024})
	for _, path := range []string{"/declared", "/chunked", "/gzip"} {
		_, err := f.Fetch(context.Background(), srv.URL+path)
		wantProviderError(t, err, http.StatusBadGateway, "larger than 1 KiB")
	}
	if p := fetch(t, f, srv.URL+"/exact"); p.Bytes != 1024 {
		t.Errorf("a page of exactly the limit: %d bytes, want 1024", p.Bytes)
	}
}

func TestFetchReportsNonHTMLWithoutReadingIt(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR<title>not a title</title>")
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"title": "<h1>not a heading</h1>"}`)
		case "/untyped-png":
			w.Header()["Content-Type"] = nil // no header, and no sniffing by the server
			_, _ = w.Write(png)
		case "/untyped-html":
			w.Header()["Content-Type"] = nil
			fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Sniffed</title></head></html>")
		}
	})
	f := newFetcher(t, web.Config{AllowPrivate: true})
	p := fetch(t, f, srv.URL+"/json")
	if p.StatusCode != 200 || p.ContentType != "application/json" || p.Bytes != 35 {
		t.Errorf("json: status %d, type %q, %d bytes; want 200, application/json, 35", p.StatusCode, p.ContentType, p.Bytes)
	}
	if p.Title != "" || p.Headings != nil || p.Text != "" || p.WordCount != 0 {
		t.Errorf("json: HTML fields filled: %+v", p)
	}
	p = fetch(t, f, srv.URL+"/untyped-png")
	if p.ContentType != "image/png" || p.Title != "" || p.Bytes != len(png) {
		t.Errorf("png without a type: type %q, title %q, %d bytes; want image/png, no title, %d", p.ContentType, p.Title, p.Bytes, len(png))
	}
	p = fetch(t, f, srv.URL+"/untyped-html")
	if !strings.HasPrefix(p.ContentType, "text/html") || p.Title != "Sniffed" {
		t.Errorf("html without a type: type %q, title %q; want text/html, Sniffed", p.ContentType, p.Title)
	}
}

func TestFetchReportsUnreachableHosts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	f := newFetcher(t, web.Config{AllowPrivate: true})
	web.SetHosts(f, map[string][]string{})
	_, err = f.Fetch(context.Background(), "http://"+closed+"/")
	wantProviderError(t, err, http.StatusBadGateway, "cannot reach "+closed+": ", "refused")
	_, err = f.Fetch(context.Background(), "http://nowhere.test/")
	wantProviderError(t, err, http.StatusBadGateway, "cannot reach nowhere.test: the name does not resolve")
}

func TestFetchRefusesURLsCheckURLRefuses(t *testing.T) {
	f := newFetcher(t, web.Config{})
	_, err := f.Fetch(context.Background(), "ftp://example.com/file")
	wantProviderError(t, err, http.StatusBadRequest, `scheme "ftp"`)
	_, err = f.Fetch(context.Background(), "http://169.254.169.254/latest/meta-data/")
	wantProviderError(t, err, http.StatusForbidden, "host 169.254.169.254 is a private network address")
}

func TestCheckURL(t *testing.T) {
	strict := newFetcher(t, web.Config{})
	allowing := newFetcher(t, web.Config{AllowPrivate: true})
	const private = "private network addresses may not be fetched"

	for _, tc := range []struct {
		url string
		say string // empty: accepted
		// allowed is what a fetcher with AllowPrivate says.
		allowed string
	}{
		{"https://example.com/", "", ""},
		{"HTTP://Example.COM:8080/a?b=c#d", "", ""},
		{"https://8.8.8.8/", "", ""},
		{"https://[2001:4860:4860::8888]/", "", ""},
		{"https://localhost.example.com/", "", ""},
		{"http://1.2.3.4.example/", "", ""},

		{"", "the URL is empty", "the URL is empty"},
		{"example.com/page", "no scheme", "no scheme"},
		{"ftp://example.com/", `scheme "ftp" is not allowed`, `scheme "ftp" is not allowed`},
		{"mailto:someone@example.com", `scheme "mailto" is not allowed`, `scheme "mailto" is not allowed`},
		{"http:///path", "no host", "no host"},
		{"http:example.com", "no host", "no host"},
		{"https://exa mple.com/", "must not contain spaces", "must not contain spaces"},
		{"http://[::1/", "not a valid URL", "not a valid URL"},
		{"http://user:pw@example.com/", "user name or password", "user name or password"},
		{"http://user@example.com/", "user name or password", "user name or password"},
		{"http://134744072/", "non-standard form; write it as 8.8.8.8", "write it as 8.8.8.8"},

		{"http://127.0.0.1/", "host 127.0.0.1 is a " + "private", ""},
		{"http://127.8.9.10:8080/", private, ""},
		{"http://[::1]/", "host ::1 ", ""},
		{"http://169.254.169.254/latest/meta-data/", "host 169.254.169.254 ", ""},
		{"http://10.1.2.3/", private, ""},
		{"http://172.16.5.4/", private, ""},
		{"http://192.168.1.1/", private, ""},
		{"http://100.64.0.1/", private, ""},
		{"http://0.0.0.0/", private, ""},
		{"http://224.0.0.1/", private, ""},
		{"http://255.255.255.255/", private, ""},
		{"http://[::]/", private, ""},
		{"http://[fd00::1]/", private, ""},
		{"http://[fe80::1%25eth0]/", private, ""},
		{"http://[ff02::1]/", private, ""},
		{"http://[::ffff:169.254.169.254]/", private, ""},
		{"http://[::ffff:7f00:1]/", private, ""},
		{"http://[64:ff9b::a00:1]/", private, ""}, // NAT64 of 10.0.0.1
		{"http://[2002:a00:1::1]/", private, ""},  // 6to4 of 10.0.0.1
		{"http://localhost/", "host localhost is a private", ""},
		{"http://LOCALHOST./", private, ""},
		{"http://app.localhost:3000/", private, ""},
		{"http://2130706433/", "host 2130706433 is a private", "write it as 127.0.0.1"},
		{"http://0x7f.1/", private, "write it as 127.0.0.1"},
		{"http://017700000001/", private, "write it as 127.0.0.1"},
		// The forms the probe found past the old request-time check.
		{"http://0x7f000001/", "host 0x7f000001 is a private", "write it as 127.0.0.1"},
		{"http://127.1/", "host 127.1 is a private", "write it as 127.0.0.1"},
		{"http://[::127.0.0.1]/", "host ::127.0.0.1 is a private", ""},
		{"http://[64:ff9b::127.0.0.1]/", "host 64:ff9b::127.0.0.1 is a private", ""},
		{"http://198.18.0.1/", "host 198.18.0.1 is a private", ""},
		{"http://[fec0::1]/", "host fec0::1 is a private", ""},
	} {
		for _, f := range []struct {
			name string
			f    *web.Fetcher
			say  string
		}{{"strict", strict, tc.say}, {"AllowPrivate", allowing, tc.allowed}} {
			err := f.f.CheckURL(tc.url)
			switch {
			case f.say == "" && err != nil:
				t.Errorf("%s: CheckURL(%q) = %v, want accepted", f.name, tc.url, err)
			case f.say != "" && err == nil:
				t.Errorf("%s: CheckURL(%q) accepted, want %q", f.name, tc.url, f.say)
			case f.say != "" && !strings.Contains(err.Error(), f.say):
				t.Errorf("%s: CheckURL(%q) = %q, want it to say %q", f.name, tc.url, err, f.say)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("%s: CheckURL(%q) = %q: it repeats the password", f.name, tc.url, err)
			}
		}
	}
}

func TestNewRejectsInvalidSettings(t *testing.T) {
	for _, tc := range []struct {
		cfg  web.Config
		name string
	}{
		{web.Config{Timeout: -time.Second}, "Timeout"},
		{web.Config{DialTimeout: -1}, "DialTimeout"},
		{web.Config{TLSHandshakeTimeout: -1}, "TLSHandshakeTimeout"},
		{web.Config{ResponseHeaderTimeout: -1}, "ResponseHeaderTimeout"},
		{web.Config{MaxRedirects: -1}, "MaxRedirects"},
		{web.Config{MaxBytes: -1}, "MaxBytes"},
		{web.Config{UserAgent: "bot\r\nX-Injected: 1"}, "UserAgent"},
	} {
		if _, err := web.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.cfg, err, tc.name)
		}
	}
}

// TestAuditOfAFetchedPage checks that what the fetcher reads is what the
// audit judges: a page over http, with an image without alt text and no
// lang, fails those three checks and nothing else.
func TestAuditOfAFetchedPage(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		html(w, http.StatusOK, `<!DOCTYPE html><html><head>
<title>Coffee Beans: Fresh Roasts Delivered Weekly</title>
<meta name="description" content="Buy fresh coffee beans roasted every week by small roasters and delivered to your door.">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="canonical" href="/coffee-beans">
</head><body>
<h1>Fresh coffee beans</h1>
<p>Coffee beans from small farms. `+strings.Repeat("Roasted and packed by hand. ", 60)+`</p>
<h2>Origins</h2><h3>Ethiopia</h3><h2>Roasts</h2>
<img src="/sack.png">
<a href="/grinders">Grinders</a>
</body></html>`)
	})
	p := fetch(t, newFetcher(t, web.Config{AllowPrivate: true}), srv.URL+"/coffee-beans")
	r := onpage.Audit(p, "coffee beans")
	var failed []string
	for _, c := range r.Issues() {
		failed = append(failed, c.ID)
	}
	if want := []string{"https", "image_alt", "lang"}; !reflect.DeepEqual(failed, want) {
		t.Errorf("failed %v, want %v; checks %+v", failed, want, r.Checks)
	}
	if r.Score != 86.7 { // 39 of 45 points
		t.Errorf("score %v, want 86.7", r.Score)
	}
}
