// Command atrium-actions runs the actions service alone, for the cluster
// deployment. Every flag can also be set with an ATRIUM_* environment
// variable (--nats-url: ATRIUM_NATS_URL); run with -h for the list.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/atrium-hq/atrium/platform/envflag"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/platform/telemetry"
	"github.com/atrium-hq/atrium/services/actions/service"
)

var version = "dev"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "atrium-actions:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("atrium-actions", flag.ContinueOnError)
	var cfg service.Config
	flags := runner.BindFlags(fs, &cfg.Config, "127.0.0.1:9094")
	if err := envflag.Parse(fs, args, "ATRIUM_", os.LookupEnv); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	if err := flags.Finish(os.Stderr); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	shutdownTracing, err := telemetry.Setup(ctx, "atrium-actions", version)
	if err != nil {
		return err
	}
	defer shutdownTracing(context.Background())
	svc, err := service.New(ctx, cfg)
	if err != nil {
		return err
	}
	return svc.Run(ctx)
}
