package dataforseo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// SourceName is what Source returns and the records carry as their source.
const SourceName = "dataforseo"

// providerName names DataForSEO in the errors a run reports.
const providerName = "DataForSEO"

// Defaults of Config.
const (
	DefaultBaseURL = "https://api.dataforseo.com"
	// SandboxURL is DataForSEO's sandbox: the same API, free, answering
	// every request with fixed sample data.
	SandboxURL     = "https://sandbox.dataforseo.com"
	DefaultTimeout = 20 * time.Second
	// DefaultRatePerMinute keeps a deployment under DataForSEO's default
	// account limit of 2,000 calls a minute, with room for the burst.
	DefaultRatePerMinute = 1800
	// DefaultMaxConcurrent is DataForSEO's limit of simultaneous requests
	// (documented for DataForSEO Labs; the strictest of the APIs used).
	DefaultMaxConcurrent   = 30
	DefaultLocation        = "United States"
	DefaultBackoff         = time.Second
	DefaultMaxAttempts     = 4
	DefaultLocationsTTL    = 24 * time.Hour
	DefaultMaxResponseSize = 16 << 20
)

// maxMessage bounds how much of DataForSEO's own message reaches a caller.
const maxMessage = 300

// Config configures a Provider.
type Config struct {
	// BaseURL is the API's root: https://api.dataforseo.com (the default),
	// https://sandbox.dataforseo.com, or a test server.
	BaseURL string
	// Login and Password are the API credentials (HTTP Basic), from
	// https://app.dataforseo.com/api-access. Required. The password never
	// appears in an error or a log line.
	Login, Password string
	// Timeout bounds one request to DataForSEO, its retries included
	// (--provider-timeout). Default 20 s.
	Timeout time.Duration
	// RatePerMinute is how many requests a minute this process sends at
	// most (--dataforseo-rate-limit), with MaxConcurrent at once. Several
	// replicas share the account's limit: give each its share. Defaults
	// 1,800 and 30.
	RatePerMinute, MaxConcurrent int
	// DefaultLocation is the country keyword ideas are counted in when a
	// question names none (--dataforseo-location). Default United States.
	DefaultLocation string
	// Backoff is the pause before the first retry of a request DataForSEO
	// answered with its rate limit or a server error; each retry doubles
	// it, with jitter, and none goes past Timeout. MaxAttempts bounds the
	// attempts of one request. Defaults 1 s and 4.
	Backoff     time.Duration
	MaxAttempts int
	// LocationsTTL is how long the list of DataForSEO Labs' locations is
	// kept before it is fetched again (it is free, and changes rarely).
	// Default 24 h.
	LocationsTTL time.Duration
	// MaxResponseSize bounds how much of an answer is read. Default 16 MiB.
	MaxResponseSize int64
	// HTTPClient sends the requests; nil: a client of its own.
	HTTPClient *http.Client
	// Now is the clock of the locations list; nil: time.Now.
	Now func() time.Time
	// Logger receives retries and failures to refresh the locations; nil:
	// none.
	Logger *slog.Logger
}

// Provider is the DataForSEO adapter of provider.SearchData. It is safe
// for concurrent use; all requests of a process share its rate limit.
type Provider struct {
	base, host      string
	login, password string
	timeout         time.Duration
	defaultLocation string
	backoff         time.Duration
	maxAttempts     int
	maxBytes        int64
	ratePerMinute   int
	limiter         *rate.Limiter
	slots           chan struct{}
	client          *http.Client
	logger          *slog.Logger
	locations       *locations
}

var _ provider.SearchData = (*Provider)(nil)

