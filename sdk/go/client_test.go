package atrium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// server is an API of the test's own: each request is answered by the
// next of its answers (the last one for every request after), and noted.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	answers []func(http.ResponseWriter, *http.Request)
	got     []*http.Request
	bodies  []string
}

func newServer(t *testing.T, answers ...func(http.ResponseWriter, *http.Request)) *server {
	s := &server{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, r)
		s.bodies = append(s.bodies, string(b))
		a := s.answers[min(len(s.got)-1, len(s.answers)-1)]
		s.mu.Unlock()
		a(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.got...)
}

func status(code int, body string, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// client is a client of srv whose waits between attempts are noted
// instead of slept.
func client(srv *server, opts ...Option) (*Client, *[]time.Duration) {
	var waits []time.Duration
	c := New(srv.URL, "atr_test", opts...)
	c.t.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	return c, &waits
}

// TestRetriesFollowTheAdvice: a 503 is retried, waiting 250 ms doubling
// with jitter, or the Retry-After it asks when longer; a 4xx is never
// retried; at most 5 attempts.
func TestRetriesFollowTheAdvice(t *testing.T) {
	srv := newServer(t, status(503, `{"error":"busy"}`, "Retry-After", "2"), status(500, `{"error":"boom"}`), status(200, `{"data":[]}`))
	c, waits := client(srv)
	if _, err := c.Prospects.List(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.requests()); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	if w := *waits; len(w) != 2 || w[0] != 2*time.Second || w[1] < 250*time.Millisecond || w[1] > 500*time.Millisecond {
		t.Fatalf("waits %v; want the Retry-After's 2 s, then 250 to 500 ms (the second attempt's backoff with jitter)", w)
	}

	always := newServer(t, status(502, `{"error":"down"}`))
	c, waits = client(always)
	_, err := c.Deals.List(t.Context(), nil)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 502 || e.Attempts != 5 || len(always.requests()) != 5 {
		t.Fatalf("after 5 failures: %v (%d requests); want the last 502 after 5 attempts", err, len(always.requests()))
	}
	for i, w := range *waits {
		if lo, hi := (250*time.Millisecond<<i)/2, 250*time.Millisecond<<i; w < lo || w > hi {
			t.Errorf("wait %d = %s, want between %s and %s", i+1, w, lo, hi)
		}
	}

	bad := newServer(t, status(400, `{"error":"limit must be an integer from 1 to 200; got 0"}`, "Atrium-Trace-Id", "4bf92f3577b34da6a3ce929d0e0e4736"))
	c, _ = client(bad)
	_, err = c.Prospects.List(t.Context(), &Page{Limit: 0})
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Message != "limit must be an integer from 1 to 200; got 0" ||
		e.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || len(bad.requests()) != 1 {
		t.Fatalf("a 400: %#v after %d requests; want it once, with the message and the trace id", err, len(bad.requests()))
	}
}

// TestActionKeepsItsIdempotencyKey: an action is sent with an
// Idempotency-Key, the same on each retry, a new one for the next action.
func TestActionKeepsItsIdempotencyKey(t *testing.T) {
	ok := status(200, `{"action":"generate_blog","client_id":"c","status":"success","status_code":200,"data":{"id":"b"}}`,
		"Atrium-AI-Credits-Remaining", "98", "Atrium-Data-Credits-Remaining", "100", "Idempotent-Replayed", "true")
	srv := newServer(t, status(504, `{"error":"timed out"}`), status(500, `{"error":"boom"}`), ok, ok)
	c, _ := client(srv)
	res, err := c.Actions.Run(t.Context(), "generate_blog", "c", map[string]any{"keyword": "rye"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	key := reqs[0].Header.Get("Idempotency-Key")
	if len(reqs) != 3 || key == "" || reqs[1].Header.Get("Idempotency-Key") != key || reqs[2].Header.Get("Idempotency-Key") != key {
		t.Fatalf("3 attempts with keys %q, %q, %q; want one key, sent each time", key, reqs[1].Header.Get("Idempotency-Key"), reqs[2].Header.Get("Idempotency-Key"))
	}
	var body map[string]any
	_ = json.Unmarshal([]byte(srv.bodies[0]), &body)
	if body["action"] != "generate_blog" || body["client_id"] != "c" || body["keyword"] != "rye" {
		t.Fatalf("body %v", body)
	}
	if !res.Succeeded() || res.Remaining != (Credits{AI: 98, Data: 100}) || !res.Replayed || res.IdempotencyKey != key || res.Data["id"] != "b" {
		t.Fatalf("result %+v", res)
	}
	if _, err := c.Actions.Run(t.Context(), "generate_blog", "c", nil); err != nil {
		t.Fatal(err)
	}
	if next := srv.requests()[3].Header.Get("Idempotency-Key"); next == key || len(next) != 36 {
		t.Fatalf("the next action's key %q; want a new UUID", next)
	}
}

// TestWritesRetriedOnlyWhenUnapplied: a create is sent again after a 503
// (Atrium answers it before any service changed anything) and a refused
// connection, never after a 500 or a 504, whose effect is unknown.
func TestWritesRetriedOnlyWhenUnapplied(t *testing.T) {
	created := status(201, `{"item":{"id":"i","is_published":false,"created_at":"2026-11-26T10:00:00Z","updated_at":"2026-11-26T10:00:00Z","title":"x"}}`, "ETag", `"1"`)
	srv := newServer(t, status(503, `{"error":"busy"}`), created)
	c, _ := client(srv)
	it, err := c.Items.Create(t.Context(), "posts", ItemWrite{Data: map[string]any{"title": "x"}})
	if err != nil || it.ID != "i" || it.ETag != "1" || it.Fields["title"] != "x" || len(srv.requests()) != 2 {
		t.Fatalf("create after a 503: %+v, %v, %d requests", it, err, len(srv.requests()))
	}
	for _, code := range []int{500, 504} {
		once := newServer(t, status(code, `{"error":"?"}`), created)
		c, _ := client(once)
		if _, err := c.Items.Create(t.Context(), "posts", ItemWrite{}); StatusOf(err) != code || len(once.requests()) != 1 {
			t.Fatalf("create answered %d: %v after %d requests; want the error, not retried", code, err, len(once.requests()))
		}
	}
	// A port nothing listens on: the connection is refused.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	c = New("http://"+addr, "k", WithMaxAttempts(3))
	var tries int
	c.t.sleep = func(context.Context, time.Duration) error { tries++; return nil }
	if _, err := c.Items.Create(t.Context(), "posts", ItemWrite{}); err == nil || tries != 2 {
		t.Fatalf("a refused connection: %v after %d retries; want 2 retries then the error", err, tries)
	}
}

// TestAttemptTimeout: an attempt that gets no answer within the time-out
// is abandoned and, for a read, sent again.
func TestAttemptTimeout(t *testing.T) {
	srv := newServer(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, status(200, `{"data":[]}`))
	c, _ := client(srv, WithTimeout(50*time.Millisecond))
	if _, err := c.Prospects.List(t.Context(), nil); err != nil || len(srv.requests()) != 2 {
		t.Fatalf("after a silent attempt: %v, %d requests; want a second attempt that succeeds", err, len(srv.requests()))
	}
}

// TestIteratorsPage: All walks offset pages until a short one, and cursor
// pages until no cursor, sending the same query with each cursor.
func TestIteratorsPage(t *testing.T) {
	var offsets []string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		offsets = append(offsets, r.URL.Query().Get("offset"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		var rows []string
		for i := off; i < min(off+limit, 450); i++ {
			rows = append(rows, fmt.Sprintf(`{"id":"p%d"}`, i))
		}
		fmt.Fprintf(w, `{"data":[%s]}`, joinComma(rows))
	})
	c, _ := client(srv)
	n := 0
	for p, err := range c.Prospects.All(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != fmt.Sprint("p", n) {
			t.Fatalf("prospect %d is %s", n, p.ID)
		}
		n++
	}
	if n != 450 || fmt.Sprint(offsets) != "[ 200 400]" {
		t.Fatalf("walked %d prospects with offsets %v; want 450 over 3 pages", n, offsets)
	}

	var cursors []string
	data := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		cursors = append(cursors, q.Get("cursor"))
		if q.Get("resource") != "keywords" || q.Get("client_id") != "c" || q.Get("order") != "position" {
			t.Errorf("query %v lost the read's parameters", q)
		}
		switch q.Get("cursor") {
		case "":
			_, _ = io.WriteString(w, `{"resource":"keywords","data":[{"id":"a"},{"id":"b"}],"pagination":{"has_more":true,"next_cursor":"c1"}}`)
		case "c1":
			_, _ = io.WriteString(w, `{"resource":"keywords","data":[{"id":"c"}],"pagination":{"has_more":false}}`)
		}
	})
	c, _ = client(data)
	var ids []any
	for row, err := range c.Data.All(t.Context(), DataQuery{Resource: "keywords", ClientID: "c", Order: "position"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, row["id"])
	}
	if fmt.Sprint(ids) != "[a b c]" || fmt.Sprint(cursors) != "[ c1]" {
		t.Fatalf("rows %v with cursors %v", ids, cursors)
	}
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}

// TestRetriedDeleteThatFindsItGone: a delete whose first answer was lost
// and whose retry finds the object gone took effect: a success.
func TestRetriedDeleteThatFindsItGone(t *testing.T) {
	srv := newServer(t, status(503, `{"error":"stopping"}`), status(404, `{"error":"item not found"}`))
	c, _ := client(srv)
	if err := c.Items.Delete(t.Context(), "posts", "i"); err != nil {
		t.Fatalf("Delete = %v; want nil", err)
	}
	first := newServer(t, status(404, `{"error":"item not found"}`))
	c, _ = client(first)
	if err := c.Items.Delete(t.Context(), "posts", "i"); !IsNotFound(err) {
		t.Fatalf("a delete of nothing = %v; want its 404", err)
	}
}
