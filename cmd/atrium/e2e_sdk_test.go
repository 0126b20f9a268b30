package main

// The Go SDK (sdk/go) against a running Atrium, as its users run it: the
// interfaces through typed methods and iterators, its errors, the
// deliveries of webhooks verified by its own verifier, and, behind a proxy
// of the test's own that answers 503 and drops connections after the
// server answered, its retries, which never run an action twice.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func testSDK(t *testing.T, s *stack) {
	c := s.newCMS(t)
	client := s.newClient(t, c.tenant, true)
	s.grant(t, c.agency, 10, 10)
	s.loadRows(t, client, "keywords",
		map[string]any{"keyword": "rye bread", "position": 4, "status": "active"},
		map[string]any{"keyword": "sourdough", "position": 1, "status": "active"},
		map[string]any{"keyword": "baguette", "position": 9, "status": "paused"})
	s.newProspect(t, c.tenant, "Corner Bakery")
	sdk := atrium.New(s.api, c.write, atrium.WithHTTPClient(http.DefaultClient))
	ctx := t.Context()

	// Collections: a create, a read with its ETag, a conditional update.
	published := true
	it, err := sdk.Items.Create(ctx, "posts", atrium.ItemWrite{Data: map[string]any{"title": "From the SDK"}, IsPublished: &published})
	if err != nil || it.Fields["title"] != "From the SDK" || !it.IsPublished || it.ETag != "1" {
		t.Fatalf("Items.Create = %+v, %v", it, err)
	}
	got, err := sdk.Items.Get(ctx, "posts", it.ID)
	if err != nil || got.ID != it.ID || got.ETag != "1" {
		t.Fatalf("Items.Get = %+v, %v", got, err)
	}
	if _, err := sdk.Items.Update(ctx, "posts", it.ID, atrium.ItemWrite{Data: map[string]any{"title": "Changed"}}, atrium.IfMatch("1")); err != nil {
		t.Fatal(err)
	}
	_, err = sdk.Items.Update(ctx, "posts", it.ID, atrium.ItemWrite{Data: map[string]any{"title": "Stale"}}, atrium.IfMatch("1"))
	if atrium.StatusOf(err) != http.StatusPreconditionFailed {
		t.Fatalf("an update with a stale ETag = %v; want 412", err)
	}
	n := 0
	for item, err := range sdk.Items.All(ctx, "posts", &atrium.ItemQuery{IsPublished: &published}) {
		if err != nil || item.ID != it.ID {
			t.Fatalf("Items.All gave %+v, %v", item, err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("Items.All walked %d published items, want 1", n)
	}
	// Search and expand, as the HTTP parameters q and expand.
	author, err := sdk.Items.Create(ctx, "authors", atrium.ItemWrite{Data: map[string]any{"name": "Ana"}, IsPublished: &published})
	if err != nil {
		t.Fatal(err)
	}
	byAna, err := sdk.Items.Create(ctx, "posts", atrium.ItemWrite{Data: map[string]any{"title": "Rye starter notes", "author": author.ID}})
	if err != nil {
		t.Fatal(err)
	}
	found, err := sdk.Items.List(ctx, "posts", &atrium.ItemQuery{Q: "starter", Expand: []string{"author"}})
	if err != nil || len(found.Items) != 1 || found.Items[0].ID != byAna.ID {
		t.Fatalf("Items.List q=starter = %+v, %v; want the one post that says starter", found, err)
	}
	if a, _ := found.Items[0].Fields["author"].(map[string]any); a == nil || a["id"] != author.ID {
		t.Fatalf("Items.List expand=author gave author %v; want the author's object", found.Items[0].Fields["author"])
	}
	one, err := sdk.Items.Get(ctx, "posts", byAna.ID, "author")
	if a, _ := one.Fields["author"].(map[string]any); err != nil || a == nil || a["id"] != author.ID {
		t.Fatalf("Items.Get with expand author = %+v, %v; want the author's object", one, err)
	}
	if plain, err := sdk.Items.Get(ctx, "posts", byAna.ID); err != nil || plain.Fields["author"] != author.ID {
		t.Fatalf("Items.Get without expand = %+v, %v; want the author's id", plain, err)
	}

	// CRM and data through the iterators, the data by cursor pages of 2.
	var prospects []string
	for p, err := range sdk.Prospects.All(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prospects = append(prospects, p.BusinessName)
	}
	var keywords []any
	for row, err := range sdk.Data.All(ctx, atrium.DataQuery{Resource: "keywords", ClientID: client, Order: "created_at", Direction: "asc", Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		keywords = append(keywords, row["keyword"])
	}
	if fmt.Sprint(prospects) != "[Corner Bakery]" || fmt.Sprint(keywords) != "[rye bread sourdough baguette]" {
		t.Fatalf("prospects %v, keywords %v", prospects, keywords)
	}

	// An action and the credits it spent.
	res, err := sdk.Actions.Run(ctx, "generate_gbp_post", client, map[string]any{"topic": "Fresh rye"})
	if err != nil || !res.Succeeded() || res.Remaining.AI != 9 || res.Replayed {
		t.Fatalf("Actions.Run = %+v, %v", res, err)
	}
	if bal, err := sdk.Actions.Credits(ctx); err != nil || bal.AI != 9 {
		t.Fatalf("Actions.Credits = %+v, %v", bal, err)
	}

	// A schedule: previewed, created, found by its filters, triggered
	// (an ordinary run, waited for), paused, resumed and deleted; and the
	// reports' branding.
	every, at, monday := "week", "07:00", "monday"
	in := atrium.ScheduleInput{Action: "generate_gbp_post", ClientID: client, Params: map[string]any{"topic": "Weekly rye"},
		Every: &every, At: &at, Weekday: &monday, Timezone: "Europe/London", MaxCreditsPerMonth: &atrium.Credits{AI: 8}}
	preview, err := sdk.Schedules.Create(ctx, in, atrium.DryRun())
	if err != nil || preview.ID != "" || preview.State != "active" || len(preview.NextRuns) != 5 || preview.EstimatedCredits.PerRun.AI != 1 {
		t.Fatalf("Schedules.Create dry run = %+v, %v", preview, err)
	}
	for sc, err := range sdk.Schedules.List(ctx, atrium.ScheduleQuery{}) {
		t.Fatalf("a dry run stored a schedule: listed %+v, %v", sc, err)
	}
	sched, err := sdk.Schedules.Create(ctx, in)
	if err != nil || sched.ID == "" || sched.NextRunAt == nil || sched.NextRunAt.Weekday() != time.Monday {
		t.Fatalf("Schedules.Create = %+v, %v", sched, err)
	}
	var listed []string
	for sc, err := range sdk.Schedules.List(ctx, atrium.ScheduleQuery{ClientID: client, Action: "generate_gbp_post", State: "active"}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, sc.ID)
	}
	for sc, err := range sdk.Schedules.List(ctx, atrium.ScheduleQuery{State: "paused"}) {
		t.Fatalf("the paused schedules listed %+v, %v; none is paused", sc, err)
	}
	if fmt.Sprint(listed) != "["+sched.ID+"]" {
		t.Fatalf("Schedules.List = %v; want [%s]", listed, sched.ID)
	}
	triggered, err := sdk.Schedules.Trigger(ctx, sched.ID)
	if err != nil || triggered.State != "queued" {
		t.Fatalf("Schedules.Trigger = %+v, %v", triggered, err)
	}
	if done, err := sdk.Runs.Wait(ctx, triggered.ID); err != nil || done.State != "success" || done.Credits.Spent.AI != 1 {
		t.Fatalf("the triggered run ended %+v, %v", done, err)
	}
	if p, err := sdk.Schedules.Pause(ctx, sched.ID); err != nil || p.State != "paused" || p.NextRunAt != nil {
		t.Fatalf("Schedules.Pause = %+v, %v", p, err)
	}
	desc := "Rye every Monday"
	if u, err := sdk.Schedules.Update(ctx, sched.ID, atrium.ScheduleInput{Description: &desc}); err != nil || u.Description != desc || u.State != "paused" {
		t.Fatalf("Schedules.Update = %+v, %v", u, err)
	}
	if r, err := sdk.Schedules.Resume(ctx, sched.ID); err != nil || r.State != "active" {
		t.Fatalf("Schedules.Resume = %+v, %v", r, err)
	}
	if g, err := sdk.Schedules.Get(ctx, sched.ID); err != nil || len(g.Slots) == 0 || g.Slots[0].Outcome != "triggered" {
		t.Fatalf("Schedules.Get = %+v, %v; want the triggered slot", g, err)
	}
	if err := sdk.Schedules.Delete(ctx, sched.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.Schedules.Get(ctx, sched.ID); !atrium.IsNotFound(err) {
		t.Fatalf("a deleted schedule = %v; want 404", err)
	}
	if b, err := sdk.Branding.Put(ctx, atrium.Branding{Name: "Northwind SEO", Colors: atrium.BrandColors{Primary: "#112233"}}); err != nil || b.Colors.Accent != "#e07a2e" {
		t.Fatalf("Branding.Put = %+v, %v; want the default accent beside the primary given", b, err)
	}
	if b, err := sdk.Branding.Get(ctx); err != nil || b.Name != "Northwind SEO" || b.Colors.Primary != "#112233" {
		t.Fatalf("Branding.Get = %+v, %v", b, err)
	}

	// Errors: a 400 and a 404, with Atrium's words and the trace id.
	_, err = sdk.Data.Read(ctx, atrium.DataQuery{Resource: "nope", ClientID: client})
	var ae *atrium.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Message, "resource") || len(ae.TraceID) != 32 || ae.Attempts != 1 {
		t.Fatalf("a read of no dataset = %#v; want a 400 naming resource, with the trace id, not retried", err)
	}
	if _, err := sdk.Items.Get(ctx, "posts", "01a21761-0000-7000-8000-000000000000"); !atrium.IsNotFound(err) {
		t.Fatalf("Items.Get of nothing = %v, want 404", err)
	}

	// A webhook whose deliveries the SDK's verifier accepts.
	var (
		mu     sync.Mutex
		events []*atrium.WebhookEvent
	)
	arrived := make(chan struct{}, 10)
	var hook *atrium.Webhook
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		secret := hook.Secret
		mu.Unlock()
		atrium.WebhookHandler(secret, func(_ *http.Request, ev *atrium.WebhookEvent) error {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
			arrived <- struct{}{}
			return nil
		}).ServeHTTP(w, r)
	}))
	defer rx.Close()
	agencyKey := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": c.agency})
	asAgency := atrium.New(s.api, agencyKey, atrium.WithHTTPClient(http.DefaultClient))
	mu.Lock()
	hook, err = asAgency.Webhooks.Create(ctx, atrium.NewWebhook{URL: rx.URL, Events: []string{"webhook.test", "prospect.*"}})
	mu.Unlock()
	if err != nil || !strings.HasPrefix(hook.Secret, "whsec_") {
		t.Fatalf("Webhooks.Create = %+v, %v", hook, err)
	}
	d, err := asAgency.Webhooks.Test(ctx, hook.ID)
	if err != nil || d.Status != "succeeded" || *d.Attempts[0].StatusCode != 204 {
		t.Fatalf("Webhooks.Test = %+v, %v; want delivered, verified by the SDK's handler (204)", d, err)
	}
	<-arrived
	if events[0].Type != "webhook.test" || events[0].Data["webhook_id"] != hook.ID || events[0].ID != d.EventID {
		t.Fatalf("the verified event %+v", events[0])
	}
	var log []atrium.Delivery
	for del, err := range asAgency.Webhooks.AllDeliveries(ctx, hook.ID, "") {
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, del)
	}
	if len(log) != 1 || log[0].ID != d.ID {
		t.Fatalf("the delivery log %+v", log)
	}
}

