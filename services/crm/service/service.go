// Package service constructs the CRM service from its configuration. The
// atrium binary runs it in-process beside the other services; atrium-crm runs
// it alone for the cluster deployment.
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
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/collectionsgrpc"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
	"github.com/atrium-hq/atrium/services/crm/internal/transport/grpcserver"
)

// Name is the service's name in logs, traces and principals.
const Name = "crm"

// Config configures the CRM service.
type Config struct {
	runner.Config
	// CollectionsAddr is the collections service's gRPC address. The CRM
	// asks it whether a site exists when a key is bound to one.
	CollectionsAddr string
}

// Service is a running CRM service.
type Service struct {
	rt          *runner.Runtime
	collections *grpc.ClientConn
}

// Migrations are the CRM schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the CRM service's store, NATS connection and gRPC listener.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.CollectionsAddr == "" {
		return nil, errors.New("crm service: the collections service address is required")
	}
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: events.CRMStream.Name, Subjects: events.CRMStream.Subjects,
	}, cfg.Config)
	if err != nil {
		return nil, err
	}
	s := &Service{rt: rt}
	if s.collections, err = rpc.Dial(cfg.CollectionsAddr, rpc.WithTelemetry(cfg.Telemetry), grpc.WithPerRPCCredentials(
		rt.Signer.Credentials(principal.Principal{Kind: principal.KindService, Subject: Name}))); err != nil {
		rt.Close()
		return nil, err
	}
	rt.DependsOn("collections", s.collections)
	st := runner.Store(rt,
		func(db *memdb.DB) app.Store { return memory.New(db) },
		func(db *pgdb.DB) app.Store { return postgres.New(db) })
	clock := app.Clock(time.Now)
	grpcserver.NewServer(
		app.NewDirectory(app.DirectoryStoreOf(st), clock),
		app.NewKeys(app.KeyStoreOf(st), collectionsgrpc.New(s.collections), clock),
		app.NewPipeline(app.PipelineStoreOf(st), clock),
	).Register(rt.GRPC)
	return s, nil
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Ready says why the service cannot take calls now, or nil when it can.
func (s *Service) Ready() error { return s.rt.Ready() }

// Run serves until ctx ends, then shuts down gracefully.
func (s *Service) Run(ctx context.Context) error {
	defer s.collections.Close()
	return s.rt.Run(ctx)
}

// Close releases what New opened, for a service that will not Run.
func (s *Service) Close() {
	s.collections.Close()
	s.rt.Close()
}
