package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/platform/envflag"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/platform/telemetry"
	actions "github.com/atrium-hq/atrium/services/actions/service"
	collections "github.com/atrium-hq/atrium/services/collections/service"
	crm "github.com/atrium-hq/atrium/services/crm/service"
	data "github.com/atrium-hq/atrium/services/data/service"
)

// serveConfig is every setting of `atrium serve`.
type serveConfig struct {
	HTTPAddr         string
	AdminAddr        string
	AdminToken       string
	InternalSecret   string
	DatabaseURL      string
	Migrate          bool
	NATSURL          string
	NATSEmbeddedAddr string
	NATSStoreDir     string
	CollectionsAddr  string
	CRMAddr          string
	DataAddr         string
	ActionsAddr      string
	KeyCacheTTL      time.Duration
	RequestTimeout   time.Duration
	ShutdownTimeout  time.Duration
	MaxBodyBytes     int64
	Demo             bool
	LogFormat        string
	LogLevel         string

	// generatedAdminToken is set when no token was configured and one was
	// made up for this run, so it must be shown.
	generatedAdminToken bool
}

// parseServe reads flags, then ATRIUM_* variables, then defaults. It returns
// nil, nil when help was asked for.
func parseServe(args []string, lookup func(string) (string, bool), stderr io.Writer) (*serveConfig, error) {
	fs := flag.NewFlagSet("atrium serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &serveConfig{}
	fs.StringVar(&c.HTTPAddr, "http-addr", "127.0.0.1:8080", "public API listen address")
	fs.StringVar(&c.AdminAddr, "admin-addr", "127.0.0.1:8081", "admin API listen address (also /healthz and /readyz); never the public one")
	fs.StringVar(&c.AdminToken, "admin-token", "", "bearer token of the admin API, at least 16 characters; generated and printed when empty")
	fs.StringVar(&c.InternalSecret, "internal-secret", "", "secret that signs caller identities between the gateway and the services, at least 32 characters; generated when empty")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "PostgreSQL URL (postgres://user@host:5432/db); empty runs on the in-memory store, which keeps nothing across restarts")
	fs.BoolVar(&c.Migrate, "migrate", false, "apply pending PostgreSQL migrations at start (otherwise run `atrium migrate` first)")
	fs.StringVar(&c.NATSURL, "nats-url", "", "external NATS server URL; empty starts an embedded NATS server with JetStream")
	fs.StringVar(&c.NATSEmbeddedAddr, "nats-embedded-addr", "127.0.0.1:4223", "client address of the embedded NATS server")
	fs.StringVar(&c.NATSStoreDir, "nats-store-dir", "", "JetStream directory of the embedded NATS server; empty uses a temporary directory removed at exit")
	fs.StringVar(&c.CollectionsAddr, "collections-grpc-addr", "127.0.0.1:9091", "gRPC listen address of the collections service")
	fs.StringVar(&c.CRMAddr, "crm-grpc-addr", "127.0.0.1:9092", "gRPC listen address of the CRM service")
	fs.StringVar(&c.DataAddr, "data-grpc-addr", "127.0.0.1:9093", "gRPC listen address of the data service")
	fs.StringVar(&c.ActionsAddr, "actions-grpc-addr", "127.0.0.1:9094", "gRPC listen address of the actions service")
	fs.DurationVar(&c.KeyCacheTTL, "key-cache-ttl", gateway.DefaultKeyCacheTTL, "how long an API key lookup is reused; a revocation takes effect within it")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", gateway.DefaultRequestTimeout, "deadline of each API request")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", gateway.DefaultShutdownTimeout, "how long in-flight requests may take to finish after SIGTERM")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", gateway.DefaultMaxBodyBytes, "largest accepted request body")
	fs.BoolVar(&c.Demo, "demo", false, "seed a demo site, agency, clients, prospects and deals, and print keys and curl lines")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	if err := envflag.Parse(fs, args, "ATRIUM_", lookup); err != nil {
		if err == flag.ErrHelp {
			return nil, nil
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.AdminToken == "" {
		c.AdminToken = "adm_" + randomHex(24)
		c.generatedAdminToken = true
	}
	if c.InternalSecret == "" {
		c.InternalSecret = randomHex(32)
	}
	return c, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// listening is what a started `atrium serve` tells its caller.
type listening struct {
	HTTPAddr   string
	AdminAddr  string
	AdminToken string
	NATSURL    string
}

// serveable is a service serve starts.
type serveable interface {
	Run(ctx context.Context) error
	Close()
}

// serve runs everything until ctx ends. Start order: NATS, collections,
// CRM (which calls collections), data, actions, gateway. Stop order is the
// reverse: the gateway drains HTTP first, then the services drain gRPC and
// publish what is left in their outboxes, then NATS stops.
func serve(ctx context.Context, c serveConfig, stdout io.Writer, ready func(listening)) (err error) {
	logger, err := runner.NewLogger(stdout, c.LogFormat, c.LogLevel)
	if err != nil {
		return err
	}
	shutdownTracing, err := telemetry.Setup(ctx, "atrium", version)
	if err != nil {
		return err
	}
	defer shutdownTracing(context.WithoutCancel(ctx))

	natsURL := c.NATSURL
	if natsURL == "" {
		n, err := startNATS(c.NATSEmbeddedAddr, c.NATSStoreDir)
		if err != nil {
			return err
		}
		defer n.stop()
		natsURL = n.url()
		logger.Info("embedded NATS started", "url", natsURL)
	}
	if c.DatabaseURL == "" {
		logger.Warn("running on the in-memory store: nothing is kept across restarts (set --database-url for PostgreSQL)")
	}
	base := runner.Config{
		DatabaseURL:     c.DatabaseURL,
		Migrate:         c.Migrate,
		NATSURL:         natsURL,
		InternalSecret:  []byte(c.InternalSecret),
		ShutdownTimeout: c.ShutdownTimeout,
		Logger:          logger,
	}
	with := func(addr string) runner.Config { b := base; b.GRPCAddr = addr; return b }

	// Until everything is up, a failure closes what was already opened.
	var services []serveable
	defer func() {
		if err != nil {
			for i := len(services) - 1; i >= 0; i-- {
				services[i].Close()
			}
		}
	}()
	collectionsSvc, err := collections.New(ctx, collections.Config{Config: with(c.CollectionsAddr)})
	if err != nil {
		return err
	}
	services = append(services, collectionsSvc)
	crmSvc, err := crm.New(ctx, crm.Config{Config: with(c.CRMAddr), CollectionsAddr: collectionsSvc.Addr()})
	if err != nil {
		return err
	}
	services = append(services, crmSvc)
	dataSvc, err := data.New(ctx, data.Config{Config: with(c.DataAddr)})
	if err != nil {
		return err
	}
	services = append(services, dataSvc)
	actionsSvc, err := actions.New(ctx, actions.Config{Config: with(c.ActionsAddr)})
	if err != nil {
		return err
	}
	services = append(services, actionsSvc)

	gw, err := gateway.New(ctx, gateway.Config{
		HTTPAddr:        c.HTTPAddr,
		AdminAddr:       c.AdminAddr,
		AdminToken:      c.AdminToken,
		InternalSecret:  []byte(c.InternalSecret),
		CRMAddr:         crmSvc.Addr(),
		CollectionsAddr: collectionsSvc.Addr(),
		DataAddr:        dataSvc.Addr(),
		ActionsAddr:     actionsSvc.Addr(),
		NATSURL:         natsURL,
		KeyCacheTTL:     c.KeyCacheTTL,
		RequestTimeout:  c.RequestTimeout,
		MaxBodyBytes:    c.MaxBodyBytes,
		ShutdownTimeout: c.ShutdownTimeout,
		Version:         version,
		Logger:          logger,
	})
	if err != nil {
		return err
	}

	g, gctx := errgroup.WithContext(ctx)
	servicesCtx, stopServices := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServices()
	g.Go(func() error {
		defer stopServices()
		return gw.Run(gctx)
	})
	for _, s := range services {
		g.Go(func() error {
			err := s.Run(servicesCtx)
			if err != nil {
				return err
			}
			if gctx.Err() == nil {
				return fmt.Errorf("a service stopped unexpectedly")
			}
			return nil
		})
	}
	l := listening{HTTPAddr: gw.HTTPAddr(), AdminAddr: gw.AdminAddr(), AdminToken: c.AdminToken, NATSURL: natsURL}
	printBanner(stdout, l, c)
	if c.Demo {
		if err := seedDemo(gctx, stdout, l); err != nil {
			logger.Error("demo seeding failed", "error", err)
		}
	}
	if ready != nil {
		ready(l)
	}
	err = g.Wait()
	logger.Info("atrium stopped")
	return err
}

func printBanner(w io.Writer, l listening, c serveConfig) {
	fmt.Fprintf(w, "\nAtrium is running.\n  public API:  http://%s   (routes: http://%s/openapi.json)\n  admin API:   http://%s   (probes: /healthz, /readyz)\n",
		l.HTTPAddr, l.HTTPAddr, l.AdminAddr)
	if c.generatedAdminToken {
		fmt.Fprintf(w, "  admin token: %s   (generated for this run; set --admin-token or ATRIUM_ADMIN_TOKEN to choose one)\n", l.AdminToken)
	}
	fmt.Fprintln(w)
}
