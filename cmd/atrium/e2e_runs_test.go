package main

// Asynchronous action runs over HTTP (Prefer: respond-async and wait, the
// run resource, cancel, idempotent replays, the queue's limit and its
// fairness), as a user drives them, on every deployment.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// wantAccepted checks a 202 of an asynchronous submission and returns the
// run's id.
func wantAccepted(t *testing.T, r response, action, client string) string {
	t.Helper()
	wantStatus(t, r, http.StatusAccepted)
	wantKeys(t, r.json, "action", "client_id", "status", "status_code", "data")
	d, _ := r.json["data"].(map[string]any)
	id, _ := d["run_id"].(string)
	if r.json["action"] != action || r.json["client_id"] != client || r.json["status"] != "pending" || r.json["status_code"] != float64(202) ||
		id == "" || d["url"] != "/api/v1/runs/"+id || (d["state"] != "queued" && d["state"] != "running") {
		t.Fatalf("202 body = %s", r.body)
	}
	if loc := r.header.Get("Location"); loc != "/api/v1/runs/"+id {
		t.Fatalf("Location = %q, want /api/v1/runs/%s", loc, id)
	}
	if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 {
		t.Fatalf("Retry-After = %q", r.header.Get("Retry-After"))
	}
	if !strings.Contains(r.header.Get("Preference-Applied"), "respond-async") {
		t.Fatalf("Preference-Applied = %q", r.header.Get("Preference-Applied"))
	}
	if r.header.Get("Atrium-AI-Credits-Remaining") == "" || r.header.Get("Atrium-Data-Credits-Remaining") == "" {
		t.Fatalf("202 lacks the balance headers: %v", r.header)
	}
	return id
}

// getRun reads a run, waiting up to wait seconds when wait > 0.
func (s *stack) getRun(t *testing.T, key, id string, wait int) map[string]any {
	t.Helper()
	var headers []string
	if wait > 0 {
		headers = []string{"Prefer", "wait=" + strconv.Itoa(wait)}
	}
	r := call(t, "GET", s.api+"/api/v1/runs/"+id, key, nil, headers...)
	wantStatus(t, r, http.StatusOK)
	run := r.json["run"].(map[string]any)
	wantKeys(t, run, "id", "action", "client_id", "state", "status_code", "data", "credits", "idempotency_key", "schedule_id", "created_at", "started_at", "finished_at")
	return run
}

// finished waits for a run to finish and returns it.
func (s *stack) finished(t *testing.T, key, id string) map[string]any {
	t.Helper()
	var run map[string]any
	eventually(t, 30*time.Second, func() bool {
		run = s.getRun(t, key, id, 5)
		return run["finished_at"] != nil
	})
	return run
}

func credits(run map[string]any, which string) (ai, data float64) {
	c := run["credits"].(map[string]any)[which].(map[string]any)
	return c["ai"].(float64), c["data"].(float64)
}

