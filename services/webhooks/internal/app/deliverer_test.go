package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/webhookhttp"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
	"github.com/atrium-hq/atrium/services/webhooks/internal/retry"
)

// receiver is an endpoint of ours on loopback that verifies each delivery
// with the reference library once it knows the secret, and answers with
// the next of its answers (the last one repeatedly). It verifies ignoring
// the timestamp's age, since the tests run on a clock of their own; the
// tests compare the timestamp with the attempt's time instead.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	answers  []int
	secret   string
	got      []receipt
	hold     chan struct{} // if not nil, each request waits for it
	delay    time.Duration // how long each answer takes
	received chan struct{} // signalled on each request
	// retryAfter, if set, is the Retry-After of its 429 and 503 answers.
	retryAfter string
}

type receipt struct {
	id       string
	ts       string
	body     map[string]any
	verified error
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	r := &receiver{answers: answers, received: make(chan struct{}, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		var verr error
		if wh, err := standardwebhooks.NewWebhook(r.secret); err != nil {
			verr = err
		} else {
			verr = wh.VerifyIgnoringTimestamp(body, req.Header)
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		r.got = append(r.got, receipt{req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), m, verr})
		code := r.answers[min(len(r.got)-1, len(r.answers)-1)]
		hold, retryAfter, delay := r.hold, r.retryAfter, r.delay
		r.mu.Unlock()
		r.received <- struct{}{}
		if hold != nil {
			<-hold
		}
		time.Sleep(delay) // why sleep: the endpoint under test is slow to answer, which is what the test is about
		if code == http.StatusFound {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		}
		if retryAfter != "" && (code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable) {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "answer "+http.StatusText(code))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) receipts() []receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receipt(nil), r.got...)
}

type links map[string][]string

func (l links) AgenciesOf(_ context.Context, client string) ([]string, error) { return l[client], nil }

// world is a webhooks core on the memory store with a controllable clock.
type world struct {
	t     *testing.T
	db    *memdb.DB
	store *memory.Store
	eps   *app.Endpoints
	fan   *app.Fanout
	del   *app.Deliverer
	now   time.Time
	// audit are the audit events claimed from the outbox so far
	// (published leaves them here).
	audit []events.AuditEvent
}

