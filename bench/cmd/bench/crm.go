package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

type crmFlags struct {
	atrium      string
	databaseURL string
	natsURL     string
	conns       int
	duration    time.Duration
	warmup      time.Duration
	rounds      int
	prospects   int
	store       string
	profile     string
	memprofile  string
	routes      string
	// unpinned lets every process use every core (the actions bench,
	// which measures the machine's capacity, not a ratio to a floor).
	unpinned bool
	// extraArgs are more flags of atrium serve.
	extraArgs []string
}

const adminToken = "bench-admin-token-0123456789"

func runCRM(ctx context.Context, args []string) error {
	var f crmFlags
	fs := flag.NewFlagSet("bench crm", flag.ContinueOnError)
	bindCommon(fs, &f)
	fs.IntVar(&f.prospects, "prospects", 5000, "prospects and deals in the measured agency")
	fs.StringVar(&f.store, "store", "postgres", "Atrium's store: postgres or memory (the floor always reads PostgreSQL)")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of Atrium during its first measured prospects round to this file, and print its top entries")
	fs.StringVar(&f.memprofile, "memprofile", "", "write an allocation profile of Atrium during its first measured prospects round to this file")
	fs.StringVar(&f.routes, "routes", "prospects,deals", "routes to measure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.store != "postgres" && f.store != "memory" {
		return fmt.Errorf("--store must be postgres or memory; got %q", f.store)
	}
	env, err := setUp(ctx, f)
	if err != nil {
		return err
	}
	defer env.tearDown()
	loadCPU, serverCPU, db, atrium := env.loadCPU, env.serverCPU, env.db, env.atrium
	fmt.Printf("seeding %d prospects and %d deals through the admin API ...\n", f.prospects, f.prospects)
	agency, key, err := seed(ctx, atrium, f.prospects)
	if err != nil {
		return err
	}
	// Settle the database: seeding leaves dead tuples and dirty pages whose
	// clean-up (autovacuum, checkpoints) would otherwise land in a round.
	if err := settle(ctx, db); err != nil {
		return err
	}
	floorProc, floorAddr, err := startFloor(ctx, db, agency, serverCPU)
	if err != nil {
		return err
	}
	defer func() { _ = floorProc.Process.Kill(); _ = floorProc.Wait() }()

	fmt.Printf("\nmachine: %d CPUs (%s), %s\n", runtime.NumCPU(), cpuModel(), runtime.Version())
	if loadCPU != "" {
		fmt.Printf("pinning: load generator on CPU %s; Atrium, the floor and their PostgreSQL backends on CPU %s\n", loadCPU, serverCPU)
	} else {
		fmt.Println("pinning: none (one CPU)")
	}
	fmt.Printf("load: %d connections, %s warm-up, %d rounds of %s per server, alternating\n", f.conns, f.warmup, f.rounds, f.duration)
	fmt.Printf("Atrium store: %s; floor: net/http + pgx + encoding/json on the same database\n", f.store)

	for _, route := range strings.Split(f.routes, ",") {
		path := "/api/v1/" + strings.TrimSpace(route) + "?limit=50"
		targets := []target{
			{name: "floor", addr: floorAddr, pid: floorProc.Process.Pid, db: db},
			{name: "atrium", addr: atrium.api, auth: "Bearer " + key, pid: atrium.cmd.Process.Pid, db: db},
		}
		for _, t := range targets {
			if _, err := load(ctx, loadCPU, t, path, f.conns, f.warmup); err != nil {
				return err
			}
		}
		pinBackends(ctx, f.databaseURL, db, serverCPU)
		results := map[string][]loadResult{}
		for round := range f.rounds {
			for _, t := range targets {
				var prof chan error
				if t.name == "atrium" && round == 0 && route == "prospects" {
					prof = make(chan error, 2)
					n := 0
					for kind, file := range map[string]string{"profile": f.profile, "allocs": f.memprofile} {
						if file != "" {
							n++
							go func() { prof <- atrium.profile(ctx, kind, file, f.duration-time.Second) }()
						}
					}
					for ; n < 2; n++ {
						prof <- nil
					}
				}
				r, err := load(ctx, loadCPU, t, path, f.conns, f.duration)
				if err != nil {
					return err
				}
				if prof != nil {
					for range 2 {
						if err := <-prof; err != nil {
							return err
						}
					}
				}
				results[t.name] = append(results[t.name], r)
			}
		}
		report("GET "+path, results)
	}
	if f.profile != "" {
		fmt.Printf("\nCPU profile of Atrium (first prospects round): %s\n", f.profile)
		out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=30", f.profile).CombinedOutput()
		if err != nil {
			fmt.Printf("go tool pprof: %v\n", err)
		}
		fmt.Println(string(out))
	}
	return nil
}

