package main

// SIGTERM under load, against a real process: `atrium serve` is built and
// run as a child, a burst of requests runs on keep-alive connections, the
// process gets SIGTERM in the middle of it, and the clients keep sending
// until the server refuses their connections. Every request a client wrote
// must get its whole response, and the process must exit 0 after
// reporting not ready for its drain delay.
//
// One case is not the server's to answer: a client that connects at the
// instant the listener closes can have its handshake completed by the
// kernel and its request written into the connection's buffer before the
// server accepts it; closing the listener then resets it. The server never
// saw that request (it never had the connection), and such a client's next
// connection is refused. Those are counted apart, as refused. Requests on
// connections the server had accepted, kept-alive ones above all (where
// requests used to be lost), must all be answered.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// drainProcess is `atrium serve` running as a child process.
type drainProcess struct {
	cmd        *exec.Cmd
	api, admin string // host:port
	output     *syncBuffer
	exited     chan error
}

var bannerAddr = regexp.MustCompile(`(public|admin) API:\s+http://(\S+)`)

// startDrainProcess runs `atrium serve` on the memory store and an
// embedded NATS, every port chosen by the system, and waits for its
// banner, which it prints once ready.
func startDrainProcess(t *testing.T, bin string, extra ...string) *drainProcess {
	t.Helper()
	args := append([]string{"serve",
		"--http-addr=127.0.0.1:0", "--admin-addr=127.0.0.1:0", "--admin-token=" + testAdminToken,
		"--internal-secret=" + testInternalSecret,
		"--collections-grpc-addr=127.0.0.1:0", "--crm-grpc-addr=127.0.0.1:0",
		"--data-grpc-addr=127.0.0.1:0", "--actions-grpc-addr=127.0.0.1:0", "--webhooks-grpc-addr=127.0.0.1:0",
		"--audit-grpc-addr=127.0.0.1:0", "--nats-embedded-addr=127.0.0.1:0", "--log-level=warn",
	}, extra...)
	args = withDataDir(t, args)
	p := &drainProcess{cmd: exec.Command(bin, args...), output: &syncBuffer{}, exited: make(chan error, 1)}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.output
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill() // a no-op once it has exited
		exit := <-p.exited       // killed or exited: either way it is gone
		if t.Failed() {
			t.Logf("atrium serve (%v) output:\n%s", exit, p.output)
		}
	})
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.output, line)
			if m := bannerAddr.FindStringSubmatch(line); m != nil {
				if m[1] == "public" {
					p.api = m[2]
				} else {
					p.admin = m[2]
					close(found)
				}
			}
		}
		p.exited <- p.cmd.Wait()
	}()
	select {
	case <-found:
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("atrium serve exited before it was ready: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("atrium serve printed no banner within 60s")
	}
	return p
}

// burstTally counts one client connection's requests.
type burstTally struct {
	written, answered int
	// notOK are answers other than 200.
	notOK []string
	// lostReused are requests written on a connection that had already
	// carried a response (a keep-alive connection), and never answered.
	lostReused []string
	// lostFresh are requests written as the first on a new connection and
	// never answered; acceptQueueResets are those of them that the kernel
	// reset because the listener closed before the server accepted the
	// connection (the client's next connection was refused).
	lostFresh         []string
	acceptQueueResets int
	closedByServer    int // responses with Connection: close
}

// warmUp is how many answers each client has had, on one kept-alive
// connection, when SIGTERM is sent.
const warmUp = 5

// burstClient sends GET path with a bearer key on one keep-alive
// connection after another: a new connection only when the server closes
// the previous one. It signals answered after its warmUp-th answer. It stops
// when a connection is refused after sigtermSent is closed, and fails the
// test if one is refused before.
func burstClient(t *testing.T, addr, path, key string, answered chan<- struct{}, sigtermSent <-chan struct{}, deadline time.Time) burstTally {
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + key + "\r\n\r\n")
	var (
		tally       burstTally
		conn        net.Conn
		br          *bufio.Reader
		reused      bool
		pendingLost string // a fresh connection's request that was lost
	)
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for time.Now().Before(deadline) {
		if conn == nil {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				select {
				case <-sigtermSent:
				default:
					t.Errorf("connection refused before SIGTERM: %v", err)
					return tally
				}
				// A connection still in the handshake when the listener
				// closes is reset rather than refused: the same to a client.
				if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET) {
					t.Errorf("dial after SIGTERM: %v, want connection refused", err)
				}
				if pendingLost != "" {
					tally.acceptQueueResets++
				}
				return tally
			}
			if pendingLost != "" {
				// The listener was still open: the request before was lost
				// by the server, not refused by the kernel.
				tally.lostFresh = append(tally.lostFresh, pendingLost)
				pendingLost = ""
			}
			conn, br, reused = c, bufio.NewReader(c), false
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		}
		if _, err := conn.Write(req); err != nil {
			// Not written: the server had closed the connection.
			conn.Close()
			conn = nil
			continue
		}
		tally.written++
		resp, err := http.ReadResponse(br, nil)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err != nil {
			what := fmt.Sprintf("request %d: %v", tally.written, err)
			if reused {
				tally.lostReused = append(tally.lostReused, what)
			} else {
				pendingLost = what
			}
			conn.Close()
			conn = nil
			continue
		}
		tally.answered++
		if tally.answered == warmUp {
			answered <- struct{}{}
		}
		if resp.StatusCode != http.StatusOK {
			tally.notOK = append(tally.notOK, resp.Status)
		}
		reused = true
		if resp.Close {
			tally.closedByServer++
			conn.Close()
			conn = nil
		}
	}
	t.Errorf("the server still accepted connections %s after SIGTERM", time.Until(deadline))
	return tally
}

