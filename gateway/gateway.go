package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/gateway/internal/oidc"
	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/gateway/mcpserver"
	"github.com/atrium-hq/atrium/gateway/openapi"
	"github.com/atrium-hq/atrium/gateway/studio"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/rpc"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	auditv1 "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

// upstreams is the table of the services behind the gateway: for each, the
// gRPC services whose HTTP routes the gateway serves on the public and the
// admin listener. Adding an interface is adding its registrations here.
var upstreams = []upstream{
	{name: "collections", public: []registration{
		{collectionsv1.CollectionsService_ServiceDesc.ServiceName, handlers(collectionsv1.RegisterCollectionsServiceHandlerClient, collectionsv1.NewCollectionsServiceClient)},
		{collectionsv1.AssetsService_ServiceDesc.ServiceName, handlers(collectionsv1.RegisterAssetsServiceHandlerClient, collectionsv1.NewAssetsServiceClient)},
		{collectionsv1.PreviewLinksService_ServiceDesc.ServiceName, handlers(collectionsv1.RegisterPreviewLinksServiceHandlerClient, collectionsv1.NewPreviewLinksServiceClient)},
		{collectionsv1.SchemaService_ServiceDesc.ServiceName, handlers(collectionsv1.RegisterSchemaServiceHandlerClient, collectionsv1.NewSchemaServiceClient)},
	}, admin: []registration{
		{collectionsv1.CollectionsAdminService_ServiceDesc.ServiceName, handlers(collectionsv1.RegisterCollectionsAdminServiceHandlerClient, collectionsv1.NewCollectionsAdminServiceClient)},
	}},
	{name: "crm", public: []registration{
		{crmv1.CRMService_ServiceDesc.ServiceName, handlers(crmv1.RegisterCRMServiceHandlerClient, crmv1.NewCRMServiceClient)},
		{crmv1.PeopleService_ServiceDesc.ServiceName, handlers(crmv1.RegisterPeopleServiceHandlerClient, crmv1.NewPeopleServiceClient)},
		{crmv1.SessionService_ServiceDesc.ServiceName, handlers(crmv1.RegisterSessionServiceHandlerClient, crmv1.NewSessionServiceClient)},
		{crmv1.AgencyClientsService_ServiceDesc.ServiceName, handlers(crmv1.RegisterAgencyClientsServiceHandlerClient, crmv1.NewAgencyClientsServiceClient)},
	}, admin: []registration{
		{crmv1.CRMAdminService_ServiceDesc.ServiceName, handlers(crmv1.RegisterCRMAdminServiceHandlerClient, crmv1.NewCRMAdminServiceClient)},
	}},
	{name: "data", public: []registration{
		{datav1.DataService_ServiceDesc.ServiceName, handlers(datav1.RegisterDataServiceHandlerClient, datav1.NewDataServiceClient)},
	}, admin: []registration{
		{datav1.DataAdminService_ServiceDesc.ServiceName, handlers(datav1.RegisterDataAdminServiceHandlerClient, datav1.NewDataAdminServiceClient)},
	}},
	{name: "actions", public: []registration{
		{actionsv1.ActionsService_ServiceDesc.ServiceName, handlers(actionsv1.RegisterActionsServiceHandlerClient, actionsv1.NewActionsServiceClient)},
		{actionsv1.ReportsService_ServiceDesc.ServiceName, handlers(actionsv1.RegisterReportsServiceHandlerClient, actionsv1.NewReportsServiceClient)},
		{actionsv1.SchedulesService_ServiceDesc.ServiceName, handlers(actionsv1.RegisterSchedulesServiceHandlerClient, actionsv1.NewSchedulesServiceClient)},
	}, admin: []registration{
		{actionsv1.ActionsAdminService_ServiceDesc.ServiceName, handlers(actionsv1.RegisterActionsAdminServiceHandlerClient, actionsv1.NewActionsAdminServiceClient)},
	}},
	{name: "webhooks", public: []registration{
		{webhooksv1.WebhooksService_ServiceDesc.ServiceName, handlers(webhooksv1.RegisterWebhooksServiceHandlerClient, webhooksv1.NewWebhooksServiceClient)},
	}},
	{name: "audit", public: []registration{
		{auditv1.AuditService_ServiceDesc.ServiceName, handlers(auditv1.RegisterAuditServiceHandlerClient, auditv1.NewAuditServiceClient)},
	}, admin: []registration{
		{auditv1.AuditAdminService_ServiceDesc.ServiceName, handlers(auditv1.RegisterAuditAdminServiceHandlerClient, auditv1.NewAuditAdminServiceClient)},
	}},
}

