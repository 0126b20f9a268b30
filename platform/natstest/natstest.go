// Package natstest gives tests the NATS server (with JetStream) they run
// against: TEST_NATS_URL, or the local server every development machine of
// this project runs. Like pgtest, it fails rather than skips when the server
// is down, so a suite that did not run is never counted as passing.
package natstest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultURL is the local NATS server.
const DefaultURL = "nats://127.0.0.1:4222"

// URL returns the test NATS server's URL after checking it answers.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("TEST_NATS_URL")
	if url == "" {
		url = DefaultURL
	}
	nc, err := nats.Connect(url, nats.Timeout(3*time.Second))
	if err != nil {
		t.Fatalf("NATS is required for this test and is unreachable at %s: %v\n"+
			"start it (see DEVELOPERS.md) or point TEST_NATS_URL at a server with JetStream", url, err)
	}
	nc.Close()
	return url
}

// Cluster is a NATS cluster of nats-server processes with JetStream on
// loopback, started for one test and stopped when it ends.
type Cluster struct {
	// URLs are the servers' client URLs, in order.
	URLs  []string
	procs []*exec.Cmd
	done  []chan struct{}
}

// URL is every server's client URL as one comma-separated list, as
// --nats-url takes it.
func (c *Cluster) URL() string { return strings.Join(c.URLs, ",") }

// Kill stops server i with SIGKILL, as a crashed node.
func (c *Cluster) Kill(t testing.TB, i int) {
	t.Helper()
	if err := c.procs[i].Process.Kill(); err != nil {
		t.Fatalf("kill NATS server %d: %v", i, err)
	}
	<-c.done[i]
}

// serverBinary is nats-server: the Debian package's, or one on PATH.
func serverBinary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nats-server"); err == nil {
		return "/usr/sbin/nats-server"
	}
	t.Fatal("nats-server is required for this test: install it (the nats-server package) or put it on PATH")
	return ""
}

// freePort is a loopback port no listener holds now.
func freePort(t testing.TB) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().(*net.TCPAddr).Port
}

// StartCluster starts n nats-server processes with JetStream, each with a
// store of its own, routed to each other as one cluster, and returns once
// JetStream answers on every server (its meta leader is elected). They
// are killed when the test ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	bin := serverBinary(t)
	c := &Cluster{}
	clientPorts, routePorts := make([]int, n), make([]int, n)
	var routes []string
	for i := range n {
		clientPorts[i], routePorts[i] = freePort(t), freePort(t)
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i]))
	}
	dir := t.TempDir()
	// start starts node i on its ports. A port freePort found free may be
	// taken by another test's listener before nats-server binds it (tests
	// run in parallel packages): the node then exits at once, and is
	// started again on other ports below.
	start := func(i int) {
		//nolint:gosec // G204: nats-server from PATH, with the test's own ports and directory.
		cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(clientPorts[i]),
			"-n", fmt.Sprintf("atrium-test-%d", i), "-js", "-sd", filepath.Join(dir, strconv.Itoa(i)),
			"--cluster_name", "atrium-test", "--cluster", routes[i], "--routes", strings.Join(routes, ","))
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatalf("start nats-server: %v", err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		c.procs[i], c.done[i] = cmd, done
		c.URLs[i] = fmt.Sprintf("nats://127.0.0.1:%d", clientPorts[i])
	}
	c.procs, c.done, c.URLs = make([]*exec.Cmd, n), make([]chan struct{}, n), make([]string, n)
	for i := range n {
		start(i)
	}
	t.Cleanup(func() {
		for i, p := range c.procs {
			_ = p.Process.Kill()
			<-c.done[i]
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	restarts := 0
	for i := range n {
		for {
			err := jetStreamAnswers(c.URLs[i])
			if err == nil {
				break
			}
			select {
			case <-c.done[i]:
				if restarts++; restarts > 5 {
					t.Fatalf("nats-server %d of the cluster exited at start %d times: %v", i, restarts, err)
				}
				clientPorts[i], routePorts[i] = freePort(t), freePort(t)
				routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i])
				start(i)
				continue
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("the NATS cluster's JetStream did not answer at %s within 30s: %v", c.URLs[i], err)
			}
			time.Sleep(100 * time.Millisecond) // why sleep: polls JetStream's meta leader election, which has no push form
		}
	}
	return c
}

// jetStreamAnswers reports whether JetStream at url answers an account
// request, which needs the cluster's meta leader.
func jetStreamAnswers(url string) error {
	nc, err := nats.Connect(url, nats.Timeout(time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err
}
