// Package service constructs the audit service from its configuration,
// for the atrium binary and for atrium-audit.
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
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/collectionsgrpc"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/jetstream"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
	"github.com/atrium-hq/atrium/services/audit/internal/transport/grpcserver"
)

// Name is the service's name in logs, traces and principals.
const Name = "audit"

// DefaultConsumer is the name of the durable consumer every replica
// shares (--audit-consumer).
const DefaultConsumer = "atrium-audit"

// Settings are the audit service's own settings, bound as flags (and
// ATRIUM_* variables) by both binaries that run it: atrium-audit and
// atrium serve.
type Settings struct {
	// Retention is how long an event is kept; 0 keeps every event.
	Retention time.Duration
	// Consumer names the durable JetStream consumer the replicas share.
	Consumer string
	// PruneInterval is how often the retention looks for events past it;
	// not a flag: zero is app.DefaultPruneInterval.
	PruneInterval time.Duration
	// ConsumerRetry is how long an event that could not be kept waits
	// before it is tried again, and how often a stream not yet created is
	// looked for; not a flag: zero is a second.
	ConsumerRetry time.Duration
	// Stream is the stream consumed; not a flag: empty is
	// events.AuditStream (tests consume streams of their own).
	Stream string
}

// DefaultSettings are the settings' defaults (docs/audit.md).
func DefaultSettings() Settings {
	return Settings{Retention: app.DefaultRetention, Consumer: DefaultConsumer, PruneInterval: app.DefaultPruneInterval,
		ConsumerRetry: time.Second, Stream: events.AuditStream.Name}
}

// BindFlags binds the settings to fs.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.Retention, "audit-retention", s.Retention, "how long the audit trail keeps an event (0 keeps every event); older ones are deleted within an hour")
	fs.StringVar(&s.Consumer, "audit-consumer", s.Consumer, "name of the durable JetStream consumer the audit replicas share; only two deployments on one NATS server need different ones")
}

// Validate reports the first setting out of range.
func (s Settings) Validate() error {
	switch {
	case s.Retention < 0:
		return fmt.Errorf("--audit-retention must not be negative (0 keeps every event); got %s", s.Retention)
	case s.Consumer == "" || strings.ContainsAny(s.Consumer, ".*> \t"):
		return fmt.Errorf("--audit-consumer must be a NATS consumer name (not empty, no spaces, dots, * or >); got %q", s.Consumer)
	}
	return nil
}

// Config configures the audit service.
type Config struct {
	runner.Config
	Settings
	// CollectionsAddr is the collections service's gRPC address, asked
	// which agency owns a site whose event names none.
	CollectionsAddr string
}

// Service is a running audit service.
type Service struct {
	rt          *runner.Runtime
	collections *grpc.ClientConn
}

// Migrations are the audit schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the audit service's store, NATS connection and listener, and
// sets up its consumer of the audit stream and its retention, which run
// beside it.
func New(ctx context.Context, cfg Config) (_ *Service, err error) {
	if cfg.CollectionsAddr == "" {
		return nil, errors.New("audit service: the collections service address is required")
	}
	d := DefaultSettings()
	if cfg.PruneInterval <= 0 {
		cfg.PruneInterval = d.PruneInterval
	}
	if cfg.ConsumerRetry <= 0 {
		cfg.ConsumerRetry = d.ConsumerRetry
	}
	if cfg.Stream == "" {
		cfg.Stream = d.Stream
	}
	if err := cfg.Settings.Validate(); err != nil {
		return nil, fmt.Errorf("audit service: %w", err)
	}
	// The service publishes nothing, but its runtime sets up the stream it
	// consumes, as its owner: with --nats-stream-replicas, updated at each
	// start (the other services only create it when it is missing).
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: events.AuditStream.Name, Subjects: events.AuditStream.Subjects,
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
	if s.collections, err = rpc.Dial(cfg.CollectionsAddr, rpc.WithTelemetry(cfg.Telemetry), grpc.WithPerRPCCredentials(
		rt.Signer.Credentials(principal.Principal{Kind: principal.KindService, Subject: Name}))); err != nil {
		return nil, err
	}
	// Not a dependency the service's health reports (runner.DependsOn):
	// the trail's reads need no other service, and an event whose site's
	// owner cannot be asked now waits in the stream until it can.
	st := runner.Store(rt,
		func(db *memdb.DB) app.Store { return memory.New(db) },
		func(db *pgdb.DB) app.Store { return postgres.New(db) })
	js, err := rt.JetStream()
	if err != nil {
		return nil, fmt.Errorf("audit service: %w", err)
	}
	logger := cfg.Logger.With("service", Name)
	recorder := &app.Recorder{Store: st, Sites: collectionsgrpc.New(s.collections)}
	consumer := &jetstream.Consumer{JS: js, Stream: cfg.Stream, Durable: cfg.Consumer, RetryDelay: cfg.ConsumerRetry, Concurrency: 16,
		Logger: logger, Tracer: cfg.Telemetry.TracerProvider(),
		Permanent: func(err error) bool { return errors.Is(err, app.ErrMalformed) },
		Handle: func(ctx context.Context, id, subject string, payload []byte) error {
			_, err := recorder.Handle(ctx, id, subject, payload)
			return err
		}}
	rt.Go("consumer", consumer.Run)
	retention := &app.Retention{Store: st, Keep: cfg.Retention, Interval: cfg.PruneInterval, Logger: logger}
	rt.Go("retention", retention.Run)
	grpcserver.Register(rt.GRPC, &app.Trail{Store: st})
	return s, nil
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Ready says why the service cannot take calls now, or nil when it can.
func (s *Service) Ready() error { return s.rt.Ready() }

// Run serves until ctx ends, then shuts down gracefully; the consumer and
// the retention stop when the drain begins.
func (s *Service) Run(ctx context.Context) error {
	defer s.collections.Close()
	return s.rt.Run(ctx)
}

// Close releases what New opened, for a service that will not Run.
func (s *Service) Close() {
	if s.collections != nil {
		s.collections.Close()
	}
	s.rt.Close()
}

// DeleteConsumer removes the durable consumer named name from stream: what
// is left of a retired deployment, or of a test's own consumer on a shared
// NATS server.
func DeleteConsumer(ctx context.Context, js jetstreamapi.JetStream, stream, name string) error {
	err := js.DeleteConsumer(ctx, stream, name)
	if errors.Is(err, jetstreamapi.ErrConsumerNotFound) || errors.Is(err, jetstreamapi.ErrStreamNotFound) {
		return nil
	}
	return err
}
