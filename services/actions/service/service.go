// Package service constructs the actions service from its configuration, for
// the atrium binary and for atrium-actions.
package service

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/builtintext"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/collectionsgrpc"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/crmgrpc"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/dataforseo"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/datagrpc"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/indexnow"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/linkcache"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/mediastore"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/openai"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/pngimage"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/smtpmail"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/syntheticseo"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/web"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/seocache"
	"github.com/atrium-hq/atrium/services/actions/internal/transport/grpcserver"
)

// Name is the service's name in logs, traces and principals.
const Name = "actions"

// Settings are the actions service's own settings, bound as flags (and
// ATRIUM_* variables) by both binaries that run it: atrium-actions and
// atrium serve.
type Settings struct {
	// ActionTimeout bounds one run; ProviderTimeout each provider call.
	ActionTimeout, ProviderTimeout time.Duration
	// AllowPrivateFetch lets audits fetch private network addresses.
	AllowPrivateFetch bool
	// The text generator: an OpenAI-compatible chat-completions API when
	// LLMBaseURL is set, the built-in generator otherwise.
	LLMBaseURL, LLMModel, LLMAPIKey string
	// The mailer of send_prospect_email.
	SMTPAddr, SMTPFrom, SMTPUsername, SMTPPassword, SMTPTLS string
	// IndexNow for index_url.
	IndexNowEndpoint, IndexNowKey, IndexNowKeyLocation string
	// RecoveryInterval is how often abandoned runs and unwritten records
	// are looked for.
	RecoveryInterval time.Duration
	// ActionLease is how long a running run's lease lasts after its last
	// renewal, and ActionLeaseRenewal how often this process renews the
	// leases of its runs: a run of a process that died is taken back by
	// recovery once its lease is over (app.Config.Lease).
	ActionLease, ActionLeaseRenewal time.Duration
	// ActionWorkers is how many queued (asynchronous) runs this process
	// executes at once; AgencyMaxQueued how many an agency may have
	// queued before submissions answer 429.
	ActionWorkers, AgencyMaxQueued int
	// ScheduleMinInterval is the shortest interval a schedule may have;
	// ScheduleCatchup how late a slot missed during a downtime still
	// runs; ScheduleTick how often the scheduler looks for due slots;
	// MaxSchedules how many schedules an agency may have.
	ScheduleMinInterval, ScheduleCatchup, ScheduleTick time.Duration
	MaxSchedules                                       int
	// ClientLinkCacheTTL is how long the CRM's "linked" answer is reused
	// (linkcache); 0 asks the CRM on every action.
	ClientLinkCacheTTL time.Duration
	// SEOProvider is where keyword ideas, local ranks and backlinks come
	// from: "synthetic" (built in, the default) or "dataforseo".
	SEOProvider string
	// SEOCacheTTL is how long a paid provider's answer is given again to
	// an identical question; 0 turns the cache off.
	SEOCacheTTL time.Duration
	// DataForSEO's account (the password never logged), API root, default
	// location of keyword ideas and this process's rate limit.
	DataForSEOLogin, DataForSEOPassword, DataForSEOBaseURL, DataForSEOLocation string
	DataForSEORateLimit                                                        int
	// DataForSEOBackoff, when set, replaces the pause before the first
	// retry of a DataForSEO request (dataforseo.DefaultBackoff): tests
	// shorten it. No flag sets it.
	DataForSEOBackoff time.Duration
}

// SEO data providers.
const (
	SEOSynthetic  = "synthetic"
	SEODataForSEO = "dataforseo"
)

// DefaultClientLinkCacheTTL is --client-link-cache-ttl's default, the
// gateway's key cache's: long enough that a burst of submissions for one
// client asks the CRM once, short enough to bound a missed event.
const DefaultClientLinkCacheTTL = 5 * time.Second

