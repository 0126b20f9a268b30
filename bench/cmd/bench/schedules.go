package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/bench/floor"
)

// runSchedules measures the scheduler (docs/schedules.md) on PostgreSQL:
// --schedules active schedules of --agencies agencies, all due in the
// same minute, handled by two atrium-actions processes on one database
// (the API and the other services are one atrium serve, whose own
// scheduler is kept out of it: it looks once a day). Each round, every
// schedule's next slot is set to a coming whole minute (in SQL: creating
// or retiming 10,000 schedules through the API for each round would take
// longer than the round); then it counts the runs the slot started per
// schedule (none missing, none twice), the delay from the slot to each
// run's queued row (created_at), the CPU time of the two processes and
// of their PostgreSQL backends per due schedule, and how the slots split
// between the two. The hand-written floor (bench/floor.Scheduler, two
// processes as well) does the same on a copy of the schedules in the
// following minute, round after round.
func runSchedules(ctx context.Context, args []string) error {
	var f crmFlags
	fs := flag.NewFlagSet("bench schedules", flag.ContinueOnError)
	bindCommon(fs, &f)
	// Each round takes two whole minutes at least (Atrium's, then the
	// floor's): two by default.
	_ = fs.Set("rounds", "2")
	fs.Lookup("rounds").DefValue = "2"
	n := fs.Int("schedules", 10000, "active schedules, all due in the same minute")
	agencies := fs.Int("agencies", 100, "agencies the schedules are spread over (each with one client; at most --max-schedules, 1,000, each)")
	actionsBin := fs.String("actions", ".bin/atrium-actions", "the atrium-actions binary the two replicas run (make build)")
	tick := fs.Duration("schedule-tick", 5*time.Second, "--schedule-tick of the replicas, and the floor's")
	timeout := fs.Duration("round-timeout", 3*time.Minute, "longest a round waits for every slot's run after the slot")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *agencies < 1 || *n/(*agencies) > 1000 {
		return fmt.Errorf("--schedules must be positive and at most 1,000 per agency (--agencies %d); got %d", *agencies, *n)
	}
	f.store, f.unpinned = "postgres", true
	secret := make([]byte, 24)
	_, _ = rand.Read(secret)
	crmAddr, err := freeAddr()
	if err != nil {
		return err
	}
	dataAddr, err := freeAddr()
	if err != nil {
		return err
	}
	internal := hex.EncodeToString(secret)
	// atrium serve serves the API the bench seeds through and the CRM and
	// data services the replicas call; its own scheduler looks once a
	// day and its queue has one worker, so that the replicas are the
	// scheduler and executing the runs takes little of the machine.
	f.extraArgs = []string{"--internal-secret", internal, "--crm-grpc-addr", crmAddr, "--data-grpc-addr", dataAddr,
		"--schedule-tick", "24h", "--action-workers", "1"}
	e, err := setUp(ctx, f)
	if err != nil {
		return err
	}
	defer e.tearDown()
	db := e.db
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	// Which process inserted each run: its connection's application_name,
	// a column default the store's INSERT leaves to the database.
	if _, err := conn.Exec(ctx, `ALTER TABLE actions.runs ADD COLUMN bench_origin text DEFAULT current_setting('application_name')`); err != nil {
		return err
	}

	// Seed: agencies with a client and a key, then the schedules through
	// the API, on a cron whose next slot is months away (each round sets
	// the slot it measures).
	fmt.Printf("seeding %d agencies and %d schedules...\n", *agencies, *n)
	began := time.Now()
	tenants := make([]benchTenant, *agencies)
	if err := parallel(ctx, 8, *agencies, func(i int) error {
		t, err := newBenchTenant(ctx, e.atrium, fmt.Sprint("Bench agency ", i))
		tenants[i] = t
		return err
	}); err != nil {
		return err
	}
	if err := parallel(ctx, 16, *n, func(i int) error {
		t := tenants[i%len(tenants)]
		return e.atrium.apiCall(ctx, t.key, "POST", "/api/v1/schedules", map[string]any{
			"action": "generate_blog", "client_id": t.client, "params": map[string]any{"keyword": fmt.Sprint("bench bread ", i)},
			"cron": "0 0 1 1 *", "timezone": "UTC", "description": "bench",
		}, nil)
	}); err != nil {
		return err
	}
	fmt.Printf("seeded in %s\n", time.Since(began).Round(time.Second))
	if _, err := conn.Exec(ctx, floor.FloorSchedulesDDL); err != nil {
		return fmt.Errorf("the floor's tables: %w", err)
	}
	if err := settle(ctx, db); err != nil {
		return err
	}

	// The two replicas of each.
	var atriumPIDs, floorPIDs []int
	atriumApps, floorApps := []string{"replica-a", "replica-b"}, []string{"floor-a", "floor-b"}
	for _, app := range atriumApps {
		p, err := startReplica(ctx, *actionsBin, e, app, *tick, internal, crmAddr, dataAddr, f.natsURL)
		if err != nil {
			return err
		}
		defer stopProc(p)
		atriumPIDs = append(atriumPIDs, p.Process.Pid)
	}
	for _, app := range floorApps {
		cmd, _, err := startFloorWith(ctx, "", "--database-url", withApp(db, app), "--schedules-tick", tick.String())
		if err != nil {
			return err
		}
		defer stopProc(cmd)
		floorPIDs = append(floorPIDs, cmd.Process.Pid)
	}

	fmt.Printf("\nmachine: %d CPUs (%s), %s; commit %s; load average before %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), commitText(ctx), loadAverage())
	defer func() { fmt.Printf("\nload average after: %s\n", loadAverage()) }()
	fmt.Printf("%d active schedules of %d agencies (generate_blog), all due at the same whole minute; two atrium-actions processes (--schedule-tick %s) on one PostgreSQL database,\n", *n, *agencies, *tick)
	fmt.Println("  then the floor's two processes on a copy of them the next minute; not pinned: every process, PostgreSQL and NATS share every core")
	fmt.Println("latency: from the slot to its run's row (queued, created_at); CPU: user+system of the two processes, and of their PostgreSQL backends, from 2 s before the slot to the last run, per due schedule")

	servers := []schedServer{
		{name: "floor", schedules: "bench_floor.schedules", runs: "bench_floor.runs", pids: floorPIDs, apps: floorApps},
		{name: "atrium", schedules: "actions.schedules", runs: "actions.runs", pids: atriumPIDs, apps: atriumApps},
	}
	results := map[string][]schedRound{}
	fmt.Printf("\n  %-6s %5s %6s %8s %5s %7s %8s %8s %8s %9s %10s %10s   %s\n", "server", "round", "runs", "distinct", "dup", "missing", "p50 s", "p99 s", "last s", "key ok", "CPU µs/sch", "DB µs/sch", "split")
	for round := range f.rounds {
		for _, srv := range []schedServer{servers[1], servers[0]} {
			r, err := srv.round(ctx, conn, *n, *timeout)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", srv.name, round+1, err)
			}
			results[srv.name] = append(results[srv.name], r)
			fmt.Printf("  %-6s %5d %6d %8d %5d %7d %8.2f %8.2f %8.2f %9t %10.0f %10.0f   %s\n", srv.name, round+1, r.runs, r.distinct, r.dup, r.missing,
				r.p50, r.p99, r.last, r.keysOK, r.cpu, r.dbCPU, r.split)
			if srv.name == "atrium" {
				if err := endScheduledRuns(ctx, conn); err != nil {
					return err
				}
			}
		}
	}
	fmt.Printf("\nmedians over %d rounds (range)\n", f.rounds)
	med := func(name string, get func(schedRound) float64) spread {
		var v []float64
		for _, r := range results[name] {
			v = append(v, get(r))
		}
		return spreadOf(v)
	}
	for _, name := range []string{"floor", "atrium"} {
		fmt.Printf("  %-6s p50 %s s, p99 %s s, last run %s s after the slot, CPU %s µs and its backends' %s µs per due schedule\n", name,
			med(name, func(r schedRound) float64 { return r.p50 }).text("%.2f"), med(name, func(r schedRound) float64 { return r.p99 }).text("%.2f"),
			med(name, func(r schedRound) float64 { return r.last }).text("%.2f"),
			med(name, func(r schedRound) float64 { return r.cpu }).text("%.0f"), med(name, func(r schedRound) float64 { return r.dbCPU }).text("%.0f"))
	}
	var p99r, lastr, cpur []float64
	for i := range results["atrium"] {
		a, fl := results["atrium"][i], results["floor"][i]
		p99r = append(p99r, a.p99/fl.p99)
		lastr = append(lastr, a.last/fl.last)
		cpur = append(cpur, (a.cpu+a.dbCPU)/(fl.cpu+fl.dbCPU))
	}
	fmt.Printf("  Atrium / floor (above 1: Atrium slower or costlier): p99 %s, last run %s, CPU per due schedule (processes and backends) %s\n",
		spreadOf(p99r).text("%.2f"), spreadOf(lastr).text("%.2f"), spreadOf(cpur).text("%.2f"))
	return nil
}

