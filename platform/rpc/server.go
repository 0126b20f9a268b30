// Package rpc builds the gRPC servers and clients of Atrium services. Every
// service runs the same server: error mapping and panic recovery outermost,
// then principal verification against the method's access rule, the
// maxima of the requests' lists and maps (value.CheckItems), OpenTelemetry
// instrumentation, the standard health service (answering for
// "" and for each service's own name), server reflection, and a graceful
// stop.
package rpc

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// MaxConnectionAge is how long a client's connection to a service lasts
// before the service asks it to connect again (see Listen).
const MaxConnectionAge = 5 * time.Minute

// Server is a gRPC server bound to a listener, which callers in the same
// process may also call without it (see Local).
type Server struct {
	*grpc.Server
	health *healthServer
	lis    net.Listener
	local  *localServer
	// addr is lis's address as the in-process calls give it (local.go),
	// and peer the peer they give the handlers, one for every call
	// (nothing changes a peer it reads).
	addr net.Addr
	peer *peer.Peer
}

// Listen binds addr (host:port; port 0 picks a free one) and returns a
// server whose services are registered by the caller before Serve. Its
// spans and per-RPC metrics go to tel (nil: OpenTelemetry's globals).
func Listen(addr string, logger *slog.Logger, signer *principal.Signer, tel *telemetry.Telemetry) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	calls := newCallMetrics(tel.MeterProvider(), true, "")
	// otelgrpc makes the spans; the call metrics are callMetrics'.
	spans := otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(tel.TracerProvider()),
		otelgrpc.WithMeterProvider(noop.NewMeterProvider()), otelgrpc.WithPropagators(telemetry.Propagator))
	// The call metrics outermost, so that they see the status code the
	// caller gets, after the error mapping. One chain for the network and
	// for callers in process.
	unary := chainUnaryServer(
		calls.unaryServer,
		apperr.UnaryServerInterceptor(logger, principal.Infrastructure),
		signer.UnaryServerInterceptor(),
		checkItemsUnary,
	)
	srv := grpc.NewServer(
		grpc.StatsHandler(spans),
		// Fixed windows, large enough for a page of a thousand rows, also
		// turn off the bandwidth-delay probe, whose PING frames cost a
		// syscall each on every connection that carries a response.
		grpc.InitialWindowSize(windowSize),
		grpc.InitialConnWindowSize(connWindowSize),
		grpc.MaxRecvMsgSize(MaxMessageSize),
		// Clients keep one connection per service and send every call on
		// it; behind a Kubernetes Service that is one pod per client until
		// the connection ends. Ending each connection after a while (with
		// a GOAWAY and time for its calls to finish) makes clients connect
		// again, so that calls spread over the pods, new ones included.
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionAge: MaxConnectionAge, MaxConnectionAgeGrace: 30 * time.Second}),
		// Rendered pages go out without being copied again (platform/render).
		grpc.ForceServerCodecV2(render.ServerCodec{}),
		grpc.UnaryInterceptor(unary),
		grpc.ChainStreamInterceptor(
			calls.streamServer,
			apperr.StreamServerInterceptor(logger, principal.Infrastructure),
			signer.StreamServerInterceptor(),
			checkItemsStream,
		),
	)
	s := &Server{Server: srv, health: &healthServer{Server: health.NewServer()}, lis: lis, local: newLocalServer(unary, spans),
		addr: shownAddr{lis.Addr(), lis.Addr().String()}}
	s.peer = &peer.Peer{Addr: s.addr, LocalAddr: s.addr}
	healthpb.RegisterHealthServer(s, s.health)
	// health.Shutdown turns it NOT_SERVING when the server stops.
	s.health.SetServingStatus(ReplicaHealthService, healthpb.HealthCheckResponse_SERVING)
	// Reflection lets grpcurl and other tools list and describe the services
	// without the .proto files. It describes the API, not anyone's data.
	reflection.Register(s)
	return s, nil
}

// RegisterService registers a service's implementation for the network
// and for callers in process (implementing grpc.ServiceRegistrar).
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	s.Server.RegisterService(desc, impl)
	s.local.register(desc, impl)
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// SetHealth reports the health of the process to probes: SERVING when
// cause is empty, otherwise NOT_SERVING with cause (see HealthCauseKey).
// It applies to the empty service name and to each service registered on
// the server (atrium.crm.v1.CRMService), so that a client may check the
// service it calls. A name the server does not serve answers NOT_FOUND.
func (s *Server) SetHealth(cause string) {
	st := healthpb.HealthCheckResponse_SERVING
	if cause != "" {
		st = healthpb.HealthCheckResponse_NOT_SERVING
	}
	s.health.cause.Store(&cause)
	s.health.SetServingStatus("", st)
	for name := range s.GetServiceInfo() {
		if !principal.Infrastructure("/" + name + "/") {
			s.health.SetServingStatus(name, st)
		}
	}
}

// Serving reports whether the health service says the process serves (the
// status of the empty service name, which SetServing sets).
func (s *Server) Serving() bool {
	resp, err := s.health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
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
	s.health.cause.Store(new(CauseShuttingDown))
	s.health.Shutdown()
	done := make(chan struct{})
	go func() {
		s.GracefulStop()
		close(done)
	}()
	s.local.stop(ctx)
	select {
	case <-done:
	case <-ctx.Done():
		s.Stop()
		<-done
	}
}
