package runner

import (
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/atrium-hq/atrium/platform/telemetry"
)

// Flags are the command-line settings every service binary shares. Bind
// them, parse the flag set (envflag.Parse), then call Finish.
type Flags struct {
	cfg       *Config
	secret    string
	logFormat string
	logLevel  string
}

// BindFlags binds the shared service flags to cfg.
func BindFlags(fs *flag.FlagSet, cfg *Config, defaultGRPCAddr string) *Flags {
	f := &Flags{cfg: cfg}
	fs.StringVar(&cfg.GRPCAddr, "grpc-addr", defaultGRPCAddr, "gRPC listen address")
	fs.StringVar(&cfg.DatabaseURL, "database-url", "", "PostgreSQL URL (postgres://...); empty runs on the in-memory store, which keeps nothing across restarts")
	fs.BoolVar(&cfg.Migrate, "migrate", false, "apply pending database migrations at start")
	fs.StringVar(&cfg.NATSURL, "nats-url", "nats://127.0.0.1:4222", "NATS server URL; events are published to JetStream")
	fs.StringVar(&f.secret, "internal-secret", "", "secret shared by all Atrium processes to sign caller identities (at least 32 characters; required)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", DefaultShutdownTimeout, "how long in-flight calls may take to finish at shutdown")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return f
}

// Finish completes the configuration after parsing: the secret and the
// logger writing to w.
func (f *Flags) Finish(w io.Writer) error {
	f.cfg.InternalSecret = []byte(f.secret)
	logger, err := NewLogger(w, f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	f.cfg.Logger = logger
	return f.cfg.Validate()
}

// NewLogger builds the process logger from the --log-format and --log-level
// values.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level must be debug, info, warn or error; got %q", level)
	}
	if format != "text" && format != "json" {
		return nil, fmt.Errorf("log format must be text or json; got %q", format)
	}
	return telemetry.NewLogger(w, format, lvl), nil
}
