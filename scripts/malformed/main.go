// Command malformed is the CI step that sends malformed requests through
// a running gateway (make malformed-check, run by .ci/run after the
// build): it starts `atrium serve --demo` on loopback ports 18450 to 18453
// (the gRPC services on free ports), reads the routes of both listeners'
// /openapi.json, and sends every route the fuzzers' seed corpus and a few
// thousand generated malformed requests (bad JSON, wrong types, huge
// numbers, invalid UTF-8 and percent-escapes in paths, queries, headers
// and bodies, malformed multipart, bad Prefer, Idempotency-Key and
// If-Match headers), with valid and invalid keys. It fails on any answer
// of 500 to 599 other than 503: "no 500 on anything a client can send"
// (DEVELOPERS.md). It is bounded in time (-timeout, 100 s by default) and
// stops the server it started whatever happens.
//
// It is a program rather than a test so that it drives the binary CI
// built, as a deployment runs it, without the race detector's cost.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("atrium", ".bin/atrium", "the atrium binary to start")
	n := flag.Int("n", 3000, "generated requests, spread over every route")
	timeout := flag.Duration("timeout", 110*time.Second, "the longest the whole check may take")
	sendFor := flag.Duration("send-for", 75*time.Second, "the longest requests are sent; on a busy machine the rest are skipped, and said so")
	base := flag.Int("port", 18450, "first of the four loopback ports used (public, admin, metrics, NATS)")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "random seed (printed, to repeat a run)") //nolint:gosec // G115: any bits will do
	repo := flag.String("repo", ".", "the repository, for the fuzzers' corpus files (testdata/fuzz)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *bin, *repo, *base, *n, *seed, *sendFor); err != nil {
		fmt.Fprintln(os.Stderr, "malformed-check:", err)
		os.Exit(1)
	}
}

// demo is what the started server's banner gives.
type demo struct {
	public, admin           string
	read, write, adminToken string
	agency, client, site    string
}

var (
	keyLine   = regexp.MustCompile(`(read key|write key|admin token):\s+(\S+)`)
	demoLine  = regexp.MustCompile(`agency (\S+) .*\(Sunrise Bakery: (\S+)\).*site (\S+) with`)
	uuidShape = "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"
)

func run(ctx context.Context, bin, repo string, base, n int, seed uint64, sendFor time.Duration) error {
	d, stop, err := start(ctx, bin, base)
	if err != nil {
		return err
	}
	defer stop()
	var routes []route
	for _, l := range []struct{ url, key string }{{d.public, d.write}, {d.admin, d.adminToken}} {
		rs, err := readRoutes(ctx, l.url, l.key)
		if err != nil {
			return err
		}
		routes = append(routes, rs...)
	}
	corpus := readCorpus(repo)
	fmt.Printf("malformed-check: seed %d, %d routes, %d corpus values, %d generated requests\n", seed, len(routes), len(corpus), n)
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), d: d, corpus: corpus} //nolint:gosec // G404: a seeded generator, so that a run can be repeated
	var reqs []*http.Request
	for i := 0; i < n; i++ {
		reqs = append(reqs, g.request(ctx, routes[i%len(routes)]))
	}
	for _, v := range corpus { // every corpus value once, in each place it fits
		reqs = append(reqs, g.withValue(ctx, routes, v)...)
	}
	// Interleaved, so that what a busy machine leaves unsent is a sample
	// of every kind rather than the corpus.
	g.r.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	sctx, cancel := context.WithTimeout(ctx, sendFor)
	defer cancel()
	return send(sctx, reqs)
}