func newWorld(t *testing.T, l links) *world {
	w := &world{t: t, db: memdb.New(nil), now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	w.store = memory.New(w.db)
	clock := func() time.Time { return w.now }
	guard := &netguard.Guard{AllowPrivate: true} // the receivers are on loopback
	w.eps = &app.Endpoints{Store: w.store, Guard: guard, Now: clock}
	w.fan = &app.Fanout{Store: w.store, Links: l, Now: clock}
	w.del = &app.Deliverer{Store: w.store, Sender: webhookhttp.New(guard, 10), Schedule: retry.Schedule{time.Minute, time.Hour},
		Timeout: 10 * time.Second, DisableAfter: 24 * time.Hour, Batch: 10, Now: clock}
	return w
}

func (w *world) register(tenant app.Tenant, r *receiver, events ...string) app.Endpoint {
	w.t.Helper()
	e, err := w.eps.Create(w.t.Context(), tenant, app.NewEndpoint{URL: r.URL + "/hook", Events: events})
	if err != nil {
		w.t.Fatal(err)
	}
	r.mu.Lock()
	r.secret = e.Secret.String()
	r.mu.Unlock()
	return e
}

func (w *world) event(id, subject, payload string) int {
	w.t.Helper()
	n, err := w.fan.Handle(w.t.Context(), id, subject, []byte(payload), w.now)
	if err != nil {
		w.t.Fatal(err)
	}
	return n
}

func (w *world) run() int {
	w.t.Helper()
	n, err := w.del.RunOnce(w.t.Context())
	if err != nil {
		w.t.Fatal(err)
	}
	return n
}

func (w *world) deliveries(e app.Endpoint) []app.Delivery {
	w.t.Helper()
	p, err := w.store.Deliveries(w.t.Context(), e.Tenant, e.ID, app.DeliveryFilter{Limit: 100})
	if err != nil {
		w.t.Fatal(err)
	}
	return p.Deliveries
}

func dealCreated(agency string) string {
	return `{"id":"` + uuid.NewString() + `","agency_id":"` + agency + `","at":"2026-11-25T10:00:00Z"}`
}

// TestDeliveredSignedOnceToSubscribers: an event reaches each subscribed
// endpoint of its tenant once, signed so that the reference library
// verifies it, with the Standard Webhooks body; an endpoint not subscribed
// and another tenant's get nothing; the attempt is in the log.
func TestDeliveredSignedOnceToSubscribers(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	other := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	all, deals, runs, neighbour := newReceiver(t, 200), newReceiver(t, 204), newReceiver(t, 200), newReceiver(t, 200)
	eAll := w.register(agency, all, "*")
	w.register(agency, deals, "deal.*")
	w.register(agency, runs, "action_run.*")
	w.register(other, neighbour, "*")
	if n := w.event("evt-1", "atrium.crm.deal.created", dealCreated(agency.ID)); n != 2 {
		t.Fatalf("fan-out added %d deliveries, want 2", n)
	}
	if n := w.event("evt-1", "atrium.crm.deal.created", dealCreated(agency.ID)); n != 2 {
		t.Fatalf("the same event again: %d", n)
	}
	if n := w.run(); n != 2 {
		t.Fatalf("attempted %d deliveries, want 2 (an event consumed twice is delivered once)", n)
	}
	for name, r := range map[string]*receiver{"*": all, "deal.*": deals} {
		got := r.receipts()
		if len(got) != 1 || got[0].id != "evt-1" || got[0].verified != nil || got[0].body["type"] != "deal.created" || got[0].body["timestamp"] == nil {
			t.Fatalf("the %s endpoint received %+v; want evt-1 once, verified, as {type, timestamp, data}", name, got)
		}
		if data, _ := got[0].body["data"].(map[string]any); data["agency_id"] != agency.ID {
			t.Fatalf("data %v, want the deal's ids", got[0].body["data"])
		}
	}
	if len(runs.receipts()) != 0 || len(neighbour.receipts()) != 0 {
		t.Fatal("an endpoint not subscribed, or another agency's, received the deal")
	}
	d := w.deliveries(eAll)
	if len(d) != 1 || d[0].Status != app.Succeeded || len(d[0].Attempts) != 1 || d[0].Attempts[0].StatusCode != 200 || d[0].Attempts[0].ResponseBody != "answer OK" {
		t.Fatalf("delivery log %+v", d)
	}
}

// TestRetriedWithTheSameIDUntilSuccess: a failed attempt is retried on the
// schedule, not before, with the same webhook-id.
func TestRetriedWithTheSameIDUntilSuccess(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 500, 503, 200)
	e := w.register(agency, r, "*")
	w.event("evt-r", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.run()
	if n := w.run(); n != 0 {
		t.Fatalf("retried at once (%d), before the schedule's minute", n)
	}
	w.now = w.now.Add(2 * time.Minute)
	w.run()
	w.now = w.now.Add(2 * time.Hour)
	w.run()
	got := r.receipts()
	if len(got) != 3 || got[0].id != "evt-r" || got[1].id != "evt-r" || got[2].id != "evt-r" {
		t.Fatalf("receipts %+v, want evt-r three times", got)
	}
	for i, g := range got {
		if g.verified != nil {
			t.Errorf("attempt %d does not verify: %v", i+1, g.verified)
		}
	}
	d := w.deliveries(e)[0]
	if d.Status != app.Succeeded || len(d.Attempts) != 3 || d.Attempts[0].StatusCode != 500 || d.Attempts[1].StatusCode != 503 {
		t.Fatalf("delivery %+v", d)
	}
	for i, a := range d.Attempts {
		if want := strconv.FormatInt(a.At.Unix(), 10); got[i].ts != want {
			t.Errorf("attempt %d's webhook-timestamp %s, want the attempt's time %s", i+1, got[i].ts, want)
		}
	}
}

// TestLastAttemptFailsTheDelivery: after the schedule's last attempt the
// delivery is failed, and a recover sends it again.
func TestLastAttemptFailsTheDelivery(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 500, 500, 500, 200)
	e := w.register(agency, r, "*")
	w.event("evt-f", "atrium.crm.deal.created", dealCreated(agency.ID))
	for range 3 {
		w.run()
		w.now = w.now.Add(3 * time.Hour)
	}
	if d := w.deliveries(e)[0]; d.Status != app.Failed || len(d.Attempts) != 3 {
		t.Fatalf("after three failed attempts of a three-attempt schedule: %+v", d)
	}
	if n, err := w.store.Recover(t.Context(), agency, e.ID, w.now.Add(-24*time.Hour), w.now, w.now); err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v", n, err)
	}
	w.run()
	if d := w.deliveries(e)[0]; d.Status != app.Succeeded || len(r.receipts()) != 4 {
		t.Fatalf("after recover: %+v", d)
	}
}

