package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/atrium-hq/atrium/bench/floor"
	webhooks "github.com/atrium-hq/atrium/services/webhooks/service"
)

// runWebhooks measures webhook delivery end to end on PostgreSQL and NATS:
// sites' items created through the public API at a steady rate, each
// event fanned out to the site's endpoints and delivered to receivers of
// this process on loopback. It reports the healthy deliveries per second
// and the delay from each write's answer (the commit has happened by
// then) to its arrival at each receiver, first with every endpoint
// healthy, then with a tenth of them answering 503 and one in a hundred
// never answering; the hand-written floor (bench/floor.Webhooks) runs the
// same load and the same receivers in the same invocation.
func runWebhooks(ctx context.Context, args []string) error {
	var f crmFlags
	fs := flag.NewFlagSet("bench webhooks", flag.ContinueOnError)
	bindCommon(fs, &f)
	tenants := fs.Int("tenants", 100, "sites, each with its own key and endpoints")
	perTenant := fs.Int("endpoints", 10, "endpoints per site")
	rate := fs.Float64("rate", 160, "items created per second, spread over the sites (each is one event per endpoint of its site)")
	capacity := fs.Bool("capacity", false, "instead of the two scenarios: with 10% of endpoints failing and 1% hanging, find for the floor and then Atrium the highest item rate whose healthy deliveries hold p99 under --capacity-p99 with none missing and no write failed (doubling from --rate, then bisecting; one --duration step each), within --capacity-budget in all")
	capP99 := fs.Duration("capacity-p99", time.Second, "with --capacity: the delivery p99 a rate must hold")
	capBudget := fs.Duration("capacity-budget", 10*time.Minute, "with --capacity: the time the search may take in all, half for each server (a step under way finishes)")
	capSettle := fs.Duration("capacity-settle", 5*time.Second, "with --capacity: the pause after a rate that was not held, for its backlog to drain before the next step")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of Atrium during the first measured round with failing endpoints, and print its top entries")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.store, f.unpinned = "postgres", true
	consumer := "atrium-webhooks-bench-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
	f.extraArgs = []string{"--allow-private-fetch", "--webhook-consumer", consumer}
	env, err := setUp(ctx, f)
	if err != nil {
		return err
	}
	defer env.tearDown()
	defer deleteConsumer(f.natsURL, consumer)
	atrium := env.atrium

	rx, err := newBenchReceiver()
	if err != nil {
		return err
	}
	defer rx.close()

	// Sites, keys, endpoints: endpoint k of n in all is 1 in 100 hanging
	// (k%100 == 0) and 1 in 10 answering 503 (k%10 == 5) when faults are on.
	type site = benchSite
	sites := make([]site, *tenants)
	floorEndpoints := map[string][]floor.WebhookEndpoint{}
	k := 0
	for i := range sites {
		var out struct {
			Site struct{ ID string } `json:"site"`
			Key  struct{ Secret string }
		}
		if err := atrium.adminCall(ctx, "POST", "/admin/v1/sites", map[string]any{"name": fmt.Sprint("Bench site ", i)}, &out); err != nil {
			return err
		}
		if err := atrium.adminCall(ctx, "POST", "/admin/v1/sites/"+out.Site.ID+"/collections", map[string]any{"name": "Posts", "slug": "posts",
			"fields": []map[string]any{{"key": "title", "type": "text", "required": true}}}, nil); err != nil {
			return err
		}
		var key struct {
			Key struct{ Secret string } `json:"key"`
		}
		if err := atrium.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "bench", "scopes": []string{"read", "write"}, "site_id": out.Site.ID}, &key); err != nil {
			return err
		}
		sites[i] = site{out.Site.ID, key.Key.Secret}
		for range *perTenant {
			mode := modeOK
			switch {
			case k%100 == 0:
				mode = modeHang
			case k%10 == 5:
				mode = modeFail
			}
			var hook struct {
				Webhook struct{ Secret string } `json:"webhook"`
			}
			if err := atrium.apiCall(ctx, key.Key.Secret, "POST", "/api/v1/webhooks", map[string]any{"url": rx.url("a", k), "events": []string{"item.created"}}, &hook); err != nil {
				return err
			}
			floorEndpoints[out.Site.ID] = append(floorEndpoints[out.Site.ID], floor.WebhookEndpoint{URL: rx.url("f", k), Secret: hook.Webhook.Secret})
			rx.modes[k] = mode
			k++
		}
	}
	endpointsFile := filepath.Join(env.tmp, "endpoints.json")
	b, _ := json.Marshal(floorEndpoints) //nolint:gosec // G117: the floor must sign with the endpoints' secrets; the file is in the run's own temporary directory
	if err := os.WriteFile(endpointsFile, b, 0o600); err != nil {
		return err
	}
	floorCmd, floorAddr, err := startFloorWith(ctx, "", "--database-url", env.db, "--webhooks", endpointsFile)
	if err != nil {
		return err
	}
	defer func() { _ = floorCmd.Process.Kill(); _ = floorCmd.Wait() }()

	fmt.Printf("\nmachine: %d CPUs (%s), %s; commit %s; load average before %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), commitText(ctx), loadAverage())
	defer func() { fmt.Printf("\nload average after: %s\n", loadAverage()) }()
	fmt.Println("not pinned: the writers and receivers (this process), Atrium (atrium serve on PostgreSQL, external NATS) or the floor, PostgreSQL and NATS share every core")
	fmt.Printf("load: %d sites × %d endpoints (item.created), items created at %.0f/s spread over the sites, %s warm-up, %d rounds of %s per server and scenario\n",
		*tenants, *perTenant, *rate, f.warmup, f.rounds, f.duration)
	fmt.Println("latency: from the write's 201 to the delivery's arrival at the receiver")

	servers := []webhookServer{
		{"floor", "f", floorAddr, func(s site) map[string]string { return map[string]string{"X-Site": s.id} }},
		{"atrium", "a", atrium.api, func(s site) map[string]string { return map[string]string{"Authorization": "Bearer " + s.key} }},
	}
	if *capacity {
		return webhookCapacity(ctx, servers, capacitySearch{start: *rate, p99: *capP99, budget: *capBudget, settle: *capSettle, step: f.duration}, rx,
			func(srv webhookServer) *writer {
				w := &writer{addr: srv.addr, rx: rx, path: srv.path}
				for _, s := range sites {
					w.sites = append(w.sites, writerSite{headers: srv.header(s)})
				}
				return w
			}, *perTenant)
	}
	for _, faults := range []bool{false, true} {
		rx.faults.Store(faults)
		label := "every endpoint healthy"
		if faults {
			label = "10% of endpoints answer 503, 1% never answer"
		}
		fmt.Printf("\n%s\n  %-8s %14s %10s %10s %10s %9s\n", label, "server", "deliveries/s", "p50 ms", "p99 ms", "max ms", "missing")
		results := map[string][]deliveryRound{}
		for round := -1; round < f.rounds; round++ {
			for _, srv := range servers {
				d := f.duration
				if round < 0 {
					d = f.warmup
				}
				var prof chan error
				if srv.name == "atrium" && faults && round == 0 && f.profile != "" {
					prof = make(chan error, 1)
					go func() { prof <- atrium.profile(ctx, "profile", f.profile, d-time.Second) }()
				}
				w := &writer{addr: srv.addr, rate: *rate, rx: rx, path: srv.path}
				for _, s := range sites {
					w.sites = append(w.sites, writerSite{headers: srv.header(s)})
				}
				r, err := w.run(ctx, d, *perTenant)
				if err != nil {
					return err
				}
				if prof != nil {
					if err := <-prof; err != nil {
						return err
					}
				}
				if round >= 0 {
					results[srv.name] = append(results[srv.name], r)
				}
				if srv.name == "atrium" && round == f.rounds-1 {
					fmt.Printf("  (atrium after the last round: %s; %s)\n", webhookState(ctx, atrium, f.natsURL, consumer), deliveryPhases(ctx, env.db))
				}
			}
		}
		var floorRate, floorP99 float64
		for _, srv := range servers {
			all := deliveryRound{}
			for _, r := range results[srv.name] {
				all.delivered += r.delivered
				all.elapsed += r.elapsed
				all.delays = append(all.delays, r.delays...)
				all.missing += r.missing
			}
			rps, p99 := float64(all.delivered)/all.elapsed.Seconds(), ms(pct(all.delays, 99))
			fmt.Printf("  %-8s %14.0f %10.1f %10.1f %10.1f %9d", srv.name, rps, ms(pct(all.delays, 50)), p99, ms(pct(all.delays, 100)), all.missing)
			if srv.name == "floor" {
				floorRate, floorP99 = rps, p99
				fmt.Println()
			} else {
				fmt.Printf("   ratio to the floor: %.2f by deliveries/s, %.2f by p99\n", rps/floorRate, p99/floorP99)
			}
		}
	}
	if f.profile != "" {
		fmt.Printf("\nCPU profile of Atrium: %s (go tool pprof -top %s %s)\n", f.profile, f.atrium, f.profile)
	}
	return nil
}

