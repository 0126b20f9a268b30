package main

// Several replicas of every component on a three-node NATS cluster, under
// faults: what a Helm deployment with replicaCount 2 and a NATS cluster
// runs, with the kills a node failure or a crash brings.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/pgtest"
)

// replicaSet is two replicas of every service, two gateways, a NATS
// cluster and one database.
type replicaSet struct {
	*cluster
	nats *natstest.Cluster
	// replicas are each service's processes; lists its --<service>-addr.
	replicas map[string][]*process
	lists    map[string]string
	gateways []*stack
	gwProcs  []*process
}

// startReplicaSet starts it: the first replica of each service migrates
// its schema, in the order the services call each other, then the second
// replicas and the gateways, each given every replica's address as a
// list.
func startReplicaSet(t *testing.T, actionsFlags, webhooksFlags []string) *replicaSet {
	t.Helper()
	r := &replicaSet{cluster: &cluster{bins: binaries(t), addrs: map[string]string{}}, replicas: map[string][]*process{}, lists: map[string]string{}}
	r.nats = natstest.StartCluster(t, 3)
	r.db = pgtest.NewDatabase(t, "replicas", func(context.Context, string) error { return nil })
	// Every server of the NATS cluster, as a list: a process moves to
	// another when the one it uses dies.
	r.env = clusterEnv(t, r.db, r.nats.URL(), "ATRIUM_NATS_STREAM_REPLICAS=3")
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, p := range r.procs {
			select {
			case <-p.done:
			default:
				_ = p.cmd.Process.Kill()
				<-p.done
			}
			if t.Failed() {
				t.Logf("last lines of atrium-%s's log:\n%s", p.name, p.tail(20))
			}
		}
	})
	crmAddrs := [2]string{freeAddr(t), freeAddr(t)}
	services := []struct {
		name string
		args func() []string
	}{
		// Collections and the CRM call each other: the CRM replicas'
		// addresses are chosen before either starts.
		{"collections", func() []string { return []string{"--crm-addr=" + crmAddrs[0] + "," + crmAddrs[1]} }},
		{"crm", func() []string { return []string{"--collections-addr=" + r.lists["collections"]} }},
		{"data", func() []string { return []string{"--crm-addr=" + r.lists["crm"]} }},
		{"actions", func() []string {
			return append([]string{"--crm-addr=" + r.lists["crm"], "--data-addr=" + r.lists["data"], "--collections-addr=" + r.lists["collections"]}, actionsFlags...)
		}},
		{"webhooks", func() []string {
			return append([]string{"--crm-addr=" + r.lists["crm"], "--allow-private-fetch"}, webhooksFlags...)
		}},
		{"audit", func() []string { return []string{"--collections-addr=" + r.lists["collections"]} }},
	}
	// The second replica of a service starts beside the first replica of
	// the next: only the migrations need an order.
	var addrs [2]map[string]string
	addrs[0], addrs[1] = map[string]string{}, map[string]string{}
	for _, svc := range services {
		var ps [2]*process
		for i := range ps {
			addr := "127.0.0.1:0"
			if svc.name == "crm" {
				addr = crmAddrs[i]
			}
			ps[i] = r.start(t, svc.name, append([]string{"--grpc-addr=" + addr}, svc.args()...)...)
			if i == 0 {
				// Migrating first, alone.
				addrs[0][svc.name] = ps[0].waitLog(t, "serving gRPC")["addr"].(string)
			}
		}
		addrs[1][svc.name] = ps[1].waitLog(t, "serving gRPC")["addr"].(string)
		r.replicas[svc.name] = ps[:]
		r.lists[svc.name] = addrs[0][svc.name] + "," + addrs[1][svc.name]
	}
	for range 2 {
		gw := r.start(t, "gateway", "--http-addr=127.0.0.1:0", "--admin-addr=127.0.0.1:0",
			"--collections-addr="+r.lists["collections"], "--crm-addr="+r.lists["crm"], "--data-addr="+r.lists["data"],
			"--actions-addr="+r.lists["actions"], "--webhooks-addr="+r.lists["webhooks"], "--audit-addr="+r.lists["audit"])
		r.gwProcs = append(r.gwProcs, gw)
	}
	for _, gw := range r.gwProcs {
		listening := gw.waitLog(t, "gateway listening")
		r.gateways = append(r.gateways, &stack{api: "http://" + listening["public"].(string), admin: "http://" + listening["admin"].(string),
			natsURL: r.nats.URL(), logs: &syncBuffer{}})
	}
	for _, s := range r.gateways {
		eventually(t, 30*time.Second, func() bool { return allServing(call(t, "GET", s.admin+"/healthz", "", nil)) })
	}
	r.stack = r.gateways[0]
	return r
}

