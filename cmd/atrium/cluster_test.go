package main

// The cluster deployment, tested as it runs: the gateway and the five
// services as five separate processes built from their own binaries,
// configured only by flags and ATRIUM_* variables, talking gRPC over
// loopback, sharing one PostgreSQL database (each migrating its own schema)
// and the local NATS server.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/objstore/objstoretest"
	"github.com/atrium-hq/atrium/platform/pgtest"
)

// binaryPackages are the binaries `make build` ships.
var binaryPackages = []string{
	"github.com/atrium-hq/atrium/cmd/atrium",
	"github.com/atrium-hq/atrium/gateway/cmd/atrium-gateway",
	"github.com/atrium-hq/atrium/services/collections/cmd/atrium-collections",
	"github.com/atrium-hq/atrium/services/crm/cmd/atrium-crm",
	"github.com/atrium-hq/atrium/services/data/cmd/atrium-data",
	"github.com/atrium-hq/atrium/services/actions/cmd/atrium-actions",
	"github.com/atrium-hq/atrium/services/webhooks/cmd/atrium-webhooks",
	"github.com/atrium-hq/atrium/services/audit/cmd/atrium-audit",
}

var built struct {
	once sync.Once
	dir  string
	err  error
}

// binaries builds every binary once per run of this test binary, into a
// directory TestMain removes, and returns that directory.
//
// They are built as this test binary was, with -race or without, so that
// the packages they share with it are compiled once, not twice (on a cold
// build cache, twice is minutes more of make test); and a data race in one
// of the processes makes it exit 66 instead of 0, which the tests report.
// The symbol table and DWARF are left out (-s -w): nothing here reads
// them, and linking goes faster without them. Stack traces and race
// reports still name functions and lines.
func binaries(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			built.err = fmt.Errorf("the go command is needed to build the binaries under test: %w", err)
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "atrium-bin-"); built.err != nil {
			return
		}
		args := []string{"build", "-ldflags=-s -w", "-o", built.dir + string(filepath.Separator)}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.Command(goCmd, append(args, binaryPackages...)...).CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

func removeBinaries() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// Settings of every process of the test cluster. The drain delay is short
// so that stopping a process does not dominate the test's run time.
const (
	clusterShutdownTimeout = 5 * time.Second
	clusterDrainDelay      = time.Second
)

// process is one running binary of the cluster.
type process struct {
	name string // collections, crm, data, actions, webhooks, audit, gateway
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
	err  error // the exit, once done is closed
}

// cluster is the seven components' processes (two of webhooks) and what
// they share.
type cluster struct {
	bins string
	env  []string
	db   string
	// procs are every process started, restarts included, for the logs.
	mu    sync.Mutex
	procs []*process
	// addrs are the gRPC addresses of the services, by name.
	addrs map[string]string
	stack *stack
}

