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
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/sync/errgroup"

	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/objstore/backends"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/platform/telemetry"
	actions "github.com/atrium-hq/atrium/services/actions/service"
	audit "github.com/atrium-hq/atrium/services/audit/service"
	collections "github.com/atrium-hq/atrium/services/collections/service"
	crm "github.com/atrium-hq/atrium/services/crm/service"
	data "github.com/atrium-hq/atrium/services/data/service"
	webhooks "github.com/atrium-hq/atrium/services/webhooks/service"
)

// serveConfig is every setting of `atrium serve`: the same definitions the
// per-component binaries bind (platform/cli, runner.Backing, the gateway's),
// plus what only the all-in-one command has.
type serveConfig struct {
	common      cli.Common
	backing     runner.Backing
	gateway     gateway.Config
	actions     actions.Settings
	collections collections.Settings
	// crm are the CRM's settings; its SMTP server is the actions
	// service's (--smtp-*), for invitations and password resets.
	crm crm.Settings
	// webhooks are the webhooks service's settings; its
	// --allow-private-fetch is the actions service's.
	webhooks webhooks.Settings
	// audit are the audit service's settings.
	audit audit.Settings
	// objects is where the assets' files and the generated images are
	// kept: one store for the process, shared by the collections and
	// actions services and read by the gateway.
	objects backends.Config
	// publicURL is the public API's base URL as clients reach it; empty:
	// the public listener's address.
	publicURL string
	// grpcAddrs are the services' gRPC listen addresses, by service name.
	grpcAddrs        map[string]*string
	natsEmbeddedAddr string
	natsStoreDir     string
	demo             bool
	metricsAddr      string
	// gcMinHeapMiB is the garbage collector's heap floor (gcfloor.go).
	gcMinHeapMiB int

	// spanProcessor, when set, receives every span of the process, sampled
	// whatever the OTEL_* variables say: tests read traces from it.
	spanProcessor sdktrace.SpanProcessor
	// globalTelemetry makes the process's telemetry OpenTelemetry's global
	// one too; main sets it, tests (several stacks in one binary) do not.
	globalTelemetry bool
	// relayInterval, when set, replaces the services' outbox relay
	// interval (runner.Config.RelayInterval): tests lengthen it.
	relayInterval time.Duration

	// generatedAdminToken and generatedSecret are set when no value was
	// configured and one was made up for this run, so it must be shown.
	generatedAdminToken, generatedSecret bool
}

// serviceNames are the services serve starts, in start order: the CRM
// calls collections; data, actions and webhooks call the CRM; audit calls
// collections.
var serviceNames = []string{"collections", "crm", "data", "actions", "webhooks", "audit"}

