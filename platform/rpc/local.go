package rpc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/atrium-hq/atrium/platform/telemetry"
)

// Conn is a connection to an Atrium service: a *grpc.ClientConn from Dial,
// or the in-process connection Local.Dial makes.
type Conn interface {
	grpc.ClientConnInterface
	// Target is the service's address.
	Target() string
	Close() error
}

// Local is the set of gRPC servers of one process that its own clients
// may call in process: `atrium serve` runs the gateway and the services in
// one process, and a request crossing from the gateway to a service there
// need not be framed as HTTP/2, encoded, sent over loopback and decoded.
//
// A call on a connection from Local.Dial goes through exactly what a call
// over the network goes through, in the same order, except the wire: the
// client's interceptors (call metrics, the default deadline, the caller's)
// and its OpenTelemetry stats handler, the metadata check gRPC makes of
// what a client sends, the retry policy of the RPCs that declare
// themselves safe to repeat (with its throttling), then on the server its
// stats handler (the span, continuing the client's trace from the
// metadata) and its interceptor chain (call metrics, error mapping and
// panic recovery, principal verification and the access rule) before the
// handler. The server's context carries the call's deadline, is cancelled
// with the caller's, and holds the caller's outgoing metadata as incoming
// metadata and nothing else of the caller's context; grpc.SetHeader,
// grpc.SendHeader and grpc.SetTrailer work, and the caller receives them
// through grpc.Header and grpc.Trailer. What differs: messages are passed
// as they are rather than encoded (the server's handler gets the fields of
// the caller's request, the caller the fields of the handler's response;
// neither side changes a message once sent), so there is no message size
// limit; and streaming calls go over the network (Conn.NewStream), as
// they always did.
//
// The servers keep their listeners, for callers in other processes.
type Local struct {
	mu      sync.Mutex
	servers map[string]*Server
}

// NewLocal returns an empty set.
func NewLocal() *Local { return &Local{servers: map[string]*Server{}} }

// Add makes s reachable in process at its address. A nil Local adds
// nothing.
func (l *Local) Add(s *Server) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.servers[s.Addr()] = s
}

// Dial returns a connection to the service at addr: in process when its
// server is in l, otherwise over the network (Dial) with tel and
// interceptors, which run on both kinds in the same place (after the call
// metrics and the default deadline).
func (l *Local) Dial(addr string, tel *telemetry.Telemetry, interceptors ...grpc.UnaryClientInterceptor) (Conn, error) {
	return l.dial(addr, tel, nil, interceptors)
}

// DialAs is Dial for a caller that signs every call with creds, as a
// service calling another does (grpc.WithPerRPCCredentials over the
// network; in process, the same metadata added where gRPC's transport
// adds it, after the interceptors). In `atrium serve` the actions
// service's calls to the data service (the rows of every run it queues)
// and the CRM then skip the loopback hop's encoding, HTTP/2 framing and
// decoding.
func (l *Local) DialAs(addr string, tel *telemetry.Telemetry, creds credentials.PerRPCCredentials, interceptors ...grpc.UnaryClientInterceptor) (Conn, error) {
	return l.dial(addr, tel, creds, interceptors)
}

func (l *Local) dial(addr string, tel *telemetry.Telemetry, creds credentials.PerRPCCredentials, interceptors []grpc.UnaryClientInterceptor) (Conn, error) {
	opts := []grpc.DialOption{WithTelemetry(tel), grpc.WithChainUnaryInterceptor(interceptors...)}
	if creds != nil {
		opts = append(opts, grpc.WithPerRPCCredentials(creds))
	}
	network, err := Dial(addr, opts...)
	if err != nil {
		return nil, err
	}
	var srv *Server
	if l != nil {
		l.mu.Lock()
		srv = l.servers[addr]
		l.mu.Unlock()
	}
	if srv == nil {
		return network, nil
	}
	calls := newCallMetrics(tel.MeterProvider(), false, addr)
	return &localConn{
		ClientConn: network,
		srv:        srv,
		chain:      chainUnaryClient(append([]grpc.UnaryClientInterceptor{calls.unaryClient, defaultDeadline}, interceptors...)),
		stats: otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(tel.TracerProvider()),
			otelgrpc.WithMeterProvider(noop.NewMeterProvider()), otelgrpc.WithPropagators(telemetry.Propagator)),
		retried:  retriedSet(),
		throttle: &throttle{tokens: maxTokens},
		creds:    creds,
	}, nil
}

// localConn calls a Server of the same process. It embeds the network
// connection to the same server, which serves streams and says the
// target.
type localConn struct {
	*grpc.ClientConn
	srv      *Server
	chain    grpc.UnaryClientInterceptor
	stats    stats.Handler
	retried  map[string]bool
	throttle *throttle
	// creds, if set, sign every call (DialAs).
	creds credentials.PerRPCCredentials
}

