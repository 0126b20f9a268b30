package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// runActions measures generate_blog end to end on PostgreSQL and NATS:
// the credit reservation and spend, the generation (built-in generator),
// the run's record, the blog row written to the data service, the outbox,
// and the completion event delivered to a NATS subscriber. At each level
// of concurrent clients it prints actions per second, the response
// latency, and the delay from each response to its completion event.
func runActions(ctx context.Context, args []string) error {
	var f crmFlags
	var levels string
	fs := flag.NewFlagSet("bench actions", flag.ContinueOnError)
	bindCommon(fs, &f)
	fs.StringVar(&levels, "levels", "1,8,32", "concurrent clients, one level after the other")
	pin := fs.Bool("pin", false, "pin the load generator to CPU 0 and Atrium and PostgreSQL to CPU 1, as the read benchmarks do; by default every process may use every core, since this measures the machine's capacity rather than a ratio to a floor")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of Atrium during the first measured round at the highest level (with --async: the first --profile-seconds of the large agency's submissions), and print its top entries")
	async := fs.Bool("async", false, "measure asynchronous runs instead (Prefer: respond-async) against a text provider of the bench's own that takes --provider-latency per call: accepted submissions per second and the 202's latency at the highest level, Atrium and the floor alternating over --rounds floods (their medians and spread), completions per second, and the queue wait of a small agency's runs while a large agency has --queued runs queued")
	a := asyncFlags{}
	fs.DurationVar(&a.latency, "provider-latency", 2*time.Second, "with --async: how long the text provider takes per call")
	fs.IntVar(&a.queued, "queued", 10_000, "with --async: runs the large agency submits (and has queued)")
	fs.IntVar(&a.small, "small-runs", 20, "with --async: runs the small agency submits, one at a time, while the large agency's queue is full")
	fs.DurationVar(&a.profileFor, "profile-seconds", 4*time.Second, "with --async and --cpuprofile: how long the profile covers, from the first submission")
	fs.IntVar(&a.workers, "action-workers", 0, "with --async: --action-workers of atrium serve (0: its default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.store = "postgres"
	f.unpinned = !*pin
	if *async {
		return runActionsAsync(ctx, f, a, levels)
	}
	env, err := setUp(ctx, f)
	if err != nil {
		return err
	}
	defer env.tearDown()
	atrium := env.atrium
	// The load and the event subscriber run in this process, on the load
	// generator's core; Atrium and PostgreSQL on the other.
	if env.loadCPU != "" {
		if out, err := exec.CommandContext(ctx, "taskset", "-a", "-p", "-c", env.loadCPU, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			fmt.Printf("warning: cannot pin the load generator: %v %s\n", err, out)
		}
	}
	var seed struct {
		Agency struct{ ID string }     `json:"agency"`
		Client struct{ ID string }     `json:"client"`
		Key    struct{ Secret string } `json:"key"`
	}
	steps := []struct {
		method, path string
		body         any
	}{
		{"POST", "/admin/v1/agencies", map[string]any{"name": "Bench agency"}},
		{"POST", "/admin/v1/clients", map[string]any{"name": "Bench Bakery", "domain": "bench-bakery.example"}},
	}
	for _, s := range steps {
		if err := atrium.adminCall(ctx, s.method, s.path, s.body, &seed); err != nil {
			return err
		}
	}
	if err := atrium.adminCall(ctx, "PUT", "/admin/v1/agencies/"+seed.Agency.ID+"/clients/"+seed.Client.ID, nil, nil); err != nil {
		return err
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "bench", "scopes": []string{"read", "write"}, "agency_id": seed.Agency.ID}, &seed); err != nil {
		return err
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/agencies/"+seed.Agency.ID+"/credits", map[string]any{"ai": 2_000_000_000}, nil); err != nil {
		return err
	}
	nc, err := nats.Connect(f.natsURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	events := newEventClock()
	sub, err := nc.Subscribe("atrium.actions.completed.generate_blog", events.record)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }() // the connection closes after it anyway
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return err
	}
	if err := nc.Flush(); err != nil {
		return err
	}

	fmt.Printf("\nmachine: %d CPUs (%s), %s\n", runtime.NumCPU(), cpuModel(), runtime.Version())
	if env.loadCPU != "" {
		fmt.Printf("pinning: load generator and event subscriber on CPU %s; Atrium (atrium serve on PostgreSQL, external NATS) and PostgreSQL on CPU %s\n", env.loadCPU, env.serverCPU)
	} else {
		fmt.Println("not pinned: the load generator, Atrium (atrium serve on PostgreSQL), PostgreSQL and NATS share both cores")
	}
	fmt.Printf("load: POST /api/v1/data generate_blog, %s warm-up, %d rounds of %s per level\n", f.warmup, f.rounds, f.duration)
	var levelList []int
	for _, l := range strings.Split(levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil || n < 1 {
			return fmt.Errorf("--levels: %q is not a positive integer", l)
		}
		levelList = append(levelList, n)
	}
	top := slices.Max(levelList)
	client := &actionClient{addr: atrium.api, key: seed.Key.Secret, clientID: seed.Client.ID}
	fmt.Printf("\n  %-8s %10s %9s %9s %14s %14s %9s %8s\n", "clients", "actions/s", "p50 ms", "p99 ms", "event p50 ms", "event p99 ms", "early", "missing")
	for _, n := range levelList {
		if _, err := client.drive(ctx, events, n, f.warmup); err != nil {
			return err
		}
		pinBackends(ctx, f.databaseURL, env.db, env.serverCPU)
		var rounds []actionRound
		for round := range f.rounds {
			var prof chan error
			if n == top && round == 0 && f.profile != "" {
				prof = make(chan error, 1)
				go func() { prof <- atrium.profile(ctx, "profile", f.profile, f.duration-time.Second) }()
			}
			r, err := client.drive(ctx, events, n, f.duration)
			if err != nil {
				return err
			}
			if prof != nil {
				if err := <-prof; err != nil {
					return err
				}
			}
			rounds = append(rounds, r)
		}
		var rps []string
		all := actionRound{}
		for _, r := range rounds {
			rps = append(rps, fmt.Sprintf("%.0f", r.rps()))
			all.n += r.n
			all.elapsed += r.elapsed
			all.latencies = append(all.latencies, r.latencies...)
			all.delays = append(all.delays, r.delays...)
			all.early += r.early
			all.missing += r.missing
		}
		fmt.Printf("  %-8d %10.0f %9.2f %9.2f %14.2f %14.2f %9d %8d   rounds: %s\n", n, all.rps(), ms(pct(all.latencies, 50)), ms(pct(all.latencies, 99)),
			ms(pct(all.delays, 50)), ms(pct(all.delays, 99)), all.early, all.missing, strings.Join(rps, ", "))
	}
	fmt.Println("\n  event delay: from the response's arrival at the client to the completion event's arrival at a NATS subscriber;")
	fmt.Println("  early: events that arrived before their response (counted as 0 ms); missing: none within 10 s of the round's end")
	if f.profile != "" {
		fmt.Printf("\nCPU profile of Atrium (first round at %d clients): %s\n", top, f.profile)
		out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=30", f.profile).CombinedOutput()
		if err != nil {
			fmt.Printf("go tool pprof: %v\n", err)
		}
		fmt.Println(string(out))
	}
	return nil
}