// start runs `atrium serve --demo` and waits for its banner.
func start(ctx context.Context, bin string, base int) (demo, func(), error) {
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(base+i) }
	//nolint:gosec // G204: the binary CI built, named by the make target
	cmd := exec.CommandContext(ctx, bin, "serve", "--demo", "--http-addr", addr(0), "--admin-addr", addr(1), "--metrics-addr", addr(2),
		"--nats-embedded-addr", addr(3), "--drain-delay", "0s", "--request-timeout", "10s",
		"--collections-grpc-addr", "127.0.0.1:0", "--crm-grpc-addr", "127.0.0.1:0", "--data-grpc-addr", "127.0.0.1:0",
		"--actions-grpc-addr", "127.0.0.1:0", "--webhooks-grpc-addr", "127.0.0.1:0", "--audit-grpc-addr", "127.0.0.1:0")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return demo{}, nil, err
	}
	cmd.Stderr = cmd.Stdout
	var logs bytes.Buffer
	var logMu sync.Mutex
	if err := cmd.Start(); err != nil {
		return demo{}, nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	d := demo{public: "http://" + addr(0), admin: "http://" + addr(1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		seen := false
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			logs.WriteString(line + "\n")
			logMu.Unlock()
			if m := keyLine.FindStringSubmatch(line); m != nil {
				switch m[1] {
				case "read key":
					d.read = m[2]
				case "write key":
					d.write = m[2]
				case "admin token":
					d.adminToken = m[2]
				}
			}
			if m := demoLine.FindStringSubmatch(line); m != nil {
				d.agency, d.client, d.site = m[1], m[2], m[3]
			}
			if !seen && strings.HasPrefix(line, "Try:") {
				seen = true
				close(ready)
			}
		}
		if !seen {
			close(ready)
		}
	}()
	select {
	case <-ready:
	case <-ctx.Done():
	}
	if d.write == "" || d.adminToken == "" {
		stop()
		logMu.Lock()
		defer logMu.Unlock()
		return demo{}, nil, fmt.Errorf("atrium serve --demo gave no banner with keys:\n%s", logs.String())
	}
	return d, stop, nil
}

// route is one operation of an OpenAPI document.
type route struct {
	base, method, path string
	query              []string // its query parameters
	body               bool
	examples           []map[string]any // its request bodies' examples, to mutate
	props              []string         // its request body's fields
	key                string           // a key the route's listener takes
}

