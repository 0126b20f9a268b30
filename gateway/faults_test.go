package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// rawExchange writes req on a fresh connection to addr, optionally
// half-closes it, and parses the one response.
// rawExchange writes req on a new connection and returns the status and
// JSON error body of the response.
func rawExchange(t *testing.T, addr, req string, halfClose bool) (int, map[string]any) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		_ = c.(*net.TCPConn).CloseWrite()
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil || body["error"] == nil {
		t.Fatalf("status %d body %q is not a JSON error", resp.StatusCode, b)
	}
	return resp.StatusCode, body
}

func TestChunkedBodyOverTheLimitIs413(t *testing.T) {
	r := startGateway(t, closedAddr(t), func(c *Config) { c.MaxBodyBytes = 1024 })
	chunk := strings.Repeat("x", 800)
	req := "POST /admin/v1/agencies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token-0123456789\r\n" +
		"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", len(chunk), chunk, len(chunk), chunk)
	code, body := rawExchange(t, r.gw.HTTPAddr(), req, false)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body["error"].(string), "1024 bytes") {
		t.Fatalf("got %d %v, want 413 naming the limit", code, body)
	}
}

func TestBodyShorterThanDeclaredIsAnsweredWithinTheDeadline(t *testing.T) {
	r := startGateway(t, closedAddr(t), func(c *Config) { c.RequestTimeout = 500 * time.Millisecond })
	req := "POST /admin/v1/agencies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token-0123456789\r\n" +
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"

	t.Run("stalled body gets 408", func(t *testing.T) {
		start := time.Now()
		code, body := rawExchange(t, r.gw.HTTPAddr(), req, false)
		if code != http.StatusRequestTimeout || !strings.Contains(body["error"].(string), "8 of 100 bytes") {
			t.Fatalf("got %d %v, want 408 saying how much arrived", code, body)
		}
		if waited := time.Since(start); waited > 10*time.Second {
			t.Fatalf("the connection was held %s, far beyond the 500ms request deadline", waited)
		}
	})
	t.Run("body cut short gets 400", func(t *testing.T) {
		code, body := rawExchange(t, r.gw.HTTPAddr(), req, true)
		if code != http.StatusBadRequest || !strings.Contains(body["error"].(string), "ended before") {
			t.Fatalf("got %d %v, want 400 saying the body ended early", code, body)
		}
	})
}

// A request still running when the shutdown timeout runs out is answered
// 503 with Retry-After, which clients retry, and the gateway exits cleanly.
func TestShutdownTimeoutAnswers503AndExitsCleanly(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	f := &fakeCRM{list: func(ctx context.Context) (*crmv1.ListProspectsResponse, error) {
		close(started)
		select {
		case <-release:
		case <-time.After(30 * time.Second):
		}
		return &crmv1.ListProspectsResponse{}, nil
	}}
	r := startGateway(t, startFakeCRM(t, f), func(c *Config) { c.ShutdownTimeout = 300 * time.Millisecond })
	type result struct {
		resp *http.Response
		body map[string]any
	}
	res := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("GET", "http://"+r.gw.HTTPAddr()+"/api/v1/prospects", nil)
		req.Header.Set("Authorization", "Bearer "+apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{}
			return
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		res <- result{resp, body}
	}()
	<-started
	r.cancel()
	got := <-res
	if got.resp == nil {
		t.Fatal("the request was cut without a response")
	}
	if got.resp.StatusCode != http.StatusServiceUnavailable || got.resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(fmt.Sprint(got.body["error"]), "shutting down") {
		t.Fatalf("got %d Retry-After=%q %v, want 503 with Retry-After saying the server is shutting down",
			got.resp.StatusCode, got.resp.Header.Get("Retry-After"), got.body)
	}
	if err := <-r.done; err != nil {
		t.Fatalf("Run after a timed-out shutdown = %v, want nil", err)
	}
	r.done <- nil
}
