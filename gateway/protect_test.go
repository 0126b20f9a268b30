package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// reply is an HTTP response as a client sees it.
type reply struct {
	code   int
	header http.Header
	body   map[string]any
}

// send makes a request with a bearer token (none if empty).
func send(t *testing.T, method, url, token string) reply {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("%s %s: body is not JSON: %s", method, url, b)
	}
	return reply{resp.StatusCode, resp.Header, body}
}

// wantErrorReply checks a status, the {"error": message} body and the
// words the message must hold.
func wantErrorReply(t *testing.T, r reply, code int, words ...string) {
	t.Helper()
	msg, _ := r.body["error"].(string)
	if r.code != code || len(r.body) != 1 || msg == "" {
		t.Fatalf("got %d %v, want %d with only an error", r.code, r.body, code)
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			t.Fatalf("error %q does not mention %q", msg, w)
		}
	}
}

// manualClock is a clock the test moves.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func emptyList(context.Context) (*crmv1.ListProspectsResponse, error) {
	return &crmv1.ListProspectsResponse{}, nil
}

// A key may make its burst of requests at once, then is answered 429 with
// the wait until its next token, and is served again once it has waited
// that long. Another key's requests are not affected, nor the admin API.
func TestRateLimitPerKey(t *testing.T) {
	clock := &manualClock{now: time.Unix(1_700_000_000, 0)}
	r := startGateway(t, startFakeCRM(t, &fakeCRM{list: emptyList}), func(c *Config) {
		c.RateLimit, c.RateLimitBurst, c.now = 0.5, 3, clock.Now
	})
	prospects := "http://" + r.gw.HTTPAddr() + "/api/v1/prospects"
	for i := range 3 {
		if got := send(t, "GET", prospects, apiKey); got.code != http.StatusOK {
			t.Fatalf("request %d of the burst: %d %v, want 200", i+1, got.code, got.body)
		}
	}
	limited := send(t, "GET", prospects, apiKey)
	wantErrorReply(t, limited, http.StatusTooManyRequests, "rate limit", "0.5 requests per second", "bursts of up to 3")
	if ra := limited.header.Get("Retry-After"); ra != "2" {
		t.Fatalf("Retry-After = %q, want 2 (seconds until the next token at 0.5/s)", ra)
	}

	if got := send(t, "GET", prospects, otherAPIKey); got.code != http.StatusOK {
		t.Fatalf("another key during the first key's limit: %d %v, want 200", got.code, got.body)
	}
	for range 3 {
		if got := send(t, "GET", "http://"+r.gw.AdminAddr()+"/admin/v1/keys", "admin-token-0123456789"); got.code == http.StatusTooManyRequests {
			t.Fatalf("the admin API is rate limited: %v", got.body)
		}
	}

	clock.advance(time.Second)
	still := send(t, "GET", prospects, apiKey)
	wantErrorReply(t, still, http.StatusTooManyRequests, "rate limit")
	if ra := still.header.Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After half-way to the next token = %q, want 1", ra)
	}
	clock.advance(time.Second)
	if got := send(t, "GET", prospects, apiKey); got.code != http.StatusOK {
		t.Fatalf("after waiting Retry-After: %d %v, want 200", got.code, got.body)
	}
	wantErrorReply(t, send(t, "GET", prospects, apiKey), http.StatusTooManyRequests, "rate limit")
}

func TestRateLimitIsOffByDefaultAndBurstDefaultsToTwiceTheRate(t *testing.T) {
	r := startGateway(t, startFakeCRM(t, &fakeCRM{list: emptyList}), nil)
	for i := range 50 {
		if got := send(t, "GET", "http://"+r.gw.HTTPAddr()+"/api/v1/prospects", apiKey); got.code != http.StatusOK {
			t.Fatalf("request %d without a rate limit: %d %v", i+1, got.code, got.body)
		}
	}
	for rate, want := range map[float64]int{0.2: 1, 2.5: 5, 100: 200} {
		c := Config{RateLimit: rate}
		c.setDefaults()
		if c.RateLimitBurst != want {
			t.Errorf("--rate-limit %v: burst %d, want %d", rate, c.RateLimitBurst, want)
		}
	}
}

