package rpc

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// callMetrics records the OpenTelemetry conventions' call duration
// histogram of one side of gRPC (rpc.server.call.duration on a server,
// rpc.client.call.duration on a connection) by method and status code: its
// count is the call rate, error.type marks the failures, its buckets the
// latency.
//
// otelgrpc records the same histogram, but builds a new attribute set on
// every call; here a method's set for a status code is built the first time
// and reused, so a call allocates nothing for its metrics. otelgrpc still
// makes the spans.
type callMetrics struct {
	h      metric.Float64Histogram
	server bool
	// base are the attributes every call shares: the RPC system, and on a
	// client the server's address.
	base []attribute.KeyValue

	mu   sync.Mutex
	sets atomic.Pointer[map[callKey][]metric.RecordOption]
}

type callKey struct {
	method string
	code   codes.Code
}

func newCallMetrics(mp metric.MeterProvider, server bool, target string) *callMetrics {
	m := mp.Meter("github.com/atrium-hq/atrium/platform/rpc")
	name, desc := "rpc.client.call.duration", "Duration of outgoing gRPC calls, by method and status code."
	base := []attribute.KeyValue{semconv.RPCSystemNameGRPC}
	if server {
		name, desc = "rpc.server.call.duration", "Duration of gRPC calls served, by method and status code."
	} else if host, port, err := net.SplitHostPort(target); err == nil {
		base = append(base, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			base = append(base, semconv.ServerPort(p))
		}
	}
	// The error is only for an invalid name; the histogram is then a no-op.
	h, _ := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	cm := &callMetrics{h: h, server: server, base: base}
	cm.sets.Store(&map[callKey][]metric.RecordOption{})
	return cm
}

// record records one call of fullMethod (/atrium.crm.v1.CRMService/ListProspects)
// that ended with err.
func (m *callMetrics) record(ctx context.Context, fullMethod string, err error, took time.Duration) {
	k := callKey{method: strings.TrimPrefix(fullMethod, "/"), code: status.Code(err)}
	opts, ok := (*m.sets.Load())[k]
	if !ok {
		opts = m.add(k)
	}
	m.h.Record(ctx, took.Seconds(), opts...)
}

// add builds and keeps the options of k, copying the map so that readers
// never lock.
func (m *callMetrics) add(k callKey) []metric.RecordOption {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := *m.sets.Load()
	if opts, ok := cur[k]; ok {
		return opts
	}
	code := codeName(k.code)
	attrs := append(append([]attribute.KeyValue(nil), m.base...), semconv.RPCMethod(k.method), semconv.RPCResponseStatusCode(code))
	if k.code != codes.OK && (!m.server || serverFault(k.code)) {
		attrs = append(attrs, semconv.ErrorTypeKey.String(code))
	}
	opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	next := make(map[callKey][]metric.RecordOption, len(cur)+1)
	for kk, v := range cur {
		next[kk] = v
	}
	next[k] = opts
	m.sets.Store(&next)
	return opts
}

// serverFault reports a status code that is the server's failure rather
// than the caller's, the only ones the conventions mark as errors on a
// server.
func serverFault(c codes.Code) bool {
	switch c {
	case codes.Unknown, codes.DeadlineExceeded, codes.Unimplemented, codes.Internal, codes.Unavailable, codes.DataLoss:
		return true
	}
	return false
}

// codeName is the status code as the conventions spell it: INVALID_ARGUMENT.
func codeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return strconv.Itoa(int(c))
}

var codeNames = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

func (m *callMetrics) unaryServer(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	m.record(ctx, info.FullMethod, err, time.Since(start))
	return resp, err
}

func (m *callMetrics) streamServer(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	err := handler(srv, ss)
	m.record(ss.Context(), info.FullMethod, err, time.Since(start))
	return err
}

func (m *callMetrics) unaryClient(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	m.record(ctx, method, err, time.Since(start))
	return err
}

func (m *callMetrics) streamClient(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	start := time.Now()
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		m.record(ctx, method, err, time.Since(start))
		return nil, err
	}
	return &measuredStream{ClientStream: s, serverStreams: desc.ServerStreams, finish: func(err error) {
		m.record(ctx, method, err, time.Since(start))
	}}, nil
}

// measuredStream records a client stream's call when it ends: at its
// response for a client stream, at the end of the responses (io.EOF) or
// the first error for a server stream.
type measuredStream struct {
	grpc.ClientStream
	serverStreams bool
	once          sync.Once
	finish        func(error)
}

func (s *measuredStream) RecvMsg(msg any) error {
	err := s.ClientStream.RecvMsg(msg)
	if err != nil || !s.serverStreams {
		ended := err
		if errors.Is(ended, io.EOF) {
			ended = nil
		}
		s.once.Do(func() { s.finish(ended) })
	}
	return err
}