// kill sends SIGKILL to p and waits for it to exit.
func kill(t *testing.T, p *process) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL atrium-%s: %v", p.name, err)
	}
	<-p.done
}

// faultLoad is the load's record: every answer, by what it asked.
type faultLoad struct {
	mu sync.Mutex
	// accepted are the Idempotency-Keys of the actions answered 200 or
	// 202, by agency; sent every key sent.
	accepted, sent map[string]map[string]bool
	// bad are the answers no client should see: a 5xx other than 503
	// with Retry-After, or no answer at all.
	bad []string
	// answers counts every answer, by status.
	answers  map[int]int
	requests atomic.Int64
}

func (l *faultLoad) record(agency, key string, status int, retryAfter string, err error, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests.Add(1)
	if key != "" && (status == http.StatusOK || status == http.StatusAccepted) {
		l.accepted[agency][key] = true
	}
	switch {
	case err != nil:
		l.bad = append(l.bad, fmt.Sprintf("%s: no answer: %v", what, err))
	case status >= 500 && (status != http.StatusServiceUnavailable || retryAfter == ""):
		l.bad = append(l.bad, fmt.Sprintf("%s: %d (Retry-After %q)", what, status, retryAfter))
	}
	l.answers[status]++
}

// TestReplicasUnderFaults runs two replicas of every component (gateways
// included) on a three-node NATS cluster with streams kept on all three
// nodes, and one PostgreSQL database. Three agencies send a mixed load
// through both gateways: synchronous and asynchronous actions with
// Idempotency-Keys, and item writes whose item.created reaches two
// endpoints of each agency's site (three for the first agency's). During
// it a webhooks replica, an actions replica and a NATS node are killed
// with SIGKILL, and one gateway is stopped with SIGTERM (the load moves to
// the other, as a load balancer would once its /readyz says it is
// draining). The two replicas are killed with work in flight, not idle:
// the webhooks replica while it holds at least one delivery's lease (an
// endpoint holds its attempts open), the actions replica while it runs at
// least one run (a page it fetches holds them; synchronous and
// asynchronous both, when the load gives it both). Then:
//   - no answer was a 5xx other than 503 with Retry-After, and every
//     request got an answer; a synchronous run the kill cut answered 503;
//   - every accepted run ended (success or error) exactly once, and no run
//     exists that was not asked for;
//   - each run the killed actions replica held ended exactly once: a
//     synchronous one recorded as failed with nothing charged, an
//     asynchronous one run again and finished by the other replica, charged
//     once (docs/operations.md, "When a part dies");
//   - every agency's balance, AI and data credits, is its grant minus the
//     cost of its successful runs: nothing charged twice, nothing held;
//   - every item written (every item the collections hold, those whose
//     answer was lost included) reached every endpoint at least once, the
//     deliveries the killed webhooks replica held included, with the same
//     webhook-id; duplicates are reported, not failed (delivery is at
//     least once).
//
// It takes 40 to 80 s under -race: twelve processes and three NATS
// servers start; the deliveries the killed webhooks replica held come back
// once their leases end (--webhook-timeout, shortened to 5 s here, plus
// 30 s after their claim), which is why that replica is killed first; the
// runs the killed actions replica held, once their leases end (15 s after
// its last renewal).
func TestReplicasUnderFaults(t *testing.T) {
	w := newActionWorld(t)
	r := startReplicaSet(t, append(w.flags(), "--action-timeout=20s", "--recovery-interval=1s"), []string{"--webhook-timeout=5s"})
	s := r.gateways[0]

	type agency struct {
		cms       cmsTenant
		client    string
		receivers []*hookReceiver
	}
	const grant, dataGrant = 1000, 100
	agencies := make([]*agency, 3)
	load := &faultLoad{accepted: map[string]map[string]bool{}, sent: map[string]map[string]bool{}, answers: map[int]int{}}
	for i := range agencies {
		a := &agency{cms: s.newCMS(t)}
		a.client = s.newClient(t, a.cms.tenant, true)
		s.grant(t, a.cms.agency, grant, dataGrant)
		for range 2 {
			rx := newHookReceiver(t)
			s.register(t, a.cms.write, rx.URL, "item.created")
			a.receivers = append(a.receivers, rx)
		}
		load.accepted[a.cms.agency], load.sent[a.cms.agency] = map[string]bool{}, map[string]bool{}
		agencies[i] = a
	}
	// The first agency's third endpoint holds the attempts the webhooks
	// replica to kill makes of the item.created of posts (the load writes
	// authors), and answers every other at once.
	hooksHeld := newHolder(t)
	heldRx := &hookReceiver{answers: []int{http.StatusNoContent}, arrived: make(chan struct{}, 1000)}
	heldRx.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		var ev struct {
			Type string
			Data struct{ ID, Collection string }
		}
		_ = json.Unmarshal(raw, &ev)
		tag := ""
		if ev.Type == "item.created" && ev.Data.Collection == "posts" {
			tag = ev.Data.ID
		}
		hooksHeld.serve(req, tag, req.Header.Get("webhook-id"), func() { heldRx.answer(rw, req, raw) })
	}))
	t.Cleanup(heldRx.Close)
	t.Cleanup(hooksHeld.end)
	s.register(t, agencies[0].cms.write, heldRx.URL, "item.created")
	agencies[0].receivers = append(agencies[0].receivers, heldRx)
	// The page seo_audit runs fetch: held when the actions replica to
	// kill fetches it, answered at once to the other.
	pagesHeld := newHolder(t)
	pages := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		key, ok := strings.CutPrefix(req.URL.Path, "/held/")
		if !ok {
			http.NotFound(rw, req)
			return
		}
		pagesHeld.serve(req, key, "", func() {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(rw, goodPage, "A page an audit fetched.")
		})
	}))
	t.Cleanup(pages.Close)
	t.Cleanup(pagesHeld.end)

	// The load: each agency's worker goes round the three kinds of
	// request, alternating between the gateways still in the load
	// balancer. A request is sent once; its answer is recorded.
	var gwOut atomic.Bool // the second gateway has left the balancer
	ctx, stopLoad := context.WithCancel(t.Context())
	client := &http.Client{Timeout: 40 * time.Second}
	var workers sync.WaitGroup
	for _, a := range agencies {
		workers.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				gw := r.gateways[n%2]
				if gwOut.Load() {
					gw = r.gateways[0]
				}
				var (
					method, target, key, what string
					body                      any
					headers                   []string
				)
				switch n % 3 {
				case 0, 1:
					key = uuid.NewString()
					method, target = "POST", gw.api+"/api/v1/data"
					body = map[string]any{"action": "generate_blog", "client_id": a.client, "keyword": "rye " + key[:8]}
					headers = []string{"Idempotency-Key", key}
					what = "generate_blog"
					if n%3 == 1 {
						headers = append(headers, "Prefer", "respond-async")
						what += " (async)"
					}
				case 2:
					method, target = "POST", a.cms.base+"/authors"
					target = gw.api + strings.TrimPrefix(target, s.api)
					body = map[string]any{"data": map[string]any{"name": fmt.Sprintf("Author %d", n)}}
					what = "item write"
				}
				if key != "" {
					// Sent before the answer: a request the end of the load
					// cuts may still have run.
					load.mu.Lock()
					load.sent[a.cms.agency][key] = true
					load.mu.Unlock()
				}
				status, retryAfter, err := sendOnce(ctx, client, method, target, a.cms.write, body, headers...)
				if ctx.Err() != nil {
					return // cut by the end of the load, not by a fault
				}
				load.record(a.cms.agency, key, status, retryAfter, err, what+" via "+gw.api)
			}
		})
	}
	// progress waits until the load has made n more requests.
	progress := func(n int64) {
		t.Helper()
		target := load.requests.Load() + n
		eventually(t, 60*time.Second, func() bool { return load.requests.Load() >= target })
	}

	progress(15)
	// The webhooks replica first: what it held comes back last.
	webhooksKill := killHolding(t, r.replicas["webhooks"][0], hooksHeld, 10, func(i int) string {
		return agencies[0].cms.createItem(t, "posts", map[string]any{"data": map[string]any{"title": fmt.Sprintf("Held %d", i)}})["id"].(string)
	}, func(int, []*heldCall) bool { return true }, nil)
	t.Logf("killed a webhooks replica holding %d deliveries in flight", len(webhooksKill.held))

	progress(15)
	// The actions replica, running seo_audit runs whose page it fetches,
	// sent as the load's actions are, one synchronous and one
	// asynchronous at a time until it runs both kinds (or, after six,
	// at least one).
	type heldRun struct {
		async  bool
		status int // the answer, once there is one
		run    map[string]any
	}
	var (
		heldMu   sync.Mutex
		heldRuns = map[string]*heldRun{}
		heldSent sync.WaitGroup
	)
	kinds := func(calls []*heldCall) (syncs, asyncs int) {
		heldMu.Lock()
		defer heldMu.Unlock()
		for _, c := range calls {
			if heldRuns[c.tag].async {
				asyncs++
			} else {
				syncs++
			}
		}
		return syncs, asyncs
	}
	actionsKill := killHolding(t, r.replicas["actions"][0], pagesHeld, 16, func(i int) string {
		a, gw, key := agencies[i%len(agencies)], r.gateways[i%2], uuid.NewString()
		async := i%2 == 1
		hr := &heldRun{async: async}
		heldMu.Lock()
		heldRuns[key] = hr
		heldMu.Unlock()
		load.mu.Lock()
		load.sent[a.cms.agency][key] = true
		load.mu.Unlock()
		headers, what := []string{"Idempotency-Key", key}, "seo_audit"
		if async {
			headers, what = append(headers, "Prefer", "respond-async"), what+" (async)"
		}
		body := map[string]any{"action": "seo_audit", "client_id": a.client, "url": pages.URL + "/held/" + key}
		heldSent.Go(func() {
			status, retryAfter, err := sendOnce(t.Context(), client, "POST", gw.api+"/api/v1/data", a.cms.write, body, headers...)
			load.record(a.cms.agency, key, status, retryAfter, err, what+" via "+gw.api)
			heldMu.Lock()
			hr.status = status
			heldMu.Unlock()
			pagesHeld.notify()
		})
		return key
	}, func(sent int, held []*heldCall) bool {
		// Both kinds; or after six runs, or once the first held has
		// waited 3 s (its page fetch gives up at 10 s), what it holds.
		syncs, asyncs := kinds(held)
		return syncs > 0 && asyncs > 0 || sent >= 6 || time.Since(held[0].at) > 3*time.Second
	}, func(key string) bool {
		// A run answered without a fetch (refused) is not waited for.
		heldMu.Lock()
		defer heldMu.Unlock()
		st := heldRuns[key].status
		return st != 0 && st != http.StatusOK && st != http.StatusAccepted
	})
	cutSync, cutAsync := kinds(actionsKill.held)
	t.Logf("killed an actions replica running %d runs in flight (%d synchronous, %d asynchronous)", len(actionsKill.held), cutSync, cutAsync)

	progress(15)
	r.nats.Kill(t, 0)
	t.Log("killed a NATS node")
	progress(15)
	gwOut.Store(true)
	r.gwProcs[1].stop(t) // SIGTERM: drains, exits 0
	t.Log("stopped a gateway with SIGTERM")
	progress(15)
	stopLoad()
	workers.Wait()
	heldSent.Wait()

	load.mu.Lock()
	t.Logf("answers by status: %v, over %d requests", load.answers, load.requests.Load())
	for _, b := range load.bad {
		t.Errorf("an answer a client must not see: %s", b)
	}
	load.mu.Unlock()

	for _, a := range agencies {
		// Every run ends: a run cut off by the killed replica is ended by
		// recovery once its lease has passed.
		var runs []map[string]any
		eventually(t, 60*time.Second, func() bool {
			runs = listRuns(t, s, a.cms.read, a.client)
			for _, run := range runs {
				if run["finished_at"] == nil {
					return false
				}
			}
			return true
		})
		byKey := map[string]int{}
		spentAI, spentData := 0.0, 0.0
		for _, run := range runs {
			key, _ := run["idempotency_key"].(string)
			byKey[key]++
			if !load.sent[a.cms.agency][key] {
				t.Errorf("agency %s: run %s with Idempotency-Key %q, which was never sent", a.cms.agency, run["id"], key)
			}
			if hr := heldRuns[key]; hr != nil {
				hr.run = run
			}
			if run["state"] == "success" {
				ai, data := credits(run, "spent")
				spentAI += ai
				spentData += data
			}
		}
		for key := range load.accepted[a.cms.agency] {
			if byKey[key] != 1 {
				t.Errorf("agency %s: the accepted run with Idempotency-Key %s exists %d times, want once", a.cms.agency, key, byKey[key])
			}
		}
		for key, n := range byKey {
			if n > 1 {
				t.Errorf("agency %s: %d runs with Idempotency-Key %s, want one", a.cms.agency, n, key)
			}
		}
		if ai, data := s.credits(t, a.cms.agency); ai != grant-spentAI || data != dataGrant-spentData {
			t.Errorf("agency %s: balance %v AI and %v data credits, want %v and %v granted minus %v and %v spent by its successful runs",
				a.cms.agency, ai, data, grant, dataGrant, spentAI, spentData)
		}

		// Every item the collections hold reached every endpoint.
		var ids []string
		for _, slug := range []string{"authors", "posts"} {
			items := call(t, "GET", a.cms.base+"/"+slug+"?limit=1000", a.cms.read, nil)
			wantStatus(t, items, http.StatusOK)
			for _, it := range items.json["items"].([]any) {
				ids = append(ids, it.(map[string]any)["id"].(string))
			}
		}
		for _, rx := range a.receivers {
			eventuallyHooks(t, rx, ids)
			got := rx.hooks()
			seen, dup := map[string]int{}, 0
			for _, h := range got {
				if seen[h.id]++; seen[h.id] > 1 {
					dup++
				}
			}
			if dup > 0 {
				t.Logf("agency %s: %s got %d duplicate deliveries (same webhook-id) of %d: at least once, as documented", a.cms.agency, rx.URL, dup, len(got))
			}
		}
	}

	// The runs the killed actions replica held each ended once, as
	// docs/operations.md says: a synchronous one answered 503 and was
	// recorded failed, nothing charged; an asynchronous one was run again
	// by the other replica, after the kill, and charged once.
	var failed, rerun int
	for _, c := range actionsKill.held {
		hr := heldRuns[c.tag]
		run := hr.run
		switch {
		case run == nil:
			t.Errorf("the run with Idempotency-Key %s, which the killed actions replica held, is not among the runs", c.tag)
			continue
		case !hr.async:
			ai, data := credits(run, "spent")
			msg, _ := run["data"].(map[string]any)["error"].(string)
			if hr.status != http.StatusServiceUnavailable || run["state"] != "error" || run["status_code"] != float64(500) || ai+data != 0 || !strings.Contains(msg, "interrupted") {
				t.Errorf("synchronous run %s, cut by the kill: answered %d, then %v; want 503, then error 500 (interrupted) with nothing spent", c.tag, hr.status, run)
				continue
			}
			failed++
		default:
			_, data := credits(run, "spent")
			started, err := time.Parse(time.RFC3339Nano, fmt.Sprint(run["started_at"]))
			if hr.status != http.StatusAccepted || run["state"] != "success" || data != 1 || err != nil || started.Before(actionsKill.at) {
				t.Errorf("asynchronous run %s, cut by the kill at %s: answered %d, then %v; want 202, then success started again after the kill with 1 data credit spent",
					c.tag, actionsKill.at.Format(time.RFC3339Nano), hr.status, run)
				continue
			}
			rerun++
		}
	}
	t.Logf("the killed actions replica's %d runs: %d synchronous recorded failed with nothing charged, %d asynchronous finished by the other replica", len(actionsKill.held), failed, rerun)
	// The deliveries the killed webhooks replica held were made again,
	// with the same webhook-id, and answered.
	answered := map[string]int{}
	for _, h := range heldRx.hooks() {
		answered[h.id]++
	}
	for _, c := range webhooksKill.held {
		if answered[c.note] == 0 {
			t.Errorf("the delivery %s of item %s, which the killed webhooks replica held, was never made again", c.note, c.tag)
		}
	}
	t.Logf("the killed webhooks replica's %d deliveries were all made again by the other (%d attempts of them reached the endpoint in all)",
		len(webhooksKill.held), func() (n int) {
			for _, c := range webhooksKill.held {
				n += hooksHeld.calls(c.tag)
			}
			return n
		}())
}

