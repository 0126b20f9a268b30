// Package runner is the runtime every Atrium service shares: it opens the
// store's database (or none, for the memory store), applies or checks
// migrations, connects to NATS, relays the outbox to JetStream, serves gRPC,
// reports its health (the database, the services it calls, the drain) to
// probes, and shuts all of it down in reverse order.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// DefaultShutdownTimeout bounds a graceful stop unless configured.
const DefaultShutdownTimeout = cli.DefaultShutdownTimeout

// Config is what every Atrium service is configured with.
type Config struct {
	// GRPCAddr is the listen address; port 0 picks a free port.
	GRPCAddr string
	Backing
	// InternalSecret signs and verifies principals between processes.
	InternalSecret []byte
	// ShutdownTimeout bounds how long in-flight calls may take to finish,
	// and the outbox to be published, once the drain delay is over.
	ShutdownTimeout time.Duration
	// DrainDelay is how long the service reports NOT_SERVING after it is
	// asked to stop, while still serving, before it stops accepting calls.
	DrainDelay time.Duration
	Logger     *slog.Logger
	// Telemetry receives the service's spans and metrics; nil reports to
	// OpenTelemetry's globals.
	Telemetry *telemetry.Telemetry
	// MetricsAddr, when set, is the listen address of the service's
	// /metrics, /healthz and /readyz (see MetricsServer).
	MetricsAddr string
	// RelayInterval is how often the outbox relay polls when no commit
	// wakes it, and its first wait after a failed publish; zero is
	// outbox.DefaultInterval. Tests lengthen it to hold the relay in its
	// backoff.
	RelayInterval time.Duration
	// Local, when set, lets the callers of the same process that dial
	// through it call the service in process (rpc.Local): `atrium serve`.
	Local *rpc.Local
}

// Validate reports the first missing or invalid setting.
func (c Config) Validate() error {
	switch {
	case c.GRPCAddr == "":
		return errors.New("gRPC listen address is required")
	case c.NATSURL == "":
		return errors.New("NATS URL is required: services publish their events to NATS JetStream")
	case c.StreamReplicas < 0 || c.StreamReplicas > MaxStreamReplicas:
		return fmt.Errorf("stream replicas (--nats-stream-replicas) must be 1 to %d; got %d", MaxStreamReplicas, c.StreamReplicas)
	case len(c.InternalSecret) < principal.MinSecretLen:
		return fmt.Errorf("internal secret must be at least %d bytes", principal.MinSecretLen)
	case c.DrainDelay < 0:
		return fmt.Errorf("drain delay (--drain-delay) must not be negative; got %s", c.DrainDelay)
	case c.Logger == nil:
		return errors.New("logger is required")
	}
	return nil
}

// Spec is what a service tells the runtime about itself.
type Spec struct {
	// Name is the service's name in logs, traces and principals (crm).
	Name string
	// Migrations are its PostgreSQL schema's migrations.
	Migrations pgdb.Migrations
	// Stream is the JetStream stream its events go to (ATRIUM_CRM), holding
	// Subjects (atrium.crm.>).
	Stream, Subjects string
}

// Runtime is a service's opened infrastructure.
type Runtime struct {
	name   string
	cfg    Config
	logger *slog.Logger

	// Pool is the service's database pool, nil when it runs on the memory store.
	Pool *pgxpool.Pool
	// Signer verifies incoming principals and signs outgoing ones.
	Signer *principal.Signer
	// GRPC is the bound server; register services on it before Run.
	GRPC *rpc.Server

	// Exactly one of mem and pg is set: the transactional core of the
	// service's store, whose outbox the relay publishes.
	mem *memdb.DB
	pg  *pgdb.DB

	nats    *nats.Conn
	metrics *MetricsServer
	// relay is set once Open has the NATS connection; the connection's
	// reconnect handler may run before that, hence the atomic.
	relay atomic.Pointer[outbox.Relay]
	// stream publishes to the service's stream and sets it up.
	stream  *outbox.JetStream
	closers []func()
	// waitDrain waits out the drain delay: time.Sleep, but tests end the
	// delay as soon as they have seen the drain instead of sleeping
	// through it.
	waitDrain func(time.Duration)

	// upstreams are the services this one calls; health is what the
	// runtime reports to probes about them, the database and the drain.
	upstreams []rpc.Upstream
	health    health
	// background are the service's own loops (Go), run beside serving.
	background []backgroundLoop
	// listeners are told when the NATS connection is lost and back
	// (Listen).
	listenersMu sync.Mutex
	listeners   []Listener
}