// startCluster builds the binaries and starts the services one by one,
// each on a free port it picks itself (reported in its log), then the
// gateway. Each service applies its own migrations (--migrate) to the
// empty database; the test checks after each start that the tables it
// created are all in its own schema. actionsFlags go to atrium-actions,
// gatewayFlags to atrium-gateway.
func startCluster(t *testing.T, actionsFlags, gatewayFlags []string) *cluster {
	t.Helper()
	c := &cluster{bins: binaries(t), addrs: map[string]string{}}
	c.db = pgtest.NewDatabase(t, "cluster", func(context.Context, string) error { return nil })
	natsURL := natstest.URL(t)
	c.env = clusterEnv(t, c.db, natsURL)
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, p := range c.procs {
			select {
			case <-p.done:
			default:
				_ = p.cmd.Process.Kill()
				<-p.done
			}
			if t.Failed() {
				t.Logf("last lines of atrium-%s's log:\n%s", p.name, p.tail(40))
			}
		}
	})

	// The gateway's public address is chosen now: the collections and
	// actions services write it into the URLs of assets and media.
	publicAddr := freeAddr(t)
	// The files are in a bucket of the local S3-compatible server, as a
	// cluster keeps them: no process shares a directory with another.
	bucket := objstoretest.S3(t)
	c.env = append(c.env, "ATRIUM_PUBLIC_URL=http://"+publicAddr,
		"ATRIUM_S3_ENDPOINT="+bucket.Endpoint, "ATRIUM_S3_BUCKET="+bucket.Bucket, "ATRIUM_S3_REGION="+bucket.Region)
	for k, v := range bucket.Env() {
		c.env = append(c.env, k+"="+v)
	}
	tables := c.tables(t)
	crmAddr := freeAddr(t)
	// Each service's upstreams are started before it, so their addresses
	// are known when its flags are written (but the CRM's, chosen here).
	for _, svc := range []struct {
		name string
		args func() []string
	}{
		// Collections and the CRM call each other: the CRM's address is
		// chosen before either starts (the later --grpc-addr wins).
		{"collections", func() []string { return []string{"--crm-addr=" + crmAddr} }},
		{"crm", func() []string {
			return []string{"--collections-addr=" + c.addrs["collections"], "--grpc-addr=" + crmAddr}
		}},
		{"data", func() []string { return []string{"--crm-addr=" + c.addrs["crm"]} }},
		{"actions", func() []string {
			return append([]string{"--crm-addr=" + c.addrs["crm"], "--data-addr=" + c.addrs["data"], "--collections-addr=" + c.addrs["collections"]}, actionsFlags...)
		}},
		// The suite's receivers are on loopback.
		{"webhooks", func() []string { return []string{"--crm-addr=" + c.addrs["crm"], "--allow-private-fetch"} }},
		{"audit", func() []string { return []string{"--collections-addr=" + c.addrs["collections"]} }},
	} {
		p := c.start(t, svc.name, append([]string{"--grpc-addr=127.0.0.1:0"}, svc.args()...)...)
		c.addrs[svc.name] = p.waitLog(t, "serving gRPC")["addr"].(string)
		before := tables
		tables = c.tables(t)
		var created []string
		for _, tbl := range tables {
			if !slices.Contains(before, tbl) {
				created = append(created, tbl)
			}
		}
		if len(created) == 0 {
			t.Fatalf("atrium-%s --migrate created no table", svc.name)
		}
		for _, tbl := range before {
			if !slices.Contains(tables, tbl) {
				t.Fatalf("atrium-%s --migrate dropped %s", svc.name, tbl)
			}
		}
		for _, tbl := range created {
			if !strings.HasPrefix(tbl, svc.name+".") {
				t.Fatalf("atrium-%s --migrate created %s, outside its own schema %q (it created %v)", svc.name, tbl, svc.name, created)
			}
		}
	}
	// A second replica of the webhooks service shares its deliveries and
	// its consumers: the suite's receivers get each delivery once all the
	// same (WebhooksEveryFamily checks every webhook-id arrives once).
	second := c.start(t, "webhooks", "--grpc-addr=127.0.0.1:0", "--crm-addr="+c.addrs["crm"], "--allow-private-fetch")
	second.waitLog(t, "serving gRPC")
	gw := c.start(t, "gateway", append([]string{
		"--http-addr=" + publicAddr, "--admin-addr=127.0.0.1:0",
		"--collections-addr=" + c.addrs["collections"], "--crm-addr=" + c.addrs["crm"],
		"--data-addr=" + c.addrs["data"], "--actions-addr=" + c.addrs["actions"], "--webhooks-addr=" + c.addrs["webhooks"],
		"--audit-addr=" + c.addrs["audit"],
	}, gatewayFlags...)...)
	listening := gw.waitLog(t, "gateway listening")
	c.stack = &stack{
		api: "http://" + listening["public"].(string), admin: "http://" + listening["admin"].(string),
		natsURL: natsURL, dataAddr: c.addrs["data"], auditAddr: c.addrs["audit"], logs: &syncBuffer{},
	}
	c.waitReady(t)
	return c
}

