package dataforseo_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/dataforseotest"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/dataforseo"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

const (
	login    = "agency@example.com"
	password = "s3cret-Passw0rd-never-shown"
)

// newProvider is an adapter with the test credentials and, unless cfg
// says otherwise, pauses of a millisecond between retries.
func newProvider(t *testing.T, cfg dataforseo.Config) *dataforseo.Provider {
	t.Helper()
	if cfg.Login == "" {
		cfg.Login, cfg.Password = login, password
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Millisecond
	}
	p, err := dataforseo.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// world is a stand-in DataForSEO on loopback and an adapter pointed at it.
type world struct {
	fake *dataforseotest.Server
	srv  *httptest.Server
	p    *dataforseo.Provider
}

func newWorld(t *testing.T, fcfg dataforseotest.Config, cfg dataforseo.Config) *world {
	t.Helper()
	fcfg.Login, fcfg.Password = login, password
	w := &world{fake: dataforseotest.New(fcfg)}
	w.srv = httptest.NewServer(w.fake)
	t.Cleanup(w.srv.Close)
	cfg.BaseURL = w.srv.URL
	w.p = newProvider(t, cfg)
	return w
}

// inProcess is a client whose requests the handler answers in process,
// with no network: a synctest bubble's fake clock then runs the rate
// limiter and the retries' pauses.
func inProcess(h http.Handler) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Result(), nil
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// wantError checks that err is a provider error with the status, whose
// message says words and never the password.
func wantError(t *testing.T, err error, status int, words ...string) {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a *provider.Error with status %d", err, err, status)
	}
	if pe.StatusCode != status {
		t.Fatalf("status %d (%v), want %d", pe.StatusCode, pe, status)
	}
	for _, w := range words {
		if !strings.Contains(pe.Error(), w) {
			t.Fatalf("error %q does not say %q", pe.Error(), w)
		}
	}
	if strings.Contains(pe.Error(), password) || (pe.Err != nil && strings.Contains(pe.Err.Error(), password)) {
		t.Fatalf("error %q quotes the password", pe.Error())
	}
}
