// Package web fetches web pages for the actions that audit them: it answers
// the provider.PageFetcher port over HTTP, refusing private network addresses
// (an audit URL is chosen by the caller, and the fetcher runs inside
// Atrium's network), bounding time, redirects and size, and reads what an
// audit checks from the HTML.
package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Provider names the fetcher in its errors.
const Provider = "web page"

// DefaultUserAgent is the User-Agent a fetch sends unless configured.
const DefaultUserAgent = "AtriumAudit/1.0 (+https://atrium.example/bot)"

// Defaults of Config.
const (
	DefaultTimeout               = 15 * time.Second
	DefaultDialTimeout           = 5 * time.Second
	DefaultTLSHandshakeTimeout   = 5 * time.Second
	DefaultResponseHeaderTimeout = 10 * time.Second
	DefaultMaxRedirects          = 5
	DefaultMaxBytes              = 5 << 20
)

// Config configures a Fetcher. Zero values take the defaults.
type Config struct {
	// Timeout bounds a whole fetch: every redirect hop, the connections and
	// reading the body. Default 15 s.
	Timeout time.Duration
	// DialTimeout bounds each TCP connection attempt. Default 5 s.
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds each TLS handshake. Default 5 s.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a response's headers once
	// the request is sent. Default 10 s.
	ResponseHeaderTimeout time.Duration
	// MaxRedirects is how many redirects a fetch follows; one more is an
	// error. Default 5.
	MaxRedirects int
	// MaxBytes is the largest body read, after decompression. Default
	// 5 MiB.
	MaxBytes int64
	// UserAgent is sent with every request. Default DefaultUserAgent.
	UserAgent string
	// AllowPrivate lets the fetcher reach private network addresses
	// (loopback, RFC 1918, link-local, unique-local, ...), for testing
	// against local servers. The service sets it from --allow-private-fetch
	// (ATRIUM_ALLOW_PRIVATE_FETCH=true); it must stay off in production.
	AllowPrivate bool
}

// Fetcher fetches and reads web pages. It is safe for concurrent use.
type Fetcher struct {
	cfg       Config
	transport *http.Transport
	// guard dials every connection; tests set its Lookup and Exempt
	// (export_test.go).
	guard *netguard.Guard
}

var _ provider.PageFetcher = (*Fetcher)(nil)