// bindCommon binds the flags every bench command takes.
func bindCommon(fs *flag.FlagSet, f *crmFlags) {
	fs.StringVar(&f.atrium, "atrium", ".bin/atrium", "the atrium binary to measure (make build)")
	fs.StringVar(&f.databaseURL, "database-url", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL server; a scratch database is created there and dropped")
	fs.StringVar(&f.natsURL, "nats-url", envOr("TEST_NATS_URL", "nats://127.0.0.1:4222"), "NATS server for Atrium's events")
	fs.IntVar(&f.conns, "conns", 16, "concurrent connections of the load generator")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "length of each measured round")
	fs.DurationVar(&f.warmup, "warmup", 3*time.Second, "unmeasured load before the rounds, per server and route")
	fs.IntVar(&f.rounds, "rounds", 3, "measured rounds per server and route, alternating floor and Atrium")
}

// env is a bench run's scratch database and running Atrium, with the cores
// the load and the servers are pinned to.
type env struct {
	loadCPU, serverCPU string
	db                 string
	atrium             *atriumProc
	// tmp is a directory for logs and data, removed at tear-down.
	tmp      string
	cleanups []func()
}

// setUp creates a scratch database, migrates it with `atrium migrate` and
// starts `atrium serve` on it.
func setUp(ctx context.Context, f crmFlags) (*env, error) {
	e := &env{}
	if runtime.NumCPU() >= 2 && !f.unpinned {
		e.loadCPU, e.serverCPU = "0", "1"
	}
	tmp, err := os.MkdirTemp("", "atrium-bench-")
	if err != nil {
		return nil, err
	}
	e.tmp = tmp
	e.cleanups = append(e.cleanups, func() { os.RemoveAll(tmp) })
	db, drop, err := scratchDatabase(ctx, f.databaseURL)
	if err != nil {
		e.tearDown()
		return nil, err
	}
	e.db, e.cleanups = db, append(e.cleanups, drop)
	if out, err := exec.CommandContext(ctx, f.atrium, "migrate", "--database-url", db).CombinedOutput(); err != nil {
		e.tearDown()
		return nil, fmt.Errorf("atrium migrate: %w\n%s", err, out)
	}
	if e.atrium, err = startAtrium(ctx, f, db, e.serverCPU, filepath.Join(tmp, "atrium.log")); err != nil {
		e.tearDown()
		return nil, err
	}
	e.cleanups = append(e.cleanups, e.stopAtrium)
	return e, nil
}

// stopAtrium stops the running Atrium, if any.
func (e *env) stopAtrium() {
	if e.atrium != nil {
		e.atrium.stop()
		e.atrium = nil
	}
}

// tearDown undoes setUp, in reverse order.
func (e *env) tearDown() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// target is a server under load: its name in reports, its address and the
// Authorization its requests carry. pid and db, when set, are its process
// and the database whose backends serve it, whose CPU time a round counts
// (cpuPerRequest).
type target struct {
	name, addr, auth string
	// header is one more request header, "Name: value" (a session's
	// Cookie); headers more of them.
	header  string
	headers []string
	pid     int
	db      string
}

func load(ctx context.Context, cpu string, t target, path string, conns int, d time.Duration) (loadResult, error) {
	return loadRoute(ctx, cpu, t, route{method: "GET", path: path}, conns, d)
}

// route is one request the load generator repeats.
type route struct {
	method, path, body string
	// bodyFile and contentType, when set, send that file's bytes with
	// that type (an upload).
	bodyFile, contentType string
}

func (r route) String() string { return r.method + " " + r.path }

