package main

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"
)

// lines is a writer a test watches as a command writes to it: each write
// wakes whoever waits for a line.
type lines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func newLines() *lines { return &lines{wrote: make(chan struct{}, 1)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor waits until what was written matches re and returns the match.
func (l *lines) waitFor(t *testing.T, done <-chan error, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(l.String()); m != nil {
			return m
		}
		select {
		case <-l.wrote:
		case err := <-done:
			t.Fatalf("the command ended (%v) before it wrote %s:\n%s", err, re, l.String())
		case <-deadline:
			t.Fatalf("still waiting for %s after 30 s:\n%s", re, l.String())
		}
	}
}

// TestCLIListen runs atrium webhooks listen against a live stack: it
// forwards the key's site's item.created to a local receiver, signed with
// the secret it printed (the reference library verifies it), and not
// another tenant's; a bad filter is the API's 400 naming the allowed
// types.
func TestCLIListen(t *testing.T) {
	s := startStack(t)
	mine, theirs := s.newCMS(t), s.newCMS(t)
	receiver := newHookReceiver(t, http.StatusOK)
	cl := cliRun{env: map[string]string{"ATRIUM_URL": s.api, "ATRIUM_API_KEY": mine.write}, dir: t.TempDir()}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout, stderr := newLines(), newLines()
	env := cl.cliEnv(stdout, stderr)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"webhooks", "listen", "--forward-to", receiver.URL + "/hook", "--events", "item.*"}, env)
	}()
	secret := stderr.waitFor(t, done, regexp.MustCompile(`Signing secret: (whsec_[A-Za-z0-9+/=]+)`))[1]
	stderr.waitFor(t, done, regexp.MustCompile(`Ready: forwarding item\.\* to `))

	// The stream is live: another tenant's item first, then two of ours.
	// One outbox relay publishes the collections service's events in
	// order, so once our second has come, theirs would have too.
	foreign := theirs.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Not yours"}})
	first := mine.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "First"}})
	second := mine.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Second"}})
	var got []hook
	for {
		got = receiver.waitCount(t, len(got)+1)
		if got[len(got)-1].data()["id"] == second["id"] {
			break
		}
	}
	if len(got) != 2 || got[0].data()["id"] != first["id"] {
		t.Fatalf("the receiver got %d events, want ours two (%v, %v): %v", len(got), first["id"], second["id"], typesOf(got))
	}
	for _, h := range got {
		if h.typ() != "item.created" || h.data()["site_id"] != mine.site || h.data()["id"] == foreign["id"] {
			t.Fatalf("forwarded %s %v, want our site's item.created", h.typ(), h.data())
		}
		verify(t, h, secret)
		if h.id == "" || h.header.Get("Content-Type") != "application/json" {
			t.Fatalf("forwarded without its webhook-id or JSON content type: %v", h.header)
		}
	}
	// A line per event with the receiver's answer.
	stdout.waitFor(t, done, regexp.MustCompile(`item\.created\s+`+regexp.QuoteMeta(got[1].id)+`\s+-> 200 OK`))

	// Ctrl-C ends it cleanly.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("listen ended with %v after the context was cancelled", err)
	}

	// The route itself: NDJSON lines, a heartbeat first; errors before
	// the stream are the usual {"error": message}.
	req, err := http.NewRequestWithContext(t.Context(), "GET", s.api+"/api/v1/event-stream?events=item.created", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+mine.read)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" ||
		!regexp.MustCompile(`^\{"result":\{"heartbeat":"[^"]+Z"\}\}\n$`).MatchString(line) {
		t.Fatalf("event stream answered %d %q, first line %q (%v); want 200 application/x-ndjson and a heartbeat", resp.StatusCode, resp.Header.Get("Content-Type"), line, err)
	}
	wantError(t, call(t, "GET", s.api+"/api/v1/event-stream?events=item.*,nope.*", mine.read, nil), http.StatusBadRequest, `events[1] "nope.*"`, "item.created", "allowed")
	wantError(t, call(t, "GET", s.api+"/api/v1/event-stream?event=item.*", mine.read, nil), http.StatusBadRequest, `"event"`, "events")
	wantStatus(t, call(t, "GET", s.api+"/api/v1/event-stream", "", nil), http.StatusUnauthorized)

	// A filter that names no event type is the API's 400, naming them.
	cl.fails(t, exitAPI, []string{`"nope.*"`, "item.created", "HTTP 400"},
		"webhooks", "listen", "--forward-to", receiver.URL, "--events", "nope.*")
	// And the command line is checked before anything is sent.
	cl.fails(t, exitUsage, []string{"--forward-to is required"}, "webhooks", "listen")
	cl.fails(t, exitUsage, []string{"--secret must be whsec_"}, "webhooks", "listen", "--forward-to", receiver.URL, "--secret", "nope")
}