// holdingKill is what killHolding cut: the calls its process held open
// when it was killed, and when.
type holdingKill struct {
	held []*heldCall
	at   time.Time
}

// killHolding kills p with SIGKILL once it holds calls on h: it makes p
// the holder's target, then starts work with next (which returns the tag
// of the call that work makes to h), one at a time, each once its
// predecessor's call arrived (or refused, when not nil, says it never
// will), until p holds at least one call and enough (given how many works
// were started) says so, or most works were started (p must hold at
// least one by then). It checks that the kill cut every call p held.
func killHolding(t *testing.T, p *process, h *holder, most int, next func(i int) string,
	enough func(started int, held []*heldCall) bool, refused func(tag string) bool) holdingKill {
	t.Helper()
	h.target.Store(int64(p.cmd.Process.Pid))
	for i := 0; ; i++ {
		held, err := h.open()
		if err != nil {
			t.Fatal(err)
		}
		if len(held) > 0 && (i >= most || enough(i, held)) {
			break
		}
		if i >= most {
			t.Fatalf("atrium-%s held none of the %d calls its work made: a kill now would hit an idle process", p.name, i)
		}
		tag := next(i)
		h.waitUntil(t, 30*time.Second, "the call of "+tag, func() bool {
			return h.calls(tag) > 0 || refused != nil && refused(tag)
		})
	}
	held, err := h.open()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	kill(t, p)
	h.target.Store(0)
	h.waitCut(t, 10*time.Second, held)
	return holdingKill{held: held, at: at}
}