// New returns a Provider, or an error naming the setting that is wrong
// (never quoting the password).
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	switch {
	case strings.Contains(cfg.BaseURL, "@") || (err == nil && u.User != nil):
		return nil, errors.New("dataforseo: the base URL must not hold credentials; set the login and password instead")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("dataforseo: base URL %q is not an absolute http or https URL", cfg.BaseURL)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("dataforseo: base URL %q must not have a query or fragment", cfg.BaseURL)
	case strings.TrimSpace(cfg.Login) == "" || cfg.Password == "":
		return nil, errors.New("dataforseo: the API login and password are required (https://app.dataforseo.com/api-access)")
	case cfg.Timeout < 0 || cfg.RatePerMinute < 0 || cfg.MaxConcurrent < 0 || cfg.Backoff < 0 || cfg.MaxAttempts < 0 ||
		cfg.LocationsTTL < 0 || cfg.MaxResponseSize < 0:
		return nil, errors.New("dataforseo: the timeout, rate limit, concurrency, backoff, attempts, locations TTL and response size must not be negative")
	}
	p := &Provider{
		base: strings.TrimRight(u.String(), "/"), host: u.Host, login: strings.TrimSpace(cfg.Login), password: cfg.Password,
		timeout: or(cfg.Timeout, DefaultTimeout), defaultLocation: strings.TrimSpace(cfg.DefaultLocation),
		backoff: or(cfg.Backoff, DefaultBackoff), maxAttempts: or(cfg.MaxAttempts, DefaultMaxAttempts),
		maxBytes: or(cfg.MaxResponseSize, DefaultMaxResponseSize), ratePerMinute: or(cfg.RatePerMinute, DefaultRatePerMinute),
		client: cfg.HTTPClient, logger: cfg.Logger,
	}
	if p.defaultLocation == "" {
		p.defaultLocation = DefaultLocation
	}
	concurrent := or(cfg.MaxConcurrent, DefaultMaxConcurrent)
	p.slots = make(chan struct{}, concurrent)
	// A burst of at most the concurrency: the limit holds over any minute
	// within that many requests.
	p.limiter = rate.NewLimiter(rate.Limit(float64(p.ratePerMinute)/60), min(concurrent, p.ratePerMinute))
	if p.client == nil {
		p.client = &http.Client{}
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	p.locations = &locations{p: p, ttl: or(cfg.LocationsTTL, DefaultLocationsTTL), now: now}
	return p, nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Source returns "dataforseo".
func (p *Provider) Source() string { return SourceName }

// Namespace names the account's view of the data for a cache: answers of
// the sandbox and of production must never be mistaken for each other.
func (p *Provider) Namespace() string { return SourceName + " " + p.base }

// envelope is DataForSEO's answer to every request: a status for the
// request, and one for each of its tasks (Atrium sends one task a request).
type envelope struct {
	StatusCode    int      `json:"status_code"`
	StatusMessage string   `json:"status_message"`
	Cost          *float64 `json:"cost"`
	Tasks         []struct {
		StatusCode    int             `json:"status_code"`
		StatusMessage string          `json:"status_message"`
		Cost          float64         `json:"cost"`
		Result        json.RawMessage `json:"result"`
	} `json:"tasks"`
}

// Status codes DataForSEO answers inside HTTP 200 that Atrium tells apart.
const (
	statusOK           = 20000
	statusUnauthorized = 40100
	statusAuthFailed   = 40101
	statusNoResults    = 40102
	statusRateLimit    = 40202
	statusCostLimit    = 40203
	statusNoAccess     = 40204
	statusFunds        = 40210
	statusPayment      = 40200
	statusInvalidField = 40501
	statusInvalidPost  = 40503
)

// errTimeout is the cause of a request's own deadline, which tells it apart
// from the caller's.
var errTimeout = errors.New("dataforseo request timeout")

// errNoResults is a search DataForSEO ran and found nothing for (40102):
// an answer, not a failure.
var errNoResults = errors.New("no search results")

// failure is one attempt's failure and whether another may succeed.
type failure struct {
	err        *provider.Error
	retry      bool
	retryAfter time.Duration
}

func (f *failure) Error() string { return f.err.Error() }

// call sends one task to the endpoint at path (a GET when task is nil) and
// decodes the first task's result into out. It waits for the process's
// rate limit and a free slot, retries DataForSEO's rate limit and server
// errors with backoff within the request's time-out, reports every
// attempt's cost to the run's meter, and turns DataForSEO's status codes
// into provider errors. A search that found nothing is errNoResults; the
// caller's own cancellation or deadline is the context's error.
func (p *Provider) call(ctx context.Context, path string, task any, out any) error {
	var body []byte
	method := http.MethodGet
	if task != nil {
		b, err := json.Marshal([]any{task})
		if err != nil {
			return fmt.Errorf("dataforseo: encode task: %w", err)
		}
		body, method = b, http.MethodPost
	}
	cctx, cancel := context.WithTimeoutCause(ctx, p.timeout, errTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		if err := p.limiter.Wait(cctx); err != nil {
			if e := p.contextError(ctx, cctx); e != nil {
				return e
			}
			return provider.Failure(providerName, http.StatusTooManyRequests, err,
				"this deployment's own limit of %d requests a minute to DataForSEO (--dataforseo-rate-limit) leaves no room before the time-out; retry shortly", p.ratePerMinute)
		}
		res, err := p.attempt(ctx, cctx, method, path, body)
		if err == nil {
			return decodeResult(res, out)
		}
		var f *failure
		if !errors.As(err, &f) {
			return err
		}
		if !f.retry || attempt >= p.maxAttempts {
			return f.err
		}
		pause := p.pause(attempt, f.retryAfter)
		if deadline, ok := cctx.Deadline(); ok && time.Until(deadline) < pause {
			return f.err
		}
		p.logger.DebugContext(ctx, "retrying a DataForSEO request", "path", path, "attempt", attempt, "status_code", f.err.StatusCode, "pause", pause)
		t := time.NewTimer(pause)
		select {
		case <-cctx.Done():
			t.Stop()
			if e := p.contextError(ctx, cctx); e != nil {
				return e
			}
			return f.err
		case <-t.C:
		}
	}
}

// pause is how long to wait before attempt+1: the server's Retry-After
// when it sent one, otherwise Backoff doubled per attempt, between half and
// all of it (jitter spreads the retries of a grid's requests).
func (p *Provider) pause(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := p.backoff << min(attempt-1, 10)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1)) //nolint:gosec // G404: retry jitter, not a secret
}

