// Package rpc builds the gRPC servers and clients of Atrium services. Every
// service runs the same server: error mapping and panic recovery outermost,
// then principal verification, OpenTelemetry instrumentation, the standard
// health service, and a graceful stop.
package rpc

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
)

// Server is a gRPC server bound to a listener.
type Server struct {
	*grpc.Server
	health *health.Server
	lis    net.Listener
}

// Listen binds addr (host:port; port 0 picks a free one) and returns a
// server whose services are registered by the caller before Serve.
func Listen(addr string, logger *slog.Logger, signer *principal.Signer) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer(
		grpc.StatsHandler(otelgrpc.NewServerHandler()),
		grpc.ChainUnaryInterceptor(
			apperr.UnaryServerInterceptor(logger),
			signer.UnaryServerInterceptor(),
		),
	)
	h := health.NewServer()
	healthpb.RegisterHealthServer(srv, h)
	return &Server{Server: srv, health: h, lis: lis}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// SetServing reports the overall health of the service to probes.
func (s *Server) SetServing(ok bool) {
	st := healthpb.HealthCheckResponse_SERVING
	if !ok {
		st = healthpb.HealthCheckResponse_NOT_SERVING
	}
	s.health.SetServingStatus("", st)
}

// Serve serves until Shutdown.
func (s *Server) Serve() error {
	err := s.Server.Serve(s.lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Shutdown stops accepting calls, waits for in-flight calls to finish until
// ctx ends, then cuts the rest.
func (s *Server) Shutdown(ctx context.Context) {
	s.health.Shutdown()
	done := make(chan struct{})
	go func() {
		s.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.Stop()
		<-done
	}
}
