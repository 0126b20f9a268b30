package atrium

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Version is the SDK's version, sent in its User-Agent.
const Version = "0.1.0"

// Defaults of the client's behaviour (Atrium's retry advice).
const (
	DefaultMaxAttempts = 5
	DefaultBackoff     = 250 * time.Millisecond
	DefaultTimeout     = 30 * time.Second
	// maxWait bounds one wait between attempts, Retry-After included.
	maxWait = 30 * time.Second
)

// Client calls Atrium's public API with one API key. Its fields are the
// API's interfaces; it is safe for concurrent use.
type Client struct {
	Collections *CollectionsService
	Items       *ItemsService
	Assets      *AssetsService
	// Previews are the items' preview links.
	Previews  *PreviewLinksService
	Prospects *ProspectsService
	Deals     *DealsService
	Data      *DataService
	Actions   *ActionsService
	Runs      *RunsService
	Webhooks  *WebhooksService
	// Schedules run an action for a client on a timing.
	Schedules *SchedulesService
	// Branding and ReportShares are the client reports' look and links.
	Branding     *BrandingService
	ReportShares *ReportSharesService

	t *transport
}

// Option configures a client.
type Option func(*transport)

// WithHTTPClient sends the requests with c instead of a default client
// (its Timeout should be 0: the client sets a time-out per attempt).
func WithHTTPClient(c *http.Client) Option { return func(t *transport) { t.http = c } }

// WithMaxAttempts sets how many times a request is sent at most (1: never
// retried). Default 5.
func WithMaxAttempts(n int) Option { return func(t *transport) { t.maxAttempts = max(n, 1) } }

// WithBackoff sets the first wait between attempts, which doubles after
// each (with jitter). Default 250 ms.
func WithBackoff(d time.Duration) Option { return func(t *transport) { t.backoff = d } }

// WithTimeout sets the time-out of each attempt. Default 30 s.
func WithTimeout(d time.Duration) Option { return func(t *transport) { t.timeout = d } }

// WithUserAgent adds a product to the User-Agent the client sends.
func WithUserAgent(product string) Option {
	return func(t *transport) { t.userAgent = product + " " + t.userAgent }
}

// New returns a client of the public API at baseURL (http://127.0.0.1:8080)
// authenticating with apiKey.
func New(baseURL, apiKey string, opts ...Option) *Client {
	t := newTransport(baseURL, apiKey, opts)
	return &Client{
		Collections: &CollectionsService{t}, Items: &ItemsService{t}, Assets: &AssetsService{t}, Previews: &PreviewLinksService{t},
		Prospects: &ProspectsService{t}, Deals: &DealsService{t}, Data: &DataService{t},
		Actions: &ActionsService{t}, Runs: &RunsService{t}, Webhooks: &WebhooksService{t},
		Schedules: &SchedulesService{t}, Branding: &BrandingService{t}, ReportShares: &ReportSharesService{t}, t: t,
	}
}

// BaseURL is the API's base URL the client calls.
func (c *Client) BaseURL() string { return c.t.base }

// transport sends requests with the client's retries.
type transport struct {
	base, token string
	http        *http.Client
	maxAttempts int
	backoff     time.Duration
	timeout     time.Duration
	userAgent   string
	// sleep waits between attempts; tests replace it.
	sleep func(context.Context, time.Duration) error
}

func newTransport(baseURL, token string, opts []Option) *transport {
	t := &transport{base: strings.TrimSuffix(baseURL, "/"), token: token, http: &http.Client{},
		maxAttempts: DefaultMaxAttempts, backoff: DefaultBackoff, timeout: DefaultTimeout,
		userAgent: "atrium-go/" + Version, sleep: sleepCtx}
	for _, o := range opts {
		o(t)
	}
	return t
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// request is one call of the API.
type request struct {
	method, path string
	query        url.Values
	// body is JSON-encoded, unless raw is set (sent as is, rewound for
	// each attempt, with contentType).
	body        any
	raw         io.ReadSeeker
	contentType string
	header      http.Header
	// idempotent: the request may be sent again whatever happened to the
	// last attempt (reads, PUT, DELETE, and actions, which carry an
	// Idempotency-Key). Otherwise it is sent again only when it cannot
	// have reached the data.
	idempotent bool
}

// response is a successful answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends r, retrying as the package documents, and decodes a 2xx's JSON
// body into out (if not nil).
func (t *transport) do(ctx context.Context, r request, out any) (*response, error) {
	var body []byte
	if r.body != nil && r.raw == nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("atrium: encode the %s %s body: %w", r.method, r.path, err)
		}
	}
	u := t.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var last error
	for attempt := 1; ; attempt++ {
		resp, err := t.once(ctx, r, u, body)
		if err == nil {
			if out != nil && len(resp.body) > 0 {
				if err := json.Unmarshal(resp.body, out); err != nil {
					return nil, fmt.Errorf("atrium: %s %s answered %d with a body that is not the JSON expected: %w", r.method, r.path, resp.status, err)
				}
			}
			return resp, nil
		}
		last = err
		var ae *Error
		if errors.As(err, &ae) {
			ae.Attempts = attempt
		}
		wait, retry := t.retryable(ctx, r, err)
		if !retry || attempt >= t.maxAttempts {
			return nil, last
		}
		if err := t.sleep(ctx, max(wait, t.jittered(attempt))); err != nil {
			return nil, last
		}
	}
}

// jittered is the wait after attempt n failed: the backoff doubled n-1
// times, between half of it and all of it.
func (t *transport) jittered(n int) time.Duration {
	d := min(t.backoff<<min(n-1, 20), maxWait)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1)) //nolint:gosec // jitter, not a secret
}

// retryable says whether err may be retried, and how long its answer
// asked to wait.
func (t *transport) retryable(ctx context.Context, r request, err error) (time.Duration, bool) {
	if ctx.Err() != nil {
		return 0, false // the caller gave up
	}
	var ae *Error
	if errors.As(err, &ae) {
		if ae.StatusCode < 500 {
			return 0, false // a 4xx does not change on a retry
		}
		wait := min(ae.RetryAfter, maxWait)
		if r.idempotent {
			return wait, true
		}
		// 502 and 503: Atrium answered before any service changed
		// anything (a service unreachable, overloaded or stopping).
		return wait, ae.StatusCode == http.StatusBadGateway || ae.StatusCode == http.StatusServiceUnavailable
	}
	if r.idempotent {
		return 0, true // a network error or a time-out
	}
	// A write whose connection was never made is safe to send again.
	var oe *net.OpError
	return 0, errors.As(err, &oe) && oe.Op == "dial"
}

// once makes one attempt.
func (t *transport) once(ctx context.Context, r request, u string, body []byte) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	var rd io.Reader
	switch {
	case r.raw != nil:
		if _, err := r.raw.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("atrium: rewind the %s %s body: %w", r.method, r.path, err)
		}
		rd = io.NopCloser(r.raw)
	case body != nil:
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("atrium: %s %s: %w", r.method, r.path, err)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	req.Header.Set("User-Agent", t.userAgent)
	req.Header.Set("Accept", "application/json")
	switch {
	case r.raw != nil:
		req.Header.Set("Content-Type", r.contentType)
	case body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("atrium: %s %s: %w", r.method, r.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("atrium: %s %s: reading the answer: %w", r.method, r.path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newError(r.method, r.path, resp, b)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// newIdempotencyKey is a random UUID (version 4), the key of one action.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

// path joins escaped segments into a path.
func path(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}
