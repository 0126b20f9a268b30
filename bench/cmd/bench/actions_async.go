package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
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

type asyncFlags struct {
	latency, profileFor    time.Duration
	queued, small, workers int
}

// slowText is an OpenAI-compatible chat-completions server that answers
// every call after latency, as a real model would take its time.
func slowText(latency time.Duration) (url string, stop func(), err error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	content, _ := json.Marshal(map[string]string{"title": "Slow bread", "meta_description": "Bread that takes its time.",
		"content": "<h2>Wait</h2><p>" + strings.Repeat("Good bread takes time. ", 60) + "</p>"})
	answer, _ := json.Marshal(map[string]any{"id": "chatcmpl-bench", "object": "chat.completion", "model": "bench-slow",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(content)}}}})
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})}
	go func() { _ = srv.Serve(lis) }()
	return "http://" + lis.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}

// benchTenant is an agency with a linked client and a key, with credits.
type benchTenant struct{ agency, client, key string }

func newBenchTenant(ctx context.Context, atrium *atriumProc, name string) (benchTenant, error) {
	var seed struct {
		Agency struct{ ID string }     `json:"agency"`
		Client struct{ ID string }     `json:"client"`
		Key    struct{ Secret string } `json:"key"`
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/agencies", map[string]any{"name": name}, &seed); err != nil {
		return benchTenant{}, err
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/clients", map[string]any{"name": name + " client", "domain": "bench-bakery.example"}, &seed); err != nil {
		return benchTenant{}, err
	}
	if err := atrium.adminCall(ctx, "PUT", "/admin/v1/agencies/"+seed.Agency.ID+"/clients/"+seed.Client.ID, nil, nil); err != nil {
		return benchTenant{}, err
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "bench", "scopes": []string{"read", "write"}, "agency_id": seed.Agency.ID}, &seed); err != nil {
		return benchTenant{}, err
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/agencies/"+seed.Agency.ID+"/credits", map[string]any{"ai": 2_000_000_000}, nil); err != nil {
		return benchTenant{}, err
	}
	return benchTenant{seed.Agency.ID, seed.Client.ID, seed.Key.Secret}, nil
}

// submit posts one asynchronous generate_blog and returns its run id.
func (t benchTenant) submit(ctx context.Context, hc *http.Client, api string, n int64) (string, error) {
	body := fmt.Sprintf(`{"action":"generate_blog","client_id":%q,"keyword":"slow bread %d"}`, t.client, n)
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+api+"/api/v1/data", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+t.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Data struct {
			RunID string `json:"run_id"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &out) != nil || out.Data.RunID == "" {
		return "", fmt.Errorf("submission answered %d: %s", resp.StatusCode, raw)
	}
	return out.Data.RunID, nil
}

// wait reads a run, waiting up to a minute for it to finish, and returns
// its created_at and started_at.
func (t benchTenant) wait(ctx context.Context, hc *http.Client, api, id string) (created, started time.Time, err error) {
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+api+"/api/v1/runs/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+t.key)
		req.Header.Set("Prefer", "wait=20")
		resp, err := hc.Do(req)
		if err != nil {
			return created, started, err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out struct {
			Run struct {
				State   string  `json:"state"`
				Created string  `json:"created_at"`
				Started *string `json:"started_at"`
			} `json:"run"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil {
			return created, started, fmt.Errorf("GET run answered %d: %s", resp.StatusCode, raw)
		}
		if out.Run.State == "queued" || out.Run.State == "running" {
			continue
		}
		if out.Run.State != "success" || out.Run.Started == nil {
			return created, started, fmt.Errorf("run %s ended %s", id, raw)
		}
		created, _ = time.Parse(time.RFC3339Nano, out.Run.Created)
		started, _ = time.Parse(time.RFC3339Nano, *out.Run.Started)
		return created, started, nil
	}
	return created, started, ctx.Err()
}

