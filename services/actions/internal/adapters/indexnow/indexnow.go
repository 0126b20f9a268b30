// Package indexnow is the actions service's Indexer over the IndexNow
// protocol (https://www.indexnow.org/documentation): it tells the search
// engines that share IndexNow submissions (Bing, Yandex, Seznam, Naver, ...)
// that pages of a site changed. The site proves it owns the key by hosting
// it, at https://<host>/<key>.txt or at a key location given with each
// submission; the engines answer 200 or 202 to a submission they take.
package indexnow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// DefaultEndpoint is the shared IndexNow endpoint, which passes submissions
// on to every participating engine.
const DefaultEndpoint = "https://api.indexnow.org/indexnow"

// DefaultTimeout bounds one submission.
const DefaultTimeout = 15 * time.Second

// MaxURLs is the protocol's limit of URLs in one submission.
const MaxURLs = 10000

const providerName = "IndexNow"

// Config configures an Indexer.
type Config struct {
	// Endpoint is the submission URL. Default DefaultEndpoint.
	Endpoint string
	// Key is the site's IndexNow key: 8 to 128 characters of a-z, A-Z, 0-9
	// and "-". Without it the Indexer is built but refuses to submit (503),
	// so that the service can start before it is configured.
	Key string
	// KeyLocation is where the key file is hosted, when not at the
	// protocol's default https://<host>/<key>.txt: an absolute URL in
	// which "{host}" and "{key}" are replaced by the submission's host and
	// the key, "https://{host}/seo/{key}.txt". Empty: the default applies
	// and no keyLocation is sent.
	KeyLocation string
	// Timeout bounds one submission. Default DefaultTimeout.
	Timeout time.Duration
	// Client makes the requests. Default: a client of its own.
	Client *http.Client
}

// Indexer submits URLs to one IndexNow endpoint.
type Indexer struct {
	endpoint    string
	key         string
	keyLocation string
	timeout     time.Duration
	client      *http.Client
}

var _ provider.Indexer = (*Indexer)(nil)

// New validates cfg and returns an Indexer.
func New(cfg Config) (*Indexer, error) {
	ix := &Indexer{
		endpoint:    cfg.Endpoint,
		key:         cfg.Key,
		keyLocation: cfg.KeyLocation,
		timeout:     cfg.Timeout,
		client:      cfg.Client,
	}
	if ix.endpoint == "" {
		ix.endpoint = DefaultEndpoint
	}
	if err := checkURL(ix.endpoint); err != nil {
		return nil, fmt.Errorf("indexnow: Endpoint %q: %w", ix.endpoint, err)
	}
	if ix.key != "" && !ValidKey(ix.key) {
		// The key is not a secret (it is published on the site), but a
		// wrong one is shown only by its length.
		return nil, fmt.Errorf("indexnow: Key (%d characters) must be 8 to 128 characters of a-z, A-Z, 0-9 and '-'", len(ix.key))
	}
	if ix.keyLocation != "" {
		example := ix.expandKeyLocation("www.example.com")
		if err := checkURL(example); err != nil {
			return nil, fmt.Errorf("indexnow: KeyLocation %q: %w", ix.keyLocation, err)
		}
	}
	switch {
	case ix.timeout < 0:
		return nil, fmt.Errorf("indexnow: Timeout %s must not be negative", cfg.Timeout)
	case ix.timeout == 0:
		ix.timeout = DefaultTimeout
	}
	if ix.client == nil {
		ix.client = &http.Client{}
	}
	return ix, nil
}

