package rpc

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
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
// that the call joins the caller's trace. The connection is lazy: it
// connects on first use and reconnects by itself.
//
// Transport security is left to the network (loopback in one process, the
// cluster network or a service mesh in Kubernetes); callers are
// authenticated by the signed principal, not by the transport.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
		grpc.WithInitialWindowSize(windowSize),
		grpc.WithInitialConnWindowSize(connWindowSize),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize)),
	}, opts...)
	return grpc.NewClient(addr, opts...)
}
