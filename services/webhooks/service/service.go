// Package service constructs the webhooks service from its configuration,
// for the atrium binary and for atrium-webhooks.
package service

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	jetstreamapi "github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/crmgrpc"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/jetstream"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/webhooks/internal/adapters/webhookhttp"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/retry"
	"github.com/atrium-hq/atrium/services/webhooks/internal/transport/grpcserver"
)

// Name is the service's name in logs, traces and principals.
const Name = "webhooks"

// Streams are the JetStream streams whose events the service delivers:
// every service's (platform/events), its own included (webhook.disabled);
// Subjects are their subject filters, which event streams subscribe to.
var Streams, Subjects = func() (names, subjects []string) {
	for _, s := range events.Streams() {
		names, subjects = append(names, s.Name), append(subjects, s.Subjects)
	}
	return names, subjects
}()

// DefaultConsumer is the name of the durable consumers every replica
// shares (--webhook-consumer).
const DefaultConsumer = "atrium-webhooks"

// Settings are the webhooks service's own settings, bound as flags (and
// ATRIUM_* variables) by both binaries that run it: atrium-webhooks and
// atrium serve.
type Settings struct {
	// Timeout bounds one attempt: a 2xx within it is a success.
	Timeout time.Duration
	// Schedule is the waits between attempts.
	Schedule retry.Schedule
	// DisableAfter disables an endpoint that failed continuously this long.
	DisableAfter time.Duration
	// Workers is how many attempts a replica makes at once; PerEndpoint
	// how many of them one endpoint may hold.
	Workers, PerEndpoint int
	// Retention is how long the delivery log keeps finished deliveries.
	Retention time.Duration
	// Consumer names the durable JetStream consumers of the streams, which
	// the replicas of one deployment share.
	Consumer string
	// AllowPrivate lets endpoints be plain http and on private, loopback
	// and link-local addresses (--allow-private-fetch, local testing).
	AllowPrivate bool
	// Poll is how often a deliverer looks for retries come due when
	// nothing wakes it; tests shorten it.
	Poll time.Duration
	// ConsumerRetry is how long an event whose fan-out failed waits before
	// it is tried again, and how often a stream not yet created is looked
	// for.
	ConsumerRetry time.Duration
	// Heartbeat is how often an idle event stream (ListenEvents) sends a
	// heartbeat; not a flag: zero is grpcserver.DefaultHeartbeat (15 s),
	// under the idle time-outs of common proxies.
	Heartbeat time.Duration
}

// DefaultSettings are the settings' defaults (docs/webhooks.md).
func DefaultSettings() Settings {
	return Settings{Timeout: 15 * time.Second, Schedule: retry.Default, DisableAfter: 5 * 24 * time.Hour, Workers: 256, PerEndpoint: 4,
		Retention: 30 * 24 * time.Hour, Consumer: DefaultConsumer, Poll: time.Second, ConsumerRetry: time.Second}
}

// BindFlags binds the settings to fs, all but --allow-private-fetch,
// which atrium serve shares with the actions service (BindAllowPrivate).
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.Timeout, "webhook-timeout", s.Timeout, "longest a webhook attempt may wait for the endpoint's answer; a 2xx within it is a success")
	fs.Var((*scheduleFlag)(&s.Schedule), "webhook-retry-schedule", "waits between a webhook delivery's attempts, comma-separated Go durations; after the last, the delivery is failed (recoverable)")
	fs.DurationVar(&s.DisableAfter, "webhook-disable-after", s.DisableAfter, "disable a webhook whose attempts have all failed for this long, and announce it (webhook.disabled)")
	fs.IntVar(&s.Workers, "webhook-workers", s.Workers, "webhook attempts a replica makes at once")
	fs.IntVar(&s.PerEndpoint, "webhook-endpoint-concurrency", s.PerEndpoint, "most attempts one webhook endpoint may hold at once in a replica, so that a slow endpoint leaves the other workers to the rest")
	fs.DurationVar(&s.Retention, "webhook-log-retention", s.Retention, "how long finished webhook deliveries stay in the delivery log (and recoverable)")
	fs.StringVar(&s.Consumer, "webhook-consumer", s.Consumer, "name of the durable JetStream consumers the webhooks replicas share; only two deployments on one NATS server need different ones")
}

// BindAllowPrivate binds --allow-private-fetch, for atrium-webhooks.
func (s *Settings) BindAllowPrivate(fs *flag.FlagSet) {
	fs.BoolVar(&s.AllowPrivate, "allow-private-fetch", s.AllowPrivate, "let webhook endpoints be plain http and on private, loopback, link-local and CGNAT addresses (local testing only)")
}

// Validate reports the first setting out of range.
func (s Settings) Validate() error {
	switch {
	case s.Timeout <= 0:
		return fmt.Errorf("--webhook-timeout must be positive; got %s", s.Timeout)
	case s.DisableAfter < 0:
		return fmt.Errorf("--webhook-disable-after must not be negative (0 never disables); got %s", s.DisableAfter)
	case s.Workers < 1:
		return fmt.Errorf("--webhook-workers must be at least 1; got %d", s.Workers)
	case s.PerEndpoint < 0:
		return fmt.Errorf("--webhook-endpoint-concurrency must not be negative (0 is no bound); got %d", s.PerEndpoint)
	case strings.ContainsAny(s.Consumer, ".*> \t"):
		return fmt.Errorf("--webhook-consumer must be a NATS consumer name (no spaces, dots, * or >); got %q", s.Consumer)
	case s.Retention < 0:
		return fmt.Errorf("--webhook-log-retention must not be negative (0 keeps every delivery); got %s", s.Retention)
	}
	return nil
}

// scheduleFlag reads --webhook-retry-schedule.
type scheduleFlag retry.Schedule

