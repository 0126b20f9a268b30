package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLongRequestsCannotStarveTheAPI is issue 24's attack: one key opens
// 1,000 event streams and 50 uploads that trickle in a byte every 100 ms,
// all at once, while another tenant reads. With the long requests on a
// budget of their own and capped per key (--max-streams-per-key, 16 by
// default), the key holds 16 of them and every other one is answered 429
// at once; the uploads it holds end in 408 once they fall below
// --min-transfer-rate after --request-timeout; the other tenant's reads
// all succeed, during the flood and after it, with their p99 within 20%
// of a quiet run measured in the same test. Before the budget, the
// streams took the --max-in-flight slots (1,000 by default) and every
// tenant was answered 503. About 10 s on a quiet machine: the flood,
// three rounds of reads and the uploads' 3 s timeout.
func TestLongRequestsCannotStarveTheAPI(t *testing.T) {
	const (
		streams, uploads = 1000, 50
		perKey           = 16 // gateway.DefaultMaxStreamsPerKey
		timeout          = 3 * time.Second
	)
	s := startStack(t, fmt.Sprintf("--request-timeout=%s", timeout))
	attacker, reader := s.newTenant(t), s.newTenant(t)
	for i := range 20 {
		s.newProspect(t, reader, fmt.Sprintf("Bakery %d", i))
	}
	api, err := url.Parse(s.api)
	if err != nil {
		t.Fatal(err)
	}

	// The reader's own client, kept-alive connections as a real one keeps;
	// not the contract-checking default client, whose checking would be
	// in the latencies.
	readClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 30 * time.Second}
	read := func() (time.Duration, error) {
		req, _ := http.NewRequest("GET", s.api+"/api/v1/prospects?limit=20", nil)
		req.Header.Set("Authorization", "Bearer "+reader.read)
		start := time.Now()
		resp, err := readClient.Do(req)
		if err != nil {
			return 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if err != nil || resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("%d %s (%w)", resp.StatusCode, b, err)
		}
		return took, nil
	}
	// reads makes n reads from 4 readers at once and returns their
	// latencies and failures.
	reads := func(n int) ([]time.Duration, []error) {
		var (
			mu   sync.Mutex
			took []time.Duration
			errs []error
			wg   sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				for range n / 4 {
					d, err := read()
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						took = append(took, d)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return took, errs
	}
	reads(100) // warm the connections and the key cache
	quiet, errs := reads(600)
	if len(errs) > 0 {
		t.Fatalf("reads of a quiet stack failed: %v", errs[0])
	}

	// The attack. Each outcome says what was refused and how fast.
	type outcome struct {
		kind   string // stream, upload
		code   int
		retry  string
		body   string
		took   time.Duration
		sentAt time.Time
	}
	outcomes := make(chan outcome, streams+uploads)
	attack, stopAttack := context.WithCancel(context.Background())
	var attackers sync.WaitGroup
	defer func() { stopAttack(); attackers.Wait() }()
	flood := &http.Transport{MaxIdleConnsPerHost: -1}
	defer flood.CloseIdleConnections()
	for range uploads {
		attackers.Go(func() {
			o := outcome{kind: "upload", sentAt: time.Now()}
			conn, err := net.Dial("tcp", api.Host)
			if err != nil {
				o.body = err.Error()
				outcomes <- o
				return
			}
			defer conn.Close()
			// 1 MiB announced: more than net/http reads of a body the
			// handler left, so a refusal closes the connection at once.
			fmt.Fprintf(conn, "POST /api/public/v1/assets?filename=slow.png HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: image/png\r\nContent-Length: %d\r\n\r\n", api.Host, attacker.write, 1<<20)
			answered := make(chan struct{})
			defer close(answered)
			go func() {
				// The slow loris's pace is the behaviour under test.
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-answered:
						return
					case <-attack.Done():
						conn.Close()
						return
					case <-tick.C:
						if _, err := conn.Write([]byte{0}); err != nil {
							return
						}
					}
				}
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				o.body = err.Error()
				outcomes <- o
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			o.code, o.retry, o.body, o.took = resp.StatusCode, resp.Header.Get("Retry-After"), string(b), time.Since(o.sentAt)
			outcomes <- o
		})
	}
	for range streams {
		attackers.Go(func() {
			o := outcome{kind: "stream", sentAt: time.Now()}
			req, _ := http.NewRequestWithContext(attack, "GET", s.api+"/api/v1/event-stream", nil)
			req.Header.Set("Authorization", "Bearer "+attacker.write)
			resp, err := flood.RoundTrip(req)
			if err != nil {
				o.body = err.Error()
				outcomes <- o
				return
			}
			defer resp.Body.Close()
			o.code, o.retry, o.took = resp.StatusCode, resp.Header.Get("Retry-After"), time.Since(o.sentAt)
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				o.body = string(b)
				outcomes <- o
				return
			}
			outcomes <- o
			<-attack.Done() // an idle stream, held open until the test ends
		})
	}
	// The other tenant reads all along the flood.
	type readResult struct {
		errs []error
		n    int
	}
	during := make(chan readResult, 1)
	go func() {
		took, errs := reads(400)
		during <- readResult{errs, len(took)}
	}()

	// Wait until every request of the flood has its answer: each stream
	// its 200 or 429 at once, each upload its 429 at once or, if the key
	// held it, its 408 once it fell below --min-transfer-rate after the
	// timeout, not the 29 hours its pace would take. A slot an upload
	// leaves is taken by a request still coming, so on a busy machine
	// (where the flood outlasts the timeout) more than 16 uploads may be
	// held in turn; never more than 16 long requests at once (the gateway's
	// tests count that exactly).
	var (
		heldStreams, refused, slowUploads int
		slowest                           time.Duration
	)
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for answered := 0; answered < streams+uploads; answered++ {
		select {
		case o := <-outcomes:
			switch {
			case o.kind == "stream" && o.code == http.StatusOK:
				heldStreams++
			case o.code == http.StatusTooManyRequests:
				refused++
				slowest = max(slowest, o.took)
				if o.retry != "5" || !strings.Contains(o.body, "at most 16") || !strings.Contains(o.body, "max-streams-per-key") {
					t.Fatalf("a %s over the key's cap: 429 with Retry-After %q and %s; want Retry-After 5 and the cap named", o.kind, o.retry, o.body)
				}
			case o.kind == "upload" && o.code == http.StatusRequestTimeout && strings.Contains(o.body, "too slowly"):
				slowUploads++
			case o.kind == "upload" && o.code == http.StatusGatewayTimeout:
				// Held, but the collections service did not take the
				// upload's header within the timeout: on a machine loaded
				// far beyond its cores, the flood can starve it of CPU.
				slowUploads++
				t.Logf("a held upload: 504 %s", o.body)
			default:
				t.Fatalf("a %s of the flood: %d %s; want 200 (a stream within the key's cap), 429, or 408 (an upload too slow)", o.kind, o.code, o.body)
			}
		case <-deadline.C:
			t.Fatalf("after 60 s, %d of the flood's %d requests are answered (%d streams held, %d refused, %d uploads ended too slow)",
				answered, streams+uploads, heldStreams, refused, slowUploads)
		}
	}
	t.Logf("the key holds %d streams; %d uploads were held and ended 408; %d requests refused 429, the slowest after %s",
		heldStreams, slowUploads, refused, slowest.Round(time.Millisecond))
	if heldStreams > perKey || heldStreams+slowUploads < perKey || refused < streams-perKey {
		t.Fatalf("%d streams held, %d uploads held, %d refused; want at most %d streams, the key's %d slots all used, and the rest refused",
			heldStreams, slowUploads, refused, perKey, perKey)
	}
	if d := <-during; len(d.errs) > 0 {
		t.Fatalf("%d of the other tenant's reads during the flood failed; the first: %v", len(d.errs), d.errs[0])
	}

	// Under attack: the held streams idle. The comparison is made up to
	// three times: a millisecond p99 on a 2-core machine shared with other
	// test binaries (make test runs packages in parallel) moves by more
	// than the slack between two runs of the same thing, whatever the
	// gateway does, so one noisy block is measured again. If every block
	// is over, the attack is stopped and a quiet block is measured after
	// it: the neighbours' load that slowed the blocks under attack slows
	// that one too, and the blocks are judged against the slower of the
	// two quiet ones. A starved API fails every block either way: the
	// attack before the budget made every read a 503, which no slack and
	// no second try hides.
	pq := p99(quiet)
	var tries []time.Duration
	for range 3 {
		loaded, errs := reads(600)
		if len(errs) > 0 {
			t.Fatalf("%d of the other tenant's reads under attack failed; the first: %v", len(errs), errs[0])
		}
		pl := p99(loaded)
		tries = append(tries, pl)
		t.Logf("the other tenant's reads: p99 %s quiet, %s under attack", pq, pl)
		if pl <= pq+pq/5+5*time.Millisecond {
			return
		}
	}
	stopAttack()
	attackers.Wait()
	after, errs := reads(600)
	if len(errs) > 0 {
		t.Fatalf("%d of the other tenant's reads after the attack failed; the first: %v", len(errs), errs[0])
	}
	pa := p99(after)
	baseline := max(pq, pa)
	t.Logf("the other tenant's reads: p99 %s quiet before the attack, %s after it", pq, pa)
	if best := slices.Min(tries); best <= baseline+baseline/5+5*time.Millisecond {
		return
	}
	t.Fatalf("the other tenant's p99 under attack is %v in three blocks of 600 reads, each over 1.2 × %s + 5 ms (the slower quiet block: %s before the attack, %s after it)", tries, baseline, pq, pa)
}

// p99 is the 99th percentile of ds (sorted in place).
func p99(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	i := (len(ds)*99+99)/100 - 1
	return ds[max(0, min(i, len(ds)-1))].Round(10 * time.Microsecond)
}