// fault is what the proxy does with one request.
type fault int

const (
	pass fault = iota
	unavailable
	// lostAnswer forwards the request, lets Atrium answer it, and closes
	// the client's connection instead of passing the answer on: the case
	// that makes retrying a POST dangerous.
	lostAnswer
)

// faultProxy stands between the SDK and Atrium and does to each request
// the next fault of its plan (then passes everything).
type faultProxy struct {
	*httptest.Server
	target *url.URL
	mu     sync.Mutex
	plan   []fault
	// forwarded counts the requests that reached Atrium, by path.
	forwarded map[string]int
}

func newFaultProxy(t *testing.T, target string, plan ...fault) *faultProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{target: u, plan: plan, forwarded: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *faultProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	f := pass
	if len(p.plan) > 0 {
		f, p.plan = p.plan[0], p.plan[1:]
	}
	p.mu.Unlock()
	if f == unavailable {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":"the proxy says: a backing service is temporarily unavailable; retry with exponential backoff"}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	// The target is the test's own stack, fixed when the proxy starts; only
	// the path and query come from the request.
	u := *p.target
	u.Path, u.RawQuery = r.URL.Path, r.URL.RawQuery
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body)) //nolint:gosec // G704: the host is the test's own stack

	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	p.mu.Lock()
	p.forwarded[r.URL.Path]++
	p.mu.Unlock()
	if f == lostAnswer {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		}
		return
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// testSDKRetriesNeverRunTwice: behind a proxy that loses the answers of
// requests Atrium served and answers 503 itself, the SDK's reads and
// actions succeed, and an action whose first answers were lost ran once:
// one run, charged once, one record.
func testSDKRetriesNeverRunTwice(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 10)
	proxy := newFaultProxy(t, s.api, lostAnswer, unavailable, lostAnswer, pass)
	sdk := atrium.New(proxy.URL, tn.write, atrium.WithBackoff(10*time.Millisecond))

	res, err := sdk.Actions.Run(t.Context(), "generate_gbp_post", client, map[string]any{"topic": "Rye on Fridays"})
	if err != nil || !res.Succeeded() {
		t.Fatalf("the action through lost answers and a 503 = %+v, %v", res, err)
	}
	if n := proxy.forwarded["/api/v1/data"]; n != 3 || !res.Replayed {
		t.Fatalf("Atrium was sent the action %d times (replayed: %v); want 3 (2 answers lost), the last answered from the first run", n, res.Replayed)
	}
	if ai, _ := s.credits(t, tn.agency); ai != 9 {
		t.Fatalf("AI credits after the retried action: %v, want 9 (charged once)", ai)
	}
	runs := s.read(t, tn.read, params("resource", "action_runs", "client_id", client))
	wantStatus(t, runs, http.StatusOK)
	if n := len(runs.json["data"].([]any)); n != 1 {
		t.Fatalf("%d action runs recorded, want 1", n)
	}
	posts := s.read(t, tn.read, params("resource", "gbp_posts", "client_id", client))
	wantStatus(t, posts, http.StatusOK)
	if n := len(posts.json["data"].([]any)); n != 1 {
		t.Fatalf("%d posts written, want 1", n)
	}

	// A read through the same faults arrives, whatever it takes.
	proxy.mu.Lock()
	proxy.plan = []fault{unavailable, lostAnswer, pass}
	proxy.mu.Unlock()
	page, err := sdk.Data.Read(t.Context(), atrium.DataQuery{Resource: "gbp_posts", ClientID: client})
	if err != nil || len(page.Rows) != 1 {
		t.Fatalf("a read through faults = %+v, %v", page, err)
	}
}