// eventuallyHooks waits until rx has an item.created for every id.
func eventuallyHooks(t *testing.T, rx *hookReceiver, ids []string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		have := map[string]bool{}
		for _, h := range rx.hooks() {
			if id, _ := h.data()["id"].(string); h.typ() == "item.created" {
				have[id] = true
			}
		}
		var missing []string
		for _, id := range ids {
			if !have[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return
		}
		select {
		case <-rx.arrived:
		case <-deadline:
			t.Fatalf("%s: item.created of %d of %d items never arrived: %v", rx.URL, len(missing), len(ids), missing)
		}
	}
}

// listRuns lists every run of the client, page by page.
func listRuns(t *testing.T, s *stack, key, client string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		q := url.Values{"client_id": {client}, "limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		r := call(t, "GET", s.api+"/api/v1/runs?"+q.Encode(), key, nil)
		wantStatus(t, r, http.StatusOK)
		for _, run := range r.json["runs"].([]any) {
			out = append(out, run.(map[string]any))
		}
		if cursor, _ = r.json["next_cursor"].(string); cursor == "" {
			return out
		}
	}
}

// sendOnce makes one request and returns its status and Retry-After, or the
// error of a request that got no answer.
func sendOnce(ctx context.Context, client *http.Client, method, target, key string, body any, headers ...string) (int, string, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(raw))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return 0, "", nil
		}
		return 0, "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}