// eventClock records when each run's completion event arrived, by the id
// of the blog it wrote (which the response carries too).
type eventClock struct {
	mu      sync.Mutex
	arrived map[string]time.Time
}

func newEventClock() *eventClock { return &eventClock{arrived: map[string]time.Time{}} }

func (c *eventClock) record(m *nats.Msg) {
	at := time.Now()
	var ev struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(m.Data, &ev) != nil || ev.Data.ID == "" {
		return
	}
	c.mu.Lock()
	c.arrived[ev.Data.ID] = at
	c.mu.Unlock()
}

func (c *eventClock) take(id string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.arrived[id]
	if ok {
		delete(c.arrived, id)
	}
	return at, ok
}

type actionClient struct {
	addr, key, clientID string
	seq                 atomic.Int64
}

type actionRound struct {
	n              int
	elapsed        time.Duration
	latencies      []time.Duration
	delays         []time.Duration
	early, missing int
}

func (r actionRound) rps() float64 { return float64(r.n) / r.elapsed.Seconds() }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

// drive runs n clients for d, each on its own keep-alive connection, then
// waits for the completion events of the responses it got.
func (c *actionClient) drive(ctx context.Context, events *eventClock, n int, d time.Duration) (actionRound, error) {
	type done struct {
		id string
		at time.Time
	}
	var (
		mu        sync.Mutex
		responses []done
		latencies []time.Duration
		firstErr  error
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second}
			for time.Now().Before(deadline) && ctx.Err() == nil {
				body := fmt.Sprintf(`{"action":"generate_blog","client_id":%q,"keyword":"sourdough bread %d"}`, c.clientID, c.seq.Add(1))
				req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+c.addr+"/api/v1/data", bytes.NewReader([]byte(body)))
				req.Header.Set("Authorization", "Bearer "+c.key)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				at := time.Now()
				var out struct {
					Status string `json:"status"`
					Data   struct {
						ID string `json:"id"`
					} `json:"data"`
				}
				if resp.StatusCode != 200 || json.Unmarshal(raw, &out) != nil || out.Status != "success" {
					mu.Lock()
					firstErr = cmpErr(firstErr, fmt.Errorf("status %d: %s", resp.StatusCode, raw))
					mu.Unlock()
					return
				}
				mu.Lock()
				responses = append(responses, done{out.Data.ID, at})
				latencies = append(latencies, at.Sub(t0))
				mu.Unlock()
			}
			hc.CloseIdleConnections()
		})
	}
	wg.Wait()
	r := actionRound{n: len(responses), elapsed: time.Since(start), latencies: latencies}
	if firstErr != nil {
		return r, firstErr
	}
	wait := time.Now().Add(10 * time.Second)
	for _, resp := range responses {
		for {
			at, ok := events.take(resp.id)
			if ok {
				delay := at.Sub(resp.at)
				if delay < 0 {
					r.early++
					delay = 0
				}
				r.delays = append(r.delays, delay)
				break
			}
			if time.Now().After(wait) {
				r.missing++
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	return r, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
