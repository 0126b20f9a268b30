package apperr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ReasonOf returns the reason of an Atrium ErrorInfo detail of st, if any.
func ReasonOf(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == ErrorDomain {
			return info.Reason
		}
	}
	return ""
}

// InternalMessage is what a caller sees for a fault. The gateway adds the
// trace id, which is also in the log line that holds the real error.
const InternalMessage = "internal error"

var kindCodes = map[Kind]codes.Code{
	KindInvalid:            codes.InvalidArgument,
	KindNotFound:           codes.NotFound,
	KindConflict:           codes.AlreadyExists,
	KindUnauthenticated:    codes.Unauthenticated,
	KindPermissionDenied:   codes.PermissionDenied,
	KindUnavailable:        codes.Unavailable,
	KindAborted:            codes.Aborted,
	KindPreconditionFailed: codes.FailedPrecondition,
	KindExhausted:          codes.ResourceExhausted,
}

// ToStatus maps err to the gRPC status the caller receives. It is the only
// place where domain errors become status codes.
func ToStatus(err error) *status.Status {
	var e *Error
	switch {
	case err == nil:
		return status.New(codes.OK, "")
	case errors.As(err, &e):
		if c, ok := kindCodes[e.Kind]; ok {
			st := status.New(c, e.Message)
			if e.Reason != "" {
				if withInfo, err := st.WithDetails(&errdetails.ErrorInfo{Reason: e.Reason, Domain: ErrorDomain}); err == nil {
					st = withInfo
				}
			}
			return st
		}
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, "request canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.New(codes.DeadlineExceeded, "request deadline exceeded")
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.InvalidArgument {
		// Raised by the gRPC runtime itself (a malformed request message).
		return s
	}
	return status.New(codes.Internal, InternalMessage)
}

// UnaryServerInterceptor turns handler errors and panics into statuses via
// ToStatus, logging every fault with its cause. It must be the outermost
// interceptor so that it sees the errors of the others. Calls for which
// passThrough is true (gRPC's own services, such as health, whose statuses
// are part of their protocol) keep their status.
func UnaryServerInterceptor(logger *slog.Logger, passThrough func(fullMethod string) bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		if passThrough != nil && passThrough(info.FullMethod) {
			return handler(ctx, req)
		}
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
				resp = nil
			}
			err = toStatusErr(ctx, logger, info.FullMethod, err)
		}()
		return handler(ctx, req)
	}
}

// StreamServerInterceptor is UnaryServerInterceptor for streaming calls.
func StreamServerInterceptor(logger *slog.Logger, passThrough func(fullMethod string) bool) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		if passThrough != nil && passThrough(info.FullMethod) {
			return handler(srv, ss)
		}
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
			err = toStatusErr(ss.Context(), logger, info.FullMethod, err)
		}()
		return handler(srv, ss)
	}
}

// toStatusErr maps err with ToStatus and logs faults with their cause.
func toStatusErr(ctx context.Context, logger *slog.Logger, method string, err error) error {
	if err == nil {
		return nil
	}
	st := ToStatus(err)
	switch st.Code() {
	case codes.Internal, codes.Unavailable, codes.Aborted:
		// The caller sees a safe message; the log gets the whole chain,
		// the cause that apperr.Error hides included.
		logger.ErrorContext(ctx, "request failed", "method", method, "code", st.Code().String(),
			"error", st.Message(), "cause", Cause(err))
	}
	return st.Err()
}