// testActionRunsAsync: a submission is answered 202 at once with its cost
// reserved; its Location leads to the outcome, which is the record a
// synchronous run makes, charged once; the list shows it.
func testActionRunsAsync(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 0)
	r := s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "pumpernickel"}, "Prefer", "respond-async")
	id := wantAccepted(t, r, "generate_blog", client)
	if r.header.Get("Atrium-AI-Credits-Remaining") != "8" {
		t.Fatalf("AI credits after the 202 = %s, want 8 (reserved)", r.header.Get("Atrium-AI-Credits-Remaining"))
	}
	run := s.finished(t, tn.read, r.header.Get("Location")[len("/api/v1/runs/"):])
	if run["id"] != id || run["state"] != "success" || run["status_code"] != float64(200) || run["action"] != "generate_blog" || run["client_id"] != client {
		t.Fatalf("finished run = %v", run)
	}
	if ai, _ := credits(run, "spent"); ai != 2 {
		t.Fatalf("credits spent = %v", run["credits"])
	}
	if ai, _ := credits(run, "reserved"); ai != 2 {
		t.Fatalf("credits reserved = %v", run["credits"])
	}
	wantTimestamp(t, run, "created_at")
	wantTimestamp(t, run, "started_at")
	wantTimestamp(t, run, "finished_at")
	if run["idempotency_key"] != nil {
		t.Fatalf("idempotency_key of a run without one = %v", run["idempotency_key"])
	}
	record := run["data"].(map[string]any)
	if ai, _ := s.credits(t, tn.agency); ai != 8 {
		t.Fatalf("AI credits after the run = %v, want 8 (charged once)", ai)
	}
	eventually(t, 5*time.Second, func() bool {
		r := s.read(t, tn.read, params("resource", "blogs", "client_id", client))
		rows, _ := r.json["data"].([]any)
		return len(rows) == 1 && rows[0].(map[string]any)["id"] == record["id"]
	})
	// The list, newest first, filtered and paged.
	second := wantAccepted(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "rye"}, "Prefer", "respond-async"), "generate_blog", client)
	s.finished(t, tn.read, second)
	list := call(t, "GET", s.api+"/api/v1/runs?limit=1", tn.read, nil)
	wantStatus(t, list, http.StatusOK)
	runs := list.json["runs"].([]any)
	cursor, _ := list.json["next_cursor"].(string)
	if len(runs) != 1 || runs[0].(map[string]any)["id"] != second || cursor == "" {
		t.Fatalf("first page = %s", list)
	}
	list = call(t, "GET", s.api+"/api/v1/runs?limit=1&cursor="+cursor, tn.read, nil)
	wantStatus(t, list, http.StatusOK)
	if runs := list.json["runs"].([]any); len(runs) != 1 || runs[0].(map[string]any)["id"] != id {
		t.Fatalf("second page = %s", list)
	}
	list = call(t, "GET", s.api+"/api/v1/runs?state=success&action=generate_blog&client_id="+client, tn.read, nil)
	wantStatus(t, list, http.StatusOK)
	if runs := list.json["runs"].([]any); len(runs) != 2 {
		t.Fatalf("filtered list = %s", list)
	}
	list = call(t, "GET", s.api+"/api/v1/runs?state=queued", tn.read, nil)
	if runs := list.json["runs"].([]any); len(runs) != 0 {
		t.Fatalf("queued runs = %s", list)
	}
	wantError(t, call(t, "GET", s.api+"/api/v1/runs?state=done", tn.read, nil), 400, "state must be one of queued, running, success, error, canceled")
	wantError(t, call(t, "GET", s.api+"/api/v1/runs?limit=101", tn.read, nil), 400, "limit must be an integer from 1 to 100")
	wantError(t, call(t, "GET", s.api+"/api/v1/runs?limit=1&cursor="+cursor+"&state=error", tn.read, nil), 400, "cursor belongs to another query")
	// A synchronous run is a run too, which only its request answers.
	wantAction(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "spelt"}), "generate_blog", client, "success")
	list = call(t, "GET", s.api+"/api/v1/runs", tn.read, nil)
	runs = list.json["runs"].([]any)
	if len(runs) != 3 || runs[0].(map[string]any)["state"] != "success" {
		t.Fatalf("runs after a synchronous one = %s", list)
	}
	wantError(t, call(t, "POST", s.api+"/api/v1/runs/"+runs[0].(map[string]any)["id"].(string)+"/cancel", tn.write, map[string]any{}), 409, "already finished")

	// Prefer is read as RFC 7240 writes it: a preference with parameters,
	// in any case, is still respond-async (it ran synchronously before).
	r = s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "einkorn"}, "Prefer", "Respond-Async;foo=bar")
	s.finished(t, tn.read, wantAccepted(t, r, "generate_blog", client))
	if got := r.header.Get("Preference-Applied"); got != "respond-async" {
		t.Fatalf("Preference-Applied of respond-async;foo=bar = %q; want respond-async", got)
	}
	// Several Prefer headers are one list: the second is read (its wait is
	// refused), and the first occurrence of a preference wins.
	blog := map[string]any{"action": "generate_blog", "client_id": client, "keyword": "emmer"}
	wantError(t, preferring(t, s.api+"/api/v1/data", tn.write, blog, "respond-async", "wait=soon"), 400, "Prefer header's wait must be a whole number of seconds")
	r = preferring(t, s.api+"/api/v1/data", tn.write, blog, "wait=20", "wait=soon, respond-async")
	wantAction(t, r, "generate_blog", client, "success")
	if got := r.header.Get("Preference-Applied"); got != "wait=20" {
		t.Fatalf("Preference-Applied of wait=20 then wait=soon = %q; want wait=20", got)
	}
}

