package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/telemetry"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
)

// installQueryParser sets grpc-gateway's query parameter parser. grpc-gateway
// keeps it in a package variable, not in the mux, so it is set once per
// process, before any mux serves, rather than by each mux's options (which
// would race with muxes already serving when several gateways start in one
// process).
var installQueryParser = sync.OnceFunc(func() {
	runtime.NewServeMux(runtime.SetQueryParameterParser(rest.QueryParser{}))
})

// renderRequest is the metadata asking a service to render its JSON body.
var renderRequest = render.Request()

// newMux builds a grpc-gateway mux speaking Atrium's JSON contract for l.
func (g *Gateway) newMux(l *listener) *runtime.ServeMux {
	installQueryParser()
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, rest.Marshaler()),
		runtime.WithErrorHandler(refusedPrincipal(rest.ErrorHandler(g.cfg.Logger))),
		runtime.WithRoutingErrorHandler(rest.RoutingErrorHandler(g.cfg.Logger, &l.routes.methods)),
		// The cookie first: ResponseHeaders may write the status.
		runtime.WithForwardResponseOption(g.sessionCookies),
		runtime.WithForwardResponseOption(rest.ResponseHeaders),
		runtime.WithDisablePathLengthFallback(),
		runtime.WithDisableHTTPMethodOverride(),
		runtime.WithWriteContentLength(),
		// Of the client's headers only If-Match, Idempotency-Key and Prefer become
		// gRPC metadata (checked by rest.CheckForwardedHeaders in the route
		// middleware); the principal is the only identity a service sees.
		runtime.WithIncomingHeaderMatcher(rest.IncomingHeader),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithMetadata(func(ctx context.Context, r *http.Request) metadata.MD {
			return g.requestMetadata(r, l.render)
		}),
		runtime.WithMiddlewares(g.routeMiddleware(l)),
	)
}

// routeMiddleware runs once grpc-gateway has matched a route, before it
// parses anything: it names the request after its route, authenticates the
// caller (401) and checks the access rule the route's RPC declares (403),
// so that a caller without access learns nothing about its parameters.
func (g *Gateway) routeMiddleware(l *listener) runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		// grpc-gateway wraps each route's handler in its own middleware, so
		// this one serves one pattern: its route is looked up once rather
		// than printing the pattern (several allocations) on every request.
		var known atomic.Pointer[methodRoute]
		return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
			ctx := r.Context()
			var rt *route
			if m := known.Load(); m != nil && m.method == r.Method {
				rt = m.route
			} else {
				pattern, _ := runtime.HTTPPattern(ctx)
				if rt = l.routes.lookup(r.Method, pattern.String()); rt != nil {
					known.Store(&methodRoute{r.Method, rt})
				}
			}
			if rt == nil {
				// Every registered route is in the table; this is a bug.
				pattern, _ := runtime.HTTPPattern(ctx)
				rest.WriteError(ctx, g.cfg.Logger, w, r, status.Errorf(codes.Internal, "no route table entry for %s %s", r.Method, pattern))
				return
			}
			nameRequest(ctx, rt.name, rt.stats)
			p := principal.Principal{Kind: principal.KindAnonymous, Subject: "anonymous"}
			if rt.access.Caller != accessv1.Caller_CALLER_ANYONE {
				var err error
				if p, err = l.authn(r, rt); err != nil {
					rest.WriteError(ctx, g.cfg.Logger, w, r, err)
					return
				}
			} else if l == g.public && strings.HasPrefix(rt.rpc, sessionServicePrefix) {
				// Signing in from another origin's page would sign the
				// browser in as someone else (login CSRF).
				if err := checkSameOrigin(r); err != nil {
					rest.WriteError(ctx, g.cfg.Logger, w, r, err)
					return
				}
				if !g.limitSignIn(w, r, rt) {
					return
				}
			}
			if origin := r.Header.Get("Origin"); l == g.public && origin != "" && p.Kind == principal.KindKey {
				if err := g.checkOrigin(ctx, w, p, origin); err != nil {
					rest.WriteError(ctx, g.cfg.Logger, w, r, apperr.ToStatus(err).Err())
					return
				}
			}
			if err := principal.Authorize(p, rt.access); err != nil {
				rest.WriteError(ctx, g.cfg.Logger, w, r, apperr.ToStatus(err).Err())
				return
			}
			if l == g.public && g.limiter != nil && (p.Kind == principal.KindKey || p.Kind == principal.KindUser) {
				if ok, wait := g.limiter.allow(rateKey(p)); !ok {
					g.limiter.writeRateLimited(w, wait)
					return
				}
			}
			// A long request of a key counts against its key's and its
			// tenant's caps for as long as it runs (next returns when it
			// ends).
			if st, _ := ctx.Value(stateKey{}).(*requestState); st != nil && st.kind != ordinary && l == g.public && (p.Kind == principal.KindKey || p.Kind == principal.KindUser) {
				tenant := tenantOf(p)
				if limit := g.caps.acquire(p.Subject, tenant); limit != "" {
					g.long.refuse(ctx, st.kind, limit)
					g.caps.writeStreamCapped(w, limit)
					return
				}
				defer g.caps.release(p.Subject, tenant)
			}
			for name, v := range params {
				if !utf8.ValidString(v) {
					rest.WriteError(ctx, g.cfg.Logger, w, r, status.Errorf(codes.InvalidArgument,
						"path parameter %s is not valid UTF-8 once percent-decoded", name))
					return
				}
			}
			if err := rest.CheckForwardedHeaders(r.Header); err != nil {
				rest.WriteError(ctx, g.cfg.Logger, w, r, err)
				return
			}
			// grpc-gateway reads no query parameters for routes with a body;
			// refuse them rather than ignore them. A streaming route reads
			// its own (the raw upload's ?filename=).
			if r.Method != http.MethodGet && r.URL.RawQuery != "" && !rt.streaming && !rt.takesQuery(r.URL.Query()) {
				rest.WriteError(ctx, g.cfg.Logger, w, r, status.Errorf(codes.InvalidArgument,
					"%s %s takes no query parameters; send its fields in the JSON body", r.Method, r.URL.Path))
				return
			}
			ctx = principal.NewContext(ctx, p)
			// grpc-gateway forwards Authorization to the service whatever the
			// header matcher says; the service must not see the key.
			r.Header.Del("Authorization")
			if l.render {
				// A rendered body is received into a pooled buffer and written
				// from there; the buffer goes back once the response is out.
				var rel *render.Releaser
				ctx, rel = render.WithReleaser(ctx)
				defer rel.Release()
			}
			next(w, r.WithContext(ctx), params)
		}
	}
}

