package webhookhttp

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
)

// Sender sends attempts over HTTP.
type Sender struct{ client *http.Client }

// New returns the sender of attempts: it connects only where guard allows
// (checked on the resolved address of every connection), follows no
// redirect (a 3xx is the attempt's answer, a failure), and keeps
// connections to endpoints alive between attempts, up to perHost to one
// host: many tenants' endpoints share a host (an automation platform's,
// say), and a connection made anew for each attempt costs more than the
// attempt.
func New(guard *netguard.Guard, perHost int) *Sender {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = guard.DialContext
	t.Proxy = nil // a proxy would connect for us, past the guard
	t.MaxIdleConnsPerHost = max(perHost, 2)
	t.MaxIdleConns = max(perHost, t.MaxIdleConns)
	return &Sender{client: &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Post sends body to url with header and returns the endpoint's answer,
// its body cut at app.MaxResponseBody.
func (s *Sender) Post(ctx context.Context, url string, header http.Header, body []byte) (app.Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return app.Answer{}, &app.UnrequestableError{Err: err}
	}
	req.Header = header
	resp, err := s.client.Do(req)
	if err != nil {
		return app.Answer{}, err
	}
	defer resp.Body.Close()
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, app.MaxResponseBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	return app.Answer{StatusCode: resp.StatusCode, Header: resp.Header, Body: kept}, nil
}