// New returns a Fetcher, or an error naming the setting of cfg that is not
// valid.
func New(cfg Config) (*Fetcher, error) {
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"Timeout", &cfg.Timeout, DefaultTimeout},
		{"DialTimeout", &cfg.DialTimeout, DefaultDialTimeout},
		{"TLSHandshakeTimeout", &cfg.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout},
		{"ResponseHeaderTimeout", &cfg.ResponseHeaderTimeout, DefaultResponseHeaderTimeout},
	}
	for _, d := range durations {
		if *d.v < 0 {
			return nil, fmt.Errorf("web fetcher: %s must be positive (0 for the default %s), got %s", d.name, d.def, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	switch {
	case cfg.MaxRedirects < 0:
		return nil, fmt.Errorf("web fetcher: MaxRedirects must not be negative (0 for the default %d), got %d", DefaultMaxRedirects, cfg.MaxRedirects)
	case cfg.MaxRedirects == 0:
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	switch {
	case cfg.MaxBytes < 0:
		return nil, fmt.Errorf("web fetcher: MaxBytes must not be negative (0 for the default %d), got %d", DefaultMaxBytes, cfg.MaxBytes)
	case cfg.MaxBytes == 0:
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if strings.ContainsFunc(cfg.UserAgent, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("web fetcher: UserAgent must not contain control characters, got %q", cfg.UserAgent)
	}

	f := &Fetcher{cfg: cfg, guard: &netguard.Guard{AllowPrivate: cfg.AllowPrivate, DialTimeout: cfg.DialTimeout}}
	f.transport = &http.Transport{
		// No proxy: through one, the address checked would be the proxy's.
		Proxy:                  nil,
		DialContext:            f.dial,
		TLSHandshakeTimeout:    cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout:  cfg.ResponseHeaderTimeout,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
		// Each fetch is one page of an audit, rarely of a host fetched
		// again soon: idle connections would only hold file descriptors.
		DisableKeepAlives: true,
	}
	return f, nil
}

// dial connects through the guard; a connection it refuses is a 403 of
// the page provider.
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := f.guard.DialContext(ctx, network, addr)
	if re, ok := netguard.IsRefused(err); ok {
		return nil, provider.Failure(Provider, http.StatusForbidden, err, "%s", refusal(re.Error()))
	}
	return conn, err
}

// Fetch implements provider.PageFetcher. A page that answers with a status
// other than 2xx is not an error: its Page says so. A page that is not
// HTML has its status, content type and size and no HTML fields.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*provider.Page, error) {
	u, uerr := f.checkURL(rawURL)
	if uerr != nil {
		code := http.StatusBadRequest
		if uerr.Private {
			code = http.StatusForbidden
		}
		return nil, provider.Failure(Provider, code, uerr, "%s", uerr.Reason)
	}
	u.Fragment, u.RawFragment = "", ""

	fctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	start := time.Now()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, provider.Failure(Provider, http.StatusBadRequest, err, "the url is not a valid URL")
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1")

	redirects := 0
	client := &http.Client{
		Transport: f.transport,
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			from := via[len(via)-1].URL.Host
			if len(via) > f.cfg.MaxRedirects {
				return provider.Failure(Provider, http.StatusBadGateway, nil,
					"too many redirects: %s redirected more than %d times", u.Host, f.cfg.MaxRedirects)
			}
			if _, uerr := f.checkURL(next.URL.String()); uerr != nil {
				if uerr.Private {
					return provider.Failure(Provider, http.StatusForbidden, uerr, "%s redirected to a URL whose %s", from, uerr.Reason)
				}
				return provider.Failure(Provider, http.StatusBadGateway, uerr, "%s redirected to a URL that cannot be fetched: %s", from, uerr.Reason)
			}
			redirects = len(via)
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, f.failure(ctx, fctx, u.Host, err)
	}
	defer resp.Body.Close()
	final := *resp.Request.URL
	final.Fragment, final.RawFragment = "", ""

	if resp.ContentLength > f.cfg.MaxBytes {
		return nil, f.tooLarge(final.Host)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if fctx.Err() != nil || isTimeout(err) {
			return nil, f.timedOut(final.Host, fctx.Err() != nil, err)
		}
		return nil, provider.Failure(Provider, http.StatusBadGateway, err,
			"the connection to %s broke while reading the page: %v", final.Host, err)
	}
	if int64(len(body)) > f.cfg.MaxBytes {
		return nil, f.tooLarge(final.Host)
	}

	elapsed := time.Since(start)

	page := &provider.Page{
		URL:         rawURL,
		FinalURL:    final.String(),
		StatusCode:  resp.StatusCode,
		Redirects:   redirects,
		ContentType: resp.Header.Get("Content-Type"),
		Bytes:       len(body),
		Elapsed:     elapsed,
	}
	if page.ContentType == "" {
		page.ContentType = http.DetectContentType(body)
	}
	if isHTML(page.ContentType) {
		enc, _, _ := charset.DetermineEncoding(body, page.ContentType)
		doc, err := html.Parse(enc.NewDecoder().Reader(bytes.NewReader(body)))
		if err != nil {
			return nil, provider.Failure(Provider, http.StatusBadGateway, err, "the page at %s could not be read as HTML: %v", final.Host, err)
		}
		read(page, doc, &final)
	}
	return page, nil
}

func isHTML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// failure turns an error of client.Do into what Fetch returns.
func (f *Fetcher) failure(ctx, fctx context.Context, host string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			host = u.Host
		}
		err = ue.Err
	}
	if fctx.Err() != nil || isTimeout(err) {
		return f.timedOut(host, fctx.Err() != nil, err)
	}
	if _, ok := netguard.IsRefused(err); ok {
		// The socket's own check refused the address: name the host asked
		// for, not the address it resolved to.
		name := host
		if h, _, err := net.SplitHostPort(host); err == nil {
			name = h
		}
		return provider.Failure(Provider, http.StatusForbidden, err, "%s", refusal((&netguard.RefusedError{Host: name, Resolved: true}).Error()))
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return provider.Failure(Provider, http.StatusBadGateway, err, "cannot reach %s: the name does not resolve", host)
		}
		return provider.Failure(Provider, http.StatusBadGateway, err, "cannot reach %s: looking the name up failed: %s", host, dnsErr.Err)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		err = opErr.Err
	}
	return provider.Failure(Provider, http.StatusBadGateway, err, "cannot reach %s: %v", host, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// timedOut is a 504; overall says the fetch's own limit ran out, rather
// than one of the dial, handshake or response header limits.
func (f *Fetcher) timedOut(host string, overall bool, err error) error {
	if overall {
		return provider.Failure(Provider, http.StatusGatewayTimeout, err,
			"%s did not answer in time: the page took longer than %s", host, f.cfg.Timeout)
	}
	return provider.Failure(Provider, http.StatusGatewayTimeout, err, "%s did not answer in time: %v", host, err)
}

func (f *Fetcher) tooLarge(host string) error {
	return provider.Failure(Provider, http.StatusBadGateway, nil,
		"the page at %s is larger than %s, the most the fetcher reads", host, formatBytes(f.cfg.MaxBytes))
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