// DefaultSettings are the settings' defaults.
func DefaultSettings() Settings {
	return Settings{
		ActionTimeout: app.DefaultActionTimeout, ProviderTimeout: 20 * time.Second,
		SMTPTLS: "starttls", IndexNowEndpoint: "https://api.indexnow.org/indexnow", RecoveryInterval: 5 * time.Second,
		ActionLease: app.DefaultLease, ActionLeaseRenewal: app.DefaultLeaseRenewal,
		SEOProvider: SEOSynthetic, SEOCacheTTL: seocache.DefaultTTL, DataForSEOBaseURL: dataforseo.DefaultBaseURL,
		DataForSEOLocation: dataforseo.DefaultLocation, DataForSEORateLimit: dataforseo.DefaultRatePerMinute,
		AgencyMaxQueued: app.DefaultAgencyMaxQueued, ClientLinkCacheTTL: DefaultClientLinkCacheTTL,
		ScheduleMinInterval: app.DefaultMinInterval, ScheduleCatchup: app.DefaultCatchup, ScheduleTick: app.DefaultScheduleTick,
		MaxSchedules: app.DefaultMaxSchedules,
	}
}

// BindFlags binds the settings to fs.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.ActionTimeout, "action-timeout", s.ActionTimeout, "longest an action may run, every provider call included")
	fs.DurationVar(&s.ProviderTimeout, "provider-timeout", s.ProviderTimeout, "longest one call to a provider (language model, web page, mail server, IndexNow) may take; for DataForSEO, one request with its retries")
	fs.BoolVar(&s.AllowPrivateFetch, "allow-private-fetch", s.AllowPrivateFetch, "let seo_audit and optimize_page fetch private, loopback and link-local addresses (local testing only)")
	fs.StringVar(&s.LLMBaseURL, "llm-base-url", s.LLMBaseURL, "base URL of an OpenAI-compatible chat-completions API (https://api.openai.com/v1, http://127.0.0.1:11434/v1); empty uses the built-in generator")
	fs.StringVar(&s.LLMModel, "llm-model", s.LLMModel, "model to ask (required with --llm-base-url)")
	fs.StringVar(&s.LLMAPIKey, "llm-api-key", s.LLMAPIKey, "API key sent as a bearer token (local servers need none)")
	fs.StringVar(&s.SMTPAddr, "smtp-addr", s.SMTPAddr, "SMTP server host:port for send_prospect_email; empty: sending email answers status error 503")
	fs.StringVar(&s.SMTPFrom, "smtp-from", s.SMTPFrom, "sender address of send_prospect_email (required with --smtp-addr)")
	fs.StringVar(&s.SMTPUsername, "smtp-username", s.SMTPUsername, "SMTP user name (AUTH PLAIN, only over TLS)")
	fs.StringVar(&s.SMTPPassword, "smtp-password", s.SMTPPassword, "SMTP password")
	fs.StringVar(&s.SMTPTLS, "smtp-tls", s.SMTPTLS, "SMTP transport security: starttls, tls (implicit, port 465) or none")
	fs.StringVar(&s.IndexNowEndpoint, "indexnow-endpoint", s.IndexNowEndpoint, "IndexNow endpoint index_url submits to")
	fs.StringVar(&s.IndexNowKey, "indexnow-key", s.IndexNowKey, "IndexNow key (hosted at https://<site>/<key>.txt); empty: index_url answers status error 503")
	fs.StringVar(&s.IndexNowKeyLocation, "indexnow-key-location", s.IndexNowKeyLocation, "URL of the key file when it is not at the site's root")
	fs.DurationVar(&s.RecoveryInterval, "recovery-interval", s.RecoveryInterval, "how often abandoned runs are ended and unwritten records written")
	fs.DurationVar(&s.ActionLease, "action-lease", s.ActionLease, "how long a running action run's lease lasts after its process last renewed it; a run whose process died is ended by recovery (and its Idempotency-Key and credits released) once it is over")
	fs.DurationVar(&s.ActionLeaseRenewal, "action-lease-renewal", s.ActionLeaseRenewal, "how often a process renews the leases of the action runs it executes; at most a third of --action-lease")
	fs.IntVar(&s.ActionWorkers, "action-workers", s.ActionWorkers, "queued (Prefer: respond-async) action runs this process executes at once; 0: 8 per processor, at least 16 (a run mostly waits on its providers)")
	fs.DurationVar(&s.ClientLinkCacheTTL, "client-link-cache-ttl", s.ClientLinkCacheTTL, "how long the CRM's answer that a client is linked to an agency is reused (0 to 1m; 0 asks the CRM on every action); an unlink or a change of the client applies at once through its event, and within this time if the event is missed")
	fs.IntVar(&s.AgencyMaxQueued, "agency-max-queued", s.AgencyMaxQueued, "most queued action runs an agency may have; more submissions answer 429 with Retry-After, reserving nothing")
	fs.DurationVar(&s.ScheduleMinInterval, "schedule-min-interval", s.ScheduleMinInterval, "shortest interval a schedule may have: a cron or every whose slots fall closer together is refused (400)")
	fs.DurationVar(&s.ScheduleCatchup, "schedule-catchup", s.ScheduleCatchup, "after a downtime, the latest missed slot of a schedule still runs if it is at most this late; older ones are recorded as missed")
	fs.DurationVar(&s.ScheduleTick, "schedule-tick", s.ScheduleTick, "how often each replica looks for schedules whose slot is due")
	fs.IntVar(&s.MaxSchedules, "max-schedules", s.MaxSchedules, "most schedules an agency may have")
	fs.StringVar(&s.SEOProvider, "seo-provider", s.SEOProvider, "where keyword ideas, grid ranks and backlinks come from: synthetic (built in, labelled synthetic) or dataforseo (measured; needs --dataforseo-login and --dataforseo-password)")
	fs.DurationVar(&s.SEOCacheTTL, "seo-cache-ttl", s.SEOCacheTTL, "how long a paid SEO provider's answer is given again, free, to an identical question (in the actions store, shared by replicas); 0 turns the cache off")
	fs.StringVar(&s.DataForSEOLogin, "dataforseo-login", s.DataForSEOLogin, "DataForSEO API login (https://app.dataforseo.com/api-access)")
	fs.StringVar(&s.DataForSEOPassword, "dataforseo-password", s.DataForSEOPassword, "DataForSEO API password; set it with the variable, which no process listing shows")
	fs.StringVar(&s.DataForSEOBaseURL, "dataforseo-base-url", s.DataForSEOBaseURL, "DataForSEO API root; https://sandbox.dataforseo.com is the free sandbox")
	fs.StringVar(&s.DataForSEOLocation, "dataforseo-location", s.DataForSEOLocation, "country generate_keywords counts searches in when a request names none")
	fs.IntVar(&s.DataForSEORateLimit, "dataforseo-rate-limit", s.DataForSEORateLimit, "most requests a minute this process sends DataForSEO (30 at once); replicas share the account's limit (2,000 a minute by default), so give each its share")
}

