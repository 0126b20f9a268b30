package apperr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestToStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code codes.Code
		msg  string
	}{
		{Invalid("limit must be 1 to 200; got %d", 0), codes.InvalidArgument, "limit must be 1 to 200; got 0"},
		{fmt.Errorf("wrapped: %w", NotFound("agency %q not found", "x")), codes.NotFound, `agency "x" not found`},
		{Conflict("dup"), codes.AlreadyExists, "dup"},
		{PermissionDenied("no"), codes.PermissionDenied, "no"},
		{Unauthenticated("who"), codes.Unauthenticated, "who"},
		{Unavailable(errors.New("dial tcp 10.0.0.1:5432"), "try later"), codes.Unavailable, "try later"},
		{errors.New("pq: relation \"x\" does not exist"), codes.Internal, InternalMessage},
		{context.Canceled, codes.Canceled, "request canceled"},
		{status.Error(codes.NotFound, "from another service"), codes.Internal, InternalMessage},
	} {
		st := ToStatus(tc.err)
		if st.Code() != tc.code || st.Message() != tc.msg {
			t.Errorf("ToStatus(%v) = %s %q, want %s %q", tc.err, st.Code(), st.Message(), tc.code, tc.msg)
		}
	}
}

func TestInterceptorRecoversPanics(t *testing.T) {
	ic := UnaryServerInterceptor(slog.New(slog.DiscardHandler), nil)
	_, err := ic(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/x/Y"}, func(context.Context, any) (any, error) {
		panic("secret state")
	})
	if status.Code(err) != codes.Internal || status.Convert(err).Message() != InternalMessage {
		t.Fatalf("panic became %v", err)
	}
}

// TestInterceptorLogsCauses: a fault's log line holds what the caller never
// sees, the cause under the message; the caller gets only the message.
func TestInterceptorLogsCauses(t *testing.T) {
	var logs strings.Builder
	ic := UnaryServerInterceptor(slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	_, err := ic(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/x/Y"}, func(context.Context, any) (any, error) {
		return nil, Unavailable(fmt.Errorf("list prospects: %w", errors.New("dial tcp 10.0.0.1:5432: connection refused")), "the database is unreachable")
	})
	if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "the database is unreachable" {
		t.Fatalf("status = %v", err)
	}
	for _, want := range []string{"the database is unreachable", "list prospects", "dial tcp 10.0.0.1:5432: connection refused", "/x/Y"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log line lacks %q: %s", want, logs.String())
		}
	}
}

// TestInterceptorPassesThroughInfrastructure: gRPC's own services keep
// their statuses (health answers NOT_FOUND for an unknown service name).
func TestInterceptorPassesThroughInfrastructure(t *testing.T) {
	ic := UnaryServerInterceptor(slog.New(slog.DiscardHandler), func(m string) bool { return strings.HasPrefix(m, "/grpc.health.v1.Health/") })
	_, err := ic(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/grpc.health.v1.Health/Check"}, func(context.Context, any) (any, error) {
		return nil, status.Error(codes.NotFound, "unknown service")
	})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("health status became %v", err)
	}
}