// Invoke implements grpc.ClientConnInterface.
func (c *localConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	return c.chain(ctx, method, req, reply, nil, c.invoke, opts...)
}

// invoke is the end of the client's interceptor chain: what gRPC's own
// invoker does, with the server called in place of the wire.
func (c *localConn) invoke(ctx context.Context, method string, req, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
	var header, trailer *metadata.MD
	var p *peer.Peer
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			header = o.HeaderAddr
		case grpc.TrailerCallOption:
			trailer = o.TrailerAddr
		case grpc.PeerCallOption:
			p = o.PeerAddr
		}
	}
	ctx = c.stats.TagRPC(ctx, &stats.RPCTagInfo{FullMethodName: method})
	begin := time.Now()
	c.stats.HandleRPC(ctx, &stats.Begin{Client: true, BeginTime: begin})
	addr := c.srv.addr
	c.stats.HandleRPC(ctx, &stats.OutHeader{Client: true, FullMethod: method, RemoteAddr: addr, LocalAddr: addr})
	err := c.attempts(ctx, method, req, reply, header, trailer)
	if p != nil {
		p.Addr, p.LocalAddr = addr, addr
	}
	c.stats.HandleRPC(ctx, &stats.End{Client: true, BeginTime: begin, EndTime: time.Now(), Error: err})
	return err
}

// attempts calls the server, and again on UNAVAILABLE for the RPCs the
// retry policy covers, as Dial's service config has gRPC do.
func (c *localConn) attempts(ctx context.Context, method string, req, reply any, header, trailer *metadata.MD) error {
	md, _ := metadata.FromOutgoingContext(ctx)
	if err := validateMetadata(md); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if c.creds != nil {
		// As gRPC's transport: the credentials' metadata after the
		// caller's, under lower-case keys; a failure is the call's.
		auth, err := c.creds.GetRequestMetadata(ctx, "grpc://"+c.Target()+method[:strings.LastIndexByte(method, '/')])
		if err != nil {
			if _, ok := status.FromError(err); ok {
				return err
			}
			return status.Errorf(codes.Unavailable, "transport: per-RPC creds failed due to error: %v", err)
		}
		if md == nil {
			md = make(metadata.MD, len(auth))
		}
		for k, v := range auth {
			k = strings.ToLower(k)
			md[k] = append(md[k], v)
		}
	}
	for attempt := 1; ; attempt++ {
		err := c.srv.invokeLocal(ctx, method, md, req, reply, header, trailer)
		retryable := status.Code(err) == codes.Unavailable && c.retried[method]
		c.throttle.record(err == nil, retryable)
		if !retryable || attempt == MaxAttempts || !c.throttle.allows() {
			return err
		}
		// gRPC's backoff: a random pause up to 0.1s, then 0.2s, ...,
		// at most 1s.
		ceiling := min(100*time.Millisecond<<(attempt-1), time.Second)
		t := time.NewTimer(time.Duration(rand.Int64N(int64(ceiling)))) //nolint:gosec // G404: retry jitter, not a secret
		select {
		case <-ctx.Done():
			t.Stop()
			return status.FromContextError(ctx.Err()).Err()
		case <-t.C:
		}
	}
}

// retriedSet is the set of RetriedMethods.
func retriedSet() map[string]bool {
	m := map[string]bool{}
	for _, name := range RetriedMethods() {
		m[name] = true
	}
	return m
}

// maxTokens and tokenRatio are the retry throttling of serviceConfig.
const (
	maxTokens  = 10
	tokenRatio = 0.1
)

// throttle is gRPC's retry throttling: each failure with a retryable code
// costs a token, each success earns back tokenRatio, and retries are
// allowed while more than half the tokens remain.
type throttle struct {
	mu     sync.Mutex
	tokens float64
}

func (t *throttle) record(ok, retryableFailure bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case ok:
		t.tokens = min(maxTokens, t.tokens+tokenRatio)
	case retryableFailure:
		t.tokens = max(0, t.tokens-1)
	}
}

func (t *throttle) allows() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tokens > maxTokens/2
}

// validateMetadata is the check gRPC makes of the metadata a client sends,
// refusing what HTTP/2 headers cannot carry: keys of
// [0-9a-z-_.], and values of printable ASCII unless the key ends in -bin.
func validateMetadata(md metadata.MD) error {
	for k, vals := range md {
		if k == "" {
			return fmt.Errorf("there is an empty key in the header")
		}
		if k[0] == ':' {
			continue
		}
		for i := 0; i < len(k); i++ {
			r := k[i]
			if !(r >= 'a' && r <= 'z') && !(r >= '0' && r <= '9') && r != '.' && r != '-' && r != '_' {
				return fmt.Errorf("header key %q contains illegal characters not in [0-9a-z-_.]", k)
			}
		}
		if strings.HasSuffix(k, "-bin") {
			continue
		}
		for _, v := range vals {
			for i := 0; i < len(v); i++ {
				if v[i] < 0x20 || v[i] > 0x7e {
					return fmt.Errorf("header key %q contains value with non-printable ASCII characters", k)
				}
			}
		}
	}
	return nil
}

