package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/bench/floor"
	"github.com/atrium-hq/atrium/bench/loadgen"
	"github.com/atrium-hq/atrium/platform/pgdb"
)

// runFloor serves the floor until killed, printing its address first.
func runFloor(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench floor", flag.ContinueOnError)
	url := fs.String("database-url", "", "database holding the crm schema")
	agency := fs.String("agency", "", "the one agency the floor serves (CRM)")
	site := fs.String("site", "", "the one site the floor serves (collections)")
	dataFloor := fs.Bool("data", false, "serve the data read floor")
	hooks := fs.String("webhooks", "", "serve the webhooks floor, sending to the endpoints of this JSON file (site id: [{url, secret}])")
	files := fs.String("files", "", "serve the files floor from this directory: http.FileServer for downloads, a streamed, hashed and fsynced write for uploads")
	submissions := fs.String("submissions", "", "serve the asynchronous submissions floor for --agency's runs on this client")
	maxQueued := fs.Int64("max-queued", 1000, "with --submissions: the agency's most queued runs")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	schedTick := fs.Duration("schedules-tick", 0, "instead of serving: run the schedules floor (bench schedules), looking for due rows this often")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *schedTick > 0 {
		pool, err := pgdb.Open(ctx, *url, "bench_floor")
		if err != nil {
			return err
		}
		defer pool.Close()
		fmt.Println("scheduling")
		return floor.NewScheduler(pool, *schedTick, 100).Run(ctx)
	}
	if *files != "" {
		return serveFiles(ctx, *addr, floor.NewFiles(*files).Handler())
	}
	schema := "crm"
	switch {
	case *site != "" || *hooks != "":
		schema = "collections"
	case *dataFloor:
		schema = "data"
	case *submissions != "":
		schema = "actions"
	}
	pool, err := pgdb.Open(ctx, *url, schema)
	if err != nil {
		return err
	}
	defer pool.Close()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Println(l.Addr().String())
	h := floor.New(pool, *agency).Handler()
	if *site != "" {
		h = floor.NewCollections(pool, *site).Handler()
	}
	if *dataFloor {
		h = floor.NewData(pool).Handler()
	}
	if *submissions != "" {
		h = floor.NewSubmissions(pool, *agency, *submissions, *maxQueued).Handler()
	}
	if *hooks != "" {
		b, err := os.ReadFile(*hooks)
		if err != nil {
			return err
		}
		var endpoints map[string][]floor.WebhookEndpoint
		if err := json.Unmarshal(b, &endpoints); err != nil {
			return fmt.Errorf("%s: %w", *hooks, err)
		}
		wh, err := floor.NewWebhooks(ctx, pool, endpoints)
		if err != nil {
			return err
		}
		go wh.Run(ctx)
		h = wh.Handler()
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// serveFiles serves h on addr, printing the address first, until ctx ends.
func serveFiles(ctx context.Context, addr string, h http.Handler) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println(l.Addr().String())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// loadResult is what `bench load` prints, as JSON, for the orchestrator.
type loadResult struct {
	Requests   int     `json:"requests"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	RPS        float64 `json:"rps"`
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	BodyBytes  int     `json:"body_bytes"`
	// CPU is the server's CPU time per request in µs, its database's
	// backends included (the orchestrator measures it; see serverCPU).
	CPU float64 `json:"-"`
}

// runLoad drives one server and prints what it measured.
func runLoad(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench load", flag.ContinueOnError)
	addr := fs.String("addr", "", "server host:port")
	path := fs.String("path", "", "request path with query")
	auth := fs.String("authorization", "", "Authorization header value")
	var headers multiFlag
	fs.Var(&headers, "header", `one more request header, "Name: value" (repeatable)`)
	method := fs.String("method", "GET", "request method")
	body := fs.String("body", "", "request body (JSON), sent when not empty")
	bodyFile := fs.String("body-file", "", "file whose bytes are the request body (an upload)")
	contentType := fs.String("content-type", "", "the body's Content-Type; application/json when empty")
	conns := fs.Int("conns", 16, "connections")
	d := fs.Duration("duration", 10*time.Second, "how long to drive the server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := loadgen.Request{Method: *method, Addr: *addr, Path: *path, Header: map[string]string{}}
	if *body != "" {
		req.Body = []byte(*body)
	}
	if *bodyFile != "" {
		b, err := os.ReadFile(*bodyFile)
		if err != nil {
			return err
		}
		req.Body = b
	}
	req.ContentType = *contentType
	if *auth != "" {
		req.Header["Authorization"] = *auth
	}
	for _, header := range headers {
		name, value, ok := strings.Cut(header, ":")
		if !ok {
			return fmt.Errorf(`--header must be "Name: value"; got %q`, header)
		}
		req.Header[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	r := loadgen.Run(ctx, req, *conns, *d)
	ms := func(p float64) float64 { return float64(r.Percentile(p).Microseconds()) / 1000 }
	return json.NewEncoder(os.Stdout).Encode(loadResult{
		Requests: r.Requests, Errors: r.Errors, FirstError: r.FirstError, RPS: r.RPS(),
		P50: ms(50), P99: ms(99), BodyBytes: r.BodyBytes,
	})
}

// pinned returns argv run under taskset on cpus, or argv alone when cpus is
// empty (fewer than two cores: nothing to separate).
func pinned(cpus string, argv ...string) []string {
	if cpus == "" {
		return argv
	}
	return append([]string{"taskset", "-c", cpus}, argv...)
}

func quoteArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if strings.ContainsAny(a, " \"'") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
