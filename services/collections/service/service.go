// Package service constructs the collections service from its
// configuration, for the atrium binary and for atrium-collections.
package service

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
	transport "github.com/atrium-hq/atrium/services/collections/internal/transport/grpc"
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
	rt, err := runner.Open(ctx, Name, cfg.Config, postgres.Migrations())
	if err != nil {
		return nil, err
	}
	var st interface {
		app.Store
		Outbox() outbox.Source
	}
	if rt.Memory() {
		st = memory.New(rt.WakeRelay)
	} else {
		st = postgres.New(rt.Pool, rt.WakeRelay)
	}
	if err := rt.RelayOutbox(st.Outbox(), "ATRIUM_COLLECTIONS", app.EventSubjects); err != nil {
		rt.Close()
		return nil, err
	}
	transport.NewServer(app.NewSites(st, app.Clock(time.Now))).Register(rt.GRPC)
	return &Service{rt: rt}, nil
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Run serves until ctx ends, then shuts down gracefully.
func (s *Service) Run(ctx context.Context) error { return s.rt.Run(ctx) }

// Close releases what New opened, for a service that will not Run.
func (s *Service) Close() { s.rt.Close() }