// runActionsAsync measures asynchronous runs: over f.rounds rounds, a
// large agency floods Atrium with a.queued submissions from the highest
// level of clients, then a floor agency floods the hand-written floor
// with the same (A/B/A/B..., so that both see the same machine within a
// round), each round's accepted submissions per second and 202 latency
// printed, then their medians with the spread; then a small agency
// submits a.small runs one after the other while the large one's queue
// is full (each one's wait from submission to start), and the
// completions per second meanwhile.
func runActionsAsync(ctx context.Context, f crmFlags, a asyncFlags, levels string) error {
	if f.rounds < 1 {
		return fmt.Errorf("--rounds must be at least 1; got %d", f.rounds)
	}
	llm, stopLLM, err := slowText(a.latency)
	if err != nil {
		return err
	}
	defer stopLLM()
	// Every round's flood stays queued (the workers drain 8/s), so the
	// queue limits hold all the rounds'.
	maxQueued := strconv.Itoa(f.rounds*a.queued + 1000)
	f.extraArgs = append(f.extraArgs, "--llm-base-url="+llm, "--llm-model=bench-slow", "--agency-max-queued="+maxQueued)
	if a.workers > 0 {
		f.extraArgs = append(f.extraArgs, "--action-workers="+strconv.Itoa(a.workers))
	}
	env, err := setUp(ctx, f)
	if err != nil {
		return err
	}
	defer env.tearDown()
	atrium := env.atrium
	big, err := newBenchTenant(ctx, atrium, "Bench large agency")
	if err != nil {
		return err
	}
	small, err := newBenchTenant(ctx, atrium, "Bench small agency")
	if err != nil {
		return err
	}
	// The floor: the same flood against bench/floor.Submissions (net/http
	// and pgx, the store's statements and the 202's JSON) for a third
	// agency, on the same database, while Atrium's workers go on.
	fl, err := newBenchTenant(ctx, atrium, "Bench floor agency")
	if err != nil {
		return err
	}
	floorCmd, floorAddr, err := startFloorWith(ctx, "", "--database-url", env.db, "--agency", fl.agency, "--submissions", fl.client,
		"--max-queued", maxQueued)
	if err != nil {
		return err
	}
	defer func() { _ = floorCmd.Process.Kill(); _ = floorCmd.Wait() }()
	nc, err := nats.Connect(f.natsURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	var completed atomic.Int64
	sub, err := nc.Subscribe("atrium.actions.completed.generate_blog", func(*nats.Msg) { completed.Add(1) })
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		return err
	}
	var clients int
	for _, l := range strings.Split(levels, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil && n > clients {
			clients = n
		}
	}
	fmt.Printf("\nmachine: %d CPUs (%s), %s; commit %s; load average before %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), commitText(ctx), loadAverage())
	fmt.Printf("async: text provider of %s per call; --action-workers %s; %d rounds, each: the large agency submits %d runs to Atrium from %d clients, then the floor agency the same to the floor; then the small agency %d runs one at a time\n",
		a.latency, workersText(a.workers), f.rounds, a.queued, clients, a.small)
	fmt.Println("floor: net/http + pgx, the same statements and JSON, on the same database")

	// The floods, alternating Atrium and the floor round by round.
	type floodRound struct {
		rate     float64
		p50, p99 time.Duration
	}
	run := func(submit func(hc *http.Client, n int64) error) (floodRound, error) {
		lat, elapsed, err := flood(ctx, clients, a.queued, submit)
		if err != nil {
			return floodRound{}, err
		}
		return floodRound{float64(len(lat)) / elapsed.Seconds(), pct(lat, 50), pct(lat, 99)}, nil
	}
	var atriumRounds, floorRounds []floodRound
	fmt.Printf("\n  %-6s %-7s %12s %9s %9s   %s\n", "round", "server", "accepted/s", "p50 ms", "p99 ms", "Atrium / floor")
	for round := range f.rounds {
		var prof chan error
		if round == 0 && f.profile != "" {
			prof = make(chan error, 1)
			go func() { prof <- atrium.profile(ctx, "profile", f.profile, a.profileFor) }()
		}
		ar, err := run(func(hc *http.Client, n int64) error {
			_, err := big.submit(ctx, hc, atrium.api, int64(round*a.queued)+n)
			return err
		})
		if err != nil {
			return err
		}
		if prof != nil {
			if err := <-prof; err != nil {
				return err
			}
		}
		fr, err := run(func(hc *http.Client, n int64) error {
			_, err := fl.submit(ctx, hc, floorAddr, int64(round*a.queued)+n)
			return err
		})
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		atriumRounds, floorRounds = append(atriumRounds, ar), append(floorRounds, fr)
		fmt.Printf("  %-6d %-7s %12.0f %9.2f %9.2f\n", round+1, "atrium", ar.rate, ms(ar.p50), ms(ar.p99))
		fmt.Printf("  %-6s %-7s %12.0f %9.2f %9.2f   %.2f by accepted/s, %.2f by p99\n", "", "floor", fr.rate, ms(fr.p50), ms(fr.p99),
			ar.rate/fr.rate, float64(ar.p99)/float64(fr.p99))
	}
	field := func(rs []floodRound, v func(floodRound) float64) spread {
		var vals []float64
		for _, r := range rs {
			vals = append(vals, v(r))
		}
		return spreadOf(vals)
	}
	rate := func(r floodRound) float64 { return r.rate }
	p50 := func(r floodRound) float64 { return ms(r.p50) }
	p99 := func(r floodRound) float64 { return ms(r.p99) }
	var rateRatios, p99Ratios []float64
	for i := range atriumRounds {
		rateRatios = append(rateRatios, atriumRounds[i].rate/floorRounds[i].rate)
		p99Ratios = append(p99Ratios, float64(atriumRounds[i].p99)/float64(floorRounds[i].p99))
	}
	fmt.Printf("\n  median of %d rounds (min–max):\n", f.rounds)
	for _, s := range []struct {
		name string
		rs   []floodRound
	}{{"atrium", atriumRounds}, {"floor", floorRounds}} {
		fmt.Printf("  %-7s accepted/s %s; 202 p50 %s ms, p99 %s ms\n", s.name, field(s.rs, rate).text("%.0f"), field(s.rs, p50).text("%.2f"), field(s.rs, p99).text("%.2f"))
	}
	fmt.Printf("  Atrium / floor (per round, each round's two floods back to back): accepted/s %s; p99 %s\n",
		spreadOf(rateRatios).text("%.2f"), spreadOf(p99Ratios).text("%.2f"))

	// The small agency's runs, one after the other, while the large
	// agency's queue is full; completions counted meanwhile.
	hc := &http.Client{Timeout: time.Minute}
	before, t0 := completed.Load(), time.Now()
	var waits []time.Duration
	for i := range a.small {
		id, err := small.submit(ctx, hc, atrium.api, int64(i))
		if err != nil {
			return err
		}
		created, started, err := small.wait(ctx, hc, atrium.api, id)
		if err != nil {
			return err
		}
		waits = append(waits, started.Sub(created))
	}
	window := time.Since(t0)
	done := completed.Load() - before
	if len(waits) > 0 {
		fmt.Printf("\n  small agency's queue wait (submission to start, %d runs, the large agency with thousands queued): p50 %.0f ms, p99 %.0f ms, max %.0f ms (target: under %s, 2 x the provider latency)\n",
			len(waits), ms(pct(waits, 50)), ms(pct(waits, 99)), ms(slices.Max(waits)), 2*a.latency)
		fmt.Printf("  completions: %d in %.1f s = %.1f/s (the workers' ceiling is workers / provider latency)\n", done, window.Seconds(), float64(done)/window.Seconds())
	}
	fmt.Printf("\nload average after: %s\n", loadAverage())
	if f.profile != "" {
		fmt.Printf("\nCPU profile of Atrium (the first %s of the large agency's first flood): %s\n", a.profileFor, f.profile)
		out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=30", f.profile).CombinedOutput()
		if err != nil {
			fmt.Printf("go tool pprof: %v\n", err)
		}
		fmt.Println(string(out))
	}
	return nil
}

// flood submits n runs from clients concurrent clients, each with its own
// connection, and returns each submission's latency and the time it took.
func flood(ctx context.Context, clients, n int, submit func(hc *http.Client, i int64) error) ([]time.Duration, time.Duration, error) {
	var (
		seq       atomic.Int64
		mu        sync.Mutex
		latencies []time.Duration
		firstErr  error
	)
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second}
			defer hc.CloseIdleConnections()
			for ctx.Err() == nil {
				i := seq.Add(1)
				if i > int64(n) {
					return
				}
				t0 := time.Now()
				err := submit(hc, i)
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					return
				}
				latencies = append(latencies, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return latencies, time.Since(start), firstErr
}

func workersText(n int) string {
	if n == 0 {
		return "default"
	}
	return strconv.Itoa(n)
}

// loadAverage is the machine's load average (1, 5 and 15 minutes), which
// a shared machine's figures must be read with.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
