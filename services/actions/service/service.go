// Package service constructs the actions service from its configuration, for
// the atrium binary and for atrium-actions.
package service

import (
	"context"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/postgres"
)

// Name is the service's name in logs, traces and principals.
const Name = "actions"

// Config configures the actions service.
type Config struct {
	runner.Config
}

// Service is a running actions service.
type Service struct{ rt *runner.Runtime }

// Migrations are the actions schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the actions service's database, NATS connection and listener.
func New(ctx context.Context, cfg Config) (*Service, error) {
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: "ATRIUM_ACTIONS", Subjects: "atrium.actions.>",
	}, cfg.Config)
	if err != nil {
		return nil, err
	}
	return &Service{rt: rt}, nil
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Run serves until ctx ends, then shuts down gracefully.
func (s *Service) Run(ctx context.Context) error { return s.rt.Run(ctx) }

// Close releases what New opened, for a service that will not Run.
func (s *Service) Close() { s.rt.Close() }