func (f *scheduleFlag) String() string { return retry.Schedule(*f).String() }

func (f *scheduleFlag) Set(v string) error {
	s, err := retry.Parse(v)
	if err != nil {
		return err
	}
	*f = scheduleFlag(s)
	return nil
}

// Config configures the webhooks service.
type Config struct {
	runner.Config
	Settings
	// CRMAddr is the CRM service's gRPC address, asked which agencies a
	// client is linked to when one of its datasets changes.
	CRMAddr string
}

// Service is a running webhooks service.
type Service struct {
	rt  *runner.Runtime
	crm *grpc.ClientConn
}

// Migrations are the webhooks schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the webhooks service's store, NATS connection and listener,
// and sets up its consumer of the streams and its deliverer, which run
// beside it.
func New(ctx context.Context, cfg Config) (_ *Service, err error) {
	if cfg.CRMAddr == "" {
		return nil, errors.New("webhooks service: the CRM service address is required")
	}
	d := DefaultSettings()
	if cfg.Poll <= 0 {
		cfg.Poll = d.Poll
	}
	if cfg.ConsumerRetry <= 0 {
		cfg.ConsumerRetry = d.ConsumerRetry
	}
	if cfg.Consumer == "" {
		cfg.Consumer = d.Consumer
	}
	if err := cfg.Settings.Validate(); err != nil {
		return nil, fmt.Errorf("webhooks service: %w", err)
	}
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: events.WebhooksStream.Name, Subjects: events.WebhooksStream.Subjects,
	}, cfg.Config)
	if err != nil {
		return nil, err
	}
	s := &Service{rt: rt}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.crm, err = rpc.Dial(cfg.CRMAddr, rpc.WithTelemetry(cfg.Telemetry), grpc.WithPerRPCCredentials(
		rt.Signer.Credentials(principal.Principal{Kind: principal.KindService, Subject: Name}))); err != nil {
		return nil, err
	}
	rt.DependsOn("crm", s.crm)
	st := runner.Store(rt,
		func(db *memdb.DB) app.Store { return memory.New(db) },
		func(db *pgdb.DB) app.Store { return postgres.New(db) })
	guard := &netguard.Guard{AllowPrivate: cfg.AllowPrivate}
	tel := cfg.Telemetry
	deliverer := &app.Deliverer{Store: st, Sender: webhookhttp.New(guard, cfg.Workers), Schedule: cfg.Schedule, Timeout: cfg.Timeout,
		DisableAfter: cfg.DisableAfter, Batch: cfg.Workers, PerEndpoint: cfg.PerEndpoint, Retention: cfg.Retention,
		Logger: cfg.Logger.With("service", Name), Meters: tel.MeterProvider(), Tracer: tel.TracerProvider()}
	fanout := &app.Fanout{Store: st, Links: crmgrpc.New(s.crm), Added: deliverer.Wake}
	js, err := rt.JetStream()
	if err != nil {
		return nil, fmt.Errorf("webhooks service: %w", err)
	}
	consumer := &jetstream.Consumer{JS: js, Streams: Streams, Durable: cfg.Consumer, RetryDelay: cfg.ConsumerRetry, Concurrency: 32,
		Logger: cfg.Logger.With("service", Name), Tracer: tel.TracerProvider(),
		Handle: func(ctx context.Context, id, subject string, payload []byte, at time.Time) error {
			_, err := fanout.Handle(ctx, id, subject, payload, at)
			return err
		}}
	reg, err := app.ObserveBacklog(st, tel.MeterProvider(), time.Now)
	if err != nil {
		return nil, fmt.Errorf("webhooks service: backlog metrics: %w", err)
	}
	rt.Go("consumer", consumer.Run)
	rt.Go("deliverer", func(ctx context.Context) error {
		defer func() { _ = reg.Unregister() }()
		return deliverer.Run(ctx, cfg.Poll)
	})
	endpoints := &app.Endpoints{Store: st, Guard: guard}
	// Event streams end when the drain begins, as the loops do.
	draining := make(chan struct{})
	rt.Go("event-streams", func(ctx context.Context) error {
		<-ctx.Done()
		close(draining)
		return nil
	})
	listen := &app.Listen{Source: &jetstream.Live{NC: js.Conn(), Subjects: Subjects}, Links: crmgrpc.New(s.crm)}
	grpcserver.NewServer(endpoints, &app.Log{Store: st, Deliverer: deliverer}, deliverer).
		WithEventStreams(listen, cfg.Heartbeat, draining).Register(rt.GRPC)
	return s, nil
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Ready says why the service cannot take calls now, or nil when it can.
func (s *Service) Ready() error { return s.rt.Ready() }

// Run serves until ctx ends, then shuts down gracefully; the consumer and
// the deliverer stop when the drain begins.
func (s *Service) Run(ctx context.Context) error {
	defer s.crm.Close()
	return s.rt.Run(ctx)
}

// Close releases what New opened, for a service that will not Run.
func (s *Service) Close() {
	if s.crm != nil {
		s.crm.Close()
	}
	s.rt.Close()
}

// DeleteConsumers removes the durable consumers named name from every
// stream the service consumes: what is left of a retired deployment, or of
// a test's or a benchmark's own consumer on a shared NATS server.
func DeleteConsumers(ctx context.Context, js jetstreamapi.JetStream, name string) error {
	var errs []error
	for _, stream := range Streams {
		if err := js.DeleteConsumer(ctx, stream, name); err != nil &&
			!errors.Is(err, jetstreamapi.ErrConsumerNotFound) && !errors.Is(err, jetstreamapi.ErrStreamNotFound) {
			errs = append(errs, fmt.Errorf("%s: %w", stream, err))
		}
	}
	return errors.Join(errs...)
}