// TestSDKExamples runs the SDK's examples as their users do, against a
// live atrium serve: the quickstart lists, reads and runs; the receiver
// verifies a test event Atrium sends it.
func TestSDKExamples(t *testing.T) {
	s := startStack(t, "--allow-private-fetch")
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 10)
	s.newProspect(t, tn, "Example Bakery")
	s.loadRows(t, client, "keywords", map[string]any{"keyword": "rye", "position": 2, "status": "active"})
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./examples/quickstart", "./examples/receiver")
	build.Dir = "../../sdk/go"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the examples: %v\n%s", err, out)
	}
	env := []string{"ATRIUM_URL=" + s.api, "ATRIUM_API_KEY=" + tn.write}

	quick := exec.Command(filepath.Join(dir, "quickstart"), client)
	quick.Env = env
	out, err := quick.CombinedOutput()
	for _, want := range []string{"prospect: Example Bakery", "1 prospects", "keyword: rye at 2", "generate_gbp_post: success (200), 9 AI credits left"} {
		if err != nil || !strings.Contains(string(out), want) {
			t.Fatalf("quickstart: %v, output lacks %q:\n%s", err, want, out)
		}
	}

	addr := freeAddr(t)
	sdk := atrium.New(s.api, tn.write, atrium.WithHTTPClient(http.DefaultClient))
	hook, err := sdk.Webhooks.Create(t.Context(), atrium.NewWebhook{URL: "http://" + addr + "/hook", Events: []string{"prospect.*"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rx := exec.CommandContext(ctx, filepath.Join(dir, "receiver"), "-addr", addr)
	rx.Env = append(env, "ATRIUM_WEBHOOK_SECRET="+hook.Secret)
	logs := &syncBuffer{}
	rx.Stdout, rx.Stderr = logs, logs
	if err := rx.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = rx.Wait() }()
	for {
		next := logs.next()
		if strings.Contains(logs.String(), "listening on") {
			break
		}
		select {
		case <-next:
		case <-time.After(30 * time.Second):
			t.Fatalf("the receiver did not start:\n%s", logs)
		}
	}
	d, err := sdk.Webhooks.Test(t.Context(), hook.ID)
	if err != nil || d.Status != "succeeded" {
		t.Fatalf("a test event to the example receiver: %+v, %v\n%s", d, err, logs)
	}
	for {
		next := logs.next()
		if strings.Contains(logs.String(), d.EventID+" webhook.test") {
			break
		}
		select {
		case <-next:
		case <-time.After(10 * time.Second):
			t.Fatalf("the receiver did not print the event:\n%s", logs)
		}
	}
}