// result is a successful attempt's task result, or errNoResults.
type result struct {
	raw json.RawMessage
	err error
}

// attempt sends the request once, within a concurrency slot. Its error is
// a *failure, or the caller's context's error.
func (p *Provider) attempt(ctx, cctx context.Context, method, path string, body []byte) (result, error) {
	select {
	case p.slots <- struct{}{}:
	case <-cctx.Done():
		return result{}, p.ended(ctx, cctx)
	}
	defer func() { <-p.slots }()
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(cctx, method, p.base+path, rd)
	if err != nil {
		return result{}, &failure{err: provider.Failure(providerName, http.StatusBadGateway, err, "cannot build a request to %s", p.host)}
	}
	req.SetBasicAuth(p.login, p.password)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return result{}, p.transportError(ctx, cctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, p.maxBytes+1))
	if err != nil {
		return result{}, p.transportError(ctx, cctx, err)
	}
	var env envelope
	decodeErr := json.Unmarshal(raw, &env)
	// What DataForSEO says a request cost is what it charged, failed
	// requests included.
	if decodeErr == nil && env.Cost != nil {
		provider.Billed(ctx, provider.Dollars(*env.Cost))
	} else {
		provider.Billed(ctx, 0)
	}
	switch {
	case int64(len(raw)) > p.maxBytes:
		return result{}, &failure{err: provider.Failure(providerName, http.StatusBadGateway, nil, "DataForSEO's answer is larger than %d MiB", p.maxBytes>>20)}
	case resp.StatusCode != http.StatusOK:
		return result{}, p.httpFailure(resp, env, decodeErr == nil)
	case decodeErr != nil:
		return result{}, &failure{err: provider.Failure(providerName, http.StatusBadGateway, decodeErr,
			"DataForSEO's answer is not JSON in its documented shape; is --dataforseo-base-url (%s) DataForSEO's API?", p.host)}
	case env.StatusCode != statusOK:
		return result{}, p.statusFailure(env.StatusCode, env.StatusMessage)
	case len(env.Tasks) == 0:
		return result{}, &failure{err: provider.Failure(providerName, http.StatusBadGateway, nil, "DataForSEO's answer has no task")}
	}
	t := env.Tasks[0]
	switch t.StatusCode {
	case statusOK:
		return result{raw: t.Result}, nil
	case statusNoResults:
		return result{err: errNoResults}, nil
	}
	return result{}, p.statusFailure(t.StatusCode, t.StatusMessage)
}