// published takes the events the service's outbox holds, as the relay
// would publish them.
// published claims the outbox: the events it returns, and the audit
// trail's, which it keeps in w.audit.
func (w *world) published() []outbox.Event {
	w.t.Helper()
	var out []outbox.Event
	err := w.db.Outbox().Claim(w.t.Context(), 100, func(_ context.Context, es []outbox.Event) int {
		for _, e := range es {
			if !events.AuditRecorded.Matches(e.Subject) {
				out = append(out, e)
				continue
			}
			a, err := events.AuditRecorded.Parse(e.Subject, e.Payload)
			if err != nil {
				w.t.Fatal(err)
			}
			w.audit = append(w.audit, a)
		}
		return len(es)
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// TestGoneDisablesTheEndpoint: 410 disables the endpoint; its next
// deliveries are not sent; the disabling is announced once, on NATS and,
// as webhook.disabled, to the tenant's other endpoints that subscribe,
// never to another tenant's.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 410)
	e := w.register(agency, r, "*")
	watcher := newReceiver(t, 200)
	w.register(agency, watcher, "webhook.*")
	stranger := newReceiver(t, 200)
	w.register(app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}, stranger, "*")
	w.event("evt-g1", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.run()
	got, _ := w.eps.Get(t.Context(), agency, e.ID)
	if got.Enabled || !strings.Contains(got.DisabledReason, "410") {
		t.Fatalf("after a 410 the endpoint is %+v; want disabled, saying why", got)
	}
	if d := w.deliveries(e)[0]; d.Status != app.Failed {
		t.Fatalf("the delivery answered 410 is %s, want failed", d.Status)
	}
	if n := w.event("evt-g2", "atrium.crm.deal.created", dealCreated(agency.ID)); n != 0 {
		t.Fatalf("a disabled endpoint got %d new deliveries", n)
	}
	pub := w.published()
	if len(pub) != 1 || pub[0].Subject != events.WebhookDisabled.Pattern() {
		t.Fatalf("published %+v, want one %s", pub, events.WebhookDisabled.Pattern())
	}
	if err := events.Check(pub[0].Subject, pub[0].Payload); err != nil {
		t.Fatal(err)
	}
	if n := w.event(pub[0].ID, pub[0].Subject, string(pub[0].Payload)); n != 1 {
		t.Fatalf("the disabling fanned out to %d endpoints, want the tenant's one watcher", n)
	}
	w.run()
	got2 := watcher.receipts()
	if len(got2) != 1 || got2[0].verified != nil || got2[0].body["type"] != "webhook.disabled" {
		t.Fatalf("the watcher received %+v, want one verified webhook.disabled", got2)
	}
	data := got2[0].body["data"].(map[string]any)
	if data["webhook_id"] != e.ID || data["url"] != e.URL || !strings.Contains(data["reason"].(string), "410") {
		t.Fatalf("webhook.disabled data %v, want the endpoint's id, URL and the reason", data)
	}
	if len(stranger.receipts()) != 0 || len(r.receipts()) != 1 {
		t.Fatalf("another tenant got %d deliveries and the disabled endpoint %d; want 0 and its one 410", len(stranger.receipts()), len(r.receipts()))
	}
	// Its owner may still test it (to check a fix before enabling it);
	// that announces nothing again.
	if _, err := w.del.Test(t.Context(), agency, e.ID); err != nil || len(r.receipts()) != 2 {
		t.Fatalf("a test of the disabled endpoint: %v, %d receipts; want it sent", err, len(r.receipts()))
	}
	if again := w.published(); len(again) != 0 {
		t.Fatalf("a test of a disabled endpoint announced %+v", again)
	}
}

// TestFailingForTooLongDisables: failures for DisableAfter disable the
// endpoint; a success before that ends the run.
func TestFailingForTooLongDisables(t *testing.T) {
	w := newWorld(t, nil)
	w.del.Schedule = retry.Schedule{13 * time.Hour, 13 * time.Hour}
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 500)
	e := w.register(agency, r, "*")
	w.event("evt-d", "atrium.crm.deal.created", dealCreated(agency.ID))
	for range 3 {
		w.run()
		w.now = w.now.Add(15 * time.Hour)
	}
	got, _ := w.eps.Get(t.Context(), agency, e.ID)
	if got.Enabled || !strings.Contains(got.DisabledReason, "24h0m0s") {
		t.Fatalf("after failing for more than a day: %+v", got)
	}
}

// TestRedirectIsNotFollowed: a 3xx is the attempt's failed answer, and
// nothing is sent where it points.
func TestRedirectIsNotFollowed(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, http.StatusFound)
	e := w.register(agency, r, "*")
	w.event("evt-3", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.run()
	d := w.deliveries(e)[0]
	if d.Status != app.Pending || d.Attempts[0].StatusCode != 302 || !strings.Contains(d.Attempts[0].Error, "redirects are not followed") {
		t.Fatalf("after a 302: %+v", d)
	}
}

// TestSlowEndpointDoesNotHoldAnother: one endpoint that does not answer
// until another has received its delivery: both succeed, so the second
// was sent while the first was waiting.
func TestSlowEndpointDoesNotHoldAnother(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	slow, fast := newReceiver(t, 200), newReceiver(t, 200)
	slow.hold = make(chan struct{})
	eSlow := w.register(agency, slow, "*")
	eFast := w.register(agency, fast, "*")
	w.event("evt-s", "atrium.crm.deal.created", dealCreated(agency.ID))
	go func() {
		<-fast.received // the fast endpoint got its delivery while the slow one waits
		close(slow.hold)
	}()
	w.run()
	for name, e := range map[string]app.Endpoint{"slow": eSlow, "fast": eFast} {
		if d := w.deliveries(e)[0]; d.Status != app.Succeeded {
			t.Errorf("the %s endpoint's delivery is %s (%+v); want both succeeded", name, d.Status, d.Attempts)
		}
	}
}

// TestPrivateAddressRefusedAtConnection: a name that resolves to a private
// address is refused when the deliverer connects, not only when the URL is
// registered; nothing reaches it.
func TestPrivateAddressRefusedAtConnection(t *testing.T) {
	w := newWorld(t, nil)
	r := newReceiver(t, 200)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	// Registered with a public-looking name, which later resolves to the
	// loopback receiver.
	port := r.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	e, err := (&app.Endpoints{Store: w.store, Guard: &netguard.Guard{AllowPrivate: true}}).Create(t.Context(), agency,
		app.NewEndpoint{URL: "http://hooks.example.com:" + strconv.Itoa(int(port)) + "/hook", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	strict := &netguard.Guard{Lookup: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}}
	w.del.Sender = webhookhttp.New(strict, 10)
	w.event("evt-p", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.run()
	d := w.deliveries(e)[0]
	if len(r.receipts()) != 0 || d.Attempts[0].StatusCode != 0 || !strings.Contains(d.Attempts[0].Error, "private") {
		t.Fatalf("a private address reached: %d receipts, attempt %+v", len(r.receipts()), d.Attempts[0])
	}
}

// TestDatasetChangeReachesTheLinkedAgencies: a client's dataset change is
// delivered to the agencies it is linked to, and no other.
func TestDatasetChangeReachesTheLinkedAgencies(t *testing.T) {
	client := uuid.NewString()
	a1, a2, a3 := uuid.NewString(), uuid.NewString(), uuid.NewString()
	w := newWorld(t, links{client: {a1, a2}})
	r1, r2, r3 := newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200)
	w.register(app.Tenant{Kind: eventtypes.Agency, ID: a1}, r1, "dataset.changed")
	w.register(app.Tenant{Kind: eventtypes.Agency, ID: a2}, r2, "*")
	w.register(app.Tenant{Kind: eventtypes.Agency, ID: a3}, r3, "*")
	if n := w.event("evt-ds", "atrium.data.rows.updated", `{"client_id":"`+client+`","resource":"blogs","count":2,"at":"2026-11-25T10:00:00Z"}`); n != 2 {
		t.Fatalf("fan-out to %d endpoints, want the 2 linked agencies'", n)
	}
	w.run()
	if len(r1.receipts()) != 1 || len(r2.receipts()) != 1 || len(r3.receipts()) != 0 {
		t.Fatalf("receipts %d, %d, %d; want 1, 1, 0", len(r1.receipts()), len(r2.receipts()), len(r3.receipts()))
	}
}

// TestRunDeliversWhenWoken: a running deliverer whose poll is an hour away
// delivers a fanned-out event at once, woken by the fan-out.
func TestRunDeliversWhenWoken(t *testing.T) {
	w := newWorld(t, nil)
	w.del.Now = nil // the real clock: Run waits on it
	w.fan.Now = nil
	w.fan.Added = w.del.Wake
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 200)
	w.register(agency, r, "*")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.del.Run(ctx, time.Hour) }()
	w.event("evt-w", "atrium.crm.deal.created", dealCreated(agency.ID))
	select {
	case <-r.received:
	case <-time.After(10 * time.Second):
		t.Fatal("not delivered within 10 s of the fan-out: the wake-up did not reach Run")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// TestDeadEndpointLeavesTheOthersTheirWorkers: an endpoint that never
// answers, with a backlog larger than the workers, does not delay another
// endpoint's delivery: it holds at most PerEndpoint workers.
func TestDeadEndpointLeavesTheOthersTheirWorkers(t *testing.T) {
	w := newWorld(t, nil)
	w.del.Now, w.fan.Now = nil, nil
	w.fan.Added = w.del.Wake
	w.del.Batch, w.del.PerEndpoint = 4, 2
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	neighbour := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	dead, healthy := newReceiver(t, 200), newReceiver(t, 200)
	dead.hold = make(chan struct{})
	t.Cleanup(func() { close(dead.hold) }) // runs before the servers close
	w.register(agency, dead, "*")
	w.register(neighbour, healthy, "*")
	for i := range 20 {
		w.event(fmt.Sprint("dead-", i), "atrium.crm.deal.created", dealCreated(agency.ID))
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.del.Run(ctx, time.Hour) }()
	for range 2 {
		<-dead.received // the dead endpoint holds its two workers
	}
	w.event("alive", "atrium.crm.deal.created", dealCreated(neighbour.ID))
	select {
	case <-healthy.received:
	case <-time.After(time.Second):
		t.Fatal("the healthy endpoint's delivery waited more than a second behind the dead one's backlog")
	}
	if n := len(dead.receipts()); n != 2 {
		t.Errorf("the dead endpoint received %d attempts at once, want PerEndpoint (2)", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// TestTestEventIsSentAtOnce: POST …/test sends webhook.test to that
// endpoint only, at once, signed, and answers with the attempt; another
// tenant's id is a 404.
func TestTestEventIsSentAtOnce(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r, other := newReceiver(t, 204), newReceiver(t, 200)
	e := w.register(agency, r, "deal.created")
	w.register(agency, other, "*")
	d, err := w.del.Test(t.Context(), agency, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := r.receipts()
	if len(got) != 1 || got[0].body["type"] != "webhook.test" || got[0].verified != nil || got[0].id != d.EventID {
		t.Fatalf("the endpoint received %+v; want one verified webhook.test with the delivery's event id", got)
	}
	if data, _ := got[0].body["data"].(map[string]any); data["webhook_id"] != e.ID {
		t.Fatalf("data %v, want the webhook's id", got[0].body["data"])
	}
	if d.Status != app.Succeeded || len(d.Attempts) != 1 || d.Attempts[0].StatusCode != 204 {
		t.Fatalf("the test's delivery %+v; want succeeded with its 204", d)
	}
	if len(other.receipts()) != 0 {
		t.Fatal("another endpoint of the tenant received the test")
	}
	if _, err := w.del.Test(t.Context(), app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}, e.ID); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("another tenant's test = %v, want 404", err)
	}
}

// TestAttemptsAreCounted: each attempt is counted by its outcome and the
// answer's status class.
func TestAttemptsAreCounted(t *testing.T) {
	w := newWorld(t, nil)
	reader := sdkmetric.NewManualReader()
	w.del.Meters = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	w.register(agency, newReceiver(t, 503, 200), "*")
	w.event("evt-m", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.run()
	w.now = w.now.Add(2 * time.Minute)
	w.run()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "atrium.webhooks.attempts" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				o, _ := dp.Attributes.Value("outcome")
				c, _ := dp.Attributes.Value("status_class")
				got[o.AsString()+"/"+c.AsString()] += dp.Value
			}
		}
	}
	if len(got) != 2 || got["failed/5xx"] != 1 || got["succeeded/2xx"] != 1 {
		t.Fatalf("attempts counted %v, want one failed/5xx and one succeeded/2xx", got)
	}
}

// TestAttemptSpanLinksToTheWrite: each attempt is a span of its own trace,
// linked to the trace of the write that caused the event (the fan-out
// keeps it from the consumer's context), named by the event type, with
// the attempt's number and answer.
func TestAttemptSpanLinksToTheWrite(t *testing.T) {
	w := newWorld(t, nil)
	spans := tracetest.NewSpanRecorder()
	w.del.Tracer = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 503, 200)
	w.register(agency, r, "*")
	write := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(t.Context(), write)
	if _, err := w.fan.Handle(ctx, "evt-t", "atrium.crm.deal.created", []byte(dealCreated(agency.ID)), w.now); err != nil {
		t.Fatal(err)
	}
	w.run()
	w.now = w.now.Add(2 * time.Minute)
	w.run()
	ended := spans.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans for two attempts", len(ended))
	}
	for i, sp := range ended {
		links := sp.Links()
		if sp.Name() != "webhook attempt deal.created" || len(links) != 1 || links[0].SpanContext.TraceID() != write.TraceID() ||
			links[0].SpanContext.SpanID() != write.SpanID() || sp.SpanContext().TraceID() == write.TraceID() {
			t.Fatalf("attempt %d: span %q links %v in trace %s; want its own trace linked to the write's span", i+1, sp.Name(), links, sp.SpanContext().TraceID())
		}
		attrs := map[string]any{}
		for _, a := range sp.Attributes() {
			attrs[string(a.Key)] = a.Value.AsInterface()
		}
		if attrs["webhook.attempt"] != int64(i+1) || attrs["webhook.event_id"] != "evt-t" {
			t.Fatalf("attempt %d: attributes %v", i+1, attrs)
		}
	}
	if ended[0].Status().Code != codes.Error || ended[1].Status().Code == codes.Error {
		t.Fatalf("span statuses %v then %v; want the 503 an error and the 200 not", ended[0].Status(), ended[1].Status())
	}
}