// methodRoute is the route a request method reaches through one of
// routeMiddleware's handlers.
type methodRoute struct {
	method string
	route  *route
}

// refusedPrincipal wraps the mux's error handler. The gateway answers
// every client credential problem itself (401) before calling a service,
// so a service that answers Unauthenticated refuses the gateway's own
// signed principal: the processes were given different internal secrets.
// That is a fault of the deployment, not of the caller's key, so it is a
// 500 whose log line names the cause (and /readyz says the same).
func refusedPrincipal(next runtime.ErrorHandlerFunc) runtime.ErrorHandlerFunc {
	return func(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
		// The sign-in routes' own Unauthenticated (a wrong password) is
		// the caller's.
		method, _ := runtime.RPCMethod(ctx)
		if st, ok := status.FromError(err); ok && st.Code() == codes.Unauthenticated && !strings.HasPrefix(method, sessionServicePrefix) {
			err = status.Errorf(codes.Internal, "the service refused the gateway's signed principal (%s): is --internal-secret the same in the gateway and the services?", st.Message())
		}
		next(ctx, mux, m, w, r, err)
	}
}

// requestMetadata is the metadata the gateway adds to a request: the
// signed principal, and the request for a rendered body if render. One
// map, made at once: grpc-gateway joins it with the forwarded headers'.
func (g *Gateway) requestMetadata(r *http.Request, render bool) metadata.MD {
	p, ok := principal.FromContext(r.Context())
	if !ok && !render {
		return nil
	}
	md := make(metadata.MD, 3)
	if ok {
		md[principal.MetadataKey] = []string{g.signer.Token(p)}
	}
	if render {
		for k, v := range renderRequest {
			md[k] = v[:len(v):len(v)]
		}
	}
	if ua := auditUserAgent(r.Header.Get("User-Agent")); ua != "" {
		// For the audit trail (platform/audit), under the name
		// grpc-gateway's own matcher would have given it.
		md["grpcgateway-user-agent"] = []string{ua}
	}
	return md
}

// authenticateKey resolves the public listener's API key.
func (g *Gateway) authenticateKey(r *http.Request) (principal.Principal, error) {
	return g.keys.Authenticate(r.Context(), r.Header.Get("Authorization"))
}

func (g *Gateway) authenticateAdmin(r *http.Request, _ *route) (principal.Principal, error) {
	return g.admin.Authenticate(r.Header.Get("Authorization"))
}

// requestState is what the access log line and the metrics of a request
// say; the route is filled in once a route has matched.
type requestState struct {
	route string
	stats *routeStats
	// kind is the kind of long request it is (longreq.go), from its
	// request line and headers; ordinary if none.
	kind longKind
	// tls: the request came over TLS, so a session cookie set in its
	// answer is Secure.
	tls bool
}

type stateKey struct{}