// Config configures the actions service.
type Config struct {
	runner.Config
	Settings
	// CRMAddr and DataAddr are the CRM's and the data service's gRPC
	// addresses: the CRM is asked whether the client is linked (linkcache
	// remembers its answer briefly); the data service takes the records.
	CRMAddr, DataAddr string
	// CollectionsAddr is the collections service's gRPC address, asked
	// for the agency's logo as a report is drawn. Empty: reports are
	// signed with the agency's name only.
	CollectionsAddr string
	// Objects keeps the generated files (platform/objstore/backends opens
	// it from the command line).
	Objects objstore.Store
	// PublicURL is the public API's base URL, which generated media links
	// start with.
	PublicURL string
	// LegacyBlobDir, when set (--data-dir), is where the images of the
	// directory format this store replaced may still be: they move into
	// Objects at start (mediastore.MigrateBlobDir).
	LegacyBlobDir string
}

// Service is a running actions service.
type Service struct {
	rt        *runner.Runtime
	conns     []rpc.Conn
	actions   *app.Actions
	publicURL atomic.Pointer[string]
	recovery  time.Duration
}

// Migrations are the actions schema's migrations, for `atrium migrate`.
func Migrations() pgdb.Migrations { return postgres.Migrations() }

// New opens the actions service's store, NATS connection and listener and
// builds its providers.
func New(ctx context.Context, cfg Config) (_ *Service, err error) {
	if cfg.CRMAddr == "" || cfg.DataAddr == "" {
		return nil, errors.New("actions service: the CRM and data service addresses are required")
	}
	if cfg.Objects == nil {
		return nil, errors.New("actions service: an object store for the generated files is required")
	}
	if cfg.ProviderTimeout <= 0 || cfg.ActionTimeout <= 0 {
		return nil, errors.New("actions service: --provider-timeout and --action-timeout must be positive")
	}
	if cfg.RecoveryInterval <= 0 {
		cfg.RecoveryInterval = DefaultSettings().RecoveryInterval
	}
	if cfg.ActionLease <= 0 || cfg.ActionLeaseRenewal <= 0 || cfg.ActionLeaseRenewal > cfg.ActionLease/3 {
		return nil, fmt.Errorf("actions service: --action-lease-renewal must be positive and at most a third of --action-lease (so that two renewals can fail without losing a live run); got %s and %s", cfg.ActionLeaseRenewal, cfg.ActionLease)
	}
	if cfg.ActionWorkers < 0 || cfg.AgencyMaxQueued < 0 {
		return nil, errors.New("actions service: --action-workers and --agency-max-queued must not be negative (0 takes the default)")
	}
	if cfg.ScheduleMinInterval < 0 || cfg.ScheduleCatchup < 0 || cfg.ScheduleTick < 0 || cfg.MaxSchedules < 0 {
		return nil, errors.New("actions service: --schedule-min-interval, --schedule-catchup, --schedule-tick and --max-schedules must not be negative (0 takes the default)")
	}
	if cfg.ClientLinkCacheTTL < 0 || cfg.ClientLinkCacheTTL > time.Minute {
		return nil, fmt.Errorf("actions service: --client-link-cache-ttl must be 0 to 1m; got %s", cfg.ClientLinkCacheTTL)
	}
	if err := cfg.checkSEO(); err != nil {
		return nil, err
	}
	rt, err := runner.Open(ctx, runner.Spec{
		Name: Name, Migrations: postgres.Migrations(), Stream: events.ActionsStream.Name, Subjects: events.ActionsStream.Subjects,
	}, cfg.Config)
	if err != nil {
		return nil, err
	}
	s := &Service{rt: rt, recovery: cfg.RecoveryInterval}
	s.publicURL.Store(&cfg.PublicURL)
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	// In process when the CRM and the data service run in this one
	// (atrium serve: cfg.Local), otherwise over the network.
	creds := rt.Signer.Credentials(principal.Principal{Kind: principal.KindService, Subject: Name})
	crm, err := cfg.Local.DialAs(cfg.CRMAddr, cfg.Telemetry, creds)
	if err != nil {
		return nil, err
	}
	s.conns = append(s.conns, crm)
	data, err := cfg.Local.DialAs(cfg.DataAddr, cfg.Telemetry, creds)
	if err != nil {
		return nil, err
	}
	s.conns = append(s.conns, data)
	rt.DependsOn("crm", crm)
	rt.DependsOn("data", data)
	st := runner.Store(rt,
		func(db *memdb.DB) actionsStore { return memory.New(db) },
		func(db *pgdb.DB) actionsStore { return postgres.New(db) })
	providers, err := s.providers(ctx, cfg, st)
	if err != nil {
		return nil, fmt.Errorf("actions service: %w", err)
	}
	// The client-link check of every submission, remembered briefly and
	// forgotten on the CRM's unlink and update events (linkcache).
	links := linkcache.New(crmgrpc.New(crm), cfg.ClientLinkCacheTTL, time.Now)
	if err := rt.Listen(links, linkcache.Subjects()...); err != nil {
		return nil, fmt.Errorf("actions service: %w", err)
	}
	s.actions = app.NewActions(st, links, datagrpc.New(data), providers, app.Clock(time.Now),
		app.Config{AllowPrivateFetch: cfg.AllowPrivateFetch, ActionTimeout: cfg.ActionTimeout, Metrics: cfg.Telemetry.MeterProvider(),
			Workers: cfg.ActionWorkers, AgencyMaxQueued: cfg.AgencyMaxQueued, Lease: cfg.ActionLease, LeaseRenewal: cfg.ActionLeaseRenewal,
			ScheduleMinInterval: cfg.ScheduleMinInterval, ScheduleCatchup: cfg.ScheduleCatchup, ScheduleTick: cfg.ScheduleTick, MaxSchedules: cfg.MaxSchedules},
		cfg.Logger.With("service", Name))
	reports := app.NewReports(st)
	s.actions.SetBranding(reports)
	if cfg.CollectionsAddr != "" {
		collections, err := cfg.Local.DialAs(cfg.CollectionsAddr, cfg.Telemetry, creds)
		if err != nil {
			return nil, err
		}
		s.conns = append(s.conns, collections)
		// Not a dependency of readiness: without it a report only lacks
		// its logo.
		s.actions.SetLogos(collectionsgrpc.New(collections))
	}
	shares := app.NewShares(st, time.Now, func() string { return strings.TrimSuffix(*s.publicURL.Load(), "/") })
	s.actions.SetShares(shares)
	grpcserver.NewServer(s.actions).Register(rt.GRPC)
	grpcserver.NewReportsServer(reports, shares, s.actions.GetRun).Register(rt.GRPC)
	return s, nil
}