// TestStopCutsAttemptsShortAndFreesThem: an attempt in flight when the
// deliverer stops is recorded as cut short and is due again at once, for
// another deliverer to send without waiting out a lease.
func TestStopCutsAttemptsShortAndFreesThem(t *testing.T) {
	w := newWorld(t, nil)
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, 200)
	r.hold = make(chan struct{})
	defer close(r.hold)
	e := w.register(agency, r, "*")
	w.event("evt-c", "atrium.crm.deal.created", dealCreated(agency.ID))
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.del.Run(ctx, time.Hour) }()
	<-r.received
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	d := w.deliveries(e)[0]
	if d.Status != app.Pending || len(d.Attempts) != 1 || !strings.Contains(d.Attempts[0].Error, "cut short") || d.NextAttemptAt.After(w.now) {
		t.Fatalf("after the stop: %+v; want pending, due now, its attempt cut short", d)
	}
	if again, err := w.store.Claim(t.Context(), w.now, 10, app.Bound{}, time.Minute); err != nil || len(again) != 1 {
		t.Fatalf("another deliverer's claim = %d, %v; want the cut delivery at once", len(again), err)
	}
}

// TestBacklogIsObserved: the backlog gauges say how many deliveries are
// due and scheduled, how old the oldest pending one is and how long the
// oldest due one has waited.
func TestBacklogIsObserved(t *testing.T) {
	w := newWorld(t, nil)
	reader := sdkmetric.NewManualReader()
	reg, err := app.ObserveBacklog(w.store, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), func() time.Time { return w.now })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reg.Unregister() }()
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	w.register(agency, newReceiver(t, 503), "*")
	w.event("evt-1", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.run() // failed: scheduled a minute on
	w.event("evt-2", "atrium.crm.deal.created", dealCreated(agency.ID))
	w.now = w.now.Add(30 * time.Second)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					st, _ := dp.Attributes.Value("state")
					got[m.Name+"/"+st.AsString()] = float64(dp.Value)
				}
			case metricdata.Gauge[float64]:
				got[m.Name] = d.DataPoints[0].Value
			}
		}
	}
	want := map[string]float64{"atrium.webhooks.backlog/due": 1, "atrium.webhooks.backlog/scheduled": 1,
		"atrium.webhooks.oldest_pending.age": 30, "atrium.webhooks.oldest_due.wait": 30}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

