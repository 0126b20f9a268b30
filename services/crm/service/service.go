// Package service constructs the CRM service from its configuration. The
// atrium binary runs it in-process beside the other services; atrium-crm runs
// it alone for the cluster deployment.
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
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/collectionsgrpc"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/crm/internal/adapters/smtpmail"
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
	Settings
	// PublicURL is the public API's base URL, which invitation and
	// password reset links start with.
	PublicURL string
	// Mail is the SMTP server invitations and resets are emailed through;
	// without an address they are only answered.
	Mail Mail
}

// Settings are the CRM's own settings, bound by `atrium serve` and
// atrium-crm alike.
type Settings struct {
	InvitationTTL time.Duration
	SessionTTL    time.Duration
	// HashConcurrency bounds the argon2id hashes running at once; 0 is
	// app.DefaultHashConcurrency (half the cores).
	HashConcurrency int
}

// DefaultSettings are the settings' defaults.
func DefaultSettings() Settings {
	return Settings{InvitationTTL: app.DefaultInvitationTTL, SessionTTL: app.DefaultSessionTTL}
}

// BindFlags binds the settings to fs.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.InvitationTTL, "invitation-ttl", s.InvitationTTL, "how long an invitation to sign in as an agency's member works (once) after it is issued")
	fs.DurationVar(&s.SessionTTL, "session-ttl", s.SessionTTL, "how long a person's session lasts after they sign in; signing out, a password reset or the member's removal ends it sooner")
	fs.IntVar(&s.HashConcurrency, "password-hash-concurrency", s.HashConcurrency, "most password hashes (argon2id, about 20 ms of a core and 19 MiB each) computed at once, by sign-ins, invitations and resets; more wait their turn; 0: half the cores (at least 1), which leaves the other half to the API whatever the sign-ins; the cores: sign-ins at once finish sooner")
}

// Mail is an SMTP server's settings, the actions service's flags.
type Mail struct {
	Addr, From, Username, Password, TLS string
}

// BindFlags binds the SMTP settings to fs (atrium-crm's; `atrium serve`
// shares the actions service's).
func (m *Mail) BindFlags(fs *flag.FlagSet) {
	if m.TLS == "" {
		m.TLS = smtpmail.TLSStartTLS
	}
	fs.StringVar(&m.Addr, "smtp-addr", m.Addr, "SMTP server host:port that invitations and password resets are emailed through; empty: they are only answered (an owner or operator passes them on)")
	fs.StringVar(&m.From, "smtp-from", m.From, "sender address of invitations and password resets (required with --smtp-addr)")
	fs.StringVar(&m.Username, "smtp-username", m.Username, "SMTP user name (AUTH PLAIN, only over TLS)")
	fs.StringVar(&m.Password, "smtp-password", m.Password, "SMTP password")
	fs.StringVar(&m.TLS, "smtp-tls", m.TLS, "SMTP transport security: starttls, tls (implicit, port 465) or none")
}

// Service is a running CRM service.
type Service struct {
	rt          *runner.Runtime
	collections *grpc.ClientConn
	publicURL   atomic.Pointer[string]
}

// Migrations are the CRM schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the CRM service's store, NATS connection and gRPC listener.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.CollectionsAddr == "" {
		return nil, errors.New("crm service: the collections service address is required")
	}
	if cfg.InvitationTTL < 0 || cfg.SessionTTL < 0 {
		return nil, errors.New("crm service: --invitation-ttl and --session-ttl must be positive (0 means the default, 168h)")
	}
	if cfg.HashConcurrency < 0 || cfg.HashConcurrency > 1024 {
		return nil, fmt.Errorf("crm service: --password-hash-concurrency must be 0 (half the cores) to 1024; got %d", cfg.HashConcurrency)
	}
	var mailer app.Mailer
	if cfg.Mail.Addr != "" {
		m, err := smtpmail.New(smtpmail.Config{Addr: cfg.Mail.Addr, From: cfg.Mail.From, Username: cfg.Mail.Username,
			Password: cfg.Mail.Password, TLS: cfg.Mail.TLS})
		if err != nil {
			return nil, fmt.Errorf("--smtp-addr: %w", err)
		}
		mailer = m
	}
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: events.CRMStream.Name, Subjects: events.CRMStream.Subjects,
	}, cfg.Config)
	if err != nil {
		return nil, err
	}
	s := &Service{rt: rt}
	s.SetPublicURL(cfg.PublicURL)
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
	sites := collectionsgrpc.New(s.collections)
	keys := app.NewKeys(app.KeyStoreOf(st), sites, clock)
	people := app.PeopleConfig{
		PublicURL: func() string { return *s.publicURL.Load() }, InvitationTTL: cfg.InvitationTTL, SessionTTL: cfg.SessionTTL,
		Mailer: mailer, Logger: cfg.Logger.With("service", Name),
	}
	grpcserver.NewServer(
		app.NewDirectory(app.DirectoryStoreOf(st), clock),
		keys,
		app.NewPipeline(app.PipelineStoreOf(st), clock),
		app.NewPeople(app.PeopleStoreOf(st), keys, sites, clock, people),
		app.NewSessions(app.PeopleStoreOf(st), app.NewHasher(cfg.HashConcurrency), clock, people),
	).Register(rt.GRPC)
	return s, nil
}

// SetPublicURL changes the base URL of invitation and reset links, for
// `atrium serve`, which knows its public address only once the gateway
// listens.
func (s *Service) SetPublicURL(u string) {
	u = strings.TrimSuffix(u, "/")
	s.publicURL.Store(&u)
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
