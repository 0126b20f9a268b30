package rpc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/atrium-hq/atrium/platform/telemetry"
)

const (
	// windowSize and connWindowSize are the HTTP/2 flow-control windows of
	// every Atrium connection, per stream and per connection. Setting them
	// fixes them, which also turns off gRPC's bandwidth-delay probing.
	windowSize     = 1 << 20
	connWindowSize = 8 << 20
	// MaxMessageSize bounds one message either way: a rendered page of a
	// thousand rows of a few kilobytes each fits.
	MaxMessageSize = 32 << 20
)

// DefaultCallTimeout is the deadline of a unary call whose context has
// none. Calls made while serving a request inherit that request's
// deadline (gRPC carries it from process to process), so this bounds only
// the calls made on a process's own account: an action's records written
// after its run, the actions service's recovery loop.
const DefaultCallTimeout = 5 * time.Second

// reconnectBackoff spaces the attempts to reconnect to a service that went
// away: from 1s, growing by 1.6 with 20% jitter, to at most 5s.
var reconnectBackoff = backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second}

// The retry policy of the RPCs that declare themselves safe to repeat.
const (
	// MaxAttempts counts the first call: two retries at most.
	MaxAttempts    = 3
	initialBackoff = "0.1s"
	maxBackoff     = "1s"
)

// Dial returns a client connection to an Atrium service at addr, traced so
// that the call joins the caller's trace and measured per RPC (by the
// OpenTelemetry globals, or by the providers WithTelemetry gives). The
// connection is lazy: it connects on first use and reconnects by itself.
//
// addr may name several replicas (see Target): calls go round-robin over
// every one that is connected and whose ReplicaHealthService is SERVING,
// so that the loss of a replica costs only the calls it had in flight. A
// retried call (below) is picked again, usually onto another replica.
//
// Every unary call without a deadline gets DefaultCallTimeout. A call that
// fails with UNAVAILABLE (the service is restarting, unreachable, or could
// not reach its database) is retried, up to MaxAttempts with backoff, only
// if its RPC declares the proto option idempotency_level (NO_SIDE_EFFECTS
// for reads, IDEMPOTENT for writes that may be repeated, such as
// WriteRecords with ids): the descriptors are the one source of that rule.
// Other writes are never retried here; gRPC itself only replays a call
// that never reached the server.
//
// Transport security is left to the network (loopback in one process, the
// cluster network or a service mesh in Kubernetes); callers are
// authenticated by the signed principal, not by the transport.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	target, resolvers, err := Target(addr)
	if err != nil {
		return nil, err
	}
	var tel *telemetry.Telemetry
	for _, o := range opts {
		if t, ok := o.(telemetryOption); ok {
			tel = t.tel
		}
	}
	calls := newCallMetrics(tel.MeterProvider(), false, addr)
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// otelgrpc makes the spans; the call metrics are callMetrics'.
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(tel.TracerProvider()),
			otelgrpc.WithMeterProvider(noop.NewMeterProvider()), otelgrpc.WithPropagators(telemetry.Propagator))),
		// First, so outermost: one measurement per call, whatever the
		// interceptors the caller adds do inside it.
		grpc.WithChainUnaryInterceptor(calls.unaryClient),
		grpc.WithChainStreamInterceptor(calls.streamClient),
		grpc.WithInitialWindowSize(windowSize),
		grpc.WithInitialConnWindowSize(connWindowSize),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize)),
		// A service back from a restart or an outage is reached again within
		// seconds: gRPC's default backoff between reconnection attempts
		// grows to two minutes.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnectBackoff, MinConnectTimeout: 20 * time.Second}),
		// The retry policy is ours, never a DNS TXT record's.
		grpc.WithDisableServiceConfig(),
		grpc.WithDefaultServiceConfig(serviceConfig()),
		grpc.WithChainUnaryInterceptor(defaultDeadline),
	}, opts...)
	if resolvers != nil {
		opts = append(opts, grpc.WithResolvers(resolvers))
	}
	return grpc.NewClient(target, opts...)
}

// AddressForms is the usage text of a flag taking a service address, after
// its first sentence.
const AddressForms = "; host:port, dns:///name:port (every address the name resolves to, as a headless Service gives) or host:port,host:port,...: calls go round-robin over the replicas that answer"

// listScheme is the resolver scheme of a comma-separated address list.
const listScheme = "atrium-list"