// preferring POSTs body with each of prefer as a Prefer header of its own.
func preferring(t *testing.T, url, key string, body any, prefer ...string) response {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for _, p := range prefer {
		req.Header.Add("Prefer", p)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := response{status: resp.StatusCode, header: resp.Header}
	if r.body, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.body, &r.json); err != nil {
		t.Fatalf("POST %s: %v\n%s", url, err, r.body)
	}
	return r
}

// testActionRunsWait: Prefer: wait answers 200 with the outcome when the
// run finishes in time and 202 when it does not; a GET waits as well.
func testActionRunsWait(t *testing.T, s *stack, w *actionWorld) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 10)
	r := s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "barm brack"}, "Prefer", "respond-async, wait=20")
	wantAction(t, r, "generate_blog", client, "success")
	if r.header.Get("Preference-Applied") != "wait=20" || r.header.Get("Atrium-AI-Credits-Remaining") != "8" {
		t.Fatalf("waited answer headers: %v", r.header)
	}
	// wait alone implies an asynchronous answer when the time runs out.
	url, held, release := w.hold(t)
	r = s.act(t, tn.write, map[string]any{"action": "seo_audit", "client_id": client, "url": url}, "Prefer", "wait=1")
	id := wantAccepted(t, r, "seo_audit", client)
	if r.header.Get("Preference-Applied") != "respond-async, wait=1" {
		t.Fatalf("Preference-Applied of a wait that ran out = %q", r.header.Get("Preference-Applied"))
	}
	<-held.fetched
	run := s.getRun(t, tn.read, id, 1)
	if run["state"] != "running" || run["status_code"] != float64(202) || run["data"] != nil || run["finished_at"] != nil {
		t.Fatalf("running run = %v", run)
	}
	wantTimestamp(t, run, "started_at")
	release()
	run = s.getRun(t, tn.read, id, 20)
	if run["state"] != "success" {
		t.Fatalf("run after release, waited = %v", run)
	}
	if _, data := credits(run, "spent"); data != 1 {
		t.Fatalf("credits = %v", run["credits"])
	}
	for _, bad := range []string{"wait=0", "wait=61", "wait=soon"} {
		wantError(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "x"}, "Prefer", bad),
			400, "Prefer header's wait must be a whole number of seconds from 1 to 60")
	}
	// The checks that answer at once still do, reserving nothing.
	wantError(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client}, "Prefer", "respond-async"), 400, "keyword")
	s.grant(t, tn.agency, -8, 0)
	wantError(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "x"}, "Prefer", "respond-async"),
		http.StatusPaymentRequired, "insufficient AI credits")
	if ai, data := s.credits(t, tn.agency); ai != 0 || data != 9 {
		t.Fatalf("balance after refusals = %v AI, %v data; want 0 and 9", ai, data)
	}
}