// ValidKey reports whether key has the protocol's form: 8 to 128
// characters of a-z, A-Z, 0-9 and "-".
func ValidKey(key string) bool {
	if len(key) < 8 || len(key) > 128 {
		return false
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// ValidateURLs reports whether urls can be one submission: 1 to MaxURLs
// URLs by the platform's URL rule (value.ParseURL: absolute http or https,
// at most 2,048 characters, no credentials), all on one host (the protocol
// proves ownership per host). It returns that host. The error says what is
// wrong, for the caller.
func ValidateURLs(urls []string) (string, error) {
	if len(urls) == 0 {
		return "", errors.New("no URL to submit")
	}
	if len(urls) > MaxURLs {
		return "", fmt.Errorf("%d URLs: at most %d can be submitted at once", len(urls), MaxURLs)
	}
	var host string
	for _, raw := range urls {
		u, why := value.ParseURL(raw, 0)
		if why != "" {
			return "", fmt.Errorf("the URL %q: %s", raw, why)
		}
		h := strings.ToLower(u.Hostname())
		switch {
		case host == "":
			host = h
		case h != host:
			return "", fmt.Errorf("the URLs must all be on one host: %q is on %s, not %s", raw, h, host)
		}
	}
	return host, nil
}

// checkURL checks a configured URL (the endpoint, the key location) by
// the platform's URL rule.
func checkURL(raw string) error {
	if _, why := value.ParseURL(raw, 0); why != "" {
		return errors.New(why)
	}
	return nil
}

func (ix *Indexer) expandKeyLocation(host string) string {
	return strings.NewReplacer("{host}", host, "{key}", ix.key).Replace(ix.keyLocation)
}

// submission is the protocol's request body.
type submission struct {
	Host        string   `json:"host"`
	Key         string   `json:"key"`
	KeyLocation string   `json:"keyLocation,omitempty"`
	URLList     []string `json:"urlList"`
}

// Submit sends urls, all on one host, to the endpoint. The endpoint's
// refusals are provider.Errors with its status (400, 403, 422, 429, ...); an
// unreachable endpoint is 503, no answer in time 504, a missing key 503. A
// canceled ctx returns ctx's error.
func (ix *Indexer) Submit(ctx context.Context, urls []string) (provider.Submission, error) {
	host, err := ValidateURLs(urls)
	if err != nil {
		return provider.Submission{}, err
	}
	if ix.key == "" {
		return provider.Submission{}, provider.Failure(providerName, 503, nil,
			"IndexNow is not configured: set --indexnow-key (and host the key file on the site)")
	}
	body := submission{Host: host, Key: ix.key, URLList: urls}
	if ix.keyLocation != "" {
		body.KeyLocation = ix.expandKeyLocation(host)
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return provider.Submission{}, fmt.Errorf("indexnow: encode the submission: %w", err)
	}

	reqCtx, cancel := context.WithTimeout(ctx, ix.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, ix.endpoint, bytes.NewReader(payload))
	if err != nil {
		return provider.Submission{}, fmt.Errorf("indexnow: build the request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Accept", "application/json, text/plain;q=0.9, */*;q=0.5")

	resp, err := ix.client.Do(req)
	if err != nil {
		return provider.Submission{}, ix.transportFailure(ctx, reqCtx, err)
	}
	defer resp.Body.Close()
	// The answer is a status; a body, when there is one, is a short
	// explanation, read only for messages.
	text, err := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	if err != nil && resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return provider.Submission{}, ix.transportFailure(ctx, reqCtx, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))

	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted:
		return provider.Submission{Endpoint: ix.endpoint, StatusCode: resp.StatusCode}, nil
	}
	return provider.Submission{}, ix.refusal(resp.StatusCode, text)
}

// refusals say what the protocol means by each refusal.
var refusals = map[int]string{
	http.StatusBadRequest:          "bad request",
	http.StatusForbidden:           "the key is not valid (key file not found on the host?)",
	http.StatusUnprocessableEntity: "the URLs do not belong to the host or the key does not match",
	http.StatusTooManyRequests:     "too many requests",
}

func (ix *Indexer) refusal(status int, body []byte) error {
	said := ix.snippet(body)
	if meaning, ok := refusals[status]; ok {
		if said != "" {
			return provider.Failure(providerName, status, nil, "%s (the endpoint answered %d: %s)", meaning, status, said)
		}
		return provider.Failure(providerName, status, nil, "%s (the endpoint answered %d)", meaning, status)
	}
	code := status
	if status < 400 {
		// A redirect or another success than the protocol's: nothing says
		// the submission was taken.
		code = http.StatusBadGateway
	}
	msg := fmt.Sprintf("the endpoint %s answered %d %s", ix.endpoint, status, http.StatusText(status))
	if said != "" {
		msg += ": " + said
	}
	return provider.Failure(providerName, code, nil, "%s", msg)
}

// snippet is the start of a response body on one line, at most 200 bytes,
// with the key masked should the endpoint repeat it.
func (ix *Indexer) snippet(body []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "")), " ")
	if ix.key != "" {
		s = strings.ReplaceAll(s, ix.key, "[key]")
	}
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func (ix *Indexer) transportFailure(ctx, reqCtx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(reqCtx.Err(), context.DeadlineExceeded) || isTimeout(err) {
		return provider.Failure(providerName, 504, err, "the endpoint %s did not answer within %s", ix.endpoint, ix.timeout)
	}
	return provider.Failure(providerName, 503, err, "cannot reach the endpoint %s: %v", ix.endpoint, cause(err))
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// cause drops the "Post <url>:" that the client puts in front of the
// reason.
func cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
