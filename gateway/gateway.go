package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/gateway/openapi"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// Gateway is a running gateway.
type Gateway struct {
	cfg      Config
	signer   *principal.Signer
	keys     *auth.Keys
	admin    *auth.AdminToken
	upstream []upstream
	public   *http.Server
	adminSrv *http.Server
	pubLis   net.Listener
	adminLis net.Listener
	nats     *nats.Conn
}

type upstream struct {
	name string
	conn *grpc.ClientConn
}

// New dials the services, builds both muxes and binds both listeners.
func New(ctx context.Context, cfg Config) (_ *Gateway, err error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g := &Gateway{cfg: cfg}
	defer func() {
		if err != nil {
			g.close()
		}
	}()
	if g.signer, err = principal.NewSigner(cfg.InternalSecret); err != nil {
		return nil, err
	}
	if g.admin, err = auth.NewAdminToken(cfg.AdminToken); err != nil {
		return nil, err
	}
	for _, u := range []struct{ name, addr string }{
		{"crm", cfg.CRMAddr}, {"collections", cfg.CollectionsAddr}, {"data", cfg.DataAddr}, {"actions", cfg.ActionsAddr},
	} {
		conn, err := rpc.Dial(u.addr)
		if err != nil {
			return nil, fmt.Errorf("gateway: dial %s service at %s: %w", u.name, u.addr, err)
		}
		g.upstream = append(g.upstream, upstream{name: u.name, conn: conn})
	}
	crm, collections := g.upstream[0].conn, g.upstream[1].conn
	g.keys = auth.NewKeys(crmv1.NewAPIKeyServiceClient(crm), g.signer, cfg.KeyCacheTTL, cfg.KeyCacheSize)

	publicDoc, err := openapi.Public(cfg.Version)
	if err != nil {
		return nil, err
	}
	adminDoc, err := openapi.Admin(cfg.Version)
	if err != nil {
		return nil, err
	}
	publicMux := g.newMux(publicDoc, g.authenticateKey)
	adminMux := g.newMux(adminDoc, g.authenticateAdmin)
	for _, reg := range []error{
		crmv1.RegisterCRMServiceHandler(ctx, publicMux, crm),
		crmv1.RegisterCRMAdminServiceHandler(ctx, adminMux, crm),
		collectionsv1.RegisterCollectionsAdminServiceHandler(ctx, adminMux, collections),
	} {
		if reg != nil {
			return nil, reg
		}
	}

	if cfg.NATSURL != "" {
		if err := g.listenForRevocations(); err != nil {
			return nil, err
		}
	}
	if g.pubLis, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
		return nil, fmt.Errorf("gateway: listen on %s: %w", cfg.HTTPAddr, err)
	}
	g.pubLis = rest.JSONProtocolErrors(g.pubLis)
	if g.adminLis, err = net.Listen("tcp", cfg.AdminAddr); err != nil {
		return nil, fmt.Errorf("gateway: listen on %s: %w", cfg.AdminAddr, err)
	}
	g.adminLis = rest.JSONProtocolErrors(g.adminLis)
	g.public = g.httpServer(g.outer("atrium-gateway", g.withDoc(publicDoc, publicMux)))
	g.adminSrv = g.httpServer(g.outer("atrium-admin", g.withProbes(g.withDoc(adminDoc, adminMux))))
	return g, nil
}

func (g *Gateway) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      g.cfg.RequestTimeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// installQueryParser sets grpc-gateway's query parameter parser. grpc-gateway
// keeps it in a package variable, not in the mux, so it is set once per
// process, before any mux serves, rather than by each mux's options (which
// would race with muxes already serving when several gateways start in one
// process).
var installQueryParser = sync.OnceFunc(func() {
	runtime.NewServeMux(runtime.SetQueryParameterParser(rest.QueryParser{}))
})