// httpFailure reads an answer other than HTTP 200: DataForSEO sends 401,
// 402, 404 and 500 with its envelope.
func (p *Provider) httpFailure(resp *http.Response, env envelope, decoded bool) *failure {
	code := resp.StatusCode
	detail := ""
	if decoded && env.StatusMessage != "" {
		detail = fmt.Sprintf(" (%d %s)", env.StatusCode, p.clean(env.StatusMessage))
	}
	f := &failure{}
	switch {
	case code == http.StatusUnauthorized:
		f.err = provider.Failure(providerName, code, nil, "DataForSEO refused the login and password this deployment is configured with (--dataforseo-login, --dataforseo-password)%s", detail)
	case code == http.StatusPaymentRequired:
		f.err = provider.Failure(providerName, code, nil, "DataForSEO could not bill the account: check its balance at https://app.dataforseo.com%s", detail)
	case code == http.StatusNotFound:
		f.err = provider.Failure(providerName, http.StatusBadGateway, nil, "DataForSEO has no endpoint %s; is --dataforseo-base-url (%s) right?%s", resp.Request.URL.Path, p.host, detail)
	case code == http.StatusTooManyRequests:
		f.err, f.retry = provider.Failure(providerName, code, nil, "DataForSEO is rate limiting the account; retry shortly%s", detail), true
		f.retryAfter = retryAfter(resp.Header.Get("Retry-After"))
	case code >= 500 && code <= 599:
		f.err, f.retry = provider.Failure(providerName, code, nil, "DataForSEO failed (HTTP %d)%s", code, detail), true
		f.retryAfter = retryAfter(resp.Header.Get("Retry-After"))
	default:
		f.err = provider.Failure(providerName, http.StatusBadGateway, nil, "DataForSEO answered HTTP %d%s", code, detail)
	}
	return f
}

