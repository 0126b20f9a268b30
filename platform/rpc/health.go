package rpc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// HealthCauseKey is the response header in which a NOT_SERVING health
// check says why: the standard health protocol has a status and nothing
// else, and an operator reading a readiness failure needs the reason.
const HealthCauseKey = "x-atrium-health-cause"

// Causes every service may report.
const (
	// CauseStarting: the service has not yet checked what it depends on.
	CauseStarting = "starting"
	// CauseShuttingDown: the service received SIGTERM and is draining. It
	// still answers calls until its drain delay ends, and its callers'
	// connections move to another replica when it closes them, so callers
	// need not treat it as down.
	CauseShuttingDown = "shutting down"
)

// ReplicaHealthService is the health service name clients watch to pick
// replicas (gRPC client-side health checking, see Dial): SERVING from the
// moment the server listens until its Shutdown begins. It says "this
// process takes calls", not "everything it depends on works": a replica
// whose database is down still answers, with the error that says so, and
// when every replica is in that state the caller hears why instead of
// "no healthy replica".
const ReplicaHealthService = "atrium.replica"

// healthServer is gRPC's health service that also sends the cause of a
// NOT_SERVING status in the HealthCauseKey header.
type healthServer struct {
	*health.Server
	cause atomic.Pointer[string]
}

func (h *healthServer) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	resp, err := h.Server.Check(ctx, req)
	if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING {
		if c := h.cause.Load(); c != nil && *c != "" {
			_ = grpc.SetHeader(ctx, metadata.Pairs(HealthCauseKey, headerSafe(*c)))
		}
	}
	return resp, err
}

// headerSafe keeps printable ASCII, which any gRPC header value may hold,
// and bounds the length.
func headerSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	if len(b) > 512 {
		b = append(b[:509], "..."...)
	}
	return string(b)
}

// Upstream is a service a process calls, as its readiness sees it.
type Upstream struct {
	// Name is the service's name (crm).
	Name string
	// Conn is the connection the process calls it on.
	Conn Conn
}

// Check calls the upstream's health service on the connection the caller
// uses for real calls, with ctx carrying the caller's signed principal
// (or the connection adding it), and returns nil when the caller can use
// the upstream, otherwise an error that says why in words an operator can
// act on. caller names the calling process in the message ("gateway",
// "data service").
//
// Unreachable, or rejecting the caller's principal, is always a failure;
// a principal signed with another secret is reported as that, since every
// real call would fail the same way. A NOT_SERVING upstream is a failure
// only when requireServing is set, and never while it is shutting down:
// it still serves then, and the connection moves to another replica once
// it closes.
func (u Upstream) Check(ctx context.Context, caller string, requireServing bool) error {
	var header metadata.MD
	resp, err := healthpb.NewHealthClient(u.Conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header))
	if err != nil {
		st := status.Convert(err)
		switch {
		case st.Code() == codes.Unauthenticated && apperr.ReasonOf(st) == apperr.ReasonPrincipalSignature:
			return fmt.Errorf("the principal signing secret differs between the %s and the %s service: every call would be refused; give every process the same --internal-secret (ATRIUM_INTERNAL_SECRET)", caller, u.Name)
		case st.Code() == codes.Unauthenticated:
			return fmt.Errorf("the %s service refuses the %s's principal: %s", u.Name, caller, st.Message())
		case st.Code() == codes.DeadlineExceeded || ctx.Err() != nil:
			return fmt.Errorf("the %s service at %s did not answer its health check in time", u.Name, shownTarget(u.Conn.Target()))
		case st.Code() == codes.Unavailable:
			return fmt.Errorf("the %s service at %s is unreachable (%s)", u.Name, shownTarget(u.Conn.Target()), lastPart(st.Message()))
		}
		return fmt.Errorf("the %s service at %s failed its health check: %s: %s", u.Name, shownTarget(u.Conn.Target()), st.Code(), st.Message())
	}
	if resp.GetStatus() == healthpb.HealthCheckResponse_SERVING || !requireServing {
		return nil
	}
	cause := "no cause given"
	if v := header.Get(HealthCauseKey); len(v) > 0 {
		cause = v[0]
	}
	if cause == CauseShuttingDown {
		return nil
	}
	return fmt.Errorf("the %s service is %s: %s", u.Name, resp.GetStatus(), cause)
}

// shownTarget is a connection's target as the operator wrote it: a list
// without the scheme Dial gave it.
func shownTarget(target string) string { return strings.TrimPrefix(target, listScheme+":///") }

// lastPart is the innermost reason of a gRPC transport error, which nests
// them ("connection error: desc = \"transport: Error while dialing: dial
// tcp 10.0.0.1:9092: connect: connection refused\"").
func lastPart(msg string) string {
	msg = strings.TrimRight(msg, `"`)
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		return msg[i+2:]
	}
	return msg
}