func loadRoute(ctx context.Context, cpu string, t target, rt route, conns int, d time.Duration) (loadResult, error) {
	path := rt.path
	self, err := os.Executable()
	if err != nil {
		return loadResult{}, err
	}
	argv := pinned(cpu, self, "load", "--addr", t.addr, "--path", path, "--conns", strconv.Itoa(conns), "--duration", d.String(), "--method", rt.method)
	if rt.body != "" {
		argv = append(argv, "--body", rt.body)
	}
	if rt.bodyFile != "" {
		argv = append(argv, "--body-file", rt.bodyFile, "--content-type", rt.contentType)
	}
	if t.auth != "" {
		argv = append(argv, "--authorization", t.auth)
	}
	if t.header != "" {
		argv = append(argv, "--header", t.header)
	}
	for _, h := range t.headers {
		argv = append(argv, "--header", h)
	}
	used := serverCPU(ctx, t)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	if err != nil {
		return loadResult{}, fmt.Errorf("%s: %w", quoteArgs(argv), err)
	}
	var r loadResult
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("load output %q: %w", out, err)
	}
	if r.Errors > 0 || r.Requests == 0 {
		return r, fmt.Errorf("%s %s: %d requests, %d errors: %s", t.name, path, r.Requests, r.Errors, r.FirstError)
	}
	if used != nil {
		r.CPU = float64(used().Microseconds()) / float64(r.Requests)
	}
	return r, nil
}

// serverCPU starts counting the CPU time t's process and its database's
// backends use, and returns the function that says how much they used
// since; nil when t names no process. Only one server is under load at a
// time, so the backends' time is its own. CPU time per request moves much
// less than requests per second on a machine shared with other work.
func serverCPU(ctx context.Context, t target) func() time.Duration {
	if t.pid == 0 {
		return nil
	}
	pids := []int{t.pid}
	if t.db != "" {
		if conn, err := pgx.Connect(ctx, t.db); err == nil {
			if rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"); err == nil {
				backends, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
				for _, b := range backends {
					pids = append(pids, int(b))
				}
			}
			conn.Close(ctx)
		}
	}
	start := cpuTime(pids)
	return func() time.Duration { return cpuTime(pids) - start }
}