// nameRequest names the request after its route: its span (otelhttp can
// only name it by method), its access log line and its metrics (stats).
func nameRequest(ctx context.Context, route string, stats *routeStats) {
	if st, ok := ctx.Value(stateKey{}).(*requestState); ok {
		st.route, st.stats = route, stats
	}
	span := trace.SpanFromContext(ctx)
	span.SetName(route)
	span.SetAttributes(attribute.String("http.route", route[strings.IndexByte(route, ' ')+1:]))
}

// serve is the chain in front of a listener's mux: tracing, the access log,
// panic recovery, the in-flight bound, header hygiene, the request
// deadline, and the body, read whole under that deadline and the size
// limit before anything parses it.
func (g *Gateway) serve(l *listener, next http.Handler) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.inflight.Add(1)
		defer g.inflight.Done()
		start := time.Now()
		st := &requestState{route: "unmatched", tls: r.TLS != nil}
		sw := &statusWriter{ResponseWriter: w, http1: r.ProtoMajor == 1, draining: &g.draining}
		// A shutdown that ran out of time closes the connections once the
		// handlers return; net/http writes a response only after that, so
		// the 503 the handler wrote must go out first.
		defer func() {
			if g.base.Err() != nil {
				_ = http.NewResponseController(sw).Flush()
			}
		}()
		// A long request has a budget of its own (longreq.go). A transfer
		// (an upload, a file, the event stream) is bounded by its
		// progress, which its handler watches, rather than by one deadline.
		st.kind = l.longKindOf(r)
		transfer := st.kind.transfer()
		base, ref := rest.WithReference(context.WithValue(r.Context(), stateKey{}, st))
		sw.Header().Set(rest.TraceHeader, ref)
		// One context of the two: the cancelable one made for every
		// request and then replaced by the deadline's cost an allocation
		// and a registration with its parent that lasted the request.
		var (
			ctx    context.Context
			cancel context.CancelFunc
		)
		if transfer {
			ctx, cancel = context.WithCancel(base)
		} else {
			ctx, cancel = context.WithTimeout(base, g.cfg.RequestTimeout)
		}
		defer cancel()
		r = r.WithContext(ctx)
		defer func() {
			if v := recover(); v != nil {
				if err, _ := v.(error); errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				if g.forStudio(r) {
					g.cfg.Logger.ErrorContext(ctx, "studio: a page panicked", "path", r.URL.Path, "panic", fmt.Sprint(v))
					g.studio.Refuse(sw, r, http.StatusInternalServerError, "Something went wrong on Atrium's side.",
						"Try again; if it happens again, tell your agency's operator what you were doing.")
				} else {
					rest.WriteError(ctx, g.cfg.Logger, sw, r, status.Errorf(codes.Internal, "panic: %v", v))
				}
			}
			took := time.Since(start)
			g.metrics.record(ctx, st.stats, r.Method, sw.code(), took)
			logRequest(ctx, g.cfg.Logger, r.Method, st.route, sw.code(), took, sw.bytes)
		}()
		switch {
		case l.probes && isProbe(r.URL.Path):
		case st.kind != ordinary:
			if !l.long.acquire() {
				g.long.refuse(ctx, st.kind, capListener)
				writeLongOverloaded(sw, l.long.max)
				return
			}
			defer l.long.release()
			g.long.opened(ctx, st.kind)
			defer g.long.closed(ctx, st.kind)
		default:
			if !l.limit.acquire() {
				writeOverloaded(sw, l.limit.max)
				return
			}
			defer l.limit.release()
		}
		if l == g.public && isPreflight(r) {
			g.preflight(l, sw, r)
			return
		}
		if r.RequestURI == "*" {
			rest.WriteError(ctx, g.cfg.Logger, sw, r, status.Errorf(codes.InvalidArgument,
				"the request target * is not supported; send requests to the routes listed at /openapi.json"))
			return
		}
		// The address the services see (x-forwarded-for, which the audit
		// trail records) is the TCP peer's, or the client a trusted proxy
		// names: grpc-gateway would put a client's own X-Forwarded-For in
		// front of it.
		r.RemoteAddr = forwardedClient(r, g.cfg.trusted)
		r.Header.Del("X-Forwarded-For")
		r.Header.Del("X-Forwarded-Host")
		// A client header Grpc-Metadata-X would otherwise become gRPC metadata x.
		for k := range r.Header {
			if len(k) >= len(runtime.MetadataHeaderPrefix) && strings.EqualFold(k[:len(runtime.MetadataHeaderPrefix)], runtime.MetadataHeaderPrefix) {
				delete(r.Header, k)
			}
		}
		if !transfer && !g.readBody(sw, r) {
			return
		}
		next.ServeHTTP(sw, r)
	})
	// otelhttp makes the server span; the request metrics are the
	// gateway's own (see httpMetrics), so otelhttp's are turned off.
	return otelhttp.NewHandler(h, l.name,
		otelhttp.WithTracerProvider(g.cfg.Telemetry.TracerProvider()),
		otelhttp.WithPropagators(telemetry.Propagator),
		otelhttp.WithMeterProvider(noop.NewMeterProvider()))
}