// actionsStore is what the actions store is to the service: the use cases'
// store, and the SEO cache's.
type actionsStore interface {
	app.Store
	seocache.Store
	app.BrandingStore
	app.ShareStore
}

// checkSEO checks the SEO data settings before anything is opened.
func (cfg Config) checkSEO() error {
	switch {
	case cfg.SEOProvider != SEOSynthetic && cfg.SEOProvider != SEODataForSEO:
		return fmt.Errorf("actions service: --seo-provider must be %s or %s; got %q", SEOSynthetic, SEODataForSEO, cfg.SEOProvider)
	case cfg.SEOProvider == SEODataForSEO && (strings.TrimSpace(cfg.DataForSEOLogin) == "" || cfg.DataForSEOPassword == ""):
		return errors.New("actions service: --seo-provider=dataforseo needs --dataforseo-login and --dataforseo-password (ATRIUM_DATAFORSEO_LOGIN, ATRIUM_DATAFORSEO_PASSWORD), from https://app.dataforseo.com/api-access")
	case cfg.SEOCacheTTL < 0:
		return fmt.Errorf("actions service: --seo-cache-ttl must be 0 (no cache) or positive; got %s", cfg.SEOCacheTTL)
	case cfg.DataForSEORateLimit <= 0:
		return fmt.Errorf("actions service: --dataforseo-rate-limit must be a positive number of requests a minute; got %d", cfg.DataForSEORateLimit)
	}
	return nil
}