// webhookState says where Atrium's deliveries stand: the events its
// consumer has yet to fan out, and the deliverer's backlog and lag (its
// metrics).
func webhookState(ctx context.Context, p *atriumProc, natsURL, consumer string) string {
	var parts []string
	if nc, err := nats.Connect(natsURL); err == nil {
		if js, err := jetstream.New(nc); err == nil {
			if c, err := js.Consumer(ctx, "ATRIUM_COLLECTIONS", consumer); err == nil {
				if info, err := c.Info(ctx); err == nil {
					parts = append(parts, fmt.Sprintf("events not yet fanned out %d (in flight %d)", info.NumPending, info.NumAckPending))
				}
			}
		}
		nc.Close()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.admin+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var acquires, waited float64
		for _, line := range strings.Split(string(b), "\n") {
			for _, m := range []string{"atrium_webhooks_backlog{", "atrium_webhooks_oldest_due_wait_seconds", "atrium_webhooks_attempts_total{"} {
				if strings.HasPrefix(line, m) {
					parts = append(parts, strings.TrimSpace(line[strings.IndexByte(line, '{')+1:]))
				}
			}
			if strings.Contains(line, `db_client_connection_pool_name="webhooks"`) {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				switch {
				case strings.HasPrefix(line, "atrium_db_pool_acquires_total"):
					acquires = v
				case strings.HasPrefix(line, "atrium_db_pool_acquire_duration_seconds_total"):
					waited = v
				}
			}
		}
		if acquires > 0 {
			parts = append(parts, fmt.Sprintf("webhooks pool: %.0f acquisitions, mean wait %.1f ms", acquires, 1000*waited/acquires))
		}
	}
	return strings.Join(parts, "; ")
}

