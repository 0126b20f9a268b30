package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// ServerErrorLog routes net/http's own log lines (a handler that panicked,
// a header written twice) through the structured logger, where caller-sent
// text is escaped like any other value.
func ServerErrorLog(logger *slog.Logger) *log.Logger {
	return slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
}

// Body is the shape of every error response.
type Body struct {
	Error string `json:"error"`
}

// httpStatus is the single mapping from gRPC codes to HTTP statuses.
var httpStatus = map[codes.Code]int{
	codes.OK:                 http.StatusOK,
	codes.Canceled:           499, // the client went away; nobody reads this
	codes.InvalidArgument:    http.StatusBadRequest,
	codes.FailedPrecondition: http.StatusPreconditionFailed, // an If-Match that does not hold
	codes.OutOfRange:         http.StatusBadRequest,
	codes.Unauthenticated:    http.StatusUnauthorized,
	codes.PermissionDenied:   http.StatusForbidden,
	codes.NotFound:           http.StatusNotFound,
	codes.AlreadyExists:      http.StatusConflict,
	codes.Aborted:            http.StatusServiceUnavailable, // a write collided and changed nothing: retry

	codes.ResourceExhausted: http.StatusTooManyRequests,
	codes.Unimplemented:     http.StatusNotImplemented,
	codes.DeadlineExceeded:  http.StatusGatewayTimeout,
	codes.Unavailable:       http.StatusServiceUnavailable,
}

// reasonStatus refines httpStatus for the reasons a service gives in an
// ErrorInfo detail (apperr.Reason*): a code, then the reason.
var reasonStatus = map[codes.Code]map[string]int{
	codes.ResourceExhausted: {apperr.ReasonInsufficientCredits: http.StatusPaymentRequired},
	codes.InvalidArgument:   {apperr.ReasonUnprocessable: http.StatusUnprocessableEntity, apperr.ReasonTooLarge: http.StatusRequestEntityTooLarge},
}