// TestSilentEndpointIsHeldBack: when an endpoint does not answer within
// the time-out, it is held back that long from the attempt's end: its
// other due deliveries, its retry and the deliveries of events that come
// meanwhile all wait for the hold's end, on every deliverer sharing the
// store (another replica too), instead of taking its workers for another
// time-out each; a 503 with Retry-After holds it back as long as it asks;
// a 503 without holds nothing back.
func TestSilentEndpointIsHeldBack(t *testing.T) {
	w := newWorld(t, nil)
	w.del.Timeout, w.del.PerEndpoint = 50*time.Millisecond, 1
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	silent := newReceiver(t, 200)
	silent.hold = make(chan struct{})
	t.Cleanup(func() { close(silent.hold) })
	e := w.register(agency, silent, "deal.*")
	for i := range 3 {
		w.event(fmt.Sprint("evt-", i), "atrium.crm.deal.created", dealCreated(agency.ID))
	}
	if n := w.run(); n != 1 {
		t.Fatalf("attempted %d, want 1 (one at a time to this endpoint)", n)
	}
	heldUntil := heldFrom(t, w.deliveries(e), w.del.Timeout)
	for _, d := range w.deliveries(e) {
		if len(d.Attempts) == 1 {
			if d.NextAttemptAt.Before(heldUntil) {
				t.Fatalf("the timed-out delivery's retry is due at %s, before the endpoint's hold ends at %s", d.NextAttemptAt, heldUntil)
			}
			continue
		}
		if !d.NextAttemptAt.Equal(heldUntil) {
			t.Fatalf("an unattempted delivery of the silent endpoint is due at %s, want %s (held back for the time-out from the attempt's end)", d.NextAttemptAt, heldUntil)
		}
	}
	// An event comes while the endpoint is held back, and another replica
	// shares the store: neither deliverer attempts the endpoint before the
	// hold ends.
	w.now = w.now.Add(10 * time.Millisecond)
	w.event("evt-during-hold", "atrium.crm.deal.created", dealCreated(agency.ID))
	replica := &app.Deliverer{Store: w.store, Sender: webhookhttp.New(&netguard.Guard{AllowPrivate: true}, 10), Schedule: w.del.Schedule,
		Timeout: w.del.Timeout, Batch: 10, PerEndpoint: 1, Now: func() time.Time { return w.now }}
	sent := len(silent.receipts())
	w.now = heldUntil.Add(-time.Microsecond)
	for name, d := range map[string]*app.Deliverer{"this deliverer": w.del, "another replica": replica} {
		if n, err := d.RunOnce(t.Context()); err != nil || n != 0 {
			t.Fatalf("%s attempted %d (%v) while the endpoint was held back, want none", name, n, err)
		}
	}
	if got := len(silent.receipts()); got != sent {
		t.Fatalf("the held endpoint received %d more attempts during its hold, want none", got-sent)
	}
	w.now = heldUntil
	if n, err := replica.RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("when the hold ended, the other replica attempted %d (%v); want one (one at a time to this endpoint)", n, err)
	}

	for _, retryAfter := range []string{"", "120"} {
		busy := newReceiver(t, http.StatusServiceUnavailable)
		busy.retryAfter = retryAfter
		other := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
		b := w.register(other, busy, "deal.*")
		for i := range 2 {
			w.event(fmt.Sprint("busy-", retryAfter, i), "atrium.crm.deal.created", dealCreated(other.ID))
		}
		w.run()
		var held []time.Time
		for _, d := range w.deliveries(b) {
			if len(d.Attempts) == 0 {
				held = append(held, d.NextAttemptAt)
			}
		}
		switch {
		case retryAfter == "" && (len(held) != 1 || held[0].After(w.now)):
			t.Fatalf("after a 503 without Retry-After the other delivery is due at %v; want it due now", held)
		case retryAfter != "" && (len(held) != 1 || !held[0].Equal(heldFrom(t, w.deliveries(b), 2*time.Minute))):
			t.Fatalf("after a 503 with Retry-After: 120 the other delivery is due at %v; want 2 minutes after the attempt's answer", held)
		}
	}
}

