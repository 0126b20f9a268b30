package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// authFlags are bench auth's flags.
type authFlags struct {
	crmFlags
	loginConns int
	wrongConns int
}

// benchPassword is the bench owner's password (12 characters or more, not
// a common one).
const benchPassword = "bench-owner-passphrase-7Q"

// runAuth measures what people cost the API, on PostgreSQL:
//
//  1. GET /api/v1/prospects?limit=50 with the session cookie against the
//     same request with a cached API key (and the floor), alternating
//     rounds: a session must cost no more than a key (within 10%);
//  2. POST /api/v1/sessions (argon2id) at 8 concurrent logins, Atrium
//     on every core: p50, p99 (target p99 < 100 ms);
//  3. the key's GET p99 quiet and while 100 clients send wrong passwords
//     without pause, alternating rounds (target: within 10%).
func runAuth(ctx context.Context, args []string) error {
	var f authFlags
	fs := flag.NewFlagSet("bench auth", flag.ContinueOnError)
	bindCommon(fs, &f.crmFlags)
	fs.IntVar(&f.loginConns, "login-conns", 8, "concurrent logins in the login round")
	fs.IntVar(&f.wrongConns, "wrong-conns", 100, "clients sending wrong passwords in the attacked rounds")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of Atrium during its first login round to this file")
	var serveFlags multiFlag
	fs.Var(&serveFlags, "serve-flag", "a flag for atrium serve (repeatable), e.g. --serve-flag=--login-limit-per-email=0")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.store = "postgres"
	f.extraArgs = serveFlags
	env, err := setUp(ctx, f.crmFlags)
	if err != nil {
		return err
	}
	defer env.tearDown()
	loadCPU, serverCPU, db, atrium := env.loadCPU, env.serverCPU, env.db, env.atrium
	fmt.Println("seeding 1,000 prospects and an owner who signs in ...")
	agency, key, err := seed(ctx, atrium, 1000)
	if err != nil {
		return err
	}
	email := "owner@bench.example"
	cookie, err := signUpOwner(ctx, atrium, agency, email)
	if err != nil {
		return err
	}
	if err := settle(ctx, db); err != nil {
		return err
	}
	floorProc, floorAddr, err := startFloor(ctx, db, agency, serverCPU)
	if err != nil {
		return err
	}
	defer func() { _ = floorProc.Process.Kill(); _ = floorProc.Wait() }()

	fmt.Printf("\nmachine: %d CPUs (%s), %s; load average before: %s; commit %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), loadAverage(), commitText(ctx))
	fmt.Printf("load: %d connections, %s warm-up, %d rounds of %s per server, alternating\n", f.conns, f.warmup, f.rounds, f.duration)

	// 1. A session against a key.
	path := "/api/v1/prospects?limit=50"
	targets := []target{
		{name: "floor", addr: floorAddr, pid: floorProc.Process.Pid, db: db},
		{name: "key", addr: atrium.api, auth: "Bearer " + key, pid: atrium.cmd.Process.Pid, db: db},
		{name: "session", addr: atrium.api, header: "Cookie: " + cookie, pid: atrium.cmd.Process.Pid, db: db},
	}
	for _, t := range targets {
		if _, err := load(ctx, loadCPU, t, path, f.conns, f.warmup); err != nil {
			return err
		}
	}
	pinBackends(ctx, f.databaseURL, db, serverCPU)
	results := map[string][]loadResult{}
	for range f.rounds {
		for _, t := range targets {
			r, err := load(ctx, loadCPU, t, path, f.conns, f.duration)
			if err != nil {
				return err
			}
			results[t.name] = append(results[t.name], r)
		}
	}
	fmt.Printf("\n1. GET %s: a session cookie against a cached API key\n", path)
	printRounds(results, "floor", "key", "session")
	var perRound, p99Round []float64
	for i := range results["key"] {
		perRound = append(perRound, results["session"][i].RPS/results["key"][i].RPS)
		p99Round = append(p99Round, results["session"][i].P99/results["key"][i].P99)
	}
	fmt.Printf("  session / key, req/s: %s (target ≥ 0.90); p99: %s\n", spreadOf(perRound).text("%.2f"), spreadOf(p99Round).text("%.2f"))
	var ofFloor []float64
	for i := range results["key"] {
		ofFloor = append(ofFloor, results["session"][i].RPS/results["floor"][i].RPS)
	}
	fmt.Printf("  session / floor (key), req/s: %s\n", spreadOf(ofFloor).text("%.2f"))

	// 2. Logins, on Atrium restarted on every core: a sign-in's latency
	// is what a person sees of the whole machine, and argon2id's hashes
	// are the cores' work (the load generator's 8 connections mostly
	// wait).
	env.stopAtrium()
	if env.atrium, err = startAtrium(ctx, f.crmFlags, db, "", filepath.Join(env.tmp, "atrium-logins.log")); err != nil {
		return err
	}
	atrium = env.atrium
	login := route{method: "POST", path: "/api/v1/sessions", body: fmt.Sprintf(`{"email":%q,"password":%q}`, email, benchPassword)}
	fmt.Printf("\n2. POST /api/v1/sessions (argon2id) at %d concurrent logins, %d rounds of %s (Atrium on every core)\n", f.loginConns, f.rounds, f.duration)
	var loginP99 []float64
	for round := range f.rounds {
		prof := make(chan error, 1)
		if round == 0 && f.profile != "" {
			go func() { prof <- atrium.profile(ctx, "profile", f.profile, f.duration-time.Second) }()
		} else {
			prof <- nil
		}
		r, err := loadRoute(ctx, loadCPU, target{name: "atrium", addr: atrium.api, pid: atrium.cmd.Process.Pid, db: db}, login, f.loginConns, f.duration)
		if err != nil {
			return fmt.Errorf("logins (raise the login limits with --serve-flag): %w", err)
		}
		if err := <-prof; err != nil {
			return err
		}
		fmt.Printf("  round %d: %.0f logins/s, p50 %.1f ms, p99 %.1f ms\n", round+1, r.RPS, r.P50, r.P99)
		loginP99 = append(loginP99, r.P99)
	}
	fmt.Printf("  login p99: %s ms (target < 100)\n", spreadOf(loginP99).text("%.1f"))

	// 3. Wrong passwords beside the API, on Atrium as it ships: the
	// sign-in limits are its defaults, whatever --serve-flag lifted for
	// the logins above.
	env.stopAtrium()
	shipped := f.crmFlags
	shipped.extraArgs = nil
	if env.atrium, err = startAtrium(ctx, shipped, db, serverCPU, filepath.Join(env.tmp, "atrium-shipped.log")); err != nil {
		return err
	}
	atrium = env.atrium
	fmt.Printf("\n3. GET %s with a key, quiet and while %d clients send wrong passwords (Atrium restarted with its default sign-in limits)\n", path, f.wrongConns)
	keyTarget := target{name: "key", addr: atrium.api, auth: "Bearer " + key, pid: atrium.cmd.Process.Pid, db: db}
	if _, err := load(ctx, loadCPU, keyTarget, path, f.conns, f.warmup); err != nil {
		return err
	}
	var quiet, attacked []loadResult
	var answers []map[int]int64
	for range f.rounds {
		q, err := load(ctx, loadCPU, keyTarget, path, f.conns, f.duration)
		if err != nil {
			return err
		}
		quiet = append(quiet, q)
		stop, counts := wrongPasswords(ctx, atrium.api, f.wrongConns)
		a, err := load(ctx, loadCPU, keyTarget, path, f.conns, f.duration)
		stop()
		if err != nil {
			return err
		}
		attacked = append(attacked, a)
		answers = append(answers, counts())
	}
	var slow []float64
	for i := range quiet {
		fmt.Printf("  round %d: quiet %.0f req/s p99 %.2f ms; attacked %.0f req/s p99 %.2f ms; the wrong passwords' answers: %s\n",
			i+1, quiet[i].RPS, quiet[i].P99, attacked[i].RPS, attacked[i].P99, statusText(answers[i]))
		slow = append(slow, attacked[i].P99/quiet[i].P99)
	}
	fmt.Printf("  p99 attacked / quiet: %s (target ≤ 1.10)\n", spreadOf(slow).text("%.2f"))
	fmt.Printf("\nload average after: %s\n", loadAverage())
	return nil
}

// signUpOwner invites an owner through the admin API, accepts the
// invitation with benchPassword and answers the session cookie.
func signUpOwner(ctx context.Context, p *atriumProc, agency, email string) (string, error) {
	var out struct {
		Invitation struct{ Token string }
	}
	if err := p.adminCall(ctx, "POST", "/admin/v1/agencies/"+agency+"/members", map[string]any{"name": "Owner", "email": email, "role": "owner"}, &out); err != nil {
		return "", err
	}
	if out.Invitation.Token == "" {
		return "", fmt.Errorf("the admin API answered no invitation for a member with a role")
	}
	body, _ := json.Marshal(map[string]string{"password": benchPassword, "name": "Owner"})
	req, err := http.NewRequestWithContext(ctx, "POST", "http://"+p.api+"/api/v1/invitations/"+out.Invitation.Token+"/accept", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("accepting the invitation: %d %s", resp.StatusCode, b)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "atrium_session" {
			return c.Name + "=" + c.Value, nil
		}
	}
	return "", fmt.Errorf("accepting the invitation set no atrium_session cookie")
}

// wrongPasswords starts n clients sending wrong passwords for existing and
// unknown emails without pause, each until it is answered 429; stop ends
// them, counts says what they were answered (status → count).
func wrongPasswords(ctx context.Context, api string, n int) (stop func(), counts func() map[int]int64) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	got := map[int]int64{}
	var wg sync.WaitGroup
	var seq atomic.Int64
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	for i := range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				email := "owner@bench.example"
				if i%2 == 1 {
					email = fmt.Sprintf("nobody-%d@bench.example", seq.Add(1))
				}
				body := fmt.Sprintf(`{"email":%q,"password":"wrong-password-%d"}`, email, i)
				req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+api+"/api/v1/sessions", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				got[resp.StatusCode]++
				mu.Unlock()
				if resp.StatusCode == http.StatusTooManyRequests {
					// Told to come back later (Retry-After is minutes):
					// this client's wrong passwords are over for the
					// round. One that ignored it would be a flood of
					// requests, which the per-key and in-flight limits
					// judge, not a guess at passwords.
					<-ctx.Done()
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }, func() map[int]int64 {
		mu.Lock()
		defer mu.Unlock()
		out := map[int]int64{}
		for k, v := range got {
			out[k] = v
		}
		return out
	}
}

func statusText(m map[int]int64) string {
	var codes []int
	for c := range m {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", m[c], c))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// printRounds prints each named server's mean req/s, p50, p99 and rounds.
func printRounds(results map[string][]loadResult, names ...string) {
	fmt.Printf("  %-10s %10s %9s %9s   %s\n", "server", "req/s", "p50 ms", "p99 ms", "rounds (req/s)")
	for _, name := range names {
		rs := results[name]
		if len(rs) == 0 {
			continue
		}
		var rps, p50, p99 float64
		var per []string
		for _, r := range rs {
			rps += r.RPS / float64(len(rs))
			p50 += r.P50 / float64(len(rs))
			p99 += r.P99 / float64(len(rs))
			per = append(per, fmt.Sprintf("%.0f", r.RPS))
		}
		fmt.Printf("  %-10s %10.0f %9.2f %9.2f   %s\n", name, rps, p50, p99, strings.Join(per, ", "))
	}
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
