package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/sync/errgroup"

	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/platform/telemetry"
	actions "github.com/atrium-hq/atrium/services/actions/service"
	collections "github.com/atrium-hq/atrium/services/collections/service"
	crm "github.com/atrium-hq/atrium/services/crm/service"
	data "github.com/atrium-hq/atrium/services/data/service"
)

// serveConfig is every setting of `atrium serve`: the same definitions the
// per-component binaries bind (platform/cli, runner.Backing, the gateway's),
// plus what only the all-in-one command has.
type serveConfig struct {
	common  cli.Common
	backing runner.Backing
	gateway gateway.Config
	actions actions.Settings
	// grpcAddrs are the services' gRPC listen addresses, by service name.
	grpcAddrs        map[string]*string
	natsEmbeddedAddr string
	natsStoreDir     string
	demo             bool
	metricsAddr      string

	// spanProcessor, when set, receives every span of the process, sampled
	// whatever the OTEL_* variables say: tests read traces from it.
	spanProcessor sdktrace.SpanProcessor
	// globalTelemetry makes the process's telemetry OpenTelemetry's global
	// one too; main sets it, tests (several stacks in one binary) do not.
	globalTelemetry bool

	// generatedAdminToken is set when no token was configured and one was
	// made up for this run, so it must be shown.
	generatedAdminToken bool
}

// serviceNames are the services serve starts, in start order: the CRM
// calls collections.
var serviceNames = []string{"collections", "crm", "data", "actions"}