// HTTPStatus returns the HTTP status for a gRPC code; anything unlisted
// (Internal, Unknown, DataLoss) is 500.
func HTTPStatus(c codes.Code) int {
	if s, ok := httpStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// StatusOf returns the HTTP status for st: its code's, or its reason's
// where the service gave one.
func StatusOf(st *status.Status) int {
	if byReason, ok := reasonStatus[st.Code()]; ok {
		if s, ok := byReason[apperr.ReasonOf(st)]; ok {
			return s
		}
	}
	return HTTPStatus(st.Code())
}

// callerMessage returns the message the caller sees for st. Only codes the
// services raise on purpose carry their own message; for the rest the text
// may hold internals (addresses, driver errors), so it is replaced. ref ties
// a fault to its log line.
func callerMessage(st *status.Status, ref string) string {
	switch st.Code() {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.Unauthenticated,
		codes.PermissionDenied, codes.NotFound, codes.AlreadyExists, codes.Aborted:
		if st.Message() == "" {
			// Every error names what was wrong; a service that said nothing
			// still gets its status said in words.
			return strings.ToLower(http.StatusText(HTTPStatus(st.Code())))
		}
		return st.Message()
	case codes.Unavailable:
		return "a backing service is temporarily unavailable; retry with exponential backoff"
	case codes.DeadlineExceeded:
		return "the request timed out; retry with exponential backoff"
	case codes.ResourceExhausted:
		if apperr.ReasonOf(st) != "" && st.Message() != "" {
			return st.Message() // raised on purpose, such as insufficient credits
		}
		return "the request or its response exceeds a size or rate limit"
	case codes.Unimplemented:
		return "this operation is not implemented"
	case codes.Canceled:
		return "request canceled"
	}
	return fmt.Sprintf("internal error; retry with exponential backoff, and quote reference %s if it persists", ref)
}

// reference is the request's reference: its trace id, which is in every
// log line of it in every process; without tracing, a random id made once
// for the request (WithReference).
func reference(ctx context.Context) string {
	if ref, ok := ctx.Value(referenceKey{}).(string); ok {
		return ref
	}
	return newReference(ctx)
}

func newReference(ctx context.Context) string {
	if id := trace.SpanContextFromContext(ctx).TraceID(); id.IsValid() {
		return id.String()
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type referenceKey struct{}

// TraceHeader is the response header that carries the request's reference
// (its trace id), on every answer: a client quotes it, and an SDK puts it
// in its errors.
const TraceHeader = "Atrium-Trace-Id"

// WithReference fixes the request's reference in ctx and returns it, so
// that its header and any error it answers quote the same one.
func WithReference(ctx context.Context) (context.Context, string) {
	ref := newReference(ctx)
	return context.WithValue(ctx, referenceKey{}, ref), ref
}

// ErrorHandler returns the mux error handler: every error, from a service or
// from grpc-gateway itself, becomes {"error": message} with the mapped
// status. Faults are logged with the trace id and never shown.
func ErrorHandler(logger *slog.Logger) runtime.ErrorHandlerFunc {
	return func(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
		WriteError(ctx, logger, w, r, err)
	}
}

// ErrShuttingDown is the cause the gateway cancels requests with when a
// shutdown runs out of time: they answer 503, which clients retry, rather
// than being cut.
var ErrShuttingDown = errors.New("the server is shutting down")

// WriteError writes err as the JSON error body. It is what the error
// handler, the routing error handler and the middlewares all use.
func WriteError(ctx context.Context, logger *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(context.Cause(ctx), ErrShuttingDown) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusServiceUnavailable, Body{Error: "the server is shutting down and did not finish this request; retry it"})
		return
	}
	code, msg := Describe(ctx, logger, r, err)
	h := w.Header()
	responseMetadataHeaders(ctx, w)
	switch code {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="atrium"`)
	case http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		h.Set("Retry-After", "1")
	}
	writeJSON(w, code, Body{Error: msg})
}

// Describe returns the HTTP status and the message of err as WriteError
// answers them (logging a fault with its reference); for an error that
// ends a response already under way (the last line of a stream).
func Describe(ctx context.Context, logger *slog.Logger, r *http.Request, err error) (code int, msg string) {
	var hse *runtime.HTTPStatusError
	if errors.As(err, &hse) {
		// Raised by grpc-gateway for a malformed path (bad escape sequence).
		code, msg = hse.HTTPStatus, "malformed request path: "+hse.Err.Error()
	} else {
		st := status.Convert(err)
		code = StatusOf(st)
		ref := ""
		if code >= 500 {
			ref = reference(ctx)
			logger.ErrorContext(ctx, "request failed", "reference", ref, "method", r.Method, "path", r.URL.Path,
				"status", code, "grpc_code", st.Code().String(), "error", st.Message())
		}
		msg = callerMessage(st, ref)
		if st.Code() == codes.InvalidArgument {
			msg = explainInvalid(ctx, msg)
		}
	}
	return code, msg
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// WriteJSON writes v as a JSON response; for handlers outside the muxes.
func WriteJSON(w http.ResponseWriter, code int, v any) { writeJSON(w, code, v) }

// explainInvalid adds the allowed fields to an unknown-field message from
// the JSON decoder, which knows only the name it did not recognise.
func explainInvalid(ctx context.Context, msg string) string {
	if !strings.Contains(msg, "unknown field") {
		return msg
	}
	method, ok := runtime.RPCMethod(ctx)
	if !ok {
		return msg
	}
	pattern, _ := runtime.HTTPPathPattern(ctx)
	fields := bodyFields(method, pattern)
	if len(fields) == 0 {
		return msg + "; this request takes no body fields"
	}
	return msg + "; allowed fields: " + strings.Join(fields, ", ")
}

// bodyFields lists the JSON fields a method's request body may carry: the
// request message's fields minus those bound to the path.
func bodyFields(method, pattern string) []string {
	name := strings.ReplaceAll(strings.TrimPrefix(method, "/"), "/", ".")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return nil
	}
	var out []string
	fs := md.Input().Fields()
	for i := range fs.Len() {
		n := string(fs.Get(i).Name())
		if !strings.Contains(pattern, "{"+n+"}") {
			out = append(out, n)
		}
	}
	return out
}