// testActionRunsCancel: a running run canceled ends canceled at once, its
// provider call is canceled, its credits released and nothing recorded; a
// finished run cannot be canceled.
func testActionRunsCancel(t *testing.T, s *stack, w *actionWorld) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 0, 5)
	url, held, _ := w.hold(t)
	id := wantAccepted(t, s.act(t, tn.write, map[string]any{"action": "seo_audit", "client_id": client, "url": url}, "Prefer", "respond-async"), "seo_audit", client)
	<-held.fetched
	if _, data := s.credits(t, tn.agency); data != 4 {
		t.Fatalf("data credits while running = %v, want 4", data)
	}
	wantError(t, call(t, "POST", s.api+"/api/v1/runs/"+id+"/cancel", tn.read, map[string]any{}), 403, "write")
	r := call(t, "POST", s.api+"/api/v1/runs/"+id+"/cancel", tn.write, map[string]any{})
	wantStatus(t, r, http.StatusOK)
	run := r.json["run"].(map[string]any)
	if run["state"] != "canceled" || run["status_code"] != float64(499) || !strings.Contains(run["data"].(map[string]any)["error"].(string), "canceled") {
		t.Fatalf("canceled run = %s", r)
	}
	if r.header.Get("Atrium-Data-Credits-Remaining") != "5" {
		t.Fatalf("balance header after cancel = %q, want 5", r.header.Get("Atrium-Data-Credits-Remaining"))
	}
	<-held.abandoned // the page fetch was canceled
	if _, data := s.credits(t, tn.agency); data != 5 {
		t.Fatalf("data credits after cancel = %v, want 5", data)
	}
	if got := s.getRun(t, tn.read, id, 0); got["state"] != "canceled" {
		t.Fatalf("run after cancel = %v", got)
	}
	wantError(t, call(t, "POST", s.api+"/api/v1/runs/"+id+"/cancel", tn.write, map[string]any{}), 409, "already finished with state canceled")
	r = s.read(t, tn.read, params("resource", "seo_reports", "client_id", client))
	if rows, _ := r.json["data"].([]any); len(rows) != 0 {
		t.Fatalf("a canceled audit wrote %s", r)
	}
	eventually(t, 5*time.Second, func() bool {
		r := s.read(t, tn.read, params("resource", "action_runs", "client_id", client))
		rows, _ := r.json["data"].([]any)
		return len(rows) == 1 && rows[0].(map[string]any)["status"] == "canceled"
	})
}

// testActionRunsIdempotentAsync: the same key replays the 202 of the same
// run while it is pending and its outcome after; charged once.
func testActionRunsIdempotentAsync(t *testing.T, s *stack, w *actionWorld) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 0, 5)
	url, held, release := w.hold(t)
	body := map[string]any{"action": "seo_audit", "client_id": client, "url": url}
	id := wantAccepted(t, s.act(t, tn.write, body, "Prefer", "respond-async", "Idempotency-Key", "audit-7"), "seo_audit", client)
	<-held.fetched
	again := s.act(t, tn.write, body, "Prefer", "respond-async", "Idempotency-Key", "audit-7")
	if wantAccepted(t, again, "seo_audit", client) != id || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay while running = %s %v", again, again.header)
	}
	// A synchronous retry of a run still in flight is the spec's 409, with
	// when to retry: by the end of the run's lease (15 s, renewed while it
	// runs), through the gateway as Retry-After.
	conflict := s.act(t, tn.write, body, "Idempotency-Key", "audit-7")
	wantError(t, conflict, 409, "still running", "retry in")
	if secs, err := strconv.Atoi(conflict.header.Get("Retry-After")); err != nil || secs < 1 || secs > 15 ||
		!strings.Contains(conflict.json["error"].(string), fmt.Sprintf("retry in %d seconds", secs)) {
		t.Fatalf("409 still running: Retry-After %q, message %q; want 1 to 15 seconds, the same in both", conflict.header.Get("Retry-After"), conflict.json["error"])
	}
	release()
	run := s.finished(t, tn.read, id)
	if run["idempotency_key"] != "audit-7" {
		t.Fatalf("idempotency_key = %v", run["idempotency_key"])
	}
	after := s.act(t, tn.write, body, "Prefer", "respond-async", "Idempotency-Key", "audit-7")
	d := wantAction(t, after, "seo_audit", client, "success")
	if d["id"] != run["data"].(map[string]any)["id"] || after.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay after the run = %s", after)
	}
	if _, data := s.credits(t, tn.agency); data != 4 {
		t.Fatalf("data credits = %v, want 4 (charged once)", data)
	}
}