// parseServe reads flags, then ATRIUM_* variables, then defaults. It returns
// cli.ErrDone when help or the version was asked for.
func parseServe(args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) (*serveConfig, error) {
	fs := flag.NewFlagSet("atrium serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &serveConfig{gateway: gateway.DefaultConfig(), actions: actions.DefaultSettings(), grpcAddrs: map[string]*string{}}
	c.actions.PublicURL = "" // derived from the public listener unless set
	c.gateway.HTTPAddr, c.gateway.AdminAddr = "127.0.0.1:8080", "127.0.0.1:8081"
	c.gateway.BindFlags(fs)
	c.common.Bind(fs, "generated when empty (one process needs no shared value)")
	c.backing.BindFlags(fs, "empty starts an embedded NATS server with JetStream")
	c.actions.BindFlags(fs)
	for _, name := range serviceNames {
		c.grpcAddrs[name] = new(cli.DefaultGRPCAddr(name))
		runner.BindGRPCAddr(fs, c.grpcAddrs[name], name+"-grpc-addr", name)
	}
	fs.StringVar(&c.natsEmbeddedAddr, "nats-embedded-addr", "127.0.0.1:4223", "client address of the embedded NATS server")
	fs.StringVar(&c.natsStoreDir, "nats-store-dir", "", "JetStream directory of the embedded NATS server; empty uses a temporary directory removed at exit")
	runner.BindMetricsAddr(fs, &c.metricsAddr, "empty (the default) serves none: the admin listener's /metrics already covers the whole process")
	fs.BoolVar(&c.demo, "demo", false, "seed a demo site, agency, clients, prospects and deals, and print keys and curl lines")
	if err := cli.Parse(fs, args, version, stdout, lookup); err != nil {
		return nil, err
	}
	if c.gateway.AdminToken == "" {
		c.gateway.AdminToken = "adm_" + randomHex(24)
		c.generatedAdminToken = true
	}
	if c.common.InternalSecret == "" {
		c.common.InternalSecret = randomHex(32)
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
	// DataAddr is the data service's gRPC address (atrium load-rows).
	DataAddr string
	// MetricsAddr is the --metrics-addr listener's address, empty without one.
	MetricsAddr string
}

// serveable is a service serve starts.
type serveable interface {
	Run(ctx context.Context) error
	Ready() error
	Close()
}

// serve runs everything until ctx ends. Start order: NATS, collections,
// CRM (which calls collections), data, actions, gateway. Stop order is the
// reverse: the gateway reports not ready for the drain delay while still
// serving, then drains HTTP; then the services drain gRPC (no delay: they
// are reached through the gateway, or on loopback) and publish what is
// left in their outboxes; then NATS stops.
func serve(ctx context.Context, c serveConfig, logger *slog.Logger, stdout io.Writer, ready func(listening)) (err error) {
	// One process, one telemetry: the gateway's /metrics covers every
	// service, and one request is one trace across the loopback hops.
	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "atrium", Version: version, SpanProcessor: c.spanProcessor})
	if err != nil {
		return err
	}
	if c.globalTelemetry {
		tel.InstallGlobal()
	}
	defer tel.Shutdown(context.WithoutCancel(ctx))

	natsURL := c.backing.NATSURL
	if natsURL == "" {
		n, err := startNATS(c.natsEmbeddedAddr, c.natsStoreDir)
		if err != nil {
			return err
		}
		defer n.stop()
		natsURL = n.url()
		logger.Info("embedded NATS started", "url", natsURL)
	}
	if c.backing.DatabaseURL == "" {
		logger.Warn("running on the in-memory store: nothing is kept across restarts (set --database-url for PostgreSQL)")
	}
	backing := c.backing
	backing.NATSURL = natsURL
	// The gateway calls the services in process (rpc.Local); they keep
	// their gRPC listeners for callers outside it.
	local := rpc.NewLocal()
	with := func(name string) runner.Config {
		return runner.Config{GRPCAddr: *c.grpcAddrs[name], Backing: backing, InternalSecret: []byte(c.common.InternalSecret),
			ShutdownTimeout: c.common.ShutdownTimeout, Logger: logger, Telemetry: tel, Local: local}
	}

	// Until everything is up, a failure closes what was already opened.
	var services []serveable
	defer func() {
		if err != nil {
			for i := len(services) - 1; i >= 0; i-- {
				services[i].Close()
			}
		}
	}()
	collectionsSvc, err := collections.New(ctx, collections.Config{Config: with("collections")})
	if err != nil {
		return err
	}
	services = append(services, collectionsSvc)
	crmSvc, err := crm.New(ctx, crm.Config{Config: with("crm"), CollectionsAddr: collectionsSvc.Addr()})
	if err != nil {
		return err
	}
	services = append(services, crmSvc)
	dataSvc, err := data.New(ctx, data.Config{Config: with("data"), CRMAddr: crmSvc.Addr()})
	if err != nil {
		return err
	}
	services = append(services, dataSvc)
	actionsSvc, err := actions.New(ctx, actions.Config{Config: with("actions"), Settings: c.actions, CRMAddr: crmSvc.Addr(), DataAddr: dataSvc.Addr()})
	if err != nil {
		return err
	}
	services = append(services, actionsSvc)

	metricsAddr := ""
	if c.metricsAddr != "" {
		ready := func() error {
			var errs []error
			for _, s := range services {
				errs = append(errs, s.Ready())
			}
			return errors.Join(errs...)
		}
		ms, err := runner.ListenMetrics(c.metricsAddr, tel.MetricsHandler(), ready, logger)
		if err != nil {
			return fmt.Errorf("listen on %s (--metrics-addr): %w", c.metricsAddr, err)
		}
		go func() {
			if err := ms.Serve(); err != nil {
				logger.Error("metrics listener stopped", "error", err)
			}
		}()
		// Last to stop: scrapes and probes are answered until the end.
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			ms.Shutdown(sctx)
		}()
		metricsAddr = ms.Addr()
		logger.Info("serving metrics", "addr", metricsAddr)
	}

	gcfg := c.gateway
	gcfg.InternalSecret = []byte(c.common.InternalSecret)
	gcfg.Upstreams = map[string]string{"collections": collectionsSvc.Addr(), "crm": crmSvc.Addr(), "data": dataSvc.Addr(), "actions": actionsSvc.Addr()}
	gcfg.NATSURL, gcfg.ShutdownTimeout, gcfg.DrainDelay, gcfg.Version, gcfg.Logger = natsURL, c.common.ShutdownTimeout, c.common.DrainDelay, version, logger
	gcfg.Telemetry, gcfg.Local = tel, local
	gw, err := gateway.New(ctx, gcfg)
	if err != nil {
		return err
	}
	if c.actions.PublicURL == "" {
		actionsSvc.SetPublicURL("http://" + gw.HTTPAddr())
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
	l := listening{HTTPAddr: gw.HTTPAddr(), AdminAddr: gw.AdminAddr(), AdminToken: c.gateway.AdminToken, NATSURL: natsURL, DataAddr: dataSvc.Addr(), MetricsAddr: metricsAddr}
	waitReady(gctx, gw, logger)
	printBanner(stdout, l, c)
	if c.demo {
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

// waitReady waits until the gateway reports ready, which takes the
// services' first checks of what they depend on, so that "Atrium is
// running" is true when printed. A stack that is not ready within
// readyWait starts anyway, with a warning naming why; /readyz keeps saying
// it.
func waitReady(ctx context.Context, gw *gateway.Gateway, logger *slog.Logger) {
	deadline := time.Now().Add(readyWait)
	for {
		_, err := gw.Ready(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			logger.Warn("not ready yet; serving anyway", "cause", err.Error())
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

const readyWait = 10 * time.Second

func printBanner(w io.Writer, l listening, c serveConfig) {
	fmt.Fprintf(w, "\nAtrium is running.\n  public API:  http://%s   (routes: http://%s/openapi.json)\n  admin API:   http://%s   (probes: /healthz, /readyz)\n",
		l.HTTPAddr, l.HTTPAddr, l.AdminAddr)
	if c.generatedAdminToken {
		fmt.Fprintf(w, "  admin token: %s   (generated for this run; set --admin-token or ATRIUM_ADMIN_TOKEN to choose one)\n", l.AdminToken)
	}
	fmt.Fprintln(w)
}