// localServer is the in-process side of a Server: its unary methods, the
// interceptor chain and stats handler its network side runs, and the
// calls in flight, which a shutdown waits for.
type localServer struct {
	unary grpc.UnaryServerInterceptor
	stats stats.Handler

	mu       sync.RWMutex
	methods  map[string]localMethod // by full name, /atrium.crm.v1.CRMService/ListProspects
	services map[string]bool
	stopping bool
	inflight sync.WaitGroup
	// base is the parent of every call's context; cut cancels it, as
	// stopping the network server cuts its connections.
	base context.Context
	cut  context.CancelFunc
}

type localMethod struct {
	impl    any
	handler grpc.MethodHandler
}

func newLocalServer(unary grpc.UnaryServerInterceptor, sh stats.Handler) *localServer {
	base, cut := context.WithCancel(context.Background())
	return &localServer{unary: unary, stats: sh, methods: map[string]localMethod{}, services: map[string]bool{}, base: base, cut: cut}
}

func (l *localServer) register(desc *grpc.ServiceDesc, impl any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.services[desc.ServiceName] = true
	for _, m := range desc.Methods {
		l.methods["/"+desc.ServiceName+"/"+m.MethodName] = localMethod{impl: impl, handler: m.Handler}
	}
}

// begin admits a call unless the server is stopping; end must follow.
func (l *localServer) begin() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.stopping {
		return false
	}
	l.inflight.Add(1)
	return true
}

// stop refuses new calls and waits for those in flight until ctx ends,
// then cancels them and waits for them to return.
func (l *localServer) stop(ctx context.Context) {
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		l.cut()
		<-done
	}
}

// invokeLocal runs method on the server for a caller in the same process:
// the stats handler and the interceptor chain around the handler, with a
// context of the server's own.
func (s *Server) invokeLocal(ctx context.Context, method string, md metadata.MD, req, reply any, header, trailer *metadata.MD) error {
	l := s.local
	if !l.begin() {
		return status.Error(codes.Unavailable, "the service is shutting down")
	}
	defer l.inflight.Done()
	l.mu.RLock()
	m, ok := l.methods[method]
	l.mu.RUnlock()
	if !ok {
		return unknownMethod(l, method)
	}
	// One context under base: with the caller's deadline when it has one
	// (cancelled, as before, by the caller, the deadline or a cut).
	var (
		sctx   context.Context
		cancel context.CancelFunc
	)
	if d, ok := ctx.Deadline(); ok {
		sctx, cancel = context.WithDeadline(l.base, d)
	} else {
		sctx, cancel = context.WithCancel(l.base)
	}
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	sctx = metadata.NewIncomingContext(sctx, md)
	addr := s.addr
	sctx = peer.NewContext(sctx, s.peer)
	stream := &localStream{method: method}
	stream.headers, stream.trailers = stream.buf[:0:2], stream.buf[2:2]
	sctx = grpc.NewContextWithServerTransportStream(sctx, stream)
	sctx = l.stats.TagRPC(sctx, &stats.RPCTagInfo{FullMethodName: method})
	begin := time.Now()
	l.stats.HandleRPC(sctx, &stats.Begin{BeginTime: begin})
	l.stats.HandleRPC(sctx, &stats.InHeader{FullMethod: method, LocalAddr: addr, RemoteAddr: addr, Header: md})
	resp, err := m.handler(m.impl, sctx, func(in any) error { return move(in, req) }, l.unary)
	if err != nil {
		st, ok := status.FromError(err)
		if !ok {
			st = status.FromContextError(err)
		}
		err = st.Err()
	} else if err = move(reply, resp); err != nil {
		err = status.Error(codes.Internal, err.Error())
	}
	l.stats.HandleRPC(sctx, &stats.End{BeginTime: begin, EndTime: time.Now(), Error: err})
	stream.deliver(header, trailer, err != nil)
	return err
}

func unknownMethod(l *localServer, method string) error {
	service, name, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	l.mu.RLock()
	known := l.services[service]
	l.mu.RUnlock()
	if known {
		return status.Errorf(codes.Unimplemented, "unknown method %v for service %v", name, service)
	}
	return status.Errorf(codes.Unimplemented, "unknown service %v", service)
}