// backgroundLoop is a loop a service runs beside serving (Runtime.Go).
type backgroundLoop struct {
	name string
	run  func(ctx context.Context) error
}

// Open opens what cfg names for the service spec describes: its database
// (or the memory core), its NATS connection, the relay of its outbox to its
// stream, and its gRPC listener.
func Open(ctx context.Context, spec Spec, cfg Config) (_ *Runtime, err error) {
	name, migrations := spec.Name, spec.Migrations
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s service: %w", name, err)
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.RelayInterval <= 0 {
		cfg.RelayInterval = outbox.DefaultInterval
	}
	r := &Runtime{name: name, cfg: cfg, logger: cfg.Logger.With("service", name), waitDrain: time.Sleep}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.Signer, err = principal.NewSigner(cfg.InternalSecret); err != nil {
		return nil, err
	}
	if cfg.DatabaseURL != "" {
		if r.Pool, err = pgdb.Open(ctx, cfg.DatabaseURL, migrations.Schema, pgdb.WithTracerProvider(cfg.Telemetry.TracerProvider())); err != nil {
			return nil, fmt.Errorf("%s service: %w", name, err)
		}
		r.closers = append(r.closers, r.Pool.Close)
		reg, err := pgdb.ObservePool(r.Pool, name, cfg.Telemetry.MeterProvider())
		if err != nil {
			return nil, fmt.Errorf("%s service: pool metrics: %w", name, err)
		}
		r.closers = append(r.closers, func() { _ = reg.Unregister() })
		if cfg.Migrate {
			applied, err := migrations.Apply(ctx, r.Pool)
			if err != nil {
				return nil, fmt.Errorf("%s service: migrate: %w", name, err)
			}
			if len(applied) > 0 {
				r.logger.Info("applied migrations", "schema", migrations.Schema, "versions", applied)
			}
		}
		if err := migrations.Check(ctx, r.Pool); err != nil {
			return nil, fmt.Errorf("%s service: %w", name, err)
		}
	}
	r.nats, err = nats.Connect(cfg.NATSURL,
		nats.Name("atrium-"+name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				r.logger.Warn("NATS disconnected", "error", err)
			}
			r.tellListeners(false)
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			r.logger.Info("NATS reconnected; relaying pending events")
			// The relay may be sleeping out its backoff from the outage.
			r.WakeRelay()
			r.tellListeners(true)
		}),
		// With RetryOnFailedConnect the first connection may come after
		// Open: a listener waiting for it is told then.
		nats.ConnectHandler(func(*nats.Conn) { r.tellListeners(true) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			// A slow subscriber has lost messages: its listener is told,
			// as for a lost connection, then told it hears again.
			r.logger.Warn("NATS subscription error", "error", err)
			if sub != nil {
				r.tellListeners(false)
				r.tellListeners(true)
			}
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("%s service: connect to NATS at %s: %w", name, cfg.NATSURL, err)
	}
	r.closers = append(r.closers, r.nats.Close)
	if r.Pool != nil {
		r.pg = pgdb.NewDB(r.Pool, r.WakeRelay)
	} else {
		r.mem = memdb.New(r.WakeRelay)
	}
	if err := r.startRelay(spec.Stream, spec.Subjects); err != nil {
		return nil, fmt.Errorf("%s service: %w", name, err)
	}
	if r.GRPC, err = rpc.Listen(cfg.GRPCAddr, r.logger, r.Signer, cfg.Telemetry); err != nil {
		return nil, fmt.Errorf("%s service: listen on %s: %w", name, cfg.GRPCAddr, err)
	}
	cfg.Local.Add(r.GRPC)
	r.health.cause = rpc.CauseStarting
	r.GRPC.SetHealth(rpc.CauseStarting)
	if cfg.MetricsAddr != "" {
		if r.metrics, err = ListenMetrics(cfg.MetricsAddr, cfg.Telemetry.MetricsHandler(), r.Ready, r.logger); err != nil {
			return nil, fmt.Errorf("%s service: listen on %s (--metrics-addr): %w", name, cfg.MetricsAddr, err)
		}
		r.closers = append(r.closers, r.metrics.Close)
	}
	return r, nil
}