// A bucket that is full again is forgotten: the keys of a day do not
// accumulate, and the keys still refilling keep what they spent.
func TestRateLimiterForgetsIdleKeys(t *testing.T) {
	clock := &manualClock{now: time.Unix(1_700_000_000, 0)}
	l := newRateLimiter(10, 20, clock.Now) // 2s from empty to full
	for i := range 10_000 {
		l.allow(fmt.Sprintf("key-%d", i))
	}
	if n := l.size(); n != 10_000 {
		t.Fatalf("%d buckets for 10000 active keys", n)
	}
	clock.advance(time.Second)
	for i := range 100 {
		for range 20 {
			if ok, _ := l.allow(fmt.Sprintf("key-%d", i)); !ok {
				t.Fatal("a key with tokens left was limited")
			}
		}
	}
	clock.advance(time.Second)
	l.sweep() // run does this every refill period
	if n := l.size(); n != 100 {
		t.Fatalf("%d buckets kept once 9900 idle keys had refilled, want only the 100 emptied since", n)
	}
	// The 100 kept what they spent: 10 tokens back in the second since.
	for range 10 {
		if ok, _ := l.allow("key-0"); !ok {
			t.Fatal("a refilling key lost the tokens it had earned")
		}
	}
	if ok, _ := l.allow("key-0"); ok {
		t.Fatal("a swept limiter forgot what a refilling key had spent")
	}
	// Forgetting a full bucket changes nothing: the key still has its burst.
	for i := range 20 {
		if ok, _ := l.allow("key-5000"); !ok {
			t.Fatalf("request %d of a forgotten key's burst was limited", i+1)
		}
	}
	if ok, wait := l.allow("key-5000"); ok || wait != 100*time.Millisecond {
		t.Fatalf("past the burst: allowed %v, wait %s; want refused, 100ms", ok, wait)
	}
	// A refused request spends nothing: the wait does not grow with retries.
	if ok, wait := l.allow("key-5000"); ok || wait != 100*time.Millisecond {
		t.Fatalf("retried at once: allowed %v, wait %s; want refused, still 100ms", ok, wait)
	}
}

// Over --max-in-flight a request is answered 503 with Retry-After at once,
// without waiting for a slot; the admin listener's own bound and its
// probes are unaffected; slots free up when requests end.
func TestMaxInFlightAnswers503WithoutQueueing(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	f := &fakeCRM{list: func(ctx context.Context) (*crmv1.ListProspectsResponse, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &crmv1.ListProspectsResponse{}, nil
	}}
	r := startGateway(t, startFakeCRM(t, f), func(c *Config) { c.MaxInFlight = 2 })
	prospects := "http://" + r.gw.HTTPAddr() + "/api/v1/prospects"
	held := make(chan reply, 2)
	for range 2 {
		go func() { held <- send(t, "GET", prospects, apiKey) }()
	}
	<-started
	<-started

	// Both slots are held until release: an answer now proves no queueing.
	over := send(t, "GET", prospects, apiKey)
	wantErrorReply(t, over, http.StatusServiceUnavailable, "limit of 2 requests in flight", "retry")
	if ra := over.header.Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After = %q, want 1", ra)
	}
	if got := send(t, "GET", "http://"+r.gw.AdminAddr()+"/healthz", ""); got.code != http.StatusOK {
		t.Fatalf("/healthz while the public listener is full: %d %v", got.code, got.body)
	}
	if got := send(t, "GET", "http://"+r.gw.AdminAddr()+"/admin/v1/keys", "admin-token-0123456789"); got.code == http.StatusServiceUnavailable {
		t.Fatalf("the admin listener shares the public listener's bound: %v", got.body)
	}

	close(release)
	for range 2 {
		if got := <-held; got.code != http.StatusOK {
			t.Fatalf("a held request: %d %v, want 200", got.code, got.body)
		}
	}
	if got := send(t, "GET", prospects, apiKey); got.code != http.StatusOK {
		t.Fatalf("after the held requests ended: %d %v, want 200", got.code, got.body)
	}
}

func TestProtectionSettingsAreValidated(t *testing.T) {
	base := Config{HTTPAddr: "127.0.0.1:8080", AdminAddr: "127.0.0.1:8081", AdminToken: "admin-token-0123456789",
		InternalSecret: secret, Upstreams: map[string]string{"crm": "a", "collections": "b", "data": "c", "actions": "d", "webhooks": "e", "audit": "f"},
		Logger: slog.New(slog.DiscardHandler)}
	for name, tc := range map[string]struct {
		mut  func(*Config)
		want string
	}{
		"negative rate":    {func(c *Config) { c.RateLimit = -1 }, "--rate-limit"},
		"negative burst":   {func(c *Config) { c.RateLimit, c.RateLimitBurst = 1, -1 }, "--rate-limit-burst"},
		"negative bound":   {func(c *Config) { c.MaxInFlight = -5 }, "--max-in-flight"},
		"negative drain":   {func(c *Config) { c.DrainDelay = -time.Second }, "negative"},
		"not a number":     {func(c *Config) { c.RateLimit = math.NaN() }, "--rate-limit"},
		"infinite":         {func(c *Config) { c.RateLimit = math.Inf(1) }, "--rate-limit"},
		"negative timeout": {func(c *Config) { c.ShutdownTimeout = -time.Second }, "negative"},
	} {
		t.Run(name, func(t *testing.T) {
			c := base
			tc.mut(&c)
			c.setDefaults()
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