// newMux builds a grpc-gateway mux speaking Atrium's JSON contract, with
// authn as the middleware that runs once a route has matched.
func (g *Gateway) newMux(doc openapi.Doc, authn func(*http.Request) (principal.Principal, error)) *runtime.ServeMux {
	routes := &rest.Routes{}
	for _, r := range doc.Routes {
		routes.Add(r.Method, r.Path)
	}
	routes.Add(http.MethodGet, "/openapi.json")
	installQueryParser()
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, rest.Marshaler()),
		runtime.WithErrorHandler(rest.ErrorHandler(g.cfg.Logger)),
		runtime.WithRoutingErrorHandler(rest.RoutingErrorHandler(g.cfg.Logger, routes)),
		runtime.WithForwardResponseOption(rest.CreatedStatus),
		runtime.WithDisablePathLengthFallback(),
		runtime.WithDisableHTTPMethodOverride(),
		// Nothing from the client's headers becomes gRPC metadata; the
		// principal is the only identity a service sees.
		runtime.WithIncomingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithMetadata(g.signPrincipal),
		runtime.WithMiddlewares(nameSpan, func(next runtime.HandlerFunc) runtime.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
				p, err := authn(r)
				if err != nil {
					rest.WriteError(r.Context(), g.cfg.Logger, w, r, err)
					return
				}
				// grpc-gateway reads no query parameters for routes with a
				// body; refuse them rather than ignore them.
				if r.Method != http.MethodGet && r.URL.RawQuery != "" {
					rest.WriteError(r.Context(), g.cfg.Logger, w, r, status.Errorf(codes.InvalidArgument,
						"%s %s takes no query parameters; send its fields in the JSON body", r.Method, r.URL.Path))
					return
				}
				// grpc-gateway forwards Authorization to the service whatever
				// the header matcher says; the service must not see the key.
				r = r.Clone(principalContext(r.Context(), p))
				r.Header.Del("Authorization")
				next(w, r, params)
			}
		}),
	)
}

// nameSpan names the request's span after its route, which otelhttp cannot
// know.
func nameSpan(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if pattern, ok := runtime.HTTPPathPattern(r.Context()); ok {
			span := trace.SpanFromContext(r.Context())
			span.SetName(r.Method + " " + pattern)
			span.SetAttributes(attribute.String("http.route", pattern))
		}
		next(w, r, params)
	}
}

type principalKey struct{}

func principalContext(ctx context.Context, p principal.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func (g *Gateway) signPrincipal(ctx context.Context, r *http.Request) metadata.MD {
	p, ok := r.Context().Value(principalKey{}).(principal.Principal)
	if !ok {
		return nil
	}
	return metadata.Pairs(principal.MetadataKey, g.signer.Sign(p))
}

// authenticateKey resolves the API key and checks the two rules every
// public route shares: the scope the method needs (GET: read; POST, PUT,
// PATCH, DELETE: write) and the binding the interface needs (a site for
// the collections interface, an agency for the others).
func (g *Gateway) authenticateKey(r *http.Request) (principal.Principal, error) {
	p, err := g.keys.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		return p, err
	}
	need := principal.ScopeWrite
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		need = principal.ScopeRead
	}
	if !p.HasScope(need) {
		have := make([]string, len(p.Scopes))
		for i, s := range p.Scopes {
			have[i] = string(s)
		}
		return p, status.Errorf(codes.PermissionDenied,
			"this API key lacks the %s scope that %s needs (GET needs read; POST, PUT, PATCH and DELETE need write); the key's scopes: %s",
			need, r.Method, strings.Join(have, ", "))
	}
	pattern, _ := runtime.HTTPPathPattern(r.Context())
	switch {
	case strings.HasPrefix(pattern, "/api/public/"):
		if p.SiteID == "" {
			return p, status.Error(codes.PermissionDenied, "this API key is not bound to a site; the collections interface needs a key issued with a site_id")
		}
	case p.AgencyID == "":
		return p, status.Error(codes.PermissionDenied, "this API key is not bound to an agency; this interface needs a key issued with an agency_id")
	}
	return p, nil
}

func (g *Gateway) authenticateAdmin(r *http.Request) (principal.Principal, error) {
	return g.admin.Authenticate(r.Header.Get("Authorization"))
}

// withDoc serves the listener's OpenAPI document at /openapi.json, without
// authentication: it describes the routes, not anyone's data.
func (g *Gateway) withDoc(doc openapi.Doc, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openapi.json" {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: "method " + r.Method + " is not allowed on /openapi.json; allowed: GET"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc.JSON)
	})
}