// handlers adapts a service's generated grpc-gateway registration to any
// connection, in process or over the network.
func handlers[C any](register func(context.Context, *runtime.ServeMux, C) error, client func(grpc.ClientConnInterface) C) func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error {
	return func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
		return register(ctx, mux, client(cc))
	}
}

type upstream struct {
	name          string
	public, admin []registration
}

// registration is one gRPC service's routes on a mux.
type registration struct {
	service  string // full name, atrium.crm.v1.CRMService
	register func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error
}

// Gateway is a running gateway.
type Gateway struct {
	cfg    Config
	signer *principal.Signer
	keys   *auth.Keys
	admin  *auth.AdminToken
	// sessions resolves session cookies, siteOwners the sites people name
	// in Atrium-Site; logins bounds the sign-in attempts (sessions.go).
	sessions   *auth.Sessions
	siteOwners *auth.SiteOwners
	logins     *loginLimiter
	conns      []namedConn // in upstreams' order
	// deps is the last view of the services (dependencies.go).
	deps       dependencies
	depsMetric metric.Registration
	depsWatch  sync.WaitGroup
	// realtimeRun is the realtime hub's feed (realtime.go).
	realtimeRun sync.WaitGroup

	public, adminL *listener
	nats           *nats.Conn
	// limiter is the per-key rate limit of the public listener, nil when off.
	limiter *rateLimiter
	// rp runs single sign-on's flow (oidc.go); nil without --oidc-issuer.
	rp *oidc.RelyingParty
	// studio is the console at /studio/ (studio.go); nil with --studio=false.
	studio *studio.Studio
	// realtime holds the live update streams (realtime.go); nil without
	// NATS.
	realtime *realtimeHub
	// mcpHandler serves /mcp on the public listener (mcp.go).
	mcpHandler http.Handler
	// draining is set once the gateway is asked to stop: /readyz answers
	// 503 and every HTTP/1.1 response closes its connection.
	draining atomic.Bool
	// streamsEnd is closed when the shutdown begins: event streams end
	// then (their clients reconnect to another gateway), or, never idle,
	// they would hold the shutdown for all of its timeout.
	streamsEnd chan struct{}
	endStreams func()
	metrics    *httpMetrics
	// long are the long requests' metrics, caps their per-key and
	// per-tenant caps on the public listener (longreq.go).
	long *longMetrics
	caps *streamCaps

	// base is every request's parent context. Cancelled with
	// rest.ErrShuttingDown when a shutdown runs out of time, so that the requests
	// still running answer 503 instead of being cut.
	base       context.Context
	cancelBase context.CancelCauseFunc
	inflight   sync.WaitGroup

	// waitDrain waits out the drain delay: time.Sleep, but tests end the
	// delay as soon as they have seen the drain instead of sleeping
	// through it.
	waitDrain func(time.Duration)
}

type namedConn struct {
	name string
	conn rpc.Conn
}

// listener is one HTTP listener with its mux and routes.
type listener struct {
	name   string // the server name of its spans: atrium-gateway, atrium-admin
	doc    openapi.Doc
	routes routeTable
	authn  func(*http.Request, *route) (principal.Principal, error)
	// render asks services for rendered JSON bodies (platform/render).
	render bool
	// probes: the listener serves /healthz and /readyz, which the in-flight
	// bound leaves out so that an orchestrator still hears from a busy
	// gateway.
	probes bool
	limit  inFlightLimit
	// long is the budget of its long requests (longreq.go), apart from
	// limit's.
	long inFlightLimit
	// files: the listener serves the file routes (from Config.Objects).
	files bool
	// objects: the gateway has an object store to serve files from.
	objects bool
	srv     *http.Server
	lis     net.Listener
}

