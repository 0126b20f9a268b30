// Package service constructs the collections service from its
// configuration, for the atrium binary and for atrium-collections.
package service

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/crmgrpc"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
	"github.com/atrium-hq/atrium/services/collections/internal/transport/grpcserver"
)

// Name is the service's name in logs, traces and principals.
const Name = "collections"

// Settings are the collections service's own settings, bound as flags
// (and ATRIUM_* variables) by both binaries that run it.
type Settings struct {
	// MaxAssetBytes is the largest file an upload may carry.
	MaxAssetBytes int64
	// AllowSVGAssets admits SVG files, served with a Content-Security-Policy
	// that blocks their scripts.
	AllowSVGAssets bool
	// RevisionRetention is how long a deleted item's revisions are kept
	// (0: for ever).
	RevisionRetention time.Duration
}

// DefaultSettings are the settings' defaults.
func DefaultSettings() Settings {
	return Settings{MaxAssetBytes: app.DefaultMaxAssetBytes, RevisionRetention: app.DefaultRevisionRetention}
}

// BindFlags binds the settings to fs.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	fs.Int64Var(&s.MaxAssetBytes, "max-asset-bytes", s.MaxAssetBytes, "largest file an asset upload may carry, in bytes (at most 2147483647); larger uploads are answered 413")
	fs.BoolVar(&s.AllowSVGAssets, "allow-svg-assets", s.AllowSVGAssets, "accept SVG assets, which can carry scripts; they are served with a Content-Security-Policy that blocks them")
	fs.DurationVar(&s.RevisionRetention, "revision-retention", s.RevisionRetention, "how long a deleted item's revisions are kept, during which it can be restored from them (2160h is 90 days); 0 keeps them for ever")
}

// Config configures the collections service.
type Config struct {
	runner.Config
	Settings
	// Objects keeps the assets' files (platform/objstore/backends opens it
	// from the command line).
	Objects objstore.Store
	// ScheduleInterval is how often the scheduler looks for due scheduled
	// changes (0: app.DefaultScheduleInterval, 1 s); tests shorten it.
	ScheduleInterval time.Duration
	// PublicURL is the public API's base URL, which asset and preview URLs
	// start with.
	PublicURL string
	// CRMAddr is the CRM's gRPC address, asked whether an agency exists
	// and a client is linked to it when a site is given an owner. Empty,
	// ConnectCRM must be called before Run: atrium serve starts the CRM
	// after this service, since the CRM calls it too.
	CRMAddr string
}

// Service is a running collections service.
type Service struct {
	rt        *runner.Runtime
	publicURL atomic.Pointer[string]
	telemetry runner.Config
	crm       *grpc.ClientConn
	// agencies is the site use cases' port, answered over crm once
	// ConnectCRM has dialled it.
	agencies *crmAgencies
}

// crmAgencies forwards app.Agencies to the CRM's adapter, set by
// ConnectCRM before Run.
type crmAgencies struct{ app.Agencies }

// Migrations are the collections schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the collections service's store, NATS connection and listener.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.MaxAssetBytes == 0 {
		cfg.MaxAssetBytes = app.DefaultMaxAssetBytes
	}
	assetCfg := app.AssetConfig{MaxBytes: cfg.MaxAssetBytes, AllowSVG: cfg.AllowSVGAssets}
	if err := assetCfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.RevisionRetention < 0 {
		return nil, fmt.Errorf("collections service: --revision-retention must be 0 (keep for ever) or more; got %s", cfg.RevisionRetention)
	}
	if cfg.Objects == nil {
		return nil, errors.New("collections service: an object store for the assets is required")
	}
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: events.CollectionsStream.Name, Subjects: events.CollectionsStream.Subjects,
	}, cfg.Config)
	if err != nil {
		return nil, err
	}
	s := &Service{rt: rt, telemetry: cfg.Config, agencies: &crmAgencies{}}
	s.SetPublicURL(cfg.PublicURL)
	if cfg.CRMAddr != "" {
		if err := s.ConnectCRM(cfg.CRMAddr); err != nil {
			rt.Close()
			return nil, err
		}
	}
	st := runner.Store(rt,
		func(db *memdb.DB) app.Store { return memory.New(db) },
		func(db *pgdb.DB) app.Store { return postgres.New(db) })
	clock := app.Clock(time.Now)
	content := app.NewContent(app.ContentStoreOf(st), clock)
	publicURL := func() string { return *s.publicURL.Load() }
	assets := app.NewAssets(app.AssetStoreOf(st), cfg.Objects, clock, assetCfg, cfg.Logger.With("service", Name))
	assetServer := grpcserver.NewAssetServer(assets, publicURL)
	grpcserver.NewServer(app.NewSites(app.SiteStoreOf(st), s.agencies, clock), content, assetServer).Register(rt.GRPC)
	assetServer.Register(rt.GRPC)
	grpcserver.NewPreviewServer(app.NewPreviews(app.PreviewStoreOf(st), content, clock), publicURL).Register(rt.GRPC)
	scheduler := app.NewScheduler(app.ScheduleStoreOf(st), clock, cfg.ScheduleInterval, cfg.Logger.With("service", Name)).
		WithRevisionRetention(cfg.RevisionRetention)
	rt.Go("scheduler", scheduler.Run)
	return s, nil
}

// SetPublicURL changes the base URL of asset and preview URLs, for `atrium serve`,
// which knows its public address only once the gateway listens.
func (s *Service) SetPublicURL(u string) {
	u = strings.TrimSuffix(u, "/")
	s.publicURL.Store(&u)
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Ready says why the service cannot take calls now, or nil when it can.
func (s *Service) Ready() error { return s.rt.Ready() }

// ConnectCRM dials the CRM at addr, which the site use cases ask about
// owners; call it once, before Run, when Config.CRMAddr was empty.
func (s *Service) ConnectCRM(addr string) error {
	if s.crm != nil {
		return errors.New("collections service: the CRM is already connected")
	}
	conn, err := rpc.Dial(addr, rpc.WithTelemetry(s.telemetry.Telemetry), grpc.WithPerRPCCredentials(
		s.rt.Signer.Credentials(principal.Principal{Kind: principal.KindService, Subject: Name})))
	if err != nil {
		return fmt.Errorf("collections service: the CRM address %q: %w", addr, err)
	}
	s.crm = conn
	s.agencies.Agencies = crmgrpc.New(conn)
	s.rt.DependsOn("crm", conn)
	return nil
}

// Run serves until ctx ends, then shuts down gracefully.
func (s *Service) Run(ctx context.Context) error {
	if s.crm == nil {
		s.rt.Close()
		return errors.New("collections service: the CRM service address is required (--crm-addr)")
	}
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
