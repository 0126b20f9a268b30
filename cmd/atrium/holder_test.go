package main

// A local server that holds the calls one process makes to it, so that a
// test killing that process knows the kill cut work in flight, and which.

import (
	"bufio"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// holder decides, for each call a local server gets, whether the process
// that made it is the one under test (target): that process's calls are
// held until their connection ends (the process dies) or the test ends;
// every other process's are answered at once. A process is known by its
// end of the connection, looked up in /proc/net/tcp and the process's
// file descriptors (Linux): the server sees the peer's address, the kernel
// says which process owns that socket.
type holder struct {
	// target is the pid whose calls are held; 0 holds none.
	target atomic.Int64
	mu     sync.Mutex
	held   []*heldCall
	// seen counts the calls by tag, held or answered.
	seen map[string]int
	// changed is signalled when a call arrives or a held one ends.
	changed chan struct{}
	// done ends every held call: the test is over (a server's Close
	// waits for its calls).
	done chan struct{}
	err  error
}

// heldCall is a call the target made and the holder held.
type heldCall struct {
	// tag names the work that made the call, note what else the test
	// keeps of it.
	tag, note string
	at        time.Time
	// cut is closed when the call's connection ended.
	cut chan struct{}
}

func newHolder(t *testing.T) *holder {
	t.Helper()
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Fatalf("this test finds which process made a call in /proc/net/tcp (Linux): %v", err)
	}
	h := &holder{seen: map[string]int{}, changed: make(chan struct{}, 1), done: make(chan struct{})}
	return h
}

// end lets every held call go; call it before the server's Close (a
// t.Cleanup registered after the server's).
func (h *holder) end() { close(h.done) }

func (h *holder) notify() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// serve holds req when its tag is not empty and the target made it, until
// its connection ends; otherwise it calls answer.
func (h *holder) serve(req *http.Request, tag, note string, answer func()) {
	hold := false
	if pid := h.target.Load(); tag != "" && pid != 0 {
		owns, err := ownsConn(int(pid), req.RemoteAddr, req.Context().Value(http.LocalAddrContextKey))
		if err != nil {
			h.mu.Lock()
			h.err = err
			h.mu.Unlock()
		}
		hold = owns
	}
	c := &heldCall{tag: tag, note: note, at: time.Now(), cut: make(chan struct{})}
	h.mu.Lock()
	h.seen[tag]++
	if hold {
		h.held = append(h.held, c)
	}
	h.mu.Unlock()
	h.notify()
	if !hold {
		answer()
		return
	}
	select {
	case <-req.Context().Done():
	case <-h.done:
	}
	close(c.cut)
	h.notify()
}

// open returns the held calls whose connections are still open, and the
// first error of a look-up.
func (h *holder) open() ([]*heldCall, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*heldCall
	for _, c := range h.held {
		select {
		case <-c.cut:
		default:
			out = append(out, c)
		}
	}
	return out, h.err
}

// calls returns how many calls with tag arrived, held or answered.
func (h *holder) calls(tag string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[tag]
}

// waitUntil waits until cond holds, re-checking it at each call's arrival
// or end, for at most within.
func (h *holder) waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(within)
	for !cond() {
		select {
		case <-h.changed:
		case <-deadline:
			t.Fatalf("still waiting after %s for %s", within, what)
		}
	}
}

// waitCut waits until the connections of calls have all ended (the
// process that made them died), for at most within.
func (h *holder) waitCut(t *testing.T, within time.Duration, calls []*heldCall) {
	t.Helper()
	deadline := time.After(within)
	for _, c := range calls {
		select {
		case <-c.cut:
		case <-deadline:
			t.Fatalf("the held call %s was not cut within %s of its process's kill: the holder had the wrong process", c.tag, within)
		}
	}
}

// ownsConn reports whether process pid holds the client end of the TCP
// connection from peer to local (both IPv4 host:port): it finds the
// socket's inode in /proc/net/tcp and looks for it among pid's file
// descriptors.
func ownsConn(pid int, peer string, local any) (bool, error) {
	la, ok := local.(interface{ String() string })
	if !ok {
		return false, fmt.Errorf("no local address for the call from %s", peer)
	}
	from, err := procAddr(peer)
	if err != nil {
		return false, err
	}
	to, err := procAddr(la.String())
	if err != nil {
		return false, err
	}
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return false, err
	}
	defer f.Close()
	inode := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && fields[1] == from && fields[2] == to {
			inode = fields[9]
			break
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	if inode == "" {
		// The call's connection is already gone: its process closed it.
		return false, nil
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false, nil // the process has exited
	}
	want := "socket:[" + inode + "]"
	for _, fd := range fds {
		if link, err := os.Readlink(dir + "/" + fd.Name()); err == nil && link == want {
			return true, nil
		}
	}
	return false, nil
}

// procAddr writes an IPv4 host:port as /proc/net/tcp does: the address's
// four bytes in the host's order (little-endian here) and the port, in
// upper-case hex.
func procAddr(hostport string) (string, error) {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil || !ap.Addr().Unmap().Is4() {
		return "", fmt.Errorf("the holder needs an IPv4 address, got %q: %w", hostport, err)
	}
	b := ap.Addr().Unmap().As4()
	return fmt.Sprintf("%02X%02X%02X%02X:%04X", b[3], b[2], b[1], b[0], ap.Port()), nil
}