// Ready says why the service cannot take calls, or nil when it can: the
// cause its gRPC health reports NOT_SERVING with (starting, stopping, its
// database or an upstream it calls unusable).
func (r *Runtime) Ready() error {
	if cause := r.NotServing(); cause != "" {
		return fmt.Errorf("the %s service is not serving: %s", r.name, cause)
	}
	return nil
}

// MetricsAddr is the address of the /metrics listener, empty when there is
// none.
func (r *Runtime) MetricsAddr() string {
	if r.metrics == nil {
		return ""
	}
	return r.metrics.Addr()
}

// DependsOn declares that the service calls the service called name on
// conn, a connection that signs the service's principal into every call.
// The service reports NOT_SERVING, with the cause, while it cannot use it:
// unreachable, or refusing the principal because the two were given
// different internal secrets. Call it before Run.
func (r *Runtime) DependsOn(name string, conn *grpc.ClientConn) {
	r.upstreams = append(r.upstreams, rpc.Upstream{Name: name, Conn: conn})
}

// Memory reports whether the service runs on the memory store.
func (r *Runtime) Memory() bool { return r.Pool == nil }

// Store builds the service's store on the core the configuration selected:
// memory when there is no database URL, PostgreSQL otherwise. The core's
// outbox is already relayed to the service's stream, and its commits wake
// the relay. This is the one place a service chooses its store.
func Store[S any](r *Runtime, memory func(*memdb.DB) S, postgres func(*pgdb.DB) S) S {
	if r.mem != nil {
		return memory(r.mem)
	}
	return postgres(r.pg)
}

// WakeRelay asks the outbox relay to publish now.
func (r *Runtime) WakeRelay() {
	if relay := r.relay.Load(); relay != nil {
		relay.Wake()
	}
}

func (r *Runtime) startRelay(stream, subjects string) error {
	var src outbox.Source
	if r.mem != nil {
		src = r.mem.Outbox()
	} else {
		src = r.pg.Outbox()
	}
	js, err := jetstream.New(r.nats)
	if err != nil {
		return err
	}
	config := func(name, subjects string) jetstream.StreamConfig {
		return jetstream.StreamConfig{
			Name:     name,
			Subjects: []string{subjects},
			Storage:  jetstream.FileStorage,
			MaxAge:   7 * 24 * time.Hour,
			Replicas: max(1, r.cfg.StreamReplicas),
		}
	}
	pub := outbox.NewJetStream(js, config(stream, subjects))
	if stream != events.AuditStream.Name {
		// Every service's writes put their audit events in its outbox
		// (platform/audit), for the audit trail's stream; the audit
		// service owns that stream's configuration.
		pub.AlsoEnsure(config(events.AuditStream.Name, events.AuditStream.Subjects))
	}
	r.stream = pub
	tel := r.cfg.Telemetry
	reg, err := outbox.ObserveBacklog(src, r.name, tel.MeterProvider())
	if err != nil {
		return fmt.Errorf("outbox metrics: %w", err)
	}
	r.closers = append(r.closers, func() { _ = reg.Unregister() })
	r.relay.Store(outbox.NewRelay(src, pub, r.cfg.RelayInterval, r.logger, outbox.WithTelemetry(outbox.RelayTelemetry{
		TracerProvider: tel.TracerProvider(), MeterProvider: tel.MeterProvider(), Service: r.name, Stream: stream,
	})))
	return nil
}

// Addr is the gRPC listen address.
func (r *Runtime) Addr() string { return r.GRPC.Addr() }

// JetStream is the service's JetStream context on its NATS connection, for
// services that consume streams as well as publish to their own.
func (r *Runtime) JetStream() (jetstream.JetStream, error) { return jetstream.New(r.nats) }

// Listener is what a service keeps from events it hears on plain NATS
// (Listen): a cache that must forget what the events it missed would
// have changed.
type Listener interface {
	// Handle takes one message.
	Handle(subject string, data []byte) bool
	// Listening is called once the subscriptions are in place and each
	// time the connection is back: messages reach Handle from then on.
	Listening()
	// Deaf is called when the connection is lost: messages may be missed
	// from then on.
	Deaf()
}