// start runs atrium-<name> with args and the cluster's environment.
func (c *cluster) start(t *testing.T, name string, args ...string) *process {
	t.Helper()
	p := &process{name: name, logs: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(c.bins, "atrium-"+name), args...)
	p.cmd.Env = slices.Clone(c.env)
	if name == "gateway" {
		// Every test of the suite signs people in from this one address:
		// its limit is lifted (the tests of the limit start their own).
		p.cmd.Env = append(p.cmd.Env, "ATRIUM_ADMIN_TOKEN="+testAdminToken, "ATRIUM_LOGIN_ATTEMPTS_PER_ADDRESS=100000")
	}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start atrium-%s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p
}

// running are the processes still running.
func (c *cluster) running() []*process {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*process
	for _, p := range c.procs {
		select {
		case <-p.done:
		default:
			out = append(out, p)
		}
	}
	return out
}

// proc is the latest process started under name that is still running.
func (c *cluster) proc(name string) *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.procs) - 1; i >= 0; i-- {
		if p := c.procs[i]; p.name == name {
			select {
			case <-p.done:
				continue
			default:
				return p
			}
		}
	}
	return nil
}

// strictActions starts a second atrium-actions and atrium-webhooks as a
// deployment runs them, without the suite's --allow-private-fetch (the
// suite's world is on loopback), sharing the other services, behind a
// gateway of its own; all three stop when the test ends. It returns that
// gateway's stack.
func (c *cluster) strictActions(t *testing.T) *stack {
	t.Helper()
	actions := c.start(t, "actions", "--grpc-addr=127.0.0.1:0", "--crm-addr="+c.addrs["crm"], "--data-addr="+c.addrs["data"], "--collections-addr="+c.addrs["collections"])
	addr := actions.waitLog(t, "serving gRPC")["addr"].(string)
	hooks := c.start(t, "webhooks", "--grpc-addr=127.0.0.1:0", "--crm-addr="+c.addrs["crm"])
	hooksAddr := hooks.waitLog(t, "serving gRPC")["addr"].(string)
	gw := c.start(t, "gateway", "--http-addr=127.0.0.1:0", "--admin-addr=127.0.0.1:0",
		"--collections-addr="+c.addrs["collections"], "--crm-addr="+c.addrs["crm"],
		"--data-addr="+c.addrs["data"], "--actions-addr="+addr, "--webhooks-addr="+hooksAddr, "--audit-addr="+c.addrs["audit"])
	listening := gw.waitLog(t, "gateway listening")
	t.Cleanup(func() {
		gw.stop(t)
		hooks.stop(t)
		actions.stop(t)
	})
	return &stack{
		api: "http://" + listening["public"].(string), admin: "http://" + listening["admin"].(string),
		natsURL: c.stack.natsURL, dataAddr: c.addrs["data"], logs: &syncBuffer{},
	}
}

// waitReady waits, for a bounded time, until every service reports SERVING
// on gRPC health's Watch stream and the gateway's /healthz shows it can
// use every one.
func (c *cluster) waitReady(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for name, addr := range c.addrs {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		watch, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{})
		for err == nil {
			var resp *healthpb.HealthCheckResponse
			if resp, err = watch.Recv(); resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
				break
			}
		}
		conn.Close()
		if err != nil {
			t.Fatalf("atrium-%s at %s is not SERVING: %v", name, addr, err)
		}
	}
	for {
		r := call(t, "GET", c.stack.admin+"/healthz", "", nil)
		if r.status == http.StatusOK && allServing(r) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the gateway's /healthz is still %s", r)
		}
		time.Sleep(20 * time.Millisecond) // why sleep: polls /healthz, which has no push form
	}
}

// allServing reports whether a gateway's /healthz shows every service
// SERVING.
func allServing(r response) bool {
	deps, _ := r.json["dependencies"].(map[string]any)
	for _, name := range []string{"collections", "crm", "data", "actions", "webhooks", "audit"} {
		if deps[name] != "SERVING" {
			return false
		}
	}
	return true
}