// cpuTime is the user and system time the processes have used so far, from
// /proc (a process that has gone counts nothing).
func cpuTime(pids []int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses:
		// utime and stime are the 12th and 13th.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is Linux's USER_HZ, the unit of /proc's times.
const clockTicks = 100

// settle vacuums and analyzes every table and forces a checkpoint.
func settle(ctx context.Context, db string) error {
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{"VACUUM (ANALYZE)", "CHECKPOINT"} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// peerNames are the servers a report may list, in the order it lists them:
// the floor, Atrium, and the peer Atrium is compared with (bench
// collections).
var peerNames = []string{"floor", "atrium", "pocketbase"}

// ratios are Atrium's ratios of one route to the other servers measured
// beside it (by name), as report prints them.
type ratios map[string]ratio

// ratio is Atrium's requests per second over another server's (the median
// of the per-round ratios), and the other's CPU time per request over
// Atrium's (0 when not measured): above 1, Atrium is faster.
type ratio struct{ rps, cpu float64 }

// report prints each server's rounds and Atrium's ratio to every other
// server measured, and returns those ratios.
func report(label string, results map[string][]loadResult) ratios {
	mean := func(rs []loadResult, f func(loadResult) float64) float64 {
		s := 0.0
		for _, r := range rs {
			s += f(r)
		}
		return s / float64(len(rs))
	}
	fmt.Printf("\n%s\n", label)
	fmt.Printf("  %-10s %10s %9s %9s %10s %12s   %s\n", "server", "req/s", "p50 ms", "p99 ms", "body B", "CPU µs/req", "rounds (req/s)")
	for _, name := range peerNames {
		rs := results[name]
		if len(rs) == 0 {
			continue
		}
		var per []string
		for _, r := range rs {
			per = append(per, fmt.Sprintf("%.0f", r.RPS))
		}
		cpu := "-"
		if c := mean(rs, func(r loadResult) float64 { return r.CPU }); c > 0 {
			cpu = fmt.Sprintf("%.0f", c)
		}
		fmt.Printf("  %-10s %10.0f %9.2f %9.2f %10d %12s   %s\n", name,
			mean(rs, func(r loadResult) float64 { return r.RPS }),
			mean(rs, func(r loadResult) float64 { return r.P50 }),
			mean(rs, func(r loadResult) float64 { return r.P99 }),
			rs[len(rs)-1].BodyBytes, cpu, strings.Join(per, ", "))
	}
	out := ratios{}
	for _, other := range peerNames {
		if other == "atrium" || len(results[other]) == 0 {
			continue
		}
		ofMeans := mean(results["atrium"], func(r loadResult) float64 { return r.RPS }) / mean(results[other], func(r loadResult) float64 { return r.RPS })
		// Each round runs the servers back to back: the ratio within a
		// round is the least disturbed by whatever else the machine is
		// doing.
		var per []float64
		var perText []string
		for i := range results["atrium"] {
			r := results["atrium"][i].RPS / results[other][i].RPS
			per = append(per, r)
			perText = append(perText, fmt.Sprintf("%.2f", r))
		}
		slices.Sort(per)
		r := ratio{rps: per[len(per)/2]}
		fmt.Printf("  ratio (Atrium / %s, req/s): %.2f of the means; median of rounds %.2f (%s)\n",
			other, ofMeans, r.rps, strings.Join(perText, ", "))
		if a, o := mean(results["atrium"], func(r loadResult) float64 { return r.CPU }), mean(results[other], func(r loadResult) float64 { return r.CPU }); a > 0 && o > 0 {
			r.cpu = o / a
			fmt.Printf("  ratio (%s's CPU per request / Atrium's): %.2f\n", other, r.cpu)
		}
		out[other] = r
	}
	return out
}

// scratchDatabase creates an empty database on the server and returns its
// URL and a function that drops it.
func scratchDatabase(ctx context.Context, serverURL string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL at %s: %w", serverURL, err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "atrium_bench_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, serverURL)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return u.String(), drop, nil
}

// pinBackends moves the PostgreSQL backends serving db onto cpu, so that
// the database's work competes with the servers, not the load generator.
func pinBackends(ctx context.Context, serverURL, db, cpu string) {
	if cpu == "" {
		return
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		fmt.Printf("warning: cannot list PostgreSQL backends to pin: %v\n", err)
		return
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	if err != nil {
		fmt.Printf("warning: cannot list PostgreSQL backends to pin: %v\n", err)
		return
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return
	}
	for _, pid := range pids {
		if out, err := exec.CommandContext(ctx, "taskset", "-p", "-c", cpu, strconv.Itoa(int(pid))).CombinedOutput(); err != nil {
			fmt.Printf("warning: taskset PostgreSQL backend %d: %v %s\n", pid, err, out)
		}
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// atriumProc is a running `atrium serve`.
type atriumProc struct {
	cmd        *exec.Cmd
	api, admin string
}

func startAtrium(ctx context.Context, f crmFlags, db, cpu, logPath string) (*atriumProc, error) {
	api, err := freeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{f.atrium, "serve", "--http-addr", api, "--admin-addr", admin, "--admin-token", adminToken,
		"--nats-url", f.natsURL, "--log-format", "json",
		// No load balancer sits in front of the bench, so nothing needs the
		// drain delay: without this flag each stop waited its 5 s default.
		"--drain-delay", "0",
		"--collections-grpc-addr", "127.0.0.1:0", "--crm-grpc-addr", "127.0.0.1:0",
		"--data-grpc-addr", "127.0.0.1:0", "--actions-grpc-addr", "127.0.0.1:0", "--webhooks-grpc-addr", "127.0.0.1:0",
		"--audit-grpc-addr", "127.0.0.1:0"}
	if f.store == "postgres" {
		args = append(args, "--database-url", db)
		// With a database atrium serve needs a directory for the assets'
		// files; a bench that measures them passes its own.
		if !slices.Contains(f.extraArgs, "--data-dir") {
			args = append(args, "--data-dir", filepath.Join(filepath.Dir(logPath), "atrium-data"))
		}
	}
	argv := pinned(cpu, append(args, f.extraArgs...)...)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &atriumProc{cmd: cmd, api: api, admin: admin}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + admin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			b, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("atrium serve not ready after 30s:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *atriumProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// profile fetches a profile of kind (profile: CPU; allocs: allocations)
// covering the next d.
func (p *atriumProc) profile(ctx context.Context, kind, path string, d time.Duration) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", p.admin, kind, int(d.Seconds())), nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s profile: %s %s", kind, resp.Status, b)
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = io.Copy(out, resp.Body)
	return err
}

// adminCall calls Atrium's admin API.
func (p *atriumProc) adminCall(ctx context.Context, method, path string, body any, out any) error {
	return call(ctx, "http://"+p.admin+path, adminToken, method, body, out)
}

// apiCall calls Atrium's public API with key.
func (p *atriumProc) apiCall(ctx context.Context, key, method, path string, body any, out any) error {
	return call(ctx, "http://"+p.api+path, key, method, body, out)
}

// apiClient keeps a connection per concurrent seeding worker.
var apiClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}

func call(ctx context.Context, addr, bearer, method string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, addr, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := apiClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s %s", method, addr, resp.Status, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// seed creates the measured agency (n prospects, n deals), two neighbour
// agencies of n/5 prospects each, and a read key of the measured agency.
func seed(ctx context.Context, p *atriumProc, n int) (agency, key string, err error) {
	var agencies []string
	for i := range 3 {
		var out struct{ Agency struct{ ID string } }
		if err := p.adminCall(ctx, "POST", "/admin/v1/agencies", map[string]any{"name": fmt.Sprint("Bench agency ", i)}, &out); err != nil {
			return "", "", err
		}
		agencies = append(agencies, out.Agency.ID)
	}
	var member struct{ Member struct{ ID string } }
	if err := p.adminCall(ctx, "POST", "/admin/v1/agencies/"+agencies[0]+"/members", map[string]any{"name": "Ana", "email": "ana@bench.example"}, &member); err != nil {
		return "", "", err
	}
	type job struct {
		path string
		body map[string]any
	}
	jobs := make(chan job)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for j := range jobs {
				if err := p.adminCall(ctx, "POST", j.path, j.body, nil); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	stages := []string{"new", "contacted", "qualified", "proposal_sent", "negotiation", "won", "lost"}
	dealStages := []string{"lead", "qualified", "proposal", "negotiation", "won", "lost"}
	for i := range n {
		jobs <- job{"/admin/v1/agencies/" + agencies[0] + "/prospects", map[string]any{
			"business_name": fmt.Sprintf("Prospect %d Bakery & Co", i), "website_url": fmt.Sprintf("https://www.prospect-%d.example/home", i),
			"industry": "restaurants", "health_score": float64(i%100) + 0.5, "lead_score": (i * 7) % 100, "pipeline_stage": stages[i%len(stages)],
		}}
		jobs <- job{"/admin/v1/agencies/" + agencies[0] + "/deals", map[string]any{
			"owner_member_id": member.Member.ID, "title": fmt.Sprintf("Local SEO retainer %d", i), "stage": dealStages[i%len(dealStages)],
			"value": 1000 + float64(i%50)*12.5, "currency": "USD", "expected_close_date": "2027-03-31",
		}}
		if i%5 == 0 {
			for _, other := range agencies[1:] {
				jobs <- job{"/admin/v1/agencies/" + other + "/prospects", map[string]any{
					"business_name": fmt.Sprintf("Neighbour %d", i), "website_url": fmt.Sprintf("https://n%d.example", i),
				}}
			}
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return "", "", err
	default:
	}
	var k struct{ Key struct{ Secret string } }
	if err := p.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "bench", "scopes": []string{"read"}, "agency_id": agencies[0]}, &k); err != nil {
		return "", "", err
	}
	return agencies[0], k.Key.Secret, nil
}

func startFloor(ctx context.Context, db, agency, cpu string) (*exec.Cmd, string, error) {
	return startFloorWith(ctx, cpu, "--database-url", db, "--agency", agency)
}

// startFloorWith starts `bench floor` with args on cpu and returns its
// address.
func startFloorWith(ctx context.Context, cpu string, args ...string) (*exec.Cmd, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	argv := pinned(cpu, append([]string{self, "floor"}, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, "", errors.New("floor server did not start")
	}
	return cmd, strings.TrimSpace(line), nil
}