// Listen subscribes l to subjects on the service's NATS connection, every
// replica hearing every message (no queue group, no JetStream consumer:
// what is missed while the connection is down is not redelivered, which
// l is told by Deaf and Listening).
func (r *Runtime) Listen(l Listener, subjects ...string) error {
	for _, subject := range subjects {
		if _, err := r.nats.Subscribe(subject, func(m *nats.Msg) {
			if !l.Handle(m.Subject, m.Data) {
				r.logger.Warn("ignoring a malformed event", "subject", m.Subject)
			}
		}); err != nil {
			return fmt.Errorf("subscribe to %s: %w", subject, err)
		}
	}
	if err := r.nats.Flush(); err != nil {
		return fmt.Errorf("subscribe to %v: %w", subjects, err)
	}
	r.listenersMu.Lock()
	r.listeners = append(r.listeners, l)
	r.listenersMu.Unlock()
	if r.nats.IsConnected() {
		l.Listening()
	}
	return nil
}

func (r *Runtime) tellListeners(listening bool) {
	r.listenersMu.Lock()
	ls := slices.Clone(r.listeners)
	r.listenersMu.Unlock()
	for _, l := range ls {
		if listening {
			l.Listening()
		} else {
			l.Deaf()
		}
	}
}

// Go adds a loop the service runs beside serving, from Run until it stops:
// a consumer, a deliverer. Its context ends when the service begins to
// drain, and Run waits for it to return before it publishes the last of
// the outbox and closes the store, so that the loop may still write (and
// enqueue events) as it winds down. A loop that returns an error while the
// service is serving stops the service with that error. Call it before Run.
func (r *Runtime) Go(name string, run func(ctx context.Context) error) {
	r.background = append(r.background, backgroundLoop{name, run})
}

// Run serves until ctx ends, then shuts down in this order: it reports
// NOT_SERVING and keeps serving for the drain delay, so that callers and
// load balancers stop sending; it stops accepting calls and lets those in
// flight finish; it publishes what they enqueued; and it closes
// everything. The last two share the shutdown timeout.
func (r *Runtime) Run(ctx context.Context) error {
	defer r.Close()
	relayCtx, stopRelay := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRelay()
	g, gctx := errgroup.WithContext(ctx)
	// The services are registered now: each of their names reports too.
	r.GRPC.SetHealth(rpc.CauseStarting)
	g.Go(r.GRPC.Serve)
	relay := r.relay.Load()
	g.Go(func() error { return relay.Run(relayCtx) })
	g.Go(func() error { r.watchHealth(gctx); return nil })
	g.Go(func() error { r.ensureStream(gctx); return nil })
	// The loops stop when the drain begins; stopped tells the shutdown
	// below when they all have.
	var loops sync.WaitGroup
	for _, l := range r.background {
		loops.Add(1)
		g.Go(func() error {
			defer loops.Done()
			if err := l.run(gctx); err != nil && gctx.Err() == nil {
				return fmt.Errorf("%s: %w", l.name, err)
			}
			return nil
		})
	}
	store := "postgres"
	if r.Memory() {
		store = "memory"
	}
	if r.metrics != nil {
		g.Go(r.metrics.Serve)
	}
	r.logger.Info("serving gRPC", "addr", r.Addr(), "store", store, "metrics", r.MetricsAddr())
	g.Go(func() error {
		<-gctx.Done()
		r.drain()
		if ctx.Err() != nil && r.cfg.DrainDelay > 0 {
			r.logger.Info("draining: reporting NOT_SERVING while still serving", "drain_delay", r.cfg.DrainDelay)
			r.waitDrain(r.cfg.DrainDelay)
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.ShutdownTimeout)
		defer cancel()
		r.GRPC.Shutdown(sctx)
		loops.Wait()
		relay.Drain(sctx)
		stopRelay()
		// Last: probes and scrapes are answered until the end.
		if r.metrics != nil {
			r.metrics.Shutdown(sctx)
		}
		r.logger.Info("stopped")
		return nil
	})
	return g.Wait()
}

// ensureStream creates the service's stream, or updates it to the
// configuration (its replicas), at start rather than at the first event,
// so that a changed --nats-stream-replicas applies at the rollout. A
// failure is logged: the relay tries again before each publish.
func (r *Runtime) ensureStream(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.stream.Ensure(ctx); err != nil && ctx.Err() == nil {
		r.logger.Error("the service's JetStream stream cannot be set up now; events wait in the outbox", "stream", r.stream.Name(),
			"replicas", max(1, r.cfg.StreamReplicas), "error", err)
	}
}

// Close releases what Open opened, in reverse order. Run calls it.
func (r *Runtime) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}
