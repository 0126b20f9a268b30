package indexnow

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

const testKey = "73134416ae45434d98edc086e0bf6740"

// request is what the test endpoint received.
type request struct {
	method, path, contentType string
	body                      map[string]any
}

// endpoint is an IndexNow endpoint on 127.0.0.1 that records requests and
// answers with status and body.
type endpoint struct {
	*httptest.Server
	mu       sync.Mutex
	requests []request
}

func newEndpoint(t *testing.T, status int, body string) *endpoint {
	t.Helper()
	e := &endpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		req := request{method: r.Method, path: r.URL.Path, contentType: r.Header.Get("Content-Type")}
		if err := json.Unmarshal(raw, &req.body); err != nil {
			t.Errorf("the request body is not JSON: %v: %q", err, raw)
		}
		e.mu.Lock()
		e.requests = append(e.requests, req)
		e.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *endpoint) received() []request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]request(nil), e.requests...)
}

func newIndexer(t *testing.T, cfg Config) *Indexer {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	ix, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return ix
}

func submit(t *testing.T, ix *Indexer, urls ...string) (provider.Submission, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ix.Submit(ctx, urls)
}

func providerError(t *testing.T, err error, status int) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want a ProviderError %d", err, err, status)
	}
	if pe.StatusCode != status {
		t.Fatalf("status = %d (%s), want %d", pe.StatusCode, pe.Message, status)
	}
	return pe
}

func TestSubmitSendsTheProtocolsRequest(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusAccepted} {
		e := newEndpoint(t, status, "")
		ix := newIndexer(t, Config{Endpoint: e.URL + "/indexnow", Key: testKey})
		urls := []string{"https://www.client.example/", "http://WWW.Client.example/blog/seo-tips?page=2"}

		got, err := submit(t, ix, urls...)
		if err != nil {
			t.Fatalf("Submit (endpoint answers %d): %v", status, err)
		}
		if want := (provider.Submission{Endpoint: e.URL + "/indexnow", StatusCode: status}); got != want {
			t.Errorf("Submission = %+v, want %+v", got, want)
		}
		reqs := e.received()
		if len(reqs) != 1 {
			t.Fatalf("the endpoint received %d requests, want 1", len(reqs))
		}
		r := reqs[0]
		if r.method != http.MethodPost || r.path != "/indexnow" {
			t.Errorf("request = %s %s, want POST /indexnow", r.method, r.path)
		}
		if r.contentType != "application/json; charset=utf-8" {
			t.Errorf("Content-Type = %q", r.contentType)
		}
		want := map[string]any{
			"host":    "www.client.example",
			"key":     testKey,
			"urlList": []any{urls[0], urls[1]},
		}
		if !reflect.DeepEqual(r.body, want) {
			t.Errorf("body = %v, want %v (no keyLocation when none is configured)", r.body, want)
		}
	}
}

func TestSubmitSendsTheConfiguredKeyLocation(t *testing.T) {
	e := newEndpoint(t, http.StatusOK, "")
	ix := newIndexer(t, Config{Endpoint: e.URL, Key: testKey, KeyLocation: "https://{host}/.well-known/{key}.txt"})
	if _, err := submit(t, ix, "https://shop.client.example/new"); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	reqs := e.received()
	if len(reqs) != 1 {
		t.Fatalf("the endpoint received %d requests, want 1", len(reqs))
	}
	if got, want := reqs[0].body["keyLocation"], "https://shop.client.example/.well-known/"+testKey+".txt"; got != want {
		t.Errorf("keyLocation = %v, want %q", got, want)
	}
}

func TestSubmitMapsRefusals(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   []string
	}{
		{http.StatusBadRequest, `{"code":"InvalidRequestParameters","message":"Invalid URL list"}`, []string{"bad request", "Invalid URL list"}},
		{http.StatusForbidden, "", []string{"key is not valid", "key file"}},
		{http.StatusUnprocessableEntity, "", []string{"do not belong to the host", "key does not match"}},
		{http.StatusTooManyRequests, "slow down", []string{"too many requests", "slow down"}},
		{http.StatusInternalServerError, "upstream \n  exploded", []string{"500", "upstream exploded"}},
		{http.StatusServiceUnavailable, strings.Repeat("x", 5000), []string{"503", "xxx..."}},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			e := newEndpoint(t, tc.status, tc.body)
			ix := newIndexer(t, Config{Endpoint: e.URL, Key: testKey})
			_, err := submit(t, ix, "https://www.client.example/")
			pe := providerError(t, err, tc.status)
			for _, s := range tc.want {
				if !strings.Contains(pe.Message, s) {
					t.Errorf("message %q does not contain %q", pe.Message, s)
				}
			}
			if len(pe.Message) > 400 {
				t.Errorf("message is %d bytes long", len(pe.Message))
			}
		})
	}
}

