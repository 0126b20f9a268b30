package main

// Faults of the backing services, as clients see them: PostgreSQL going
// away answers 503 with Retry-After whatever the key's cache state, and an
// outbox relay that backed off during a NATS outage publishes as soon as
// NATS is back.

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// tcpProxy forwards a loopback port to a target; down cuts every
// connection and refuses new ones, up listens again on the same port.
type tcpProxy struct {
	addr, target string
	mu           sync.Mutex
	lis          net.Listener
	conns        map[net.Conn]struct{}
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{addr: "127.0.0.1:0", target: target, conns: map[net.Conn]struct{}{}}
	p.up(t)
	p.addr = p.lis.Addr().String()
	t.Cleanup(p.down)
	return p
}

func (p *tcpProxy) up(t *testing.T) {
	t.Helper()
	lis, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy listen on %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.lis = lis
	p.mu.Unlock()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *tcpProxy) pipe(c net.Conn) {
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[u] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(u, c); u.Close() }()
	_, _ = io.Copy(c, u)
	c.Close()
}

func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lis != nil {
		p.lis.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func TestPostgresOutageIsRetryable503(t *testing.T) {
	dbURL, err := url.Parse(migratedDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, dbURL.Host)
	dbURL.Host = proxy.addr
	s := startStack(t, "--database-url="+dbURL.String(), "--nats-url="+natstest.URL(t))
	tn := s.newTenant(t)
	prospects := s.api + "/api/v1/prospects"
	wantStatus(t, call(t, "GET", prospects, tn.read, nil), http.StatusOK) // the read key is now cached

	proxy.down()
	for name, key := range map[string]string{"cached key": tn.read, "key not yet cached": tn.write} {
		r := call(t, "GET", prospects, key, nil)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Fatalf("%s with PostgreSQL down: got %s (Retry-After %q), want 503 with Retry-After", name, r, r.header.Get("Retry-After"))
		}
		wantError(t, r, http.StatusServiceUnavailable, "temporarily unavailable", "retry")
	}

	proxy.up(t)
	eventually(t, 15*time.Second, func() bool { return call(t, "GET", prospects, tn.write, nil).status == http.StatusOK })
}

// lastAgencyCreated is the id in the last agency.created event of the CRM
// stream, or "" if there is none (yet).
func lastAgencyCreated(t *testing.T, js jetstream.JetStream) string {
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, "ATRIUM_CRM")
	if err != nil {
		return ""
	}
	msg, err := stream.GetLastMsgForSubject(ctx, "atrium.crm.agency.created")
	if err != nil {
		return ""
	}
	var ev struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(msg.Data, &ev)
	return ev.ID
}

// restartableNATS is a JetStream server of the test's own, on a fixed port
// and store directory so that it can be stopped and started again.
type restartableNATS struct {
	port     int
	storeDir string
	srv      *server.Server
}

func (n *restartableNATS) start(t *testing.T) {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: n.port, JetStream: true,
		StoreDir: n.storeDir, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatalf("NATS did not start on port %d", n.port)
	}
	n.srv, n.port = srv, srv.Addr().(*net.TCPAddr).Port
}

func (n *restartableNATS) stop() {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
}

func (n *restartableNATS) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// The relay retries with a growing backoff while NATS is down; the
// reconnect wakes it, so the event committed during the outage is
// published within a reconnect of NATS's return, long before the backoff
// would have run out. The relay here polls hourly, so its first wait after
// a failure is an hour: only the wake-up can publish within the test.
func TestRelayPublishesPromptlyWhenNATSReturns(t *testing.T) {
	n := &restartableNATS{port: -1, storeDir: t.TempDir()}
	n.start(t)
	s := startStackWith(t, func(c *serveConfig) { c.relayInterval = time.Hour }, "--nats-url="+n.url())
	n.stop()
	id := s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Made during the outage"})["id"].(string)
	// The commit woke the CRM's relay, whose publish failed: it is now
	// waiting out its backoff.
	eventually(t, 10*time.Second, func() bool {
		for line := range strings.Lines(s.logs.String()) {
			if strings.Contains(line, "service=crm") && strings.Contains(line, "publish failed") {
				return true
			}
		}
		return false
	})
	n.start(t)
	defer n.stop()
	back := time.Now()

	nc, err := nats.Connect(n.url())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if time.Since(back) > 10*time.Second {
			t.Fatalf("the agency.created event of %s was not published within 10s of NATS returning\n%s", id, s.logs)
		}
		if lastAgencyCreated(t, js) == id {
			t.Logf("published %s after NATS returned", time.Since(back).Round(10*time.Millisecond))
			return
		}
		time.Sleep(100 * time.Millisecond) // why sleep: polls the stream, where the event lands
	}
}