// New dials the services, builds both muxes and binds both listeners.
func New(ctx context.Context, cfg Config) (_ *Gateway, err error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g := &Gateway{cfg: cfg, metrics: newHTTPMetrics(cfg.Telemetry.MeterProvider()), waitDrain: time.Sleep, streamsEnd: make(chan struct{}),
		long: newLongMetrics(cfg.Telemetry.MeterProvider()), caps: newStreamCaps(cfg.MaxStreamsPerKey, cfg.MaxStreamsPerTenant)}
	g.endStreams = sync.OnceFunc(func() { close(g.streamsEnd) })
	g.base, g.cancelBase = context.WithCancelCause(context.WithoutCancel(ctx))
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
	publicDoc, err := openapi.Public(cfg.Version)
	if err != nil {
		return nil, err
	}
	adminDoc, err := openapi.Admin(cfg.Version)
	if err != nil {
		return nil, err
	}
	g.public = &listener{name: "atrium-gateway", doc: publicDoc, authn: g.authenticatePublic, render: true, files: true, objects: cfg.Objects != nil}
	g.adminL = &listener{name: "atrium-admin", doc: adminDoc, authn: g.authenticateAdmin, probes: true}
	for _, l := range []*listener{g.public, g.adminL} {
		l.routes.methods.Add(http.MethodGet, "/openapi.json")
		l.limit.max = int64(cfg.MaxInFlight)
		l.long.max = int64(cfg.MaxLongRequests)
	}
	if cfg.RateLimit > 0 {
		g.limiter = newRateLimiter(cfg.RateLimit, cfg.RateLimitBurst, cfg.now)
		go g.limiter.run(g.base) // until close
	}
	g.rp = newRelyingParty(cfg)
	g.logins = newLoginLimiter(cfg.LoginAttemptsPerEmail, cfg.LoginAttemptsPerAddress, cfg.LoginAttemptWindow, cfg.now)
	go g.logins.run(g.base) // until close
	publicMux, adminMux := g.newMux(g.public), g.newMux(g.adminL)
	for _, u := range upstreams {
		addr := cfg.Upstreams[u.name]
		conn, err := cfg.Local.Dial(addr, cfg.Telemetry, render.UnaryClientInterceptor())
		if err != nil {
			return nil, fmt.Errorf("gateway: dial %s service at %s: %w", u.name, addr, err)
		}
		g.conns = append(g.conns, namedConn{u.name, conn})
		for _, side := range []struct {
			l   *listener
			mux *runtime.ServeMux
			rs  []registration
		}{{g.public, publicMux, u.public}, {g.adminL, adminMux, u.admin}} {
			for _, reg := range side.rs {
				if err := side.l.routes.add(reg.service); err != nil {
					return nil, fmt.Errorf("gateway: %w", err)
				}
				if err := reg.register(ctx, side.mux, conn); err != nil {
					return nil, fmt.Errorf("gateway: register %s: %w", reg.service, err)
				}
			}
		}
		if u.name == "collections" {
			// Registered after the generated handler, so it takes the route:
			// the upload streams (upload.go).
			if err := publicMux.HandlePath(http.MethodPost, uploadPath, g.uploadAsset(publicMux, collectionsv1.NewAssetsServiceClient(conn))); err != nil {
				return nil, fmt.Errorf("gateway: %w", err)
			}
		}
		if u.name == "webhooks" {
			// Registered after the generated handler, so it takes the route:
			// the event stream's answer is the gateway's (eventstream.go).
			if err := publicMux.HandlePath(http.MethodGet, eventStreamPath, g.eventStream(publicMux, webhooksv1.NewWebhooksServiceClient(conn))); err != nil {
				return nil, fmt.Errorf("gateway: %w", err)
			}
		}
	}
	g.deps.state = map[string]string{}
	for _, c := range g.conns {
		g.deps.state[c.name] = notChecked
	}
	if err := g.observeDependencies(cfg.Telemetry.MeterProvider()); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.depsWatch.Go(func() { g.watchDependencies(g.base, cfg.dependencyInterval) }) // until close
	for _, l := range []*listener{g.public, g.adminL} {
		for _, rt := range l.routes.all {
			rt.stats = g.metrics.route(rt.method, rt.template)
		}
	}
	mcpSrv, err := mcpserver.New(mcpserver.Config{ReadOnly: cfg.MCPReadOnly, Version: cfg.Version, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.keys = auth.NewKeys(crmv1.NewAPIKeyServiceClient(g.conn("crm")), g.signer, cfg.KeyCacheTTL, cfg.KeyCacheSize, cfg.Telemetry.MeterProvider())
	g.sessions = auth.NewSessions(crmv1.NewSessionAuthServiceClient(g.conn("crm")), g.signer, cfg.KeyCacheTTL, cfg.KeyCacheSize, cfg.Telemetry.MeterProvider())
	g.siteOwners = auth.NewSiteOwners(collectionsv1.NewSiteOwnerServiceClient(g.conn("collections")), g.signer, cfg.KeyCacheTTL, cfg.KeyCacheSize)
	if !cfg.StudioOff {
		if g.studio, err = g.newStudio(); err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	if cfg.NATSURL != "" {
		if err := g.listenForRevocations(); err != nil {
			return nil, err
		}
		js, err := jetstream.New(g.nats)
		if err != nil {
			return nil, fmt.Errorf("gateway: JetStream: %w", err)
		}
		g.realtime = newRealtimeHub(g, js)
		if err := g.realtime.listenForForwards(g.nats); err != nil {
			return nil, fmt.Errorf("gateway: NATS: %w", err)
		}
		g.realtimeRun.Go(func() { g.realtime.run(g.base) }) // until close
	}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		g.public.routes.methods.Add(m, realtimePath)
	}
	for _, l := range []*listener{g.public, g.adminL} {
		addr := cfg.HTTPAddr
		mux := http.Handler(publicMux)
		if l.files {
			mux = g.withStudio(g.withOIDC(g.withMCP(g.withFiles(g.withRealtime(publicMux)))))
		}
		if l == g.adminL {
			addr, mux = cfg.AdminAddr, g.withOperatorStudio(g.withProbes(adminMux))
		}
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("gateway: listen on %s: %w", addr, err)
		}
		if l == g.public {
			g.mcpHandler = mcpSrv.Handler(mcpAPI(lis.Addr(), cfg.Version))
		}
		l.lis = rest.JSONProtocolErrors(lis)
		l.srv = g.httpServer(g.serve(l, g.withDoc(l.doc, mux)))
	}
	return g, nil
}

func (g *Gateway) conn(name string) rpc.Conn {
	for _, c := range g.conns {
		if c.name == name {
			return c.conn
		}
	}
	return nil
}

func (g *Gateway) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// Bodies are read under the request deadline (see serve); this only
		// bounds what that does not cover.
		ReadTimeout:  g.cfg.RequestTimeout + 10*time.Second,
		WriteTimeout: g.cfg.RequestTimeout + 10*time.Second,
		IdleTimeout:  2 * time.Minute,
		// 64 KiB of headers: net/http adds 4 KiB of slack to this.
		MaxHeaderBytes: 60 << 10,
		// OPTIONS * reaches the handler, which answers it in JSON like
		// every other request it cannot serve.
		DisableGeneralOptionsHandler: true,
		BaseContext:                  func(net.Listener) context.Context { return g.base },
		ErrorLog:                     rest.ServerErrorLog(g.cfg.Logger),
	}
}