// providers builds the ports the actions work through from the settings;
// st keeps the SEO cache's answers.
func (s *Service) providers(ctx context.Context, cfg Config, st seocache.Store) (*action.Providers, error) {
	p := &action.Providers{MediaURL: s.mediaURL}
	var err error
	if cfg.LLMBaseURL != "" {
		if p.Text, err = openai.New(openai.Config{BaseURL: cfg.LLMBaseURL, Model: cfg.LLMModel, APIKey: cfg.LLMAPIKey, Timeout: cfg.ProviderTimeout}); err != nil {
			return nil, fmt.Errorf("--llm-base-url: %w", err)
		}
	} else {
		p.Text = builtintext.New()
	}
	if p.Pages, err = web.New(web.Config{Timeout: cfg.ProviderTimeout, AllowPrivate: cfg.AllowPrivateFetch}); err != nil {
		return nil, err
	}
	if cfg.SMTPAddr != "" {
		if p.Mail, err = smtpmail.New(smtpmail.Config{Addr: cfg.SMTPAddr, From: cfg.SMTPFrom, Username: cfg.SMTPUsername, Password: cfg.SMTPPassword,
			TLS: cfg.SMTPTLS, Timeout: cfg.ProviderTimeout}); err != nil {
			return nil, fmt.Errorf("--smtp-addr: %w", err)
		}
	} else {
		p.Mail = mailNotConfigured{}
	}
	if p.Index, err = indexnow.New(indexnow.Config{Endpoint: cfg.IndexNowEndpoint, Key: cfg.IndexNowKey, KeyLocation: cfg.IndexNowKeyLocation, Timeout: cfg.ProviderTimeout}); err != nil {
		return nil, fmt.Errorf("--indexnow-*: %w", err)
	}
	if p.Images, err = pngimage.New(pngimage.Config{}); err != nil {
		return nil, err
	}
	media := mediastore.New(cfg.Objects)
	p.Blobs = media
	if cfg.LegacyBlobDir != "" {
		n, err := mediastore.MigrateBlobDir(ctx, cfg.LegacyBlobDir, media)
		if err != nil {
			return nil, fmt.Errorf("move the generated images of %s to the object store: %w", cfg.LegacyBlobDir, err)
		}
		if n > 0 {
			cfg.Logger.Info("moved generated images to the object store", "count", n, "from", cfg.LegacyBlobDir)
		}
	}
	if p.Search, err = s.searchData(cfg, st); err != nil {
		return nil, err
	}
	return p, nil
}

