package rpc

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
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
	}, opts...)
	return grpc.NewClient(addr, opts...)
}
