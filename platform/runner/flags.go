package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// Backing are the settings of what a service stands on: its database and
// the NATS server its events go to.
type Backing struct {
	// DatabaseURL selects the PostgreSQL store; empty selects the memory store.
	DatabaseURL string
	// Migrate applies pending migrations at start. Without it, a schema that
	// is not at this binary's version stops the start with a message that
	// says what to run.
	Migrate bool
	// NATSURL is the NATS server events are published to: one URL, or
	// several separated by commas (the servers of a cluster; the client
	// connects to one and moves to another when it goes away).
	NATSURL string
	// StreamReplicas is how many servers of a NATS cluster keep the
	// service's stream (1 to 5; 0 means 1). It applies when the stream is
	// created and to an existing stream, whose configuration is updated at
	// start; the durable consumers of the webhooks service follow it.
	StreamReplicas int
}

// MaxStreamReplicas is the most replicas JetStream keeps of a stream.
const MaxStreamReplicas = 5

// BindFlags binds the backing settings to fs. natsUsage says what the
// command does without a NATS URL.
func (b *Backing) BindFlags(fs *flag.FlagSet, natsUsage string) {
	BindDatabaseURL(fs, &b.DatabaseURL, "empty runs on the in-memory store, which keeps nothing across restarts")
	fs.BoolVar(&b.Migrate, "migrate", b.Migrate, "apply pending PostgreSQL migrations at start (otherwise run `atrium migrate` first)")
	cli.BindNATSURL(fs, &b.NATSURL, "events are published to JetStream there; "+natsUsage)
	if b.StreamReplicas == 0 {
		b.StreamReplicas = 1
	}
	fs.IntVar(&b.StreamReplicas, "nats-stream-replicas", b.StreamReplicas, "how many NATS servers keep the service's JetStream stream (1 to 5; at most the cluster's size): 3 on a three-node cluster survives the loss of a node; applied to an existing stream at start")
}

// BindDatabaseURL binds the PostgreSQL URL; usage says what an empty one
// means to the command.
func BindDatabaseURL(fs *flag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "database-url", *p, "PostgreSQL URL (postgres://user@host:5432/db); "+usage)
}

// BindGRPCAddr binds the gRPC listen address of the service called service
// to the flag named name (grpc-addr in a service's own binary,
// crm-grpc-addr in `atrium serve`).
func BindGRPCAddr(fs *flag.FlagSet, p *string, name, service string) {
	fs.StringVar(p, name, *p, "gRPC listen address of the "+service+" service (port 0: any free port)")
}

// DefaultMetricsAddr is where a service's own binary serves /metrics,
// /healthz and /readyz unless configured (9464: the port OpenTelemetry's
// Prometheus exporters use by convention).
const DefaultMetricsAddr = ":9464"

// BindMetricsAddr binds the listen address of /metrics, /healthz and
// /readyz; usage says what an empty one means to the command.
func BindMetricsAddr(fs *flag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "metrics-addr", *p, "listen address of GET /metrics (Prometheus), /healthz and /readyz, unauthenticated; "+usage)
}

// Service is a service Main runs.
type Service interface {
	Run(ctx context.Context) error
}

// Main is the main function of a service binary (atrium-crm, ...): it reads
// the settings from flags and ATRIUM_* variables, sets up logging and
// tracing, opens the service with open and runs it until SIGINT or SIGTERM,
// then drains and stops it (Runtime.Run) and exits 0.
// bind adds the service's own flags to the config open will receive.
func Main(name, version string, bind func(*flag.FlagSet), open func(context.Context, Config) (Service, error)) {
	if err := runMain(name, cli.DefaultGRPCAddr(name), version, bind, open); err != nil {
		fmt.Fprintf(os.Stderr, "atrium-%s: %v\n", name, err)
		os.Exit(1)
	}
}

func runMain(name, defaultAddr, version string, bind func(*flag.FlagSet), open func(context.Context, Config) (Service, error)) error {
	fs := flag.NewFlagSet("atrium-"+name, flag.ContinueOnError)
	cfg := Config{GRPCAddr: defaultAddr, Backing: Backing{NATSURL: "nats://127.0.0.1:4222"}, MetricsAddr: DefaultMetricsAddr}
	common := cli.Common{DrainDelay: cli.DefaultDrainDelay}
	BindGRPCAddr(fs, &cfg.GRPCAddr, "grpc-addr", name)
	BindMetricsAddr(fs, &cfg.MetricsAddr, "empty turns it off")
	cfg.Backing.BindFlags(fs, "required")
	common.Bind(fs, "required, and the same in every process")
	if bind != nil {
		bind(fs)
	}
	switch err := cli.Parse(fs, os.Args[1:], version, os.Stdout, nil); {
	case errors.Is(err, cli.ErrDone):
		return nil
	case err != nil:
		return err
	}
	logger, err := common.Logger(os.Stderr)
	if err != nil {
		return err
	}
	cfg.InternalSecret, cfg.ShutdownTimeout, cfg.DrainDelay, cfg.Logger = []byte(common.InternalSecret), common.ShutdownTimeout, common.DrainDelay, logger
	cli.TuneGC()
	ctx, stop := cli.SignalContext()
	defer stop()
	telemetry.InstallGRPCLogger(logger)
	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "atrium-" + name, Version: version})
	if err != nil {
		return err
	}
	tel.InstallGlobal()
	defer func() {
		if err := tel.Shutdown(context.WithoutCancel(ctx)); err != nil {
			logger.Warn("telemetry: the last spans and metrics were not exported", "error", err)
		}
	}()
	cfg.Telemetry = tel
	svc, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	return svc.Run(ctx)
}