func (g *Gateway) listenForRevocations() error {
	nc, err := nats.Connect(g.cfg.NATSURL, nats.Name("atrium-gateway"), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("gateway: connect to NATS at %s: %w", g.cfg.NATSURL, err)
	}
	g.nats = nc
	subs := map[string]nats.MsgHandler{
		events.KeyRevoked.Filter(): func(m *nats.Msg) {
			ev, err := events.KeyRevoked.Parse(m.Subject, m.Data)
			if err != nil || ev.KeyID == "" {
				g.cfg.Logger.Warn("ignoring malformed key revocation event", "error", err)
				return
			}
			g.keys.Evict(ev.KeyID)
		},
		// A member's role, sites or client changed, or they were removed:
		// their user's next request is judged afresh.
		events.MemberUpdated.Filter(): func(m *nats.Msg) {
			ev, err := events.MemberUpdated.Parse(m.Subject, m.Data)
			if err != nil {
				g.cfg.Logger.Warn("ignoring malformed member event", "error", err)
				return
			}
			if ev.UserID != "" {
				g.sessions.EvictUser(ev.UserID)
			}
		},
		events.SessionsEnded.Filter(): func(m *nats.Msg) {
			ev, err := events.SessionsEnded.Parse(m.Subject, m.Data)
			if err != nil {
				g.cfg.Logger.Warn("ignoring malformed session event", "error", err)
				return
			}
			g.sessions.EvictSessions(ev.SessionIDs...)
		},
		// A site created (an unknown id may have been cached) or given
		// another owner.
		events.SiteCreated.Filter(): g.evictSite(events.SiteCreated.Parse),
		events.SiteUpdated.Filter(): g.evictSite(events.SiteUpdated.Parse),
	}
	for subject, h := range subs {
		if _, err := nc.Subscribe(subject, h); err != nil {
			return fmt.Errorf("gateway: subscribe to %s: %w", subject, err)
		}
	}
	return nil
}