// parallel calls fn(0..n-1) on workers goroutines and returns the first
// error.
func parallel(ctx context.Context, workers, n int, fn func(i int) error) error {
	jobs := make(chan int)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// startReplica starts an atrium-actions process on the bench's database
// (its connections named app) and waits until it is ready.
func startReplica(ctx context.Context, bin string, e *env, app string, tick time.Duration, secret, crm, data, natsURL string) (*exec.Cmd, error) {
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(e.tmp, app+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "--database-url", withApp(e.db, app), "--nats-url", natsURL,
		"--internal-secret", secret, "--crm-addr", crm, "--data-addr", data, "--grpc-addr", "127.0.0.1:0", "--metrics-addr", metrics,
		"--data-dir", filepath.Join(e.tmp, "atrium-data"), "--schedule-tick", tick.String(), "--action-workers", "1",
		"--log-format", "json", "--drain-delay", "0")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + metrics + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, nil
			}
		}
		if time.Now().After(deadline) {
			stopProc(cmd)
			b, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("%s not ready after 30 s:\n%s", app, b)
		}
		time.Sleep(100 * time.Millisecond) // why sleep: polling a process's readiness endpoint until it answers
	}
}

// withApp is the database URL db with connections named app.
func withApp(db, app string) string {
	u, err := url.Parse(db)
	if err != nil {
		return db
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// stopProc interrupts a process and waits for it, killing it after 15 s.
func stopProc(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// endScheduledRuns cancels the queued runs the last round started and
// waits for the running ones to end, so that the next round's slots are
// not skipped as "the previous run is still going" (the bench measures
// starting runs; their single worker per process executes few of them).
func endScheduledRuns(ctx context.Context, conn *pgx.Conn) error {
	for range 240 {
		// A run a worker is claiming is locked: skipped, not waited for
		// (one UPDATE of them all queued behind the claims and the
		// replicas' writes behind it).
		if _, err := conn.Exec(ctx, `UPDATE actions.runs SET status = 'canceled', finished_at = now() WHERE id IN (
				SELECT id FROM actions.runs WHERE status = 'queued' AND schedule_id IS NOT NULL LIMIT 1000 FOR UPDATE SKIP LOCKED)`); err != nil {
			return err
		}
		var left int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM actions.runs WHERE status IN ('queued', 'pending') AND schedule_id IS NOT NULL`).Scan(&left); err != nil {
			return err
		}
		if left == 0 {
			return nil
		}
		time.Sleep(500 * time.Millisecond) // why sleep: polling the database until the runs in flight have ended
	}
	return fmt.Errorf("runs of the schedules still queued or running two minutes after the round")
}

// schedServer is Atrium or the floor as the bench measures it: its
// tables, its processes and their connections' application_name.
type schedServer struct {
	name, schedules, runs string
	pids                  []int
	apps                  []string
}

type schedRound struct {
	runs, distinct, dup, missing int
	p50, p99, last               float64
	keysOK                       bool
	cpu, dbCPU                   float64
	split                        string
}

// round sets every schedule's slot to the next whole minute at least
// 15 s away, waits for the runs, and measures them.
func (s schedServer) round(ctx context.Context, conn *pgx.Conn, n int, timeout time.Duration) (schedRound, error) {
	slot := time.Now().Add(15 * time.Second).Truncate(time.Minute).Add(time.Minute)
	if _, err := conn.Exec(ctx, `UPDATE `+s.schedules+` SET next_run_at = $1, claimed_until = NULL`, slot); err != nil {
		return schedRound{}, err
	}
	select {
	case <-ctx.Done():
		return schedRound{}, ctx.Err()
	case <-time.After(time.Until(slot.Add(-2 * time.Second))):
	}
	cpu0 := cpuTime(s.pids)
	db0, err := backendTimes(ctx, conn, s.apps)
	if err != nil {
		return schedRound{}, err
	}
	var r schedRound
	deadline := slot.Add(timeout)
	for {
		if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT schedule_id) FROM `+s.runs+` WHERE schedule_id IS NOT NULL AND created_at >= $1`,
			slot.Add(-time.Second)).Scan(&r.runs, &r.distinct); err != nil {
			return r, err
		}
		if r.distinct >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // why sleep: polling the database for the slot's runs
	}
	r.cpu = float64((cpuTime(s.pids) - cpu0).Microseconds()) / float64(n)
	db1, err := backendTimes(ctx, conn, s.apps)
	if err != nil {
		return r, err
	}
	var dbUsed time.Duration
	for pid, t := range db1 {
		dbUsed += t - db0[pid] // a backend opened during the round counts from 0
	}
	r.dbCPU = float64(dbUsed.Microseconds()) / float64(n)
	// Let the last transactions settle before reading the figures.
	time.Sleep(time.Second) // why sleep: a replica may still be committing its last batch; the duplicates are read after it
	var keys int
	err = conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT schedule_id),
			coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM created_at - $1::timestamptz)), 0),
			coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM created_at - $1::timestamptz)), 0),
			coalesce(max(extract(epoch FROM created_at - $1::timestamptz)), 0)::float8,
			count(*) FILTER (WHERE idempotency_key = 'schedule:' || schedule_id || ':' || $2::text)
		FROM `+s.runs+` WHERE schedule_id IS NOT NULL AND created_at >= $1::timestamptz - interval '1 second'`, slot, fmt.Sprint(slot.Unix())).
		Scan(&r.runs, &r.distinct, &r.p50, &r.p99, &r.last, &keys)
	if err != nil {
		return r, err
	}
	r.dup, r.missing, r.keysOK = r.runs-r.distinct, n-r.distinct, keys == r.runs
	rows, err := conn.Query(ctx, `SELECT coalesce(bench_origin, ''), count(*) FROM `+s.runs+` WHERE schedule_id IS NOT NULL AND created_at >= $1 GROUP BY 1 ORDER BY 1`, slot.Add(-time.Second))
	if err != nil {
		return r, err
	}
	var parts []string
	for rows.Next() {
		var app string
		var c int
		if err := rows.Scan(&app, &c); err != nil {
			rows.Close()
			return r, err
		}
		parts = append(parts, fmt.Sprintf("%s %d", app, c))
	}
	rows.Close()
	r.split = strings.Join(parts, ", ")
	return r, rows.Err()
}

// backendTimes are the CPU times so far of the PostgreSQL backends whose
// connections carry one of apps, by pid.
func backendTimes(ctx context.Context, conn *pgx.Conn, apps []string) (map[int]time.Duration, error) {
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = ANY($1)`, apps)
	if err != nil {
		return nil, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	out := map[int]time.Duration{}
	for _, p := range pids {
		out[int(p)] = cpuTime([]int{int(p)})
	}
	return out, nil
}