// dependency is a service's state in a gateway's /healthz.
func dependency(t *testing.T, admin, service string) string {
	t.Helper()
	r := call(t, "GET", admin+"/healthz", "", nil)
	wantStatus(t, r, http.StatusOK)
	deps, _ := r.json["dependencies"].(map[string]any)
	s, _ := deps[service].(string)
	return s
}

// tables lists the tables of the database as schema.table.
func (c *cluster) tables(t *testing.T) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	rows, err := conn.Query(t.Context(), `SELECT table_schema || '.' || table_name FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// waitLog waits for the process's first JSON log line whose msg is msg and
// returns it; it fails if the process exits first.
func (p *process) waitLog(t *testing.T, msg string) map[string]any {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		wrote := p.logs.next()
		sc := bufio.NewScanner(strings.NewReader(p.logs.String()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
				return rec
			}
		}
		select {
		case <-wrote:
		case <-p.done:
			t.Fatalf("atrium-%s exited (%v) before logging %q:\n%s", p.name, p.err, msg, p.tail(40))
		case <-deadline:
			t.Fatalf("atrium-%s did not log %q within 30s:\n%s", p.name, msg, p.tail(40))
		}
	}
}

// stop sends SIGTERM and reports an error unless the process exits 0
// within its drain delay and shutdown timeout (plus slack for a loaded
// machine); a process still running then is killed.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM to atrium-%s: %v", p.name, err)
		return
	}
	bound := clusterDrainDelay + clusterShutdownTimeout + 10*time.Second
	select {
	case <-p.done:
	case <-time.After(bound):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("atrium-%s was still running %s after SIGTERM:\n%s", p.name, bound, p.tail(40))
		return
	}
	if p.err != nil {
		t.Errorf("atrium-%s exited with %v after SIGTERM, want exit status 0:\n%s", p.name, p.err, p.tail(40))
	}
}

// tail is the last n lines of the process's output.
func (p *process) tail(n int) string {
	lines := strings.Split(strings.TrimRight(p.logs.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freeAddr is a loopback address no listener holds now.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

// TestClusterOfSeparateProcesses runs the deployment the Helm chart
// installs. Starting it checks that each service migrates only its own
// schema and that every service reports SERVING and the gateway ready.
// Then the whole end-to-end suite (suiteTests) runs through the gateway
// over HTTP, as against `atrium serve`: admin provisioning, the CRM lists,
// the collections routes, the assets (uploaded through the gateway, kept
// in a bucket of the local S3-compatible server, served by the gateway
// from there), the data read (filters, order, cursor pages, the
// bulk load over gRPC), every action against a local site (credits and
// their headers, records read back through the data read), the completion
// events on NATS, and key revocation reaching the gateway through NATS.
// A second atrium-actions without --allow-private-fetch, behind a gateway
// of its own, refuses every spelling of a private address in a URL to
// fetch when the request is made.
// With the data service stopped, /healthz names it, /readyz stays 200 and
// the data read is 503 while the other interfaces keep working;
// restarted, it recovers.
// The webhooks service runs as two replicas sharing the deliveries and the
// stream consumers: each delivery reaches the suite's receivers once.
// A second atrium-actions on the same database shares the schedules: each
// slot starts one run, none missing, also after it is killed
// (cluster_schedules_test.go).
// Every process then exits 0 on SIGTERM.
func TestClusterOfSeparateProcesses(t *testing.T) {
	w := newActionWorld(t)
	// The gateway keeps key lookups for a minute: only the revocation event
	// published by atrium-crm can make a revocation prompt.
	c := startCluster(t, w.flags(), []string{"--key-cache-ttl=1m"})
	s := c.stack

	t.Run("Suite", func(t *testing.T) {
		for _, tt := range suiteTests(w) {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				tt.fn(t, s)
			})
		}
		t.Run("RevocationIsPrompt", func(t *testing.T) {
			t.Parallel()
			testRevocationIsPrompt(t, s)
		})
	})

	t.Run("PrivateAddresses", func(t *testing.T) {
		strict := c.strictActions(t)
		testActionsPrivateAddresses(t, strict)
		testWebhooksPrivateAddresses(t, strict)
	})

	t.Run("SchedulesOnTwoReplicas", func(t *testing.T) {
		testSchedulesOnTwoReplicas(t, c, w.flags())
	})

	t.Run("ReadinessFollowsTheDataService", func(t *testing.T) {
		tn := s.newTenant(t)
		client := s.newClient(t, tn, true)
		s.loadRows(t, client, "keywords", map[string]any{"keyword": "rye", "position": 4, "status": "active"})
		read := params("resource", "keywords", "client_id", client)
		wantStatus(t, s.read(t, tn.read, read), http.StatusOK)

		c.proc("data").stop(t)
		var state string
		eventually(t, 15*time.Second, func() bool {
			state = dependency(t, s.admin, "data")
			return state != "SERVING"
		})
		if !strings.Contains(state, "the data service") {
			t.Fatalf("/healthz with atrium-data stopped shows data as %q, want a cause naming the data service", state)
		}
		// The gateway still serves everything else: it stays in rotation.
		wantStatus(t, call(t, "GET", s.admin+"/readyz", "", nil), http.StatusOK)
		down := s.read(t, tn.read, read)
		wantError(t, down, http.StatusServiceUnavailable, "retry")
		if down.header.Get("Retry-After") == "" {
			t.Fatalf("data read with atrium-data stopped lacks Retry-After: %v", down.header)
		}
		// The other interfaces do not depend on the data service.
		s.newProspect(t, tn, "Still Serving")
		if n := len(s.list(t, "/api/v1/prospects", tn.read)); n != 1 {
			t.Fatalf("prospects with atrium-data stopped = %d, want 1", n)
		}

		restarted := c.start(t, "data", "--grpc-addr="+c.addrs["data"], "--crm-addr="+c.addrs["crm"])
		restarted.waitLog(t, "serving gRPC")
		eventually(t, 15*time.Second, func() bool {
			return dependency(t, s.admin, "data") == "SERVING"
		})
		r := s.read(t, tn.read, read)
		wantStatus(t, r, http.StatusOK)
		if rows := r.json["data"].([]any); len(rows) != 1 || rows[0].(map[string]any)["keyword"] != "rye" {
			t.Fatalf("data read after the restart = %s, want the row loaded before it", r)
		}
	})

	// Stop everything at once, as a rollout or a node drain does.
	var wg sync.WaitGroup
	for _, p := range c.running() {
		wg.Go(func() { p.stop(t) })
	}
	wg.Wait()
}

// clusterEnv is the environment of every process of a separate-process
// deployment on database db and the NATS servers natsURL (one, or a list),
// plus extra: configuration comes from the environment, as a container
// platform gives it, and from flags; none of the test process's ATRIUM_*
// variables leak in. A variable for a setting a binary lacks is ignored.
func clusterEnv(t *testing.T, db, natsURL string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ATRIUM_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"ATRIUM_INTERNAL_SECRET="+testInternalSecret,
		"ATRIUM_DATABASE_URL="+db,
		"ATRIUM_NATS_URL="+natsURL,
		"ATRIUM_MIGRATE=true",
		"ATRIUM_LOG_FORMAT=json",
		"ATRIUM_SHUTDOWN_TIMEOUT="+clusterShutdownTimeout.String(),
		"ATRIUM_DRAIN_DELAY="+clusterDrainDelay.String(),
		"ATRIUM_METRICS_ADDR=127.0.0.1:0",
		// One directory of files for the gateway, collections and actions
		// (every replica of them), as the chart mounts one volume in each:
		// with a database they refuse a temporary one.
		"ATRIUM_DATA_DIR="+t.TempDir(),
		// The suite's webhooks retry within seconds.
		"ATRIUM_WEBHOOK_RETRY_SCHEDULE="+testRetrySchedule,
		"ATRIUM_WEBHOOK_CONSUMER="+testConsumer(t, natsURL),
		"ATRIUM_AUDIT_CONSUMER="+testAuditConsumer(t, natsURL),
	)
	return append(env, extra...)
}
