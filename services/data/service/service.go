// Package service constructs the data service from its configuration, for
// the atrium binary and for atrium-data.
package service

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/data/internal/adapters/crmgrpc"
	"github.com/atrium-hq/atrium/services/data/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/data/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/data/internal/app"
	"github.com/atrium-hq/atrium/services/data/internal/transport/grpcserver"
)

// Name is the service's name in logs, traces and principals.
const Name = "data"

// Config configures the data service.
type Config struct {
	runner.Config
	// CRMAddr is the CRM service's gRPC address, asked on every read which
	// clients the caller's agency may reach.
	CRMAddr string
}

// Service is a running data service.
type Service struct {
	rt  *runner.Runtime
	crm *grpc.ClientConn
}

// Migrations are the data schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the data service's store, NATS connection and listener.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.CRMAddr == "" {
		return nil, errors.New("data service: the CRM service address is required")
	}
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: events.DataStream.Name, Subjects: events.DataStream.Subjects,
	}, cfg.Config)
	if err != nil {
		return nil, err
	}
	s := &Service{rt: rt}
	if s.crm, err = rpc.Dial(cfg.CRMAddr, rpc.WithTelemetry(cfg.Telemetry), grpc.WithPerRPCCredentials(
		rt.Signer.Credentials(principal.Principal{Kind: principal.KindService, Subject: Name}))); err != nil {
		rt.Close()
		return nil, err
	}
	rt.DependsOn("crm", s.crm)
	st := runner.Store(rt,
		func(db *memdb.DB) app.Store { return memory.New(db) },
		func(db *pgdb.DB) app.Store { return postgres.New(db) })
	grpcserver.NewServer(app.NewDatasets(st, crmgrpc.New(s.crm), app.Clock(time.Now))).Register(rt.GRPC)
	return s, nil
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Ready says why the service cannot take calls now, or nil when it can.
func (s *Service) Ready() error { return s.rt.Ready() }

// Run serves until ctx ends, then shuts down gracefully.
func (s *Service) Run(ctx context.Context) error {
	defer s.crm.Close()
	return s.rt.Run(ctx)
}

// Close releases what New opened, for a service that will not Run.
func (s *Service) Close() {
	s.crm.Close()
	s.rt.Close()
}