// testActionRunsAreTheAgencys: another agency's run is 404 to read and to
// cancel, and absent from its list.
func testActionRunsTenancy(t *testing.T, s *stack) {
	tn, other := s.newTenant(t), s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 2, 0)
	id := wantAccepted(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "bagels"}, "Prefer", "respond-async"), "generate_blog", client)
	wantError(t, call(t, "GET", s.api+"/api/v1/runs/"+id, other.read, nil), 404, "run", "not found")
	wantError(t, call(t, "POST", s.api+"/api/v1/runs/"+id+"/cancel", other.write, map[string]any{}), 404, "not found")
	wantError(t, call(t, "GET", s.api+"/api/v1/runs/not-a-run", tn.read, nil), 404, "not found")
	list := call(t, "GET", s.api+"/api/v1/runs", other.read, nil)
	wantStatus(t, list, http.StatusOK)
	if runs := list.json["runs"].([]any); len(runs) != 0 {
		t.Fatalf("another agency lists %s", list)
	}
	s.finished(t, tn.read, id)
}

// testActionRunsQueue runs on a stack with one worker and room for two
// queued runs per agency: a flood answers 429 with Retry-After reserving
// nothing; a queued run canceled releases its credits; another agency's
// single run goes before the flooding agency's queue.
func testActionRunsQueue(t *testing.T, s *stack, w *actionWorld) {
	big, small := s.newTenant(t), s.newTenant(t)
	bigClient, smallClient := s.newClient(t, big, true), s.newClient(t, small, true)
	s.grant(t, big.agency, 0, 10)
	s.grant(t, small.agency, 0, 10)
	url, held, release := w.hold(t)
	audit := func(tn tenant, client, url string) response {
		return s.act(t, tn.write, map[string]any{"action": "seo_audit", "client_id": client, "url": url}, "Prefer", "respond-async")
	}
	first := wantAccepted(t, audit(big, bigClient, url), "seo_audit", bigClient)
	<-held.fetched // the one worker is busy
	q1 := wantAccepted(t, audit(big, bigClient, w.site.URL+"/classes"), "seo_audit", bigClient)
	q2 := wantAccepted(t, audit(big, bigClient, w.site.URL+"/classes"), "seo_audit", bigClient)
	r := audit(big, bigClient, w.site.URL+"/classes")
	wantError(t, r, http.StatusTooManyRequests, "2 runs queued", "nothing was reserved")
	if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 {
		t.Fatalf("429 Retry-After = %q", r.header.Get("Retry-After"))
	}
	if _, data := s.credits(t, big.agency); data != 7 {
		t.Fatalf("data credits after the 429 = %v, want 7 (three reserved)", data)
	}
	// A queued run canceled is released at once.
	c := call(t, "POST", s.api+"/api/v1/runs/"+q2+"/cancel", big.write, map[string]any{})
	wantStatus(t, c, http.StatusOK)
	if run := c.json["run"].(map[string]any); run["state"] != "canceled" || run["started_at"] != nil {
		t.Fatalf("canceled queued run = %s", c)
	}
	if _, data := s.credits(t, big.agency); data != 8 {
		t.Fatalf("data credits after canceling a queued run = %v, want 8", data)
	}
	q3 := wantAccepted(t, audit(big, bigClient, w.site.URL+"/classes"), "seo_audit", bigClient)
	lone := wantAccepted(t, audit(small, smallClient, w.site.URL+"/classes"), "seo_audit", smallClient)
	// The action_runs dataset shows each run's state as the run resource
	// does, while it waits and runs.
	s.wantRunStates(t, big.read, bigClient, map[string]string{first: "running", q1: "queued", q2: "canceled", q3: "queued"})
	release()
	loneRun := s.finished(t, small.read, lone)
	for _, id := range []string{q1, q3} {
		run := s.finished(t, big.read, id)
		if at(t, run["started_at"]).Before(at(t, loneRun["started_at"])) {
			t.Fatalf("the big agency's queued run %s started at %v, before the small agency's single run (%v)", id, run["started_at"], loneRun["started_at"])
		}
	}
	if run := s.finished(t, big.read, first); run["state"] != "success" {
		t.Fatalf("held run = %v", run)
	}
	if _, data := s.credits(t, big.agency); data != 7 {
		t.Fatalf("big agency's data credits = %v, want 7 (three runs)", data)
	}
	s.wantRunStates(t, big.read, bigClient, map[string]string{first: "success", q1: "success", q2: "canceled", q3: "success"})
}

