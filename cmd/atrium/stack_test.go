package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	eventdefs "github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	audit "github.com/atrium-hq/atrium/services/audit/service"
	webhooks "github.com/atrium-hq/atrium/services/webhooks/service"
)

const (
	testAdminToken     = "adm_test-admin-token-0123456789"
	testInternalSecret = "test-internal-secret-0123456789abcdef"
)

// stack is a running `atrium serve` with every listener on a free port.
type stack struct {
	api, admin string
	natsURL    string
	dataAddr   string
	// auditAddr is the audit service's gRPC address: its owners' reads
	// are made there until people can sign in (issue 25).
	auditAddr string
	// metrics is the --metrics-addr listener's base URL, empty without one.
	metrics string
	logs    *syncBuffer
	// stop stops the stack as SIGTERM would and returns what serve
	// returned; the test's cleanup calls it too.
	stop func() error
}

// syncBuffer is a log sink a process writes to while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote, once asked for (next), is closed by the next Write: a test
	// waiting for a line waits on it rather than polling.
	wrote chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	return s.b.Write(p)
}

// next returns a channel closed by the next Write. Take it before reading
// the buffer, so that a write in between is not missed.
func (s *syncBuffer) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote == nil {
		s.wrote = make(chan struct{})
	}
	return s.wrote
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startStack runs atrium serve with extra flags until the test ends.
func startStack(t testing.TB, extra ...string) *stack {
	t.Helper()
	return startStackWith(t, nil, extra...)
}

// startStackWith is startStack with a last change to the parsed
// configuration, for what no flag sets (a span recorder).
func startStackWith(t testing.TB, tweak func(*serveConfig), extra ...string) *stack {
	t.Helper()
	args := append([]string{
		"--http-addr=127.0.0.1:0", "--admin-addr=127.0.0.1:0", "--admin-token=" + testAdminToken,
		"--collections-grpc-addr=127.0.0.1:0", "--crm-grpc-addr=127.0.0.1:0",
		"--data-grpc-addr=127.0.0.1:0", "--actions-grpc-addr=127.0.0.1:0", "--webhooks-grpc-addr=127.0.0.1:0",
		"--audit-grpc-addr=127.0.0.1:0", "--nats-embedded-addr=127.0.0.1:0", "--log-level=warn", "--internal-secret=" + testInternalSecret,
		// Every test of a suite signs people in from this one address: its
		// limit is lifted (the tests of the limit set their own, after).
		"--login-attempts-per-address=100000",
		// No drain delay whatever the default: each of the tests' stacks
		// would wait it out when it stops. The tests of the drain set one.
		"--drain-delay=0s",
	}, extra...)
	args = withDataDir(t, args)
	cfg, err := parseServe(args, func(string) (string, bool) { return "", false }, io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("parse serve flags: %v", err)
	}
	if cfg.backing.NATSURL != "" && cfg.webhooks.Consumer == webhooks.DefaultConsumer {
		// A NATS server other stacks use too: this stack's webhooks
		// service must not take their events (see testConsumer).
		cfg.webhooks.Consumer = testConsumer(t, cfg.backing.NATSURL)
	}
	if cfg.backing.NATSURL != "" && cfg.audit.Consumer == audit.DefaultConsumer {
		// The same for the audit service: each stack's trail is kept by
		// a consumer of its own.
		cfg.audit.Consumer = testAuditConsumer(t, cfg.backing.NATSURL)
	}
	if tweak != nil {
		tweak(cfg)
	}
	s := &stack{logs: &syncBuffer{}}
	logger, err := cfg.common.Logger(s.logs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan listening, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, *cfg, logger, s.logs, func(l listening) { ready <- l }) }()
	select {
	case l := <-ready:
		s.api, s.admin, s.natsURL, s.dataAddr, s.auditAddr = "http://"+l.HTTPAddr, "http://"+l.AdminAddr, l.NATSURL, l.DataAddr, l.AuditAddr
		if l.MetricsAddr != "" {
			s.metrics = "http://" + l.MetricsAddr
		}
	case err := <-done:
		cancel()
		t.Fatalf("atrium serve stopped before it was ready: %v\n%s", err, s.logs)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("atrium serve not ready after 30s\n%s", s.logs)
	}
	checkContract(t, s)
	s.stop = sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("atrium serve returned %v", err)
		}
		if t.Failed() {
			t.Logf("atrium serve logs:\n%s", s.logs)
		}
	})
	return s
}