// TestSuccessEndsTheHold: an endpoint that asked to be left alone for an
// hour (503, Retry-After: 3600) and is fixed: the retry its owner asks for
// succeeds, and its other deliveries, held back for the hour, go at once.
func TestSuccessEndsTheHold(t *testing.T) {
	w := newWorld(t, nil)
	w.del.PerEndpoint = 1
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	r := newReceiver(t, http.StatusServiceUnavailable, 200)
	r.retryAfter = "3600"
	e := w.register(agency, r, "deal.*")
	for i := range 3 {
		w.event(fmt.Sprint("evt-", i), "atrium.crm.deal.created", dealCreated(agency.ID))
	}
	if n := w.run(); n != 1 {
		t.Fatalf("attempted %d, want 1", n)
	}
	var failed app.Delivery
	for _, d := range w.deliveries(e) {
		if len(d.Attempts) == 1 {
			failed = d
		} else if d.NextAttemptAt.Before(w.now.Add(time.Hour)) {
			t.Fatalf("after a 503 with Retry-After: 3600 another delivery is due at %s, want an hour on", d.NextAttemptAt)
		}
	}
	w.now = w.now.Add(time.Minute)
	if n := w.run(); n != 0 {
		t.Fatalf("a minute into the hold the deliverer attempted %d, want none", n)
	}
	if got, err := w.log().Retry(t.Context(), agency, e.ID, failed.ID); err != nil || got.Status != app.Succeeded {
		t.Fatalf("the owner's retry = %+v, %v; want it to succeed", got, err)
	}
	if n := w.run(); n != 1 {
		t.Fatalf("after the retry succeeded the deliverer attempted %d; want the held deliveries again (one at a time)", n)
	}
	if got := len(r.receipts()); got != 3 {
		t.Fatalf("the endpoint received %d attempts, want 3 (the 503, the retry, one held delivery)", got)
	}
}

