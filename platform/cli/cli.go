// Package cli holds what every Atrium command shares on its command line:
// the settings every process has (the internal secret, logging, the
// shutdown timeout), defined here once as flags, and the parsing of flags,
// ATRIUM_* environment variables, -h and --version.
//
// A component's own settings are bound by the component (gateway.Config's
// BindFlags, runner.Backing's); `atrium serve` and the per-component binaries
// bind the same definitions.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/atrium-hq/atrium/platform/envflag"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// Prefix starts every setting's environment variable.
const Prefix = "ATRIUM_"

// Common are the settings of every Atrium process.
type Common struct {
	InternalSecret  string
	LogFormat       string
	LogLevel        string
	ShutdownTimeout time.Duration
	// DrainDelay is how long a process reports not ready after SIGTERM
	// while still serving, so that load balancers stop sending to it
	// before it stops accepting, and clients on keep-alive connections are
	// told to close them. Unlike the others, its default is the caller's:
	// set it before Bind (every command that serves sets DefaultDrainDelay,
	// `atrium serve` included).
	DrainDelay time.Duration
}

const (
	// DefaultShutdownTimeout bounds a graceful stop unless configured.
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultDrainDelay is the drain delay of every serving command:
	// longer than a readiness probe's period plus an endpoint update.
	DefaultDrainDelay = 5 * time.Second
)

// Bind binds the common settings to fs. secretUsage says what happens when
// the internal secret is empty, which differs between the all-in-one
// command (one is generated) and the cluster binaries (it is required).
func (c *Common) Bind(fs *flag.FlagSet, secretUsage string) {
	c.BindCaller(fs, secretUsage)
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long in-flight requests may take to finish once the drain delay is over")
	fs.DurationVar(&c.DrainDelay, "drain-delay", c.DrainDelay, "how long after SIGTERM the process reports not ready while still serving, so that load balancers stop sending before it stops accepting")
}

// BindCaller binds what a command that only calls a deployment needs (the
// internal secret and logging), for commands that serve nothing and so
// have no drain or shutdown to set (atrium load-rows, atrium principal).
func (c *Common) BindCaller(fs *flag.FlagSet, secretUsage string) {
	if c.LogFormat == "" {
		c.LogFormat = "text"
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	fs.StringVar(&c.InternalSecret, "internal-secret", c.InternalSecret, "secret shared by every Atrium process of a deployment to sign caller identities, at least 32 characters; "+secretUsage)
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error")
}

// defaultGCPercent is the garbage collector's target unless GOGC says
// otherwise: Atrium's heaps are small (tens of MB) and short-lived garbage
// is most of what requests make, so collecting half as often costs little
// memory and saves CPU (measured: +6% actions per second end to end, 431 to
// 458, with bench actions at 32 clients).
const defaultGCPercent = 200

// TuneGC sets the garbage collector's target to defaultGCPercent unless
// the GOGC variable sets it. Every main calls it first.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// SignalContext returns a context cancelled by the first SIGINT or
// SIGTERM, which starts a graceful stop. That first signal also restores
// the default behaviour, so a second one stops the process at once, for
// an operator who will not wait for the drain.
func SignalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// Logger is the process logger the settings describe, writing to w.
func (c *Common) Logger(w io.Writer) (*slog.Logger, error) {
	return telemetry.NewLogger(w, c.LogFormat, c.LogLevel)
}

// ErrDone means the command line asked for help or the version, which Parse
// has printed: the command should exit 0 without doing anything else.
var ErrDone = errors.New("done")

// Parse parses args into fs, then fills every flag not given from its
// ATRIUM_* environment variable (looked up with lookup; nil means the
// process environment). It answers -h and --version itself, returning
// ErrDone.
func Parse(fs *flag.FlagSet, args []string, version string, stdout io.Writer, lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	showVersion := fs.Bool("version", false, "print the version and exit")
	// --version is a question asked on the command line, never a setting:
	// a deployment's ATRIUM_VERSION variable must not trigger (or break) it,
	// and -h names no variable for it.
	envflag.CommandLineOnly(fs, "version")
	if err := envflag.Parse(fs, args, Prefix, lookup); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ErrDone
		}
		return err
	}
	if *showVersion {
		fmt.Fprintln(stdout, version)
		return ErrDone
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// defaultGRPCAddrs are the services' default gRPC addresses: where each
// service listens, and where the gateway and other services look for it.
var defaultGRPCAddrs = map[string]string{
	"collections": "127.0.0.1:9091",
	"crm":         "127.0.0.1:9092",
	"data":        "127.0.0.1:9093",
	"actions":     "127.0.0.1:9094",
	"webhooks":    "127.0.0.1:9095",
	"audit":       "127.0.0.1:9096",
}

// DefaultGRPCAddr is service's default gRPC address.
func DefaultGRPCAddr(service string) string { return defaultGRPCAddrs[service] }

// BindNATSURL binds the NATS server URL (nats.go takes a comma-separated
// list of a cluster's servers as it is); usage says what the command does
// with it, or without it.
func BindNATSURL(fs *flag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "nats-url", *p, "NATS server URL, or a cluster's servers separated by commas (nats://a:4222,nats://b:4222: the client connects to one and moves to another when it goes away); "+usage)
}

// DefaultPublicURL is the public API's base URL in a service's own binary
// unless set: the gateway's default listener.
const DefaultPublicURL = "http://127.0.0.1:8080"

// BindPublicURL binds the public API's base URL, which the URLs of
// uploaded assets and generated media start with.
func BindPublicURL(fs *flag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "public-url", *p, "base URL of the public API as clients reach it (https://api.example.com, or a CDN in front of it); the URLs of assets and generated media start with it; "+usage)
}