// migratedDatabase returns a fresh PostgreSQL database with every schema.
func migratedDatabase(t testing.TB) string {
	return pgtest.NewDatabase(t, "atrium", func(ctx context.Context, url string) error {
		return pgdb.ApplyURL(ctx, url, allMigrations()...)
	})
}

// response is a decoded HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

func (r response) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// call sends a request with a bearer token (none if empty), a JSON body
// (raw if body is a string) and extra headers as name, value pairs.
func call(t testing.TB, method, url, token string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.json); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %v\n%s", method, url, err, raw)
		}
	}
	return r
}

// wantStatus fails unless r has status code.
func wantStatus(t testing.TB, r response, code int) {
	t.Helper()
	if r.status != code {
		t.Fatalf("status = %d, want %d; body %s", r.status, code, r.body)
	}
}

// wantError checks an error response: the status, the {"error": string}
// shape with nothing else, and words the message must contain.
func wantError(t *testing.T, r response, code int, words ...string) {
	t.Helper()
	wantStatus(t, r, code)
	msg, ok := r.json["error"].(string)
	if !ok || len(r.json) != 1 || msg == "" {
		t.Fatalf("error body = %s, want exactly {\"error\": \"<message>\"}", r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type = %q, want application/json", ct)
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			t.Fatalf("error message %q does not mention %q", msg, w)
		}
	}
	for k := range r.header {
		if strings.HasPrefix(strings.ToLower(k), "grpc-") {
			t.Fatalf("response carries gRPC header %s", k)
		}
	}
}

// testConsumer is a durable consumer name of a test's own, on a NATS
// server that other stacks (and test binaries) share: the stacks' events
// all go to the same ATRIUM_* streams, and webhooks services sharing one
// durable consumer would each take some of the others' events and find no
// endpoint for them. The consumers are deleted when the test ends.
func testConsumer(t testing.TB, natsURL string) string {
	t.Helper()
	name := "atrium-webhooks-test-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	t.Cleanup(func() {
		nc, err := nats.Connect(natsURL)
		if err != nil {
			return
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return
		}
		if err := webhooks.DeleteConsumers(context.Background(), js, name); err != nil {
			t.Errorf("delete the test's webhooks consumers: %v", err)
		}
	})
	return name
}

// testAuditConsumer is testConsumer for the audit service: its durable
// consumer of ATRIUM_AUDIT, which every stack on the shared NATS server
// writes to, is the test's own, so that each stack's trail gets every
// event, and is deleted when the test ends. When the stream exists
// already, the consumer is made here, starting with the events to come:
// a new one of the service's own starts with the stream's first event,
// and on a shared server that is every earlier test's (a week of them),
// which the stack would have to keep before its own.
func testAuditConsumer(t testing.TB, natsURL string) string {
	t.Helper()
	name := "atrium-audit-test-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(t.Context(), eventdefs.AuditStream.Name); err == nil {
		// The service resumes with a consumer that exists.
		if _, err := js.CreateConsumer(t.Context(), eventdefs.AuditStream.Name, jetstream.ConsumerConfig{
			Durable: name, AckPolicy: jetstream.AckExplicitPolicy, DeliverPolicy: jetstream.DeliverNewPolicy,
			AckWait: 30 * time.Second, MaxDeliver: -1, InactiveThreshold: time.Hour,
		}); err != nil {
			t.Fatalf("create the test's audit consumer: %v", err)
		}
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		// The service makes its consumer, from the stream's first event.
		t.Logf("look up %s: %v", eventdefs.AuditStream.Name, err)
	}
	t.Cleanup(func() {
		nc, err := nats.Connect(natsURL)
		if err != nil {
			return
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return
		}
		if err := audit.DeleteConsumer(context.Background(), js, eventdefs.AuditStream.Name, name); err != nil {
			t.Errorf("delete the test's audit consumer: %v", err)
		}
	})
	return name
}

// withDataDir adds a --data-dir of the test's own to args that keep
// records in a database and name no place for files: atrium serve refuses
// to keep files in a temporary directory while their records outlive it.
func withDataDir(t testing.TB, args []string) []string {
	database, place := false, false
	for _, a := range args {
		database = database || strings.HasPrefix(a, "--database-url")
		place = place || strings.HasPrefix(a, "--data-dir") || strings.HasPrefix(a, "--s3-bucket")
	}
	if database && !place {
		return append(args, "--data-dir="+t.TempDir())
	}
	return args
}