func readRoutes(ctx context.Context, base, key string) ([]route, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/openapi.json", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s/openapi.json: %w", base, err)
	}
	var out []route
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Parameters []struct {
					Name string `json:"name"`
					In   string `json:"in"`
				} `json:"parameters"`
				RequestBody *struct {
					Content map[string]struct {
						Schema   map[string]any `json:"schema"`
						Examples map[string]struct {
							Value any `json:"value"`
						} `json:"examples"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if json.Unmarshal(raw, &op) != nil || !slices.Contains([]string{"get", "post", "put", "patch", "delete"}, method) {
				continue
			}
			r := route{base: base, method: strings.ToUpper(method), path: path, key: key}
			for _, p := range op.Parameters {
				if p.In == "query" {
					r.query = append(r.query, p.Name)
				}
			}
			if op.RequestBody != nil {
				r.body = true
				for _, c := range op.RequestBody.Content {
					for _, ex := range c.Examples {
						if m, ok := ex.Value.(map[string]any); ok {
							r.examples = append(r.examples, m)
						}
					}
					if ref, _ := c.Schema["$ref"].(string); ref != "" {
						for p := range doc.Components.Schemas[ref[strings.LastIndexByte(ref, '/')+1:]].Properties {
							r.props = append(r.props, p)
						}
					}
				}
				sort.Strings(r.props)
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].method+out[i].path < out[j].method+out[j].path })
	return out, nil
}

// readCorpus reads the values of the gateway-facing fuzzers' corpus files
// (what `make fuzz` found and was committed under testdata/fuzz): each
// string or []byte value becomes a value the requests carry.
func readCorpus(repo string) []string {
	var out []string
	files, _ := filepath.Glob(filepath.Join(repo, "*", "testdata", "fuzz", "*", "*"))
	more, _ := filepath.Glob(filepath.Join(repo, "*", "*", "testdata", "fuzz", "*", "*"))
	deeper, _ := filepath.Glob(filepath.Join(repo, "*", "*", "*", "testdata", "fuzz", "*", "*"))
	for _, f := range slices.Concat(files, more, deeper) {
		b, err := os.ReadFile(f) //nolint:gosec // G304: the repository's own corpus files
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, prefix := range []string{"string(", "[]byte("} {
				if strings.HasPrefix(line, prefix) && strings.HasSuffix(line, ")") {
					if s, err := strconv.Unquote(line[len(prefix) : len(line)-1]); err == nil {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// Malformed values, the fuzzers' seeds among them.
var (
	badPath = []string{"%FF", "%zz", "%00", "%C0%AE", "a%2Fb", "%E2%82", "..", "-1", "1e400", "%20", strings.Repeat("x", 3000),
		strings.ToUpper(uuidShape), "{" + uuidShape + "}", "caf%C3%A9"}
	badQueryValue = []string{"%FF", "%zz", "-1", "99999999999999999999", "1e400", "NaN", "", "0x10", "%00", "a%2Cb", "true", "[]",
		strings.Repeat("9", 400), "%E2%82%AC", "+5", "2026-02-30"}
	badQueryRaw = []string{"limit=50&offset=0", "limit=99999999999", "agency_id=%ff", "limit=%2B5", "a=b=c", "%zz=1", ";", "limit=5;offset=1",
		"limit=1&limit=2", "&&&", "=", "%", "x[]=1&x[y]=2"}
	badPrefer = []string{"respond-async;foo=bar", "wait=0", "wait=61", "wait=soon", "wait=-1", "wait=99999999999999999999", `wait="1`,
		"respond-async, wait=0", ",,,", ";;;", "=", `x="\`, "return=minimal; foo=\"some parameter\"", "RESPOND-ASYNC", "wait=1.5", "wait = 1 ;"}
	badIdempotency = []string{"", " ", "a b", strings.Repeat("k", 300), "\xff", "\x01", "ключ", uuidShape}
	badIfMatch     = []string{"", "*", `"3"`, "3", `W/"3"`, `"`, "\xff", `"99999999999999999999999"`, `"-1"`, "a, b"}
	badContentType = []string{"", "application/json", "text/plain", "application/json; charset=latin1", "multipart/form-data",
		"multipart/form-data; boundary=", "multipart/form-data; boundary=X", "image/png", "image/png\xff", "application/x-www-form-urlencoded", ";;"}
	badBody = []string{"", "{", "}", "[]", "null", "1", `"x"`, "{} {}", `{"a":1} trailing`, "{\"name\":\"\xff\"}", `{"name":"\ud800"}`,
		`{"limit":1e400}`, `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "\xef\xbb\xbf{}", `{"a":1,"a":2}`,
		"{\x00}", strings.Repeat(" ", 5000), `{"unknown":true}`}
	badJSONValue = []any{json.Number("1e400"), json.Number("-1"), json.Number("9007199254740993"), json.Number("1.5"), json.Number("0"),
		"", "\xff", "\x00", "a\nb", strings.Repeat("x", 70000), true, nil, []any{}, map[string]any{}, []any{1, "x"},
		map[string]any{"a": map[string]any{"b": "c"}}, "2026-02-30", "not-a-uuid", uuidShape, "javascript:alert(1)", "http://127.0.0.1/"}
	badAuth = []string{"", "Bearer", "Bearer atr_bad", "Basic dXNlcjpwYXNz", "Bearer \xff", "Bearer " + strings.Repeat("a", 5000), "bearer  x"}
)

// gen makes requests.
type gen struct {
	r      *rand.Rand
	d      demo
	corpus []string
}

func (g *gen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// fill puts values in a route's path parameters: mostly ones that name
// the demo's objects (so that the request reaches its service), sometimes
// malformed ones.
func (g *gen) fill(path string) string {
	good := []string{g.d.agency, g.d.client, g.d.site, "posts", "pages", uuidShape, "keywords", "generate_blog"}
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		j := strings.IndexByte(path[i:], '}')
		b.WriteString(path[:i])
		if g.r.IntN(3) == 0 {
			b.WriteString(g.pick(badPath))
		} else {
			b.WriteString(g.pick(good))
		}
		path = path[i+j+1:]
	}
}

func (g *gen) request(ctx context.Context, rt route) *http.Request {
	u := rt.base + g.fill(rt.path)
	var q []string
	switch g.r.IntN(4) {
	case 0:
		q = append(q, g.pick(badQueryRaw))
	case 1, 2:
		for _, p := range rt.query {
			if g.r.IntN(2) == 0 {
				q = append(q, p+"="+g.pick(badQueryValue))
			}
		}
	}
	if g.r.IntN(8) == 0 {
		q = append(q, "unknown_param=1")
	}
	if len(q) > 0 {
		u += "?" + strings.Join(q, "&")
	}
	var body []byte
	ct := "application/json"
	switch {
	case rt.path == "/api/public/v1/assets" && rt.method == http.MethodPost:
		var query string
		ct, body, query = g.upload()
		if query != "" {
			u = rt.base + rt.path + "?" + query
		}
	case rt.body && g.r.IntN(3) == 0:
		body = []byte(g.pick(badBody))
	case rt.body:
		body = g.mutated(rt)
	case g.r.IntN(6) == 0:
		body = []byte(g.pick(badBody))
	}
	req, err := http.NewRequestWithContext(ctx, rt.method, rt.base, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.URL.Opaque = "" // the raw path and query are sent as written, escapes and all
	if err := setRawURL(req, u); err != nil {
		panic(err)
	}
	if g.r.IntN(5) == 0 {
		ct = g.pick(badContentType)
	}
	if ct != "" && (len(body) > 0 || g.r.IntN(2) == 0) {
		req.Header["Content-Type"] = []string{ct}
	}
	if g.r.IntN(6) == 0 {
		req.Header["Authorization"] = []string{g.pick(badAuth)}
	} else {
		key := rt.key
		if rt.key == g.d.write && g.r.IntN(3) == 0 {
			key = g.d.read
		}
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for _, h := range []struct {
		name string
		vals []string
	}{{"Prefer", badPrefer}, {"Idempotency-Key", badIdempotency}, {"If-Match", badIfMatch}} {
		if g.r.IntN(5) == 0 {
			req.Header[h.name] = []string{g.pick(h.vals)}
			if g.r.IntN(4) == 0 {
				req.Header[h.name] = append(req.Header[h.name], g.pick(h.vals))
			}
		}
	}
	if g.r.IntN(10) == 0 {
		req.Header.Set("Origin", g.pick([]string{"null", "http://localhost:3000", "\xff", "https://a.example"}))
	}
	return req
}

// setRawURL points req at u as written, its escapes kept.
func setRawURL(req *http.Request, u string) error {
	rest := strings.TrimPrefix(strings.TrimPrefix(u, "http://"), req.URL.Host)
	path, query, _ := strings.Cut(rest, "?")
	req.URL.Opaque = "//" + req.URL.Host + path
	req.URL.RawQuery = query
	return nil
}

// mutated is one of the route's examples (or an object of its fields)
// with one field given a value of the wrong kind, or the wrong shape.
func (g *gen) mutated(rt route) []byte {
	obj := map[string]any{}
	if len(rt.examples) > 0 {
		for k, v := range rt.examples[g.r.IntN(len(rt.examples))] {
			obj[k] = v
		}
	}
	fields := rt.props
	for k := range obj {
		fields = append(fields, k)
	}
	if len(fields) == 0 {
		fields = []string{"name"}
	}
	for range 1 + g.r.IntN(2) {
		obj[fields[g.r.IntN(len(fields))]] = badJSONValue[g.r.IntN(len(badJSONValue))]
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return []byte("{}")
	}
	return b
}

// upload is a malformed multipart or raw upload: its Content-Type, body
// and (raw) query.
func (g *gen) upload() (string, []byte, string) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
	badPNG := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x04\x02\x00\x00\x00\x00\x00\x00\x00"
	file := g.pick([]string{png, badPNG, "GIF89a\x00\x00\x00\x00", "\xff\xd8\xff\xda", "<html>", "", "RIFF\x00\x00\x00\x00WEBPJUNK"})
	name := g.pick([]string{"a.png", "caf\xe9.png", "../a.png", "", "a\x00.png", strings.Repeat("n", 300), "\xff"})
	alt := g.pick([]string{"A loaf", "\xff", "caf\xe9", "a\nb", strings.Repeat("a", 9000)})
	typ := g.pick([]string{"image/png", "image/\xffpng", "", "text/html", "image/jpeg", ";;"})
	if g.r.IntN(2) == 0 {
		parts := []string{
			"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name + "\"\r\nContent-Type: " + typ + "\r\n\r\n" + file + "\r\n",
			"--B\r\nContent-Disposition: form-data; name=\"alt\"\r\n\r\n" + alt + "\r\n",
			"--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nx\r\n",
			"--B\r\nno header end",
		}
		g.r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		body := strings.Join(parts[:1+g.r.IntN(len(parts))], "")
		if g.r.IntN(3) > 0 {
			body += "--B--\r\n"
		}
		return g.pick([]string{"multipart/form-data; boundary=B", "multipart/form-data; boundary=C", "multipart/form-data"}), []byte(body), ""
	}
	query := "filename=" + url.QueryEscape(name)
	if g.r.IntN(2) == 0 {
		query += "&alt=" + url.QueryEscape(alt)
	}
	return typ, []byte(file), query
}

// withValue sends a corpus value where each kind of value goes: a Prefer
// header, a query, a JSON body, an upload's name.
func (g *gen) withValue(ctx context.Context, routes []route, v string) []*http.Request {
	var out []*http.Request
	for _, place := range []string{"prefer", "query", "body"} {
		rt := routes[g.r.IntN(len(routes))]
		req := g.request(ctx, rt)
		switch place {
		case "prefer":
			req.Header["Prefer"] = []string{v}
		case "query":
			req.URL.RawQuery = v
		case "body":
			req.Body = io.NopCloser(strings.NewReader(v))
			req.ContentLength = int64(len(v))
		}
		out = append(out, req)
	}
	return out
}

// result is one answer worth reporting.
type result struct {
	req    string
	status int
	body   string
}

// send sends the requests from a few clients at once and fails on any
// 5xx but 503.
func send(ctx context.Context, reqs []*http.Request) error {
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		bad      []result
		noAnswer int
		slow     []string // answers that took over 2 s, to keep the check short
		wg       sync.WaitGroup
	)
	work := make(chan *http.Request)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for req := range work {
				desc := fmt.Sprintf("%s %s?%s Prefer=%q Content-Type=%q", req.Method, req.URL.Opaque, req.URL.RawQuery, req.Header.Values("Prefer"), req.Header.Get("Content-Type"))
				began := time.Now()
				resp, err := client.Do(req)
				if took := time.Since(began); took > 2*time.Second {
					mu.Lock()
					slow = append(slow, fmt.Sprintf("%.1f s %s", took.Seconds(), desc))
					mu.Unlock()
				}
				if err != nil {
					mu.Lock()
					// A connection closed without an answer to a request sent
					// whole is a failure: a handler's panic does that. An
					// upload refused before its body was read closes the
					// connection as it is written (a reset), as does Go's
					// server after a 400 to a request line it cannot read;
					// and the client refuses to send control characters.
					if errors.Is(err, io.EOF) && !strings.Contains(req.URL.Opaque, "/assets") {
						bad = append(bad, result{desc, 0, err.Error()})
					} else {
						noAnswer++
					}
					mu.Unlock()
					continue
				}
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
				_ = resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
					bad = append(bad, result{desc, resp.StatusCode, string(b)})
				}
				mu.Unlock()
			}
		}()
	}
	sent := 0
	for _, r := range reqs {
		select {
		case work <- r:
			sent++
			continue
		case <-ctx.Done():
		}
		break
	}
	close(work)
	wg.Wait()
	var codes []int
	for c := range statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var line []string
	for _, c := range codes {
		line = append(line, fmt.Sprintf("%d×%d", c, statuses[c]))
	}
	fmt.Printf("malformed-check: %d of %d requests sent; answers %s; %d without an answer (connection closed)\n",
		sent, len(reqs), strings.Join(line, " "), noAnswer)
	sort.Strings(slow)
	for i, s := range slow {
		if i == 5 {
			fmt.Printf("... and %d more over 2 s\n", len(slow)-5)
			break
		}
		fmt.Println("slow:", s)
	}
	if sent < len(reqs) {
		fmt.Printf("malformed-check: the machine was too busy to send every request within the time; %d were skipped\n", len(reqs)-sent)
	}
	if len(bad) > 0 {
		for i, b := range bad {
			if i == 20 {
				fmt.Printf("... and %d more\n", len(bad)-20)
				break
			}
			fmt.Printf("%d %s\n    %s\n", b.status, b.req, b.body)
		}
		return fmt.Errorf("%d answers were 5xx other than 503", len(bad))
	}
	return nil
}