// statusFailure says what one of DataForSEO's status codes means, with the
// status the run reports: 429 for its rate limit (retried), 402 when the
// account cannot pay, 401 and 403 for credentials and access, 400 for a
// question it refuses, the 5xx of its own failures (retried), and 502 for
// anything else, an answer Atrium cannot use.
func (p *Provider) statusFailure(code int, msg string) *failure {
	what := fmt.Sprintf("%d %s", code, p.clean(msg))
	f := &failure{}
	switch {
	case code == statusRateLimit:
		f.err, f.retry = provider.Failure(providerName, http.StatusTooManyRequests, nil, "the DataForSEO account's rate limit is reached (%s); retry shortly", what), true
	case code == statusFunds:
		f.err = provider.Failure(providerName, http.StatusPaymentRequired, nil, "the DataForSEO account's funds are exhausted (%s); top it up at https://app.dataforseo.com", what)
	case code == statusCostLimit:
		f.err = provider.Failure(providerName, http.StatusPaymentRequired, nil, "the daily cost limit set for the DataForSEO account is reached (%s)", what)
	case code == statusPayment:
		f.err = provider.Failure(providerName, http.StatusPaymentRequired, nil, "DataForSEO could not bill the account (%s)", what)
	case code == statusUnauthorized || code == statusAuthFailed:
		f.err = provider.Failure(providerName, http.StatusUnauthorized, nil, "DataForSEO refused the login and password this deployment is configured with (%s)", what)
	case code == statusNoAccess:
		f.err = provider.Failure(providerName, http.StatusForbidden, nil, "the DataForSEO account has no access to this API (%s); activate it in the DataForSEO dashboard", what)
	case code == statusInvalidField || code == statusInvalidPost:
		f.err = provider.Failure(providerName, http.StatusBadRequest, nil, "DataForSEO refused the question (%s)", what)
	case code >= 50000 && code <= 59999:
		f.err, f.retry = provider.Failure(providerName, code/100, nil, "DataForSEO failed (%s)", what), true
	default:
		f.err = provider.Failure(providerName, http.StatusBadGateway, nil, "DataForSEO answered with an error Atrium cannot use (%s)", what)
	}
	return f
}

func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 && s <= 60 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// decodeResult reads a task's result array into out.
func decodeResult(r result, out any) error {
	if r.err != nil {
		return r.err
	}
	if out == nil {
		return nil
	}
	if len(r.raw) == 0 || string(r.raw) == "null" {
		r.raw = []byte("[]")
	}
	if err := json.Unmarshal(r.raw, out); err != nil {
		return provider.Failure(providerName, http.StatusBadGateway, err, "DataForSEO's result is not in its documented shape: %s", err)
	}
	return nil
}

// contextError is the caller's own end (its cancellation or deadline) as
// it is, or the request's time-out as a 504; nil while neither has ended.
func (p *Provider) contextError(ctx, cctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if errors.Is(context.Cause(cctx), errTimeout) {
		return provider.Failure(providerName, http.StatusGatewayTimeout, errTimeout,
			"DataForSEO did not answer within %s (--provider-timeout)", p.timeout)
	}
	return nil
}

// ended is the error of an attempt cut short by a context: the caller's
// own end as it is, the request's time-out as a failure not retried.
func (p *Provider) ended(ctx, cctx context.Context) error {
	err := p.contextError(ctx, cctx)
	var pe *provider.Error
	if errors.As(err, &pe) {
		return &failure{err: pe}
	}
	if err == nil {
		err = cctx.Err()
	}
	return err
}

// transportError turns a failure to send or read into what the run
// reports: the caller's end as is, the request's time-out as 504, a server
// that cannot be reached as 503, a connection lost as 502.
func (p *Provider) transportError(ctx, cctx context.Context, err error) error {
	if cctx.Err() != nil {
		return p.ended(ctx, cctx)
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	if errors.As(err, &dnsErr) || (errors.As(err, &opErr) && opErr.Op == "dial") {
		return &failure{err: provider.Failure(providerName, http.StatusServiceUnavailable, err, "cannot reach DataForSEO at %s", p.host)}
	}
	return &failure{err: provider.Failure(providerName, http.StatusBadGateway, err, "the connection to DataForSEO at %s failed before it answered", p.host)}
}

// clean makes DataForSEO's own message fit to show: one line, never the
// password, at most maxMessage characters.
func (p *Provider) clean(s string) string {
	if p.password != "" {
		s = strings.ReplaceAll(s, p.password, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxMessage {
		s = strings.TrimSpace(string([]rune(s)[:maxMessage])) + "…"
	}
	return s
}

// group runs fns concurrently (each within the rate limit and the slots
// of call) and returns the first failure, canceling the others.
func group(ctx context.Context, fns ...func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, fn := range fns {
		wg.Go(func() {
			if err := fn(ctx); err != nil {
				once.Do(func() { first = err; cancel(err) })
			}
		})
	}
	wg.Wait()
	return first
}
