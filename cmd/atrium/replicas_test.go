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
func startReplicaSet(t *testing.T, actionsFlags []string) *replicaSet {
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
			return append([]string{"--crm-addr=" + r.lists["crm"], "--data-addr=" + r.lists["data"]}, actionsFlags...)
		}},
		{"webhooks", func() []string { return []string{"--crm-addr=" + r.lists["crm"], "--allow-private-fetch"} }},
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
			"--actions-addr="+r.lists["actions"], "--webhooks-addr="+r.lists["webhooks"])
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
// endpoints of each agency's site. During it an actions replica, a
// webhooks replica and a NATS node are killed with SIGKILL, and one
// gateway is stopped with SIGTERM (the load moves to the other, as a load
// balancer would once its /readyz says it is draining). Then:
//   - no answer was a 5xx other than 503 with Retry-After, and every
//     request got an answer;
//   - every accepted run ended (success or error) exactly once, and no run
//     exists that was not asked for;
//   - every agency's balance is its grant minus the cost of its
//     successful runs: nothing charged twice, nothing held;
//   - every item written (every item the collection holds, those whose
//     answer was lost included) reached both endpoints at least once;
//     duplicates are reported, not failed (delivery is at least once).
//
// It takes 40 to 80 s under -race: twelve processes and three NATS
// servers start, and a run cut off by the actions replica's death is
// ended by recovery once its lease (the 5 s action timeout plus 30 s)
// has passed.
func TestReplicasUnderFaults(t *testing.T) {
	w := newActionWorld(t)
	r := startReplicaSet(t, append(w.flags(), "--action-timeout=5s", "--recovery-interval=1s"))
	s := r.gateways[0]

	type agency struct {
		cms       cmsTenant
		client    string
		receivers [2]*hookReceiver
	}
	const grant = 1000
	agencies := make([]*agency, 3)
	load := &faultLoad{accepted: map[string]map[string]bool{}, sent: map[string]map[string]bool{}, answers: map[int]int{}}
	for i := range agencies {
		a := &agency{cms: s.newCMS(t)}
		a.client = s.newClient(t, a.cms.tenant, true)
		s.grant(t, a.cms.agency, grant, 0)
		for j := range a.receivers {
			a.receivers[j] = newHookReceiver(t)
			s.register(t, a.cms.write, a.receivers[j].URL, "item.created")
		}
		load.accepted[a.cms.agency], load.sent[a.cms.agency] = map[string]bool{}, map[string]bool{}
		agencies[i] = a
	}

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
	kill(t, r.replicas["actions"][0])
	t.Log("killed an actions replica")
	progress(15)
	kill(t, r.replicas["webhooks"][0])
	t.Log("killed a webhooks replica")
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
		spent := 0.0
		for _, run := range runs {
			key, _ := run["idempotency_key"].(string)
			byKey[key]++
			if !load.sent[a.cms.agency][key] {
				t.Errorf("agency %s: run %s with Idempotency-Key %q, which was never sent", a.cms.agency, run["id"], key)
			}
			if run["state"] == "success" {
				ai, _ := credits(run, "spent")
				spent += ai
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
		if ai, _ := s.credits(t, a.cms.agency); ai != grant-spent {
			t.Errorf("agency %s: balance %v AI credits, want %v granted minus %v spent by its successful runs", a.cms.agency, ai, grant, spent)
		}

		// Every item the collection holds reached both endpoints.
		items := call(t, "GET", a.cms.base+"/authors?limit=1000", a.cms.read, nil)
		wantStatus(t, items, http.StatusOK)
		var ids []string
		for _, it := range items.json["items"].([]any) {
			ids = append(ids, it.(map[string]any)["id"].(string))
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