// move gives dst the fields of src, two messages of one type, without
// copying them: src is not used again by whoever handed it over.
func move(dst, src any) error {
	d, ok1 := dst.(proto.Message)
	s, ok2 := src.(proto.Message)
	if !ok1 || !ok2 {
		return fmt.Errorf("in-process call: %T and %T are not both protobuf messages", dst, src)
	}
	dr, sr := d.ProtoReflect(), s.ProtoReflect()
	if dr.Descriptor().FullName() != sr.Descriptor().FullName() {
		return fmt.Errorf("in-process call: got a %s where a %s was expected", sr.Descriptor().FullName(), dr.Descriptor().FullName())
	}
	proto.Reset(d)
	sr.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dr.Set(fd, v)
		return true
	})
	if u := sr.GetUnknown(); len(u) > 0 {
		dr.SetUnknown(u)
	}
	return nil
}

// shownAddr is a listener's address with its text made once: the stats
// handlers of both sides of every in-process call print the address
// (otelgrpc's server.address and server.port), which a *net.TCPAddr
// formats anew each time.
type shownAddr struct {
	net.Addr
	text string
}

func (a shownAddr) String() string { return a.text }

// localStream is the grpc.ServerTransportStream of an in-process call:
// what the handler sets with grpc.SetHeader, grpc.SendHeader and
// grpc.SetTrailer, for the caller's grpc.Header and grpc.Trailer.
//
// The handler's metadata is kept as it is handed over and merged once, at
// the end, into the caller's: a handler that sets its headers in two calls
// (the 202 of an asynchronous submission: its balance, then its location)
// then costs one map, not one per call and one more for the caller.
type localStream struct {
	method string

	mu       sync.Mutex
	headers  []metadata.MD
	trailers []metadata.MD
	// buf backs headers and trailers for the usual few.
	buf [3]metadata.MD
	// headerSet: a header was set or sent, even an empty one.
	headerSet bool
	sent      bool
}

func (s *localStream) Method() string { return s.method }

// The three setters do not check the metadata: gRPC's own server stream
// of a unary call does not either.

func (s *localStream) SetHeader(md metadata.MD) error {
	if md.Len() == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent {
		return status.Error(codes.Internal, "transport: SendHeader called multiple times")
	}
	s.headers, s.headerSet = append(s.headers, md), true
	return nil
}

func (s *localStream) SendHeader(md metadata.MD) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent {
		return status.Error(codes.Internal, "transport: SendHeader called multiple times")
	}
	s.headers, s.headerSet = append(s.headers, md), true
	s.sent = true
	return nil
}

func (s *localStream) SetTrailer(md metadata.MD) error {
	if md.Len() == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trailers = append(s.trailers, md)
	return nil
}

// deliver hands the header and trailer to the caller's call options as
// gRPC's client gets them: a header (with the content type) when the
// server sends one, which a success always does and an error only after
// the handler set one; otherwise the answer is trailers only, and the
// content type is in the trailer.
func (s *localStream) deliver(header, trailer *metadata.MD, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	trailersOnly := failed && !s.headerSet
	if header != nil {
		*header = nil
		if !trailersOnly {
			*header = merged(true, s.headers)
		}
	}
	if trailer != nil {
		*trailer = merged(trailersOnly, s.trailers)
	}
}

// merged is one MD of mds' keys and values (with the content type first
// if contentType), as metadata.Join would make it. A key's values are the
// handler's own slice when one MD alone has the key: the handler does not
// use metadata it has handed over, as gRPC's own server stream assumes.
func merged(contentType bool, mds []metadata.MD) metadata.MD {
	n := 0
	for _, md := range mds {
		n += len(md)
	}
	if contentType {
		n++
	}
	out := make(metadata.MD, n)
	if contentType {
		out["content-type"] = []string{"application/grpc"}
	}
	for _, md := range mds {
		for k, v := range md {
			if have, ok := out[k]; ok {
				out[k] = append(have[:len(have):len(have)], v...)
			} else {
				out[k] = v
			}
		}
	}
	return out
}

// chainUnaryServer composes interceptors into one, the first outermost,
// as grpc.ChainUnaryInterceptor does.
func chainUnaryServer(interceptors ...grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		next := handler
		for _, ic := range slices.Backward(interceptors) {
			inner := next
			next = func(ctx context.Context, req any) (any, error) { return ic(ctx, req, info, inner) }
		}
		return next(ctx, req)
	}
}

// chainUnaryClient composes client interceptors, the first outermost, as
// grpc.WithChainUnaryInterceptor does.
func chainUnaryClient(interceptors []grpc.UnaryClientInterceptor) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		next := invoker
		for _, ic := range slices.Backward(interceptors) {
			inner := next
			next = func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
				return ic(ctx, method, req, reply, cc, inner, opts...)
			}
		}
		return next(ctx, method, req, reply, cc, opts...)
	}
}