// readyzDuringDrain polls /readyz on new connections until the admin
// listener refuses them, and returns the bodies of the 503 answers.
func readyzDuringDrain(addr string, deadline time.Time) (unready []map[string]any) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for time.Now().Before(deadline) {
		resp, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				return unready
			}
			continue
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			unready = append(unready, body)
		}
		time.Sleep(20 * time.Millisecond) // why sleep: samples /readyz through the drain, which has no push form
	}
	return unready
}

func TestSIGTERMDuringABurstAnswersEveryWrittenRequest(t *testing.T) {
	bin := filepath.Join(binaries(t), "atrium")
	const clients = 8
	// The first round runs with no drain setting: the embedded default must
	// answer every written request as the cluster binaries do.
	for round, drain := range []string{"", "--drain-delay=1s", "--drain-delay=1s"} {
		t.Run(fmt.Sprintf("round %d %s", round+1, drain), func(t *testing.T) {
			var extra []string
			if drain != "" {
				extra = append(extra, drain)
			}
			p := startDrainProcess(t, bin, extra...)
			s := &stack{api: "http://" + p.api, admin: "http://" + p.admin}
			tn := s.newTenant(t)

			deadline := time.Now().Add(30 * time.Second)
			sigtermSent := make(chan struct{})
			tallies := make([]burstTally, clients)
			var wg sync.WaitGroup
			answered := make(chan struct{}, clients)
			for i := range clients {
				wg.Go(func() {
					tallies[i] = burstClient(t, p.api, "/api/v1/prospects", tn.read, answered, sigtermSent, deadline)
				})
			}
			// The burst is under way once every client has had a few
			// answers: each is then sending on a kept-alive connection.
			clientsDone := make(chan struct{})
			go func() { wg.Wait(); close(clientsDone) }()
			for range clients {
				select {
				case <-answered:
				case <-clientsDone: // a client gave up early, saying why
				}
			}
			readyz := make(chan []map[string]any, 1)
			go func() { readyz <- readyzDuringDrain(p.admin, deadline) }()
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			close(sigtermSent)
			wg.Wait()

			var total burstTally
			for _, c := range tallies {
				total.written += c.written
				total.answered += c.answered
				total.closedByServer += c.closedByServer
				total.acceptQueueResets += c.acceptQueueResets
				total.notOK = append(total.notOK, c.notOK...)
				total.lostReused = append(total.lostReused, c.lostReused...)
				total.lostFresh = append(total.lostFresh, c.lostFresh...)
			}
			t.Logf("%d requests written, %d answered, %d connections closed by the server after a response, %d fresh connections reset in the accept queue as the listener closed",
				total.written, total.answered, total.closedByServer, total.acceptQueueResets)
			if len(total.lostReused) > 0 {
				t.Errorf("%d requests written on keep-alive connections got no response: %v", len(total.lostReused), total.lostReused)
			}
			if len(total.lostFresh) > 0 {
				t.Errorf("%d requests written on new connections got no response while the server still accepted connections: %v", len(total.lostFresh), total.lostFresh)
			}
			if len(total.notOK) > 0 {
				t.Errorf("%d requests were answered other than 200: %v", len(total.notOK), total.notOK)
			}
			if total.closedByServer == 0 {
				t.Error("no response during the drain asked the client to close its connection")
			}
			if answeredOrReset := total.answered + total.acceptQueueResets; answeredOrReset != total.written {
				t.Errorf("%d requests written, %d answered and %d reset unaccepted", total.written, total.answered, total.acceptQueueResets)
			}

			unready := <-readyz
			if len(unready) == 0 {
				t.Error("/readyz never answered 503 during the drain")
			}
			for _, body := range unready {
				if want := map[string]any{"error": "shutting down"}; !reflect.DeepEqual(body, want) {
					t.Errorf("/readyz during the drain = %v, want %v", body, want)
				}
			}
			select {
			case err := <-p.exited:
				p.exited <- err
				if err != nil {
					t.Errorf("atrium serve exited with %v after SIGTERM, want 0", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("atrium serve still running 30s after SIGTERM")
			}
		})
	}
}