// parseServe reads flags, then ATRIUM_* variables, then defaults. It returns
// cli.ErrDone when help or the version was asked for.
func parseServe(args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) (*serveConfig, error) {
	fs := flag.NewFlagSet("atrium serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &serveConfig{gateway: gateway.DefaultConfig(), actions: actions.DefaultSettings(), collections: collections.DefaultSettings(),
		webhooks: webhooks.DefaultSettings(), crm: crm.DefaultSettings(), audit: audit.DefaultSettings(), grpcAddrs: map[string]*string{}}
	c.objects.Env = lookup
	c.gateway.HTTPAddr, c.gateway.AdminAddr = "127.0.0.1:8080", "127.0.0.1:8081"
	c.gateway.BindFlags(fs)
	// The same drain as the cluster binaries: a client that wrote a request
	// just before SIGTERM is answered, on a connection told to close.
	c.common.DrainDelay = cli.DefaultDrainDelay
	c.common.Bind(fs, "generated when empty (one process needs no shared value)")
	c.backing.BindFlags(fs, "empty starts an embedded NATS server with JetStream")
	c.actions.BindFlags(fs)
	fs.Lookup("allow-private-fetch").Usage = "let seo_audit and optimize_page fetch, and webhooks be delivered to, plain http and private, loopback, link-local and CGNAT addresses (local testing only)"
	c.webhooks.BindFlags(fs)
	c.audit.BindFlags(fs)
	c.collections.BindFlags(fs)
	c.crm.BindFlags(fs)
	c.objects.BindFlags(fs, "directory of the assets' files and the generated images (under objects/)")
	cli.BindPublicURL(fs, &c.publicURL, "empty: the public listener's address")
	for _, name := range serviceNames {
		c.grpcAddrs[name] = new(cli.DefaultGRPCAddr(name))
		runner.BindGRPCAddr(fs, c.grpcAddrs[name], name+"-grpc-addr", name)
	}
	fs.StringVar(&c.natsEmbeddedAddr, "nats-embedded-addr", "127.0.0.1:4223", "client address of the embedded NATS server")
	fs.StringVar(&c.natsStoreDir, "nats-store-dir", "", "JetStream directory of the embedded NATS server; empty uses a temporary directory removed at exit")
	runner.BindMetricsAddr(fs, &c.metricsAddr, "empty (the default) serves none: the admin listener's /metrics already covers the whole process")
	fs.IntVar(&c.gcMinHeapMiB, "gc-min-heap-mib", 64, "let the heap grow at least this many MiB beyond what the last garbage collection found live before the next one (and by GOGC's 200% once that is more): fewer collections for the small heap of one process; 0 turns it off, and a GOGC variable overrides it")
	fs.BoolVar(&c.demo, "demo", false, "seed a demo site, agency, clients, prospects and deals, and print keys and curl lines")
	if err := cli.Parse(fs, args, version, stdout, lookup); err != nil {
		return nil, err
	}
	c.webhooks.AllowPrivate = c.actions.AllowPrivateFetch
	if c.gateway.OIDCIssuer != "" && c.gateway.OIDCRedirectURL == "" && c.publicURL != "" {
		// One process answers at --public-url: single sign-on's callback
		// is there too.
		c.gateway.OIDCRedirectURL = strings.TrimSuffix(c.publicURL, "/") + gateway.OIDCCallbackPath
	}
	if c.gcMinHeapMiB < 0 {
		return nil, fmt.Errorf("--gc-min-heap-mib must be 0 (off) or more; got %d", c.gcMinHeapMiB)
	}
	if err := c.objects.CheckKept(c.backing.DatabaseURL != ""); err != nil {
		return nil, err
	}
	if c.gateway.AdminToken == "" {
		c.gateway.AdminToken = gateway.AdminTokenPrefix + randomHex(24)
		c.generatedAdminToken = true
	}
	if c.common.InternalSecret == "" {
		c.common.InternalSecret = randomHex(32)
		c.generatedSecret = true
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
	// CRMAddr is the CRM service's gRPC address (the banner's grpcurl line).
	CRMAddr string
	// AuditAddr is the audit service's gRPC address.
	AuditAddr string
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
// CRM (which calls collections), data, actions, webhooks, audit, gateway.
// Stop order is the reverse: the gateway reports not ready for the drain
// delay while still serving, then drains HTTP; then audit (its consumer
// stops first: what it has not kept stays in its stream), webhooks (its
// consumer and deliverer stop first), actions, data, CRM and collections, one after the
// other, each drains gRPC (no delay: they are reached through the
// gateway, or on loopback) and publishes what is left in its outbox; then
// NATS stops.
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
	defer func() {
		if err := tel.Shutdown(context.WithoutCancel(ctx)); err != nil {
			logger.Warn("telemetry: the last spans and metrics were not exported", "error", err)
		}
	}()
	// Last of all, once NATS has stopped too.
	defer logger.Info("atrium stopped")

	natsURL := c.backing.NATSURL
	if natsURL == "" {
		n, err := startNATS(c.natsEmbeddedAddr, c.natsStoreDir)
		if err != nil {
			return err
		}
		defer func() {
			n.stop()
			logger.Info("embedded NATS stopped")
		}()
		natsURL = n.url()
		logger.Info("embedded NATS started", "url", natsURL)
	}
	if c.backing.DatabaseURL == "" {
		logger.Warn("running on the in-memory store: nothing is kept across restarts (set --database-url for PostgreSQL)")
	}
	// Opened first, closed last: every service and the gateway use it.
	objects, err := backends.Open(ctx, c.objects)
	if err != nil {
		return err
	}
	defer objects.Close()
	logger.Info("files (assets, generated images)", "store", objects.Describe)
	backing := c.backing
	backing.NATSURL = natsURL
	// The gateway calls the services in process (rpc.Local); they keep
	// their gRPC listeners for callers outside it.
	local := rpc.NewLocal()
	with := func(name string) runner.Config {
		return runner.Config{GRPCAddr: *c.grpcAddrs[name], Backing: backing, InternalSecret: []byte(c.common.InternalSecret),
			ShutdownTimeout: c.common.ShutdownTimeout, Logger: logger, Telemetry: tel, RelayInterval: c.relayInterval, Local: local}
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
	collectionsSvc, err := collections.New(ctx, collections.Config{Config: with("collections"), Settings: c.collections, Objects: objects, PublicURL: c.publicURL})
	if err != nil {
		return err
	}
	services = append(services, collectionsSvc)
	crmSvc, err := crm.New(ctx, crm.Config{Config: with("crm"), CollectionsAddr: collectionsSvc.Addr(), Settings: c.crm, PublicURL: c.publicURL,
		Mail: crm.Mail{Addr: c.actions.SMTPAddr, From: c.actions.SMTPFrom, Username: c.actions.SMTPUsername, Password: c.actions.SMTPPassword, TLS: c.actions.SMTPTLS}})
	if err != nil {
		return err
	}
	services = append(services, crmSvc)
	// The two call each other: collections asks the CRM about a site's
	// owner, so it learns the CRM's address once the CRM listens.
	if err := collectionsSvc.ConnectCRM(crmSvc.Addr()); err != nil {
		return err
	}
	dataSvc, err := data.New(ctx, data.Config{Config: with("data"), CRMAddr: crmSvc.Addr()})
	if err != nil {
		return err
	}
	services = append(services, dataSvc)
	actionsSvc, err := actions.New(ctx, actions.Config{Config: with("actions"), Settings: c.actions, CRMAddr: crmSvc.Addr(), DataAddr: dataSvc.Addr(), CollectionsAddr: collectionsSvc.Addr(),
		Objects: objects, PublicURL: c.publicURL, LegacyBlobDir: c.objects.DataDir})
	if err != nil {
		return err
	}
	services = append(services, actionsSvc)
	webhooksSvc, err := webhooks.New(ctx, webhooks.Config{Config: with("webhooks"), Settings: c.webhooks, CRMAddr: crmSvc.Addr()})
	if err != nil {
		return err
	}
	services = append(services, webhooksSvc)
	auditSvc, err := audit.New(ctx, audit.Config{Config: with("audit"), Settings: c.audit, CollectionsAddr: collectionsSvc.Addr()})
	if err != nil {
		return err
	}
	services = append(services, auditSvc)

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
	gcfg.Upstreams = map[string]string{"collections": collectionsSvc.Addr(), "crm": crmSvc.Addr(), "data": dataSvc.Addr(), "actions": actionsSvc.Addr(),
		"webhooks": webhooksSvc.Addr(), "audit": auditSvc.Addr()}
	gcfg.NATSURL, gcfg.ShutdownTimeout, gcfg.DrainDelay, gcfg.Version, gcfg.Logger = natsURL, c.common.ShutdownTimeout, c.common.DrainDelay, version, logger
	gcfg.Telemetry, gcfg.Local, gcfg.Objects = tel, local, objects
	gw, err := gateway.New(ctx, gcfg)
	if err != nil {
		return err
	}
	if c.publicURL == "" {
		actionsSvc.SetPublicURL("http://" + gw.HTTPAddr())
		collectionsSvc.SetPublicURL("http://" + gw.HTTPAddr())
		crmSvc.SetPublicURL("http://" + gw.HTTPAddr())
	}

	// Each service runs until its own stop; once the gateway has drained,
	// they are stopped one at a time in reverse order of start, each after
	// the one that calls it has finished (webhooks calls the CRM, actions
	// calls data and the CRM, data calls the CRM, the CRM calls collections), so that no service
	// loses a dependency while it still drains its own calls.
	g, gctx := errgroup.WithContext(ctx)
	stops := make([]func(), len(services))
	for i, s := range services {
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		stops[i] = func() { cancel(); <-done }
		g.Go(func() error {
			defer close(done)
			if err := s.Run(sctx); err != nil {
				return fmt.Errorf("%s service: %w", serviceNames[i], err)
			}
			if sctx.Err() == nil {
				return fmt.Errorf("the %s service stopped unexpectedly", serviceNames[i])
			}
			return nil
		})
	}
	g.Go(func() error {
		err := gw.Run(gctx)
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		return err
	})
	defer context.AfterFunc(ctx, func() {
		logger.Info("stopping: the gateway drains, then the services stop in reverse order of start; interrupt again to stop at once",
			"drain_delay", c.common.DrainDelay)
	})()
	l := listening{HTTPAddr: gw.HTTPAddr(), AdminAddr: gw.AdminAddr(), AdminToken: c.gateway.AdminToken, NATSURL: natsURL, DataAddr: dataSvc.Addr(), CRMAddr: crmSvc.Addr(),
		AuditAddr: auditSvc.Addr(), MetricsAddr: metricsAddr}
	waitReady(gctx, gw, logger)
	var d *demo
	if c.demo {
		seeded, err := seedDemo(gctx, l)
		if err != nil {
			logger.Error("demo seeding failed", "error", err)
		} else {
			d = &seeded
		}
	}
	// Last, after the seeding's access log lines: what a person needs ends
	// up at the bottom of the terminal.
	printBanner(stdout, l, c, d)
	if ready != nil {
		ready(l)
	}
	return g.Wait()
}

// waitReady waits until the gateway can use every service, which takes
// the services' first checks of what they depend on, so that "Atrium is
// running" is true when printed. A stack that is not ready within
// readyWait starts anyway, with a warning naming why; /healthz keeps
// saying it.
func waitReady(ctx context.Context, gw *gateway.Gateway, logger *slog.Logger) {
	deadline := time.Now().Add(readyWait)
	for {
		_, err := gw.Dependencies(ctx)
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

// printBanner prints how to reach the running Atrium: its addresses, the
// secrets generated for this run and, with --demo, the demo's keys and
// commands to paste. It is one write, so no log line lands inside it.
func printBanner(w io.Writer, l listening, c serveConfig, d *demo) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nAtrium is running.\n  public API:  http://%s   (routes: http://%s/openapi.json)\n  admin API:   http://%s   (probes: /healthz, /readyz)\n",
		l.HTTPAddr, l.HTTPAddr, l.AdminAddr)
	if !c.gateway.StudioOff {
		fmt.Fprintf(&b, "  Studio:      http://%s/studio/   (the console; operators: http://%s/studio/ with the admin token)\n", l.HTTPAddr, l.AdminAddr)
	}
	if c.generatedAdminToken {
		fmt.Fprintf(&b, "  admin token: %s   (generated for this run; set --admin-token or ATRIUM_ADMIN_TOKEN to choose one)\n", l.AdminToken)
	}
	if c.generatedSecret {
		fmt.Fprintf(&b, "  internal secret: %s   (generated for this run; atrium load-rows, atrium principal and gRPC callers need it; set --internal-secret or ATRIUM_INTERNAL_SECRET to choose one)\n",
			c.common.InternalSecret)
	}
	if d != nil {
		printDemo(&b, l, c, *d)
	}
	b.WriteString("\n")
	_, _ = io.WriteString(w, b.String())
}

func printDemo(b *strings.Builder, l listening, c serveConfig, d demo) {
	if d.found {
		fmt.Fprintf(b, "\nDemo data found, seeded at an earlier start (not seeded again): agency %s (%s), client %s (%s), site %s.\n",
			d.agency, demoAgencyName, d.bakery, demoClientName, d.site)
	} else {
		fmt.Fprintf(b, "\nDemo data seeded: agency %s (%s) with 2 clients (%s: %s), 3 prospects, 2 deals, 3 keyword rows and 100 AI + 100 data credits; site %s with collections posts and pages (system).\n",
			d.agency, demoAgencyName, demoClientName, d.bakery, d.site)
	}
	fmt.Fprintf(b, "  read key:    %s   (scopes: read)\n  write key:   %s   (scopes: read, write)\n", d.read, d.write)
	if d.signIn != "" {
		fmt.Fprintf(b, "  Studio:      the agency's owner %s sets a password and signs in at\n               %s\n", demoOwnerEmail, d.signIn)
	} else {
		fmt.Fprintf(b, "  Studio:      the agency's owner %s signs in with the invitation link printed at the first start\n", demoOwnerEmail)
	}
	if d.found {
		b.WriteString("  (new keys for this run: a key's secret is shown only when it is issued; the keys printed at earlier starts still work)\n")
	}
	api, admin := "http://"+l.HTTPAddr, "http://"+l.AdminAddr
	fmt.Fprintf(b, `
Try:
  curl -s -H "Authorization: Bearer %[1]s" %[3]s/api/v1/prospects
  curl -s -H "Authorization: Bearer %[1]s" "%[3]s/api/v1/deals?limit=1"
  curl -s -H "Authorization: Bearer %[1]s" "%[3]s/api/public/v1/collections/posts?limit=10"
  curl -sS -H "Authorization: Bearer %[2]s" -F file=@photo.jpg -F alt="The shop" %[3]s/api/public/v1/assets   (a photo.jpg of yours)
  curl -s -H "Authorization: Bearer %[1]s" "%[3]s/api/v1/data?resource=keywords&client_id=%[4]s&order=tracked_at"
  curl -s -X POST -H "Authorization: Bearer %[2]s" -H "Content-Type: application/json" -d '{"action":"generate_blog","client_id":"%[4]s","keyword":"sourdough starter"}' %[3]s/api/v1/data
  curl -s -H "Authorization: Bearer %[1]s" %[3]s/api/v1/actions
  curl -s -H "Authorization: Bearer %[5]s" %[6]s/admin/v1/agencies
  curl -s -X POST -H "Authorization: Bearer %[5]s" -H "Content-Type: application/json" -d '{"name":"Acme Agency"}' %[6]s/admin/v1/agencies
`, d.read, d.write, api, d.bakery, l.AdminToken, admin)
	secret := "export ATRIUM_INTERNAL_SECRET=" + c.common.InternalSecret
	if !c.generatedSecret {
		secret = "export ATRIUM_INTERNAL_SECRET=...   # the --internal-secret this process was given"
	}
	fmt.Fprintf(b, `
gRPC and the bulk loader (docs/grpc.md, docs/datasets.md), from this directory:
  %s
  grpcurl -plaintext -H "x-atrium-principal: $(go run ./cmd/atrium principal --agency %s --scopes read)" -d '{"limit": 2}' %s atrium.crm.v1.CRMService/ListProspects
  echo '{"keyword":"rye bread","position":12,"status":"active"}' | go run ./cmd/atrium load-rows --data-addr %s --client %s --resource keywords -
`, secret, d.agency, l.CRMAddr, l.DataAddr, d.bakery)
	fmt.Fprintf(b, `
Web pages (CORS, docs/collections.md#browsers-cors): the demo site's keys work from pages on %s;
  PUT %s/admin/v1/sites/%s/allowed_origins changes the list.
`, strings.Join(demoOrigins, ", "), admin, d.site)
	fmt.Fprintf(b, `
AI clients (MCP, docs/mcp.md): %[1]s/mcp with either key as a Bearer token, or over stdio:
  ATRIUM_URL=%[1]s ATRIUM_API_KEY=%[2]s go run ./cmd/atrium mcp
`, api, d.read)
}