// Target turns a service address as operators give it into a gRPC target,
// with the resolver it needs (nil: one of gRPC's own):
//
//   - host:port, resolved by DNS (gRPC's default scheme) to every address
//     the name has: a Kubernetes headless Service gives one per ready pod;
//   - dns:///name:port, the same, explicitly (dns://server/name:port asks
//     that DNS server);
//   - host1:port,host2:port,...: a fixed list, for replicas without a DNS
//     name that covers them all.
//
// Calls are spread round-robin over every address (see Dial).
func Target(addr string) (string, resolver.Builder, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", nil, errors.New("empty service address")
	}
	if !strings.Contains(addr, ",") {
		return addr, nil, nil
	}
	var state resolver.State
	for a := range strings.SplitSeq(addr, ",") {
		a = strings.TrimSpace(a)
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return "", nil, fmt.Errorf("service address list %q: %q is not host:port (a list takes host:port entries only, separated by commas)", addr, a)
		}
		state.Addresses = append(state.Addresses, resolver.Address{Addr: a})
	}
	r := manual.NewBuilderWithScheme(listScheme)
	r.InitialState(state)
	// The list in the target keeps Conn.Target (shown in health and error
	// messages) saying which replicas these are.
	return listScheme + ":///" + addr, r, nil
}

// defaultDeadline gives a call without a deadline DefaultCallTimeout, so
// that no call can wait forever on a service that accepted it and hangs.
func defaultDeadline(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallTimeout)
		defer cancel()
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// RetriedMethods are the full names (/atrium.crm.v1.CRMService/ListProspects)
// of the unary RPCs Dial retries on UNAVAILABLE: those of the atrium.*
// proto packages linked into the binary whose idempotency_level is
// NO_SIDE_EFFECTS or IDEMPOTENT.
func RetriedMethods() []string {
	var names []string
	for _, n := range retried() {
		names = append(names, "/"+n.Service+"/"+n.Method)
	}
	return names
}

type methodName struct {
	Service string `json:"service"`
	Method  string `json:"method"`
}

// retried reads the descriptors once, when the first connection is dialled:
// by then every proto package of the binary has registered its files.
var retried = sync.OnceValue(func() []methodName {
	var names []methodName
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "atrium.") {
			return true
		}
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				opts, _ := md.Options().(*descriptorpb.MethodOptions)
				if md.IsStreamingClient() || md.IsStreamingServer() || opts.GetIdempotencyLevel() == descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN {
					continue
				}
				names = append(names, methodName{string(sd.FullName()), string(md.Name())})
			}
		}
		return true
	})
	slices.SortFunc(names, func(a, b methodName) int {
		return cmp.Or(cmp.Compare(a.Service, b.Service), cmp.Compare(a.Method, b.Method))
	})
	return names
})

// serviceConfig is the gRPC service config of every Atrium connection:
// round-robin over the replicas, with client-side health checking of
// ReplicaHealthService so that a replica leaves the rotation as soon as it
// stops; the retry policy of the retried methods, and throttling, so that a service
// that is down is not also sent every call three times: each failure costs
// a token of ten, each success earns a tenth back, and retries stop while
// half or fewer remain (after five failures in a row).
var serviceConfig = sync.OnceValue(func() string {
	type retryPolicy struct {
		MaxAttempts          int      `json:"maxAttempts"`
		InitialBackoff       string   `json:"initialBackoff"`
		MaxBackoff           string   `json:"maxBackoff"`
		BackoffMultiplier    float64  `json:"backoffMultiplier"`
		RetryableStatusCodes []string `json:"retryableStatusCodes"`
	}
	type methodConfig struct {
		Name        []methodName `json:"name"`
		RetryPolicy retryPolicy  `json:"retryPolicy"`
	}
	cfg := struct {
		LoadBalancingConfig []map[string]any `json:"loadBalancingConfig"`
		HealthCheckConfig   map[string]any   `json:"healthCheckConfig"`
		MethodConfig        []methodConfig   `json:"methodConfig,omitempty"`
		RetryThrottling     map[string]any   `json:"retryThrottling"`
	}{
		// Every address the target resolves to gets calls in turn, and a
		// replica that goes away (its connection breaks, or its health
		// stream says NOT_SERVING) gets none until it is back: the others
		// take them.
		LoadBalancingConfig: []map[string]any{{"round_robin": map[string]any{}}},
		HealthCheckConfig:   map[string]any{"serviceName": ReplicaHealthService},
		RetryThrottling:     map[string]any{"maxTokens": 10, "tokenRatio": 0.1},
	}
	if names := retried(); len(names) > 0 {
		cfg.MethodConfig = []methodConfig{{Name: names, RetryPolicy: retryPolicy{
			MaxAttempts: MaxAttempts, InitialBackoff: initialBackoff, MaxBackoff: maxBackoff,
			BackoffMultiplier: 2, RetryableStatusCodes: []string{"UNAVAILABLE"},
		}}}
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		panic(err) // static shape: cannot fail
	}
	return string(b)
})

// WithTelemetry makes Dial's client spans and per-RPC metrics with tel's
// providers instead of OpenTelemetry's globals. It is a dial option so that
// every caller of Dial keeps its one call; Dial reads it, gRPC ignores it.
func WithTelemetry(tel *telemetry.Telemetry) grpc.DialOption { return telemetryOption{tel: tel} }

type telemetryOption struct {
	grpc.EmptyDialOption
	tel *telemetry.Telemetry
}
