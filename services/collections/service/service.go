// Package service constructs the collections service from its
// configuration, for the atrium binary and for atrium-collections.
package service

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
	"github.com/atrium-hq/atrium/services/collections/internal/transport/grpcserver"
)

// Name is the service's name in logs, traces and principals.
const Name = "collections"

// Config configures the collections service.
type Config struct {
	runner.Config
}

// Service is a running collections service.
type Service struct{ rt *runner.Runtime }

// Migrations are the collections schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the collections service's store, NATS connection and listener.
func New(ctx context.Context, cfg Config) (*Service, error) {
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: "ATRIUM_COLLECTIONS", Subjects: app.EventSubjects,
	}, cfg.Config)
	if err != nil {
		return nil, err
	}
	st := runner.Store(rt,
		func(db *memdb.DB) app.Store { return memory.New(db) },
		func(db *pgdb.DB) app.Store { return postgres.New(db) })
	clock := app.Clock(time.Now)
	grpcserver.NewServer(app.NewSites(st, clock), app.NewContent(st, clock)).Register(rt.GRPC)
	return &Service{rt: rt}, nil
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Ready says why the service cannot take calls now, or nil when it can.
func (s *Service) Ready() error { return s.rt.Ready() }

// Run serves until ctx ends, then shuts down gracefully.
func (s *Service) Run(ctx context.Context) error { return s.rt.Run(ctx) }

// Close releases what New opened, for a service that will not Run.
func (s *Service) Close() { s.rt.Close() }