// deliveryPhases splits the delay of Atrium's first attempts that
// succeeded since the last call: from the event's storing in its stream
// to its fan-out (the delivery's creation), and from there to the
// attempt, p50 and p99 of each.
func deliveryPhases(ctx context.Context, db string) string {
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return err.Error()
	}
	defer conn.Close(ctx)
	var fan50, fan99, claim50, claim99 float64
	err = conn.QueryRow(ctx, `WITH d AS (
			SELECT extract(epoch FROM created_at - (convert_from(body, 'UTF8')::jsonb->>'timestamp')::timestamptz) * 1000 AS fan,
				extract(epoch FROM (attempts->0->>'at')::timestamptz - created_at) * 1000 AS claim
			FROM webhooks.deliveries WHERE jsonb_array_length(attempts) > 0 AND (attempts->0->>'status_code')::int BETWEEN 200 AND 299
				AND created_at > now() - interval '20 seconds')
		SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY fan), 0), coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY fan), 0),
			coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY claim), 0), coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY claim), 0) FROM d`).
		Scan(&fan50, &fan99, &claim50, &claim99)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("event stored to fanned out p50 %.0f ms p99 %.0f ms, fanned out to attempted p50 %.0f ms p99 %.0f ms", fan50, fan99, claim50, claim99)
}

func deleteConsumer(natsURL, name string) {
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
		fmt.Fprintln(os.Stderr, "bench: delete the webhooks consumers:", err)
	}
}

const (
	modeOK = iota
	modeFail
	modeHang
)

// benchReceiver is every endpoint, on one listener: /<server>/<k> is
// endpoint k of that server's deliveries. It notes when each item's event
// reached each healthy endpoint.
type benchReceiver struct {
	srv    *http.Server
	addr   string
	modes  map[int]int
	faults atomic.Bool
	stop   chan struct{}

	mu sync.Mutex
	// arrivals are by server path, then item id.
	arrivals map[string]map[string][]time.Time
}