// outer is the chain in front of both muxes: tracing, panic recovery,
// header hygiene, body limit and the request deadline.
func (g *Gateway) outer(name string, next http.Handler) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				rest.WriteError(r.Context(), g.cfg.Logger, w, r, status.Errorf(codes.Internal, "panic: %v", v))
			}
		}()
		ctx, cancel := context.WithTimeout(r.Context(), g.cfg.RequestTimeout)
		defer cancel()
		r = r.Clone(ctx)
		// A client header Grpc-Metadata-X would otherwise become gRPC metadata x.
		for k := range r.Header {
			if len(k) >= len(runtime.MetadataHeaderPrefix) && strings.EqualFold(k[:len(runtime.MetadataHeaderPrefix)], runtime.MetadataHeaderPrefix) {
				delete(r.Header, k)
			}
		}
		if r.ContentLength > g.cfg.MaxBodyBytes {
			rest.WriteJSON(w, http.StatusRequestEntityTooLarge, rest.Body{Error: fmt.Sprintf("request body too large: the limit is %d bytes", g.cfg.MaxBodyBytes)})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
	return otelhttp.NewHandler(h, name)
}

// withProbes adds /healthz (the process is up) and /readyz (every service
// answers its health check) to the admin listener, unauthenticated so that
// orchestrators can call them.
func (g *Gateway) withProbes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
		if probe && r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: "method " + r.Method + " is not allowed on " + r.URL.Path + "; allowed: GET"})
			return
		}
		switch r.URL.Path {
		case "/healthz":
			rest.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		case "/readyz":
			g.readyz(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	var down []string
	for _, u := range g.upstream {
		resp, err := healthpb.NewHealthClient(u.conn).Check(ctx, &healthpb.HealthCheckRequest{})
		st := resp.GetStatus().String()
		if err != nil {
			st = "UNREACHABLE"
		}
		checks[u.name] = st
		if st != healthpb.HealthCheckResponse_SERVING.String() {
			down = append(down, u.name+" "+st)
		}
	}
	if g.nats != nil {
		checks["nats"] = g.nats.Status().String()
	}
	if len(down) > 0 {
		rest.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{
			"error": "not ready: " + strings.Join(down, ", "), "checks": checks,
		})
		return
	}
	rest.WriteJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": checks})
}

// keyRevoked is the part of the CRM's key.revoked event the gateway reads.
type keyRevoked struct {
	KeyID string `json:"key_id"`
}

// RevocationSubject is where the CRM publishes key revocations.
const RevocationSubject = "atrium.crm.key.revoked"

func (g *Gateway) listenForRevocations() error {
	nc, err := nats.Connect(g.cfg.NATSURL, nats.Name("atrium-gateway"), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("gateway: connect to NATS at %s: %w", g.cfg.NATSURL, err)
	}
	g.nats = nc
	_, err = nc.Subscribe(RevocationSubject, func(m *nats.Msg) {
		var ev keyRevoked
		if err := json.Unmarshal(m.Data, &ev); err != nil || ev.KeyID == "" {
			g.cfg.Logger.Warn("ignoring malformed key revocation event", "error", err)
			return
		}
		g.keys.Evict(ev.KeyID)
	})
	return err
}

// HTTPAddr is the public listener's address.
func (g *Gateway) HTTPAddr() string { return g.pubLis.Addr().String() }

// AdminAddr is the admin listener's address.
func (g *Gateway) AdminAddr() string { return g.adminLis.Addr().String() }

// Run serves both listeners until ctx ends, then stops accepting, lets
// in-flight requests finish (up to the shutdown timeout) and closes the
// upstream connections.
func (g *Gateway) Run(ctx context.Context) error {
	defer g.close()
	eg, ectx := errgroup.WithContext(ctx)
	for _, s := range []struct {
		srv *http.Server
		lis net.Listener
	}{{g.public, g.pubLis}, {g.adminSrv, g.adminLis}} {
		eg.Go(func() error {
			if err := s.srv.Serve(s.lis); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
	g.cfg.Logger.Info("gateway listening", "public", g.HTTPAddr(), "admin", g.AdminAddr())
	eg.Go(func() error {
		<-ectx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.ShutdownTimeout)
		defer cancel()
		return errors.Join(g.public.Shutdown(sctx), g.adminSrv.Shutdown(sctx))
	})
	return eg.Wait()
}

func (g *Gateway) close() {
	if g.nats != nil {
		g.nats.Close()
	}
	for _, u := range g.upstream {
		_ = u.conn.Close()
	}
	for _, l := range []net.Listener{g.pubLis, g.adminLis} {
		if l != nil {
			_ = l.Close()
		}
	}
	g.upstream = nil
}