func (g *Gateway) evictSite(parse func(string, []byte) (events.SiteEvent, error)) nats.MsgHandler {
	return func(m *nats.Msg) {
		ev, err := parse(m.Subject, m.Data)
		if err != nil || ev.ID == "" {
			g.cfg.Logger.Warn("ignoring malformed site event", "error", err)
			return
		}
		g.siteOwners.Evict(ev.ID)
	}
}

// HTTPAddr is the public listener's address.
func (g *Gateway) HTTPAddr() string { return g.public.lis.Addr().String() }

// AdminAddr is the admin listener's address.
func (g *Gateway) AdminAddr() string { return g.adminL.lis.Addr().String() }

// Run serves both listeners until ctx ends, then stops gracefully: for the
// drain delay it answers /readyz 503 while still serving, closing each
// HTTP/1.1 connection after its next response so that clients reconnect
// (through a load balancer that no longer sends here) instead of reusing
// a connection the gateway is about to close; then it stops accepting and
// lets in-flight requests finish. Requests still running when the
// shutdown timeout expires are answered 503 (retry) rather than cut. Run
// then closes the upstream connections. A shutdown that ran out of time is
// still a clean one: Run returns nil.
func (g *Gateway) Run(ctx context.Context) error {
	defer g.close()
	eg, ectx := errgroup.WithContext(ctx)
	for _, l := range []*listener{g.public, g.adminL} {
		eg.Go(func() error {
			if err := l.srv.Serve(l.lis); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
	g.cfg.Logger.Info("gateway listening", "public", g.HTTPAddr(), "admin", g.AdminAddr())
	eg.Go(func() error {
		<-ectx.Done()
		g.draining.Store(true)
		if ctx.Err() != nil && g.cfg.DrainDelay > 0 {
			g.cfg.Logger.Info("draining: /readyz answers 503 while requests are still served", "drain_delay", g.cfg.DrainDelay)
			g.waitDrain(g.cfg.DrainDelay)
		}
		g.shutdown(context.WithoutCancel(ctx))
		g.cfg.Logger.Info("gateway stopped")
		return nil
	})
	return eg.Wait()
}

func (g *Gateway) shutdown(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, g.cfg.ShutdownTimeout)
	defer cancel()
	g.endStreams()
	var wg sync.WaitGroup
	for _, l := range []*listener{g.public, g.adminL} {
		wg.Go(func() { _ = l.srv.Shutdown(sctx) })
	}
	wg.Wait()
	if sctx.Err() == nil {
		return
	}
	// Out of time: the requests still running get 503 and a Retry-After.
	g.cfg.Logger.Warn("shutdown timeout reached; answering the requests still running with 503", "timeout", g.cfg.ShutdownTimeout)
	g.cancelBase(rest.ErrShuttingDown)
	done := make(chan struct{})
	go func() { g.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	for _, l := range []*listener{g.public, g.adminL} {
		_ = l.srv.Close()
	}
}

func (g *Gateway) close() {
	if g.cancelBase != nil {
		g.cancelBase(rest.ErrShuttingDown)
	}
	// The watch and the realtime feed use the connections closed below.
	g.depsWatch.Wait()
	g.realtimeRun.Wait()
	if g.depsMetric != nil {
		_ = g.depsMetric.Unregister()
	}
	if g.nats != nil {
		g.nats.Close()
	}
	if g.keys != nil {
		g.keys.Close()
	}
	if g.sessions != nil {
		g.sessions.Close()
	}
	for _, c := range g.conns {
		_ = c.conn.Close()
	}
	g.conns = nil
	for _, l := range []*listener{g.public, g.adminL} {
		if l != nil && l.lis != nil {
			_ = l.lis.Close()
		}
	}
}