func newBenchReceiver() (*benchReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &benchReceiver{addr: l.Addr().String(), modes: map[int]int{}, stop: make(chan struct{}),
		arrivals: map[string]map[string][]time.Time{"a": {}, "f": {}}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *benchReceiver) url(server string, k int) string {
	return fmt.Sprintf("http://%s/%s/%d", r.addr, server, k)
}

func (r *benchReceiver) close() {
	close(r.stop)
	_ = r.srv.Close()
}

func (r *benchReceiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	server, rest, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/")
	var k int
	_, _ = fmt.Sscan(rest, &k)
	body, _ := io.ReadAll(req.Body)
	if r.faults.Load() {
		switch r.modes[k] {
		case modeFail:
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		case modeHang:
			select {
			case <-req.Context().Done():
			case <-r.stop:
			}
			return
		}
	}
	var ev struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) == nil && ev.Data.ID != "" {
		r.mu.Lock()
		if m := r.arrivals[server]; m != nil {
			m[ev.Data.ID] = append(m[ev.Data.ID], at)
		}
		r.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// healthy is how many of site i's endpoints answer 2xx now.
func (r *benchReceiver) healthy(site, perSite int) int {
	if !r.faults.Load() {
		return perSite
	}
	n := 0
	for k := site * perSite; k < (site+1)*perSite; k++ {
		if r.modes[k] == modeOK {
			n++
		}
	}
	return n
}

type writerSite struct{ headers map[string]string }

// writer creates items at a steady rate, round robin over the sites, each
// request on its own schedule (open loop: a slow answer does not slow the
// offered load), and then waits for their deliveries.
type writer struct {
	addr  string
	rate  float64
	sites []writerSite
	rx    *benchReceiver
	path  string
	// countFailed counts the writes answered with an error (a 503 from a
	// server past its capacity) instead of ending the run at the first:
	// the capacity mode's step is then not held, and the search goes on.
	countFailed bool
}

type deliveryRound struct {
	delivered, missing int
	// failed counts the writes answered with an error (countFailed), and
	// firstErr is the first of them.
	failed   int
	firstErr error
	elapsed  time.Duration
	delays   []time.Duration
}

func (w *writer) run(ctx context.Context, d time.Duration, perSite int) (deliveryRound, error) {
	type written struct {
		id   string
		site int
		at   time.Time
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}
	var (
		mu       sync.Mutex
		items    []written
		firstErr error
		failed   int
		wg       sync.WaitGroup
	)
	start := time.Now()
	interval := time.Duration(float64(time.Second) / w.rate)
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(start) >= d {
			break
		}
		if wait := time.Until(at); wait > 0 {
			select {
			case <-ctx.Done():
				return deliveryRound{}, ctx.Err()
			case <-time.After(wait):
			}
		}
		site := i % len(w.sites)
		wg.Go(func() {
			var out struct {
				Item struct {
					ID string `json:"id"`
				} `json:"item"`
			}
			err := callWith(ctx, client, w.addr, w.sites[site].headers, "POST", "/api/public/v1/collections/posts",
				map[string]any{"data": map[string]any{"title": "Bench post"}}, &out)
			answered := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				failed++
				return
			}
			items = append(items, written{out.Item.ID, site, answered})
		})
	}
	wg.Wait()
	if firstErr != nil && !w.countFailed {
		return deliveryRound{}, firstErr
	}
	// Wait for every healthy delivery of the items written (up to 30 s
	// after the last write), then count.
	expected := 0
	for _, it := range items {
		expected += w.rx.healthy(it.site, perSite)
	}
	deadline := time.Now().Add(30 * time.Second)
	var r deliveryRound
	for {
		r = deliveryRound{}
		var last time.Time
		w.rx.mu.Lock()
		for _, it := range items {
			arr := w.rx.arrivals[w.path][it.id]
			for _, a := range arr {
				r.delivered++
				r.delays = append(r.delays, a.Sub(it.at))
				if a.After(last) {
					last = a
				}
			}
		}
		w.rx.mu.Unlock()
		r.elapsed = max(last.Sub(start), d)
		if r.delivered >= expected || time.Now().After(deadline) {
			r.missing = max(expected-r.delivered, 0)
			r.failed, r.firstErr = failed, firstErr
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r, nil
}

// callWith sends a JSON request with headers and decodes the answer.
func callWith(ctx context.Context, client *http.Client, addr string, headers map[string]string, method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// benchSite is a site of the webhooks bench: its id and write key.
type benchSite struct{ id, key string }

// webhookServer is Atrium or the floor as the webhooks bench writes to
// it: path is its receivers' prefix, header a site's request headers.
type webhookServer struct {
	name, path, addr string
	header           func(benchSite) map[string]string
}

// capacitySearch bounds the capacity mode's search.
type capacitySearch struct {
	start          float64
	p99, step      time.Duration
	budget, settle time.Duration
}

// webhookCapacity finds, for each server in turn with the failing and
// hanging endpoints on, the highest item rate whose healthy deliveries
// hold p99 under s.p99 with none missing and no write failed (a 503 is a
// rate not held, not the end of the search): from s.start it doubles
// while the rate holds, then bisects between the highest held and the lowest
// not held until they are within 10%, or the server's half of the budget
// is spent. It prints each step, both capacities and Atrium's ratio.
func webhookCapacity(ctx context.Context, servers []webhookServer, s capacitySearch, rx *benchReceiver, newWriter func(webhookServer) *writer, perSite int) error {
	if s.start <= 0 {
		return fmt.Errorf("--rate must be positive; got %g", s.start)
	}
	rx.faults.Store(true)
	fmt.Printf("\ncapacity: 10%% of endpoints answer 503, 1%% never answer; a rate is held when the healthy deliveries' p99 is under %s and none is missing 30 s after its step;\n", s.p99)
	fmt.Printf("  steps of %s from %.0f items/s (doubling, then bisecting to within 10%%), at most %s per server\n", s.step, s.start, s.budget/2)
	capacities := map[string]float64{}
	for _, srv := range servers {
		fmt.Printf("\n  %s\n  %10s %14s %10s %10s %9s %6s\n", srv.name, "items/s", "deliveries/s", "p50 ms", "p99 ms", "missing", "held")
		deadline := time.Now().Add(s.budget / 2)
		lo, hi, r := 0.0, 0.0, s.start
		for time.Now().Before(deadline) {
			w := newWriter(srv)
			w.rate, w.countFailed = r, true
			res, err := w.run(ctx, s.step, perSite)
			if err != nil {
				return fmt.Errorf("%s at %.0f items/s: %w", srv.name, r, err)
			}
			p99 := pct(res.delays, 99)
			// A rate at which writes fail (503: a backing service past its
			// capacity) is not held, however its deliveries went.
			held := res.missing == 0 && res.failed == 0 && res.delivered > 0 && p99 < s.p99
			fmt.Printf("  %10.0f %14.0f %10.1f %10.1f %9d %6t", r, float64(res.delivered)/res.elapsed.Seconds(), ms(pct(res.delays, 50)), ms(p99), res.missing, held)
			if res.failed > 0 {
				fmt.Printf("   %d writes failed, the first: %s", res.failed, strings.TrimSpace(res.firstErr.Error()))
			}
			fmt.Println()
			if held {
				lo = r
			} else {
				hi = r
				// Let what the rate left behind (retries, deliveries still
				// due) drain before the next step measures a lower one.
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(s.settle):
				}
			}
			switch {
			case hi == 0:
				r = 2 * lo
			case lo == 0:
				r = hi / 2
			default:
				r = (lo + hi) / 2
			}
			if (hi > 0 && hi-lo <= 0.1*hi) || r < 1 {
				break
			}
		}
		capacities[srv.name] = lo
		bound := "not reached within the budget"
		if hi > 0 {
			bound = fmt.Sprintf("%.0f/s not held", hi)
		}
		fmt.Printf("  %s holds %.0f items/s (%s)\n", srv.name, lo, bound)
	}
	fmt.Printf("\ncapacity with p99 under %s: floor %.0f items/s, atrium %.0f items/s", s.p99, capacities["floor"], capacities["atrium"])
	if capacities["floor"] > 0 {
		fmt.Printf("; Atrium / floor %.2f", capacities["atrium"]/capacities["floor"])
	}
	fmt.Println()
	return nil
}
