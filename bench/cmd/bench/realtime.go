package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// runRealtime measures the live updates (docs/realtime.md): --streams
// open realtime streams on one gateway (atrium serve, memory store,
// external NATS), --subscribers of them subscribed to the collection
// written to and the others to another collection of the same site, then
// --writes published items created one after another. For each write it
// takes the time from the create's 201 (the commit has happened by then)
// to the event's arrival at the last of the subscribers, and prints p50,
// p99 and the largest; and the gateway's resident memory per open stream.
func runRealtime(ctx context.Context, args []string) error {
	var f crmFlags
	fs := flag.NewFlagSet("bench realtime", flag.ContinueOnError)
	bindCommon(fs, &f)
	streams := fs.Int("streams", 10_000, "open realtime streams")
	subscribers := fs.Int("subscribers", 1_000, "streams subscribed to the collection written to")
	writes := fs.Int("writes", 100, "items created, one after another, each awaited by every subscriber")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *subscribers > *streams {
		return fmt.Errorf("--subscribers (%d) must not exceed --streams (%d)", *subscribers, *streams)
	}
	// Each stream is a connection in this process and one in atrium serve: raise the open files'
	// limit of this process, which atrium serve inherits.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	if need := uint64(*streams + 1000); lim.Cur < need { //nolint:gosec // G115: streams is a count of streams, never negative
		return fmt.Errorf("the open files' limit is %d, and %d streams need about %d (ulimit -n)", lim.Cur, *streams, need)
	}
	n := strconv.Itoa(*streams * 2)
	f.unpinned = true
	f.extraArgs = []string{"--max-long-requests", n, "--realtime-max-streams-per-key", n, "--realtime-max-streams-per-site", n}
	env, err := setUp(ctx, f)
	if err != nil {
		return err
	}
	defer env.tearDown()
	atrium := env.atrium

	var site struct {
		Site struct{ ID string } `json:"site"`
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/sites", map[string]any{"name": "Realtime bench"}, &site); err != nil {
		return err
	}
	for _, slug := range []string{"posts", "pages"} {
		if err := atrium.adminCall(ctx, "POST", "/admin/v1/sites/"+site.Site.ID+"/collections", map[string]any{"name": slug, "slug": slug,
			"fields": []map[string]any{{"key": "title", "type": "text", "required": true}}}, nil); err != nil {
			return err
		}
	}
	var writeKey, pageKey struct {
		Key struct{ Secret string } `json:"key"`
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "writer", "scopes": []string{"read", "write"}, "site_id": site.Site.ID}, &writeKey); err != nil {
		return err
	}
	if err := atrium.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "page", "scopes": []string{"read"}, "site_id": site.Site.ID, "published_only": true}, &pageKey); err != nil {
		return err
	}

	fmt.Printf("\nmachine: %d CPUs (%s), %s; commit %s; load average before %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), commitText(ctx), loadAverage())
	defer func() { fmt.Printf("\nload average after: %s\n", loadAverage()) }()
	fmt.Printf("load: %d streams on one gateway (atrium serve, memory store, external NATS), %d subscribed to posts with a published-only key, the others to pages; %d published posts created one after another\n",
		*streams, *subscribers, *writes)
	fmt.Println("latency: from the create's 201 to the event's arrival at the last subscriber")

	pid := atrium.cmd.Process.Pid
	before := rssKiB(pid)
	runtime.GC()
	var mine runtime.MemStats
	runtime.ReadMemStats(&mine)

	tr := &http.Transport{MaxIdleConnsPerHost: 64, DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext}
	client := &http.Client{Transport: tr}
	arrivals := newArrivals()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ids := make([]string, *streams)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	openStart := time.Now()
	sem := make(chan struct{}, 64)
	errc := make(chan error, 1)
	for i := range *streams {
		sem <- struct{}{}
		connected := make(chan string, 1)
		wg.Go(func() {
			err := readStream(sctx, client, atrium.api, connected, i < *subscribers, arrivals)
			if err != nil && sctx.Err() == nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
		select {
		case ids[i] = <-connected:
		case err := <-errc:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
		<-sem
	}
	fmt.Printf("opened %d streams in %s\n", *streams, time.Since(openStart).Round(time.Millisecond))
	subStart := time.Now()
	var subErr atomic.Value
	var swg sync.WaitGroup
	next := atomic.Int64{}
	for range 32 {
		swg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= *streams {
					return
				}
				coll := "pages"
				if i < *subscribers {
					coll = "posts"
				}
				if err := atrium.apiCall(ctx, pageKey.Key.Secret, "POST", "/api/public/v1/realtime", map[string]any{"client_id": ids[i], "subscriptions": []string{coll}}, nil); err != nil {
					subErr.Store(fmt.Errorf("subscribe stream %d: %w", i, err))
					return
				}
			}
		})
	}
	swg.Wait()
	if err, _ := subErr.Load().(error); err != nil {
		return err
	}
	fmt.Printf("subscribed them in %s\n", time.Since(subStart).Round(time.Millisecond))
	after := rssKiB(pid)
	runtime.GC()
	var mineAfter runtime.MemStats
	runtime.ReadMemStats(&mineAfter)
	fmt.Printf("memory: atrium serve's resident set %d MiB before the streams, %d MiB with them: %.1f KiB per stream (the bench's own heap grew %.1f KiB per stream)\n",
		before/1024, after/1024, float64(after-before)/float64(*streams), float64(int64(mineAfter.HeapInuse)-int64(mine.HeapInuse))/1024/float64(*streams)) //nolint:gosec // G115: a heap's size is far below 2^63

	var lat []time.Duration
	for w := range *writes {
		title := fmt.Sprintf("bench-%d", w)
		rec := arrivals.expect(title, *subscribers)
		var out struct {
			Item struct{ ID string } `json:"item"`
		}
		if err := atrium.apiCall(ctx, writeKey.Key.Secret, "POST", "/api/public/v1/collections/posts", map[string]any{"data": map[string]any{"title": title}, "is_published": true}, &out); err != nil {
			return err
		}
		committed := time.Now()
		select {
		case <-rec.done:
		case <-time.After(30 * time.Second):
			return fmt.Errorf("write %d: %d of %d subscribers had its event after 30 s", w, rec.count.Load(), *subscribers)
		case err := <-errc:
			return err
		}
		last := time.Unix(0, rec.last.Load())
		lat = append(lat, max(0, last.Sub(committed)))
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	fmt.Printf("fan-out to %d subscribers, %d writes: p50 %s, p99 %s, max %s\n", *subscribers, len(lat),
		q(0.50).Round(100*time.Microsecond), q(0.99).Round(100*time.Microsecond), lat[len(lat)-1].Round(100*time.Microsecond))
	return nil
}

// readStream opens one stream, sends its client id on connected, and
// records the arrival of each posts event it reads (when counted).
func readStream(ctx context.Context, client *http.Client, api string, connected chan<- string, counted bool, a *arrivals) error {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+api+"/api/public/v1/realtime", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET realtime: %s", resp.Status)
	}
	br := bufio.NewReaderSize(resp.Body, 4096)
	var event string
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return err
		}
		s := strings.TrimSuffix(string(line), "\n")
		switch {
		case strings.HasPrefix(s, "event: "):
			event = s[len("event: "):]
		case strings.HasPrefix(s, "data: "):
			var d struct {
				ClientID string `json:"client_id"`
				Item     struct {
					Title string `json:"title"`
				} `json:"item"`
			}
			if err := json.Unmarshal([]byte(s[len("data: "):]), &d); err != nil {
				return err
			}
			switch {
			case event == "connect":
				connected <- d.ClientID
			case event == "posts" && counted:
				a.arrived(d.Item.Title)
			}
		}
	}
}

// arrivals counts, for each write (by its title), the subscribers that
// have its event and when the last did.
type arrivals struct {
	mu     sync.Mutex
	writes map[string]*arrival
}

type arrival struct {
	want  int64
	count atomic.Int64
	last  atomic.Int64
	done  chan struct{}
}

func newArrivals() *arrivals { return &arrivals{writes: map[string]*arrival{}} }

func (a *arrivals) expect(title string, n int) *arrival {
	r := &arrival{want: int64(n), done: make(chan struct{})}
	a.mu.Lock()
	a.writes[title] = r
	a.mu.Unlock()
	return r
}

func (a *arrivals) arrived(title string) {
	now := time.Now().UnixNano()
	a.mu.Lock()
	r := a.writes[title]
	a.mu.Unlock()
	if r == nil {
		return
	}
	for {
		cur := r.last.Load()
		if now <= cur || r.last.CompareAndSwap(cur, now) {
			break
		}
	}
	if r.count.Add(1) == r.want {
		close(r.done)
	}
}

// rssKiB is a process's resident set in KiB, 0 if unknown.
func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