func TestSubmitMasksTheKeyInTheEndpointsAnswer(t *testing.T) {
	e := newEndpoint(t, http.StatusForbidden, "key "+testKey+" not found")
	ix := newIndexer(t, Config{Endpoint: e.URL, Key: testKey})
	_, err := submit(t, ix, "https://www.client.example/")
	pe := providerError(t, err, http.StatusForbidden)
	if strings.Contains(pe.Error(), testKey) {
		t.Errorf("error %q holds the key", pe.Error())
	}
}

func TestSubmitWithoutAKeyMakesNoRequest(t *testing.T) {
	e := newEndpoint(t, http.StatusOK, "")
	ix := newIndexer(t, Config{Endpoint: e.URL})
	_, err := submit(t, ix, "https://www.client.example/")
	pe := providerError(t, err, http.StatusServiceUnavailable)
	if !strings.Contains(pe.Message, "--indexnow-key") {
		t.Errorf("message %q does not say how to configure IndexNow", pe.Message)
	}
	if n := len(e.received()); n != 0 {
		t.Errorf("the endpoint received %d requests", n)
	}
}

func TestSubmitTimesOutOnASlowEndpoint(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// With the body read, the server notices the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	ix := newIndexer(t, Config{Endpoint: srv.URL, Key: testKey, Timeout: 150 * time.Millisecond})
	start := time.Now()
	_, err := submit(t, ix, "https://www.client.example/")
	elapsed := time.Since(start)
	pe := providerError(t, err, http.StatusGatewayTimeout)
	if !strings.Contains(pe.Message, "did not answer within 150ms") {
		t.Errorf("message %q", pe.Message)
	}
	if elapsed > 2*time.Second {
		t.Errorf("Submit took %s with a 150ms timeout", elapsed)
	}
}

func TestSubmitReturnsTheCallersCancellation(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	ix := newIndexer(t, Config{Endpoint: srv.URL, Key: testKey, Timeout: 30 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := ix.Submit(ctx, []string{"https://www.client.example/"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		t.Errorf("a cancellation came back as a ProviderError: %v", pe)
	}
}

func TestSubmitToAnUnreachableEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	ix := newIndexer(t, Config{Endpoint: "http://" + addr + "/indexnow", Key: testKey})
	_, err = submit(t, ix, "https://www.client.example/")
	pe := providerError(t, err, http.StatusServiceUnavailable)
	if !strings.Contains(pe.Message, "cannot reach") || !strings.Contains(pe.Message, addr) {
		t.Errorf("message %q", pe.Message)
	}
}

func TestSubmitRefusesBadURLsWithoutARequest(t *testing.T) {
	e := newEndpoint(t, http.StatusOK, "")
	ix := newIndexer(t, Config{Endpoint: e.URL, Key: testKey})
	for _, tc := range []struct {
		urls []string
		want string
	}{
		{nil, "no URL"},
		{[]string{"https://www.client.example/a", "https://other.example/b"}, "one host"},
		{[]string{"https://www.client.example/a", "https://client.example/b"}, "one host"},
		{[]string{"/relative/path"}, "no scheme"},
		{[]string{"ftp://www.client.example/file"}, `scheme "ftp" is not allowed`},
		{[]string{"https://www.client.example/a b"}, "must not contain spaces"},
		{[]string{"https://www.client.example/" + strings.Repeat("x", 2048)}, "longer than 2,048 characters"},
		{[]string{"https://user:pass@www.client.example/"}, "user name or password"},
		{[]string{"https:///no-host"}, "no host"},
		{make([]string, MaxURLs+1), "at most"},
	} {
		_, err := submit(t, ix, tc.urls...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Submit(%.80q) = %v, want an error saying %q", tc.urls, err, tc.want)
		}
		var pe *provider.Error
		if errors.As(err, &pe) {
			t.Errorf("Submit(%.80q): bad input came back as a ProviderError", tc.urls)
		}
	}
	if n := len(e.received()); n != 0 {
		t.Errorf("the endpoint received %d requests", n)
	}
}

func TestNewValidatesTheConfig(t *testing.T) {
	ix, err := New(Config{Key: testKey})
	if err != nil {
		t.Fatalf("New with defaults: %v", err)
	}
	if ix.endpoint != DefaultEndpoint || ix.timeout != DefaultTimeout {
		t.Errorf("defaults: endpoint %q, timeout %s", ix.endpoint, ix.timeout)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Endpoint: "api.indexnow.org/indexnow"}, "Endpoint"},
		{Config{Endpoint: "ftp://api.indexnow.org/"}, "Endpoint"},
		{Config{Key: "short"}, "Key"},
		{Config{Key: strings.Repeat("a", 129)}, "Key"},
		{Config{Key: "has_underscore_in_it"}, "Key"},
		{Config{Key: testKey, KeyLocation: "/{key}.txt"}, "KeyLocation"},
		{Config{Key: testKey, Timeout: -time.Second}, "Timeout"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %q", tc.cfg, err, tc.want)
		}
	}
	for _, key := range []string{"abcdefgh", strings.Repeat("A-9", 42) + "xy", testKey} {
		if !ValidKey(key) {
			t.Errorf("ValidKey(%q) = false", key)
		}
	}
}