// heldFrom is when a hold of d after the one attempt among ds ends: d from
// when that attempt ended, as the stores keep times.
func heldFrom(t *testing.T, ds []app.Delivery, d time.Duration) time.Time {
	t.Helper()
	for _, del := range ds {
		if len(del.Attempts) == 1 {
			a := del.Attempts[0]
			return a.At.Add(a.Duration).Add(d).UTC().Truncate(time.Microsecond)
		}
	}
	t.Fatal("no delivery was attempted once")
	return time.Time{}
}

// TestRetryDoesNotJumpTheQueue: an attempt's retry is scheduled from when
// its answer came, not from when it was sent: the retry of an endpoint
// that answers 503 slowly is not due before the first attempt of a
// healthy endpoint that came while it waited, and a deliverer with one
// worker attempts the healthy one first.
func TestRetryDoesNotJumpTheQueue(t *testing.T) {
	w := newWorld(t, nil)
	w.del.Batch, w.del.Schedule = 1, retry.Schedule{time.Millisecond, time.Hour}
	failingTenant := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	healthyTenant := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	failing, healthy := newReceiver(t, http.StatusServiceUnavailable), newReceiver(t, 200)
	failing.delay = 40 * time.Millisecond
	eFailing := w.register(failingTenant, failing, "deal.*")
	w.register(healthyTenant, healthy, "deal.*")
	w.event("evt-failing", "atrium.crm.deal.created", dealCreated(failingTenant.ID))
	if n := w.run(); n != 1 || len(failing.receipts()) != 1 {
		t.Fatalf("attempted %d, the failing endpoint received %d; want its one attempt", n, len(failing.receipts()))
	}
	// The healthy endpoint's event came 10 ms after the failing attempt
	// was sent, while the failing endpoint took 40 ms to answer 503.
	w.now = w.now.Add(10 * time.Millisecond)
	w.event("evt-healthy", "atrium.crm.deal.created", dealCreated(healthyTenant.ID))
	retryAt := w.deliveries(eFailing)[0].NextAttemptAt
	if a := w.deliveries(eFailing)[0].Attempts[0]; retryAt.Before(a.At.Add(a.Duration)) {
		t.Fatalf("the retry is due at %s, before the attempt's answer came at %s", retryAt, a.At.Add(a.Duration))
	}
	w.now = w.now.Add(time.Second)
	if n := w.run(); n != 1 || len(healthy.receipts()) != 1 || len(failing.receipts()) != 1 {
		t.Fatalf("with one worker, the next run attempted %d: the healthy endpoint received %d, the failing one %d; want the healthy endpoint's first attempt, due longer than the retry",
			n, len(healthy.receipts()), len(failing.receipts()))
	}
}