// readBody reads the request body whole, bounded by the size limit and by
// the request deadline, and gives the handlers a copy. It answers the
// request itself and returns false when the body is too large (413), does
// not arrive in time (408) or ends early (400).
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
		return true
	}
	limit := g.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		g.refuseBody(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large: the limit is %d bytes", limit))
		return false
	}
	deadline, _ := r.Context().Deadline()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(deadline)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	_ = rc.SetReadDeadline(time.Time{})
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		return true
	case errors.As(err, &tooLarge):
		g.refuseBody(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large: the limit is %d bytes", limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		g.refuseBody(w, r, http.StatusRequestTimeout, fmt.Sprintf(
			"the request body did not arrive within the request deadline of %s (%d of %s bytes received)", g.cfg.RequestTimeout, len(body), declared(r)))
	default:
		w.Header().Set("Connection", "close")
		g.refuseBody(w, r, http.StatusBadRequest, fmt.Sprintf(
			"the request body ended before it was complete (%d of %s bytes received)", len(body), declared(r)))
	}
	return false
}

// refuseBody answers a request whose body the gateway would not take: the
// JSON API's {"error": msg}, or for the console's pages the Studio's
// problem page with the same message and what to do about it.
func (g *Gateway) refuseBody(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if !g.forStudio(r) {
		rest.WriteJSON(w, code, rest.Body{Error: msg})
		return
	}
	do := "Send the form again."
	if code == http.StatusRequestEntityTooLarge {
		do = "Choose a smaller file, or ask your agency's operator to raise --max-body-bytes."
	}
	g.studio.Refuse(w, r, code, sentenceOf(msg), do)
}

// forStudio reports whether r is one of the console's pages on the public
// listener (the operator's console on the admin listener answers the same
// way: both are under StudioPath).
func (g *Gateway) forStudio(r *http.Request) bool {
	return g.studio != nil && strings.HasPrefix(r.URL.Path, StudioPath)
}

// sentenceOf makes msg a sentence a page shows: a capital first letter and
// a full stop.
func sentenceOf(msg string) string {
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

func declared(r *http.Request) string {
	if r.ContentLength < 0 {
		return "the chunked"
	}
	return fmt.Sprint(r.ContentLength)
}

// statusWriter remembers the status and size of a response for the access
// log. While the gateway drains, it also closes HTTP/1.1 connections after
// their response: a client then opens a new connection for its next
// request, which a load balancer sends elsewhere, rather than writing it
// on a connection the gateway may be closing at that moment, where it
// would be lost. (HTTP/2 has GOAWAY for this, which Shutdown sends.)
type statusWriter struct {
	http.ResponseWriter
	status   int
	bytes    int
	http1    bool
	draining *atomic.Bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.closeIfDraining()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
		w.closeIfDraining()
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) closeIfDraining() {
	if w.http1 && w.draining != nil && w.draining.Load() {
		w.Header().Set("Connection", "close")
	}
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// ReadFrom keeps the zero-copy path of the writer underneath (sendfile(2)
// for a file), counting what it copies.
func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
		w.closeIfDraining()
	}
	var (
		n   int64
		err error
	)
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{w.ResponseWriter}, r)
	}
	w.bytes += int(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequest writes the access log line of a request. It builds the record
// itself, as Logger.InfoContext would, but with typed attributes and
// without the caller's program counter: the line is the same (the handlers
// Atrium configures do not print the source), and the stack walk and the
// boxing of every value, a few percent of the cheapest requests, are gone.
func logRequest(ctx context.Context, logger *slog.Logger, method, route string, code int, took time.Duration, bytes int) {
	h := logger.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("method", method), slog.String("route", route), slog.Int("status", code),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000), slog.Int("bytes", bytes))
	_ = h.Handle(ctx, rec)
}

// maxUserAgent bounds the User-Agent forwarded to the services, which
// the audit trail keeps (at most 256 bytes there too).
const maxUserAgent = 256

// auditUserAgent is the client's User-Agent as the services receive it:
// printable ASCII only (gRPC metadata refuses the rest, which would fail
// the call), at most maxUserAgent bytes.
func auditUserAgent(ua string) string {
	b := make([]byte, 0, min(len(ua), maxUserAgent))
	for i := 0; i < len(ua) && len(b) < maxUserAgent; i++ {
		if c := ua[i]; c >= 0x20 && c <= 0x7e {
			b = append(b, c)
		}
	}
	return strings.TrimSpace(string(b))
}
