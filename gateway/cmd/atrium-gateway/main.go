// Command atrium-gateway runs the gateway alone, for the cluster deployment:
// the public JSON API and the admin API in front of the four services. Every
// flag can also be set with an ATRIUM_* environment variable; run with -h
// for the list.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/platform/envflag"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

var version = "dev"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "atrium-gateway:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("atrium-gateway", flag.ContinueOnError)
	cfg := gateway.Config{Version: version}
	var secret, logFormat, logLevel string
	fs.StringVar(&cfg.HTTPAddr, "http-addr", "0.0.0.0:8080", "public API listen address")
	fs.StringVar(&cfg.AdminAddr, "admin-addr", "127.0.0.1:8081", "admin API listen address; keep it off public networks")
	fs.StringVar(&cfg.AdminToken, "admin-token", "", "bearer token of the admin API (at least 16 characters; required)")
	fs.StringVar(&secret, "internal-secret", "", "secret shared by all Atrium processes to sign caller identities (at least 32 characters; required)")
	fs.StringVar(&cfg.CRMAddr, "crm-addr", "127.0.0.1:9092", "CRM service gRPC address")
	fs.StringVar(&cfg.CollectionsAddr, "collections-addr", "127.0.0.1:9091", "collections service gRPC address")
	fs.StringVar(&cfg.DataAddr, "data-addr", "127.0.0.1:9093", "data service gRPC address")
	fs.StringVar(&cfg.ActionsAddr, "actions-addr", "127.0.0.1:9094", "actions service gRPC address")
	fs.StringVar(&cfg.NATSURL, "nats-url", "", "NATS URL; when set, key revocations evict cached keys at once")
	fs.DurationVar(&cfg.KeyCacheTTL, "key-cache-ttl", gateway.DefaultKeyCacheTTL, "how long an API key lookup is reused; a revocation takes effect within it")
	fs.IntVar(&cfg.KeyCacheSize, "key-cache-size", gateway.DefaultKeyCacheSize, "maximum cached API key lookups")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", gateway.DefaultRequestTimeout, "deadline of each proxied request")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", gateway.DefaultMaxBodyBytes, "largest accepted request body")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", gateway.DefaultShutdownTimeout, "how long in-flight requests may take to finish at shutdown")
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if err := envflag.Parse(fs, args, "ATRIUM_", os.LookupEnv); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	cfg.InternalSecret = []byte(secret)
	logger, err := runner.NewLogger(os.Stderr, logFormat, logLevel)
	if err != nil {
		return err
	}
	cfg.Logger = logger
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	shutdownTracing, err := telemetry.Setup(ctx, "atrium-gateway", version)
	if err != nil {
		return err
	}
	defer shutdownTracing(context.Background())
	gw, err := gateway.New(ctx, cfg)
	if err != nil {
		return err
	}
	return gw.Run(ctx)
}