// searchData is the SEO data provider the settings name: the synthetic
// one (free and computed in microseconds: never cached), or DataForSEO
// behind the SEO cache unless --seo-cache-ttl is 0.
func (s *Service) searchData(cfg Config, st seocache.Store) (provider.SearchData, error) {
	logger := cfg.Logger.With("service", Name)
	if cfg.SEOProvider != SEODataForSEO {
		return syntheticseo.New(syntheticseo.Config{})
	}
	d, err := dataforseo.New(dataforseo.Config{
		BaseURL: cfg.DataForSEOBaseURL, Login: cfg.DataForSEOLogin, Password: cfg.DataForSEOPassword, Timeout: cfg.ProviderTimeout,
		RatePerMinute: cfg.DataForSEORateLimit, DefaultLocation: cfg.DataForSEOLocation, Backoff: cfg.DataForSEOBackoff, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("--dataforseo-*: %w", err)
	}
	logger.Info("SEO data from DataForSEO", "base_url", cfg.DataForSEOBaseURL, "login", cfg.DataForSEOLogin,
		"rate_limit_per_minute", cfg.DataForSEORateLimit, "cache_ttl", cfg.SEOCacheTTL.String())
	if cfg.SEOCacheTTL == 0 {
		return d, nil
	}
	return seocache.New(d, st, seocache.Config{TTL: cfg.SEOCacheTTL, Namespace: d.Namespace(), Logger: logger, Metrics: cfg.Telemetry.MeterProvider()})
}

func (s *Service) mediaURL(name string) string {
	return strings.TrimSuffix(*s.publicURL.Load(), "/") + "/media/" + name
}

// SetPublicURL changes the base URL of media links, for `atrium serve`,
// which knows its public address only once the gateway listens.
func (s *Service) SetPublicURL(u string) { s.publicURL.Store(&u) }

// mailNotConfigured answers send_prospect_email when no SMTP server is set.
type mailNotConfigured struct{}

func (mailNotConfigured) Send(context.Context, provider.Mail) (provider.SentMail, error) {
	return provider.SentMail{}, provider.Failure("mail", 503, nil, "sending email is not configured on this deployment: an operator sets --smtp-addr and --smtp-from (ATRIUM_SMTP_ADDR, ATRIUM_SMTP_FROM)")
}

// Addr is the service's gRPC address.
func (s *Service) Addr() string { return s.rt.Addr() }

// Ready says why the service cannot take calls now, or nil when it can.
func (s *Service) Ready() error { return s.rt.Ready() }

// Run serves until ctx ends, then shuts down gracefully. Recovery of
// abandoned runs and unwritten records runs beside it, the workers of
// queued runs (whose cut runs go back to the queue at shutdown) and the
// scheduler, which starts the schedules' runs.
func (s *Service) Run(ctx context.Context) error {
	defer s.closeOwn()
	// The leases of the runs this process executes are renewed until
	// every run has ended: through the drain of the requests in flight and
	// the workers' stop, after ctx has ended.
	lctx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	leasing := make(chan struct{})
	go func() { defer close(leasing); s.actions.KeepLeases(lctx) }()
	defer func() { stopLeases(); <-leasing }()
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.actions.Background(rctx, s.recovery) }()
	working := make(chan struct{})
	go func() { defer close(working); s.actions.Work(rctx) }()
	scheduling := make(chan struct{})
	go func() { defer close(scheduling); s.actions.RunSchedules(rctx) }()
	err := s.rt.Run(ctx)
	stop()
	<-scheduling
	<-working
	<-done
	return err
}

func (s *Service) closeOwn() {
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

// Close releases what New opened, for a service that will not Run.
func (s *Service) Close() {
	s.closeOwn()
	s.rt.Close()
}