// windowStore claims as PostgreSQL's store does when one endpoint's
// backlog is due before everyone else's: its claim reads a window of the
// oldest due deliveries, which that backlog fills, so while the endpoint
// may take more the claim returns only its deliveries, fewer than asked.
type windowStore struct {
	app.Store
	backlogged string
	others     []string
}

func (s windowStore) Claim(ctx context.Context, now time.Time, limit int, b app.Bound, lease time.Duration) ([]app.Due, error) {
	if b.Allows(s.backlogged) > 0 {
		held := maps.Clone(b.Held)
		if held == nil {
			held = map[string]int{}
		}
		for _, o := range s.others {
			held[o] = b.PerEndpoint
		}
		b.Held = held
	}
	return s.Store.Claim(ctx, now, limit, b, lease)
}

// TestShortClaimDoesNotWaitForThePoll: when a dead endpoint's backlog,
// due first, fills a claim's window so that the claim comes back short,
// the deliverer claims again at once for its free workers (the dead
// endpoint is full by then) rather than at the next poll or wake-up: a
// healthy endpoint's delivery is not held back by the dead one's backlog.
func TestShortClaimDoesNotWaitForThePoll(t *testing.T) {
	w := newWorld(t, nil)
	w.del.Now, w.fan.Now = nil, nil
	w.del.Batch, w.del.PerEndpoint = 4, 2
	agency := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	neighbour := app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	dead, healthy := newReceiver(t, 200), newReceiver(t, 200)
	dead.hold = make(chan struct{})
	t.Cleanup(func() { close(dead.hold) }) // runs before the servers close
	eDead := w.register(agency, dead, "*")
	eHealthy := w.register(neighbour, healthy, "*")
	for i := range 20 {
		w.event(fmt.Sprint("dead-", i), "atrium.crm.deal.created", dealCreated(agency.ID))
	}
	w.event("alive", "atrium.crm.deal.created", dealCreated(neighbour.ID))
	w.del.Store = windowStore{Store: w.store, backlogged: eDead.ID, others: []string{eHealthy.ID}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.del.Run(ctx, time.Hour) }() // no poll, no wake-up: only the loop itself claims
	select {
	case <-healthy.received:
	case <-time.After(2 * time.Second):
		t.Fatal("the healthy endpoint's delivery waited more than 2 s behind a claim the dead endpoint's backlog filled (until the next poll or wake-up)")
	}
	if n := len(dead.receipts()); n > 2 {
		t.Errorf("the dead endpoint received %d attempts at once, want at most PerEndpoint (2)", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
