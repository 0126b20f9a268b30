package rpc

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

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

// Dial returns a client connection to an Atrium service at addr, traced so
// that the call joins the caller's trace and measured per RPC (by the
// OpenTelemetry globals, or by the providers WithTelemetry gives). The
// connection is lazy: it connects on first use and reconnects by itself.
//
// Transport security is left to the network (loopback in one process, the
// cluster network or a service mesh in Kubernetes); callers are
// authenticated by the signed principal, not by the transport.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
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
	}, opts...)
	return grpc.NewClient(addr, opts...)
}

// WithTelemetry makes Dial's client spans and per-RPC metrics with tel's
// providers instead of OpenTelemetry's globals. It is a dial option so that
// every caller of Dial keeps its one call; Dial reads it, gRPC ignores it.
func WithTelemetry(tel *telemetry.Telemetry) grpc.DialOption { return telemetryOption{tel: tel} }

type telemetryOption struct {
	grpc.EmptyDialOption
	tel *telemetry.Telemetry
}