// wantRunStates waits for the client's action_runs rows to be the runs
// in want, each with its state (the rows are written just after each
// change).
func (s *stack) wantRunStates(t *testing.T, key, client string, want map[string]string) {
	t.Helper()
	var got map[string]any
	matches := func() bool {
		r := s.read(t, key, params("resource", "action_runs", "client_id", client, "limit", "100"))
		rows, _ := r.json["data"].([]any)
		got = map[string]any{}
		for _, row := range rows {
			m := row.(map[string]any)
			got[fmt.Sprint(m["id"])] = m["status"]
		}
		if len(got) != len(want) {
			return false
		}
		for id, st := range want {
			if got[id] != st {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(5 * time.Second)
	for !matches() {
		if time.Now().After(deadline) {
			t.Fatalf("action_runs states = %v, want %v", got, want)
		}
		time.Sleep(50 * time.Millisecond) // why sleep: polls what a user can see over HTTP, which has no push form
	}
}

func at(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %v: %v", v, err)
	}
	return ts
}

// testActionRunsEvents: an asynchronous run is announced on NATS when it
// is queued, when it starts and when it completes, with its state.
func testActionRunsEvents(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 0)
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("atrium.actions.*.generate_blog")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	id := wantAccepted(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "kaiser rolls"}, "Prefer", "respond-async"), "generate_blog", client)
	want := map[string]string{"atrium.actions.queued.generate_blog": "queued", "atrium.actions.started.generate_blog": "running", "atrium.actions.completed.generate_blog": "success"}
	deadline := time.Now().Add(10 * time.Second)
	for len(want) > 0 {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("events still missing for run %s: %v (%v)", id, want, err)
		}
		var ev map[string]any
		if err := json.Unmarshal(msg.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if ev["run_id"] != id {
			continue
		}
		state, ok := want[msg.Subject]
		if !ok || ev["state"] != state || ev["agency_id"] != tn.agency || ev["client_id"] != client {
			t.Fatalf("event on %s = %v; want state %q", msg.Subject, ev, state)
		}
		if msg.Subject != "atrium.actions.completed.generate_blog" && fmt.Sprint(ev["credits_reserved"]) != "map[ai:2 data:0]" {
			t.Fatalf("event on %s = %v; want credits_reserved 2 AI", msg.Subject, ev)
		}
		delete(want, msg.Subject)
	}
}

// testSDKRuns: the Go SDK submits an asynchronous run, waits for it, lists
// it, and is refused a cancel of a finished run; a submission with a wait
// long enough answers the outcome itself.
func testSDKRuns(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 0)
	sdk := atrium.New(s.api, tn.write, atrium.WithHTTPClient(http.DefaultClient))
	ctx := t.Context()
	sub, err := sdk.Actions.Submit(ctx, "generate_blog", client, map[string]any{"keyword": "stollen"})
	if err != nil || sub.RunID == "" || sub.Result != nil {
		t.Fatalf("Submit = %+v, %v", sub, err)
	}
	run, err := sdk.Runs.Wait(ctx, sub.RunID)
	if err != nil || run.State != "success" || run.Credits.Spent.AI != 2 || run.Data["id"] == nil || run.FinishedAt == nil {
		t.Fatalf("Runs.Wait = %+v, %v", run, err)
	}
	if _, err := sdk.Runs.Cancel(ctx, run.ID); atrium.StatusOf(err) != http.StatusConflict {
		t.Fatalf("cancel of a finished run = %v, want 409", err)
	}
	waited, err := sdk.Actions.Submit(ctx, "generate_blog", client, map[string]any{"keyword": "panettone"}, atrium.WithWait(20*time.Second))
	if err != nil || waited.Result == nil || !waited.Result.Succeeded() {
		t.Fatalf("Submit with a wait = %+v, %v", waited, err)
	}
	var ids []string
	for r, err := range sdk.Runs.List(ctx, atrium.RunQuery{ClientID: client}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if len(ids) != 2 || ids[1] != run.ID {
		t.Fatalf("Runs.List = %v, want two runs, the first submitted last", ids)
	}
}
