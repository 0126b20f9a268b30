// Package loadgen is a closed-loop HTTP/1.1 load generator: a fixed number
// of keep-alive connections, each sending the next request as soon as the
// previous response has been read. It speaks just enough HTTP (status line,
// Content-Length or chunked bodies) to stay cheap, so that on its own core
// it measures the server and not itself.
package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Request is what every connection sends.
type Request struct {
	Method string // GET when empty
	Addr   string // host:port
	Path   string // with query
	Header map[string]string
	Body   []byte // sent with a Content-Length
	// ContentType is the body's type; application/json when empty.
	ContentType string
}

// Result is what a run measured.
type Result struct {
	Requests  int
	Errors    int
	Elapsed   time.Duration
	Latencies []time.Duration // sorted
	// FirstError says what went wrong, if anything did.
	FirstError string
	// BodyBytes is the size of the last response body.
	BodyBytes int
}

// RPS is completed requests per second.
func (r Result) RPS() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// Percentile returns the p-th latency percentile (0 < p < 100).
func (r Result) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.Latencies)) * p / 100)
	return r.Latencies[min(i, len(r.Latencies)-1)]
}

// Run drives conns connections for d and returns what they measured. Every
// response must be 200 or 201; anything else counts as an error.
func Run(ctx context.Context, req Request, conns int, d time.Duration) Result {
	var raw bytes.Buffer
	method := req.Method
	if method == "" {
		method = "GET"
	}
	fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, req.Path, req.Addr)
	for k, v := range req.Header {
		fmt.Fprintf(&raw, "%s: %s\r\n", k, v)
	}
	if req.Body != nil {
		ct := req.ContentType
		if ct == "" {
			ct = "application/json"
		}
		fmt.Fprintf(&raw, "Content-Type: %s\r\nContent-Length: %d\r\n", ct, len(req.Body))
	}
	raw.WriteString("\r\n")
	raw.Write(req.Body)
	// At the end of d no connection sends another request, but each lets
	// the one it has in flight finish (up to drainTimeout more), so that
	// the servers never see a burst of aborted requests: an abort cancels
	// the request's database query, which costs a pooled connection, and
	// the next round would pay to open it again.
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	hard, cancelHard := context.WithTimeout(context.WithoutCancel(ctx), d+drainTimeout)
	defer cancelHard()
	var (
		mu  sync.Mutex
		res Result
		wg  sync.WaitGroup
	)
	start := time.Now()
	for range conns {
		wg.Go(func() {
			lat, n, body, err := drive(ctx, hard, req.Addr, raw.Bytes())
			mu.Lock()
			defer mu.Unlock()
			res.Requests += n
			res.Latencies = append(res.Latencies, lat...)
			res.BodyBytes = max(res.BodyBytes, body)
			if err != nil {
				res.Errors++
				if res.FirstError == "" {
					res.FirstError = err.Error()
				}
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	slices.Sort(res.Latencies)
	return res
}

// drainTimeout bounds how long the requests in flight at the end of a run
// may take to finish.
const drainTimeout = 10 * time.Second

// drive sends requests on one connection until ctx ends; hard cuts the
// last one if it has not finished by then.
func drive(ctx, hard context.Context, addr string, raw []byte) (lat []time.Duration, n, bodyLen int, err error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, 0, 0, err
	}
	defer c.Close()
	go func() { <-hard.Done(); _ = c.SetDeadline(time.Now()) }()
	r := bufio.NewReaderSize(c, 64<<10)
	lat = make([]time.Duration, 0, 1<<16)
	for ctx.Err() == nil {
		t0 := time.Now()
		if _, err := c.Write(raw); err != nil {
			return lat, n, bodyLen, quiet(hard, err)
		}
		status, body, err := readResponse(r)
		if err != nil {
			return lat, n, bodyLen, quiet(hard, err)
		}
		if status != 200 && status != 201 {
			return lat, n, bodyLen, fmt.Errorf("status %d", status)
		}
		lat = append(lat, time.Since(t0))
		bodyLen = body
		n++
	}
	return lat, n, bodyLen, nil
}

// quiet drops the error of a connection cut because its last request
// outlived the drain timeout.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func readResponse(r *bufio.Reader) (status, bodyLen int, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, 0, err
	}
	if len(line) < 12 {
		return 0, 0, fmt.Errorf("short status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, 0, fmt.Errorf("status line %q", line)
	}
	length, chunked := -1, false
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		if len(line) <= 2 {
			break
		}
		k, v, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			length, err = strconv.Atoi(string(v))
			if err != nil {
				return 0, 0, fmt.Errorf("Content-Length %q", v)
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")) && bytes.EqualFold(v, []byte("chunked")):
			chunked = true
		}
	}
	switch {
	case chunked:
		err := readChunked(r, &bodyLen)
		return status, bodyLen, err
	case length >= 0:
		_, err := r.Discard(length)
		return status, length, err
	}
	return 0, 0, errors.New("response without Content-Length or chunked body")
}

func readChunked(r *bufio.Reader, total *int) error {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.SplitN(line, []byte(";"), 2)[0])), 16, 64)
		if err != nil {
			return fmt.Errorf("chunk size %q", line)
		}
		if size == 0 {
			_, err := r.ReadSlice('\n') // the final CRLF (no trailers expected)
			return err
		}
		if _, err := r.Discard(int(size)); err != nil {
			return err
		}
		*total += int(size)
		if _, err := r.Discard(2); err != nil { // the CRLF after the chunk
			return err
		}
	}
}
