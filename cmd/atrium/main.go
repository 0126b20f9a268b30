// Command atrium is Atrium in one binary.
//
//	atrium serve      run the gateway and all six services in one process
//	atrium migrate    apply every service's PostgreSQL migrations
//	atrium principal  sign a principal for an internal gRPC caller
//	atrium openapi    print the OpenAPI 3.1 document (--admin: the admin API's)
//	atrium mcp        serve the MCP tools over stdio (docs/mcp.md)
//	atrium version    print the version (also atrium --version)
//
// and the client commands, which call a running Atrium's API through the
// Go SDK (internal/cli, docs/cli.md): data, actions, runs, collections,
// items, prospects, deals, webhooks, admin, login and completion. One
// command table holds both: dispatch, usage and completion come from it.
//
// `atrium serve` with no settings runs on the in-memory store with an
// embedded NATS server, so one command starts a working system. The same
// services also ship as separate binaries for the cluster deployment.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	atriumcli "github.com/atrium-hq/atrium/cmd/atrium/internal/cli"
	platformcli "github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	// The first SIGINT or SIGTERM stops gracefully; a second, at once.
	platformcli.TuneGC()
	ctx, stop := platformcli.SignalContext()
	err := run(ctx, os.Args[1:], atriumcli.OSEnv(os.Stdout, os.Stderr))
	stop()
	// ExitCode prints the error: 2 for a wrong command line, 1 for any
	// other failure (an API error with its message and trace id).
	if code := atriumcli.ExitCode(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// run runs atrium's command line: the server commands below and the
// client commands of internal/cli, one table.
func run(ctx context.Context, args []string, env atriumcli.Env) error {
	return atriumcli.Run(ctx, args, env, atriumcli.Options{Version: version, Server: serverCommands(env.Stdout, env.Stderr)})
}

// serverCommands are the commands that run Atrium rather than call it;
// each parses its own flags.
func serverCommands(stdout, stderr io.Writer) []*atriumcli.Command {
	return []*atriumcli.Command{
		{Name: "serve", Summary: "run the gateway and all six services in one process", Server: true, Raw: func(ctx context.Context, args []string) error {
			cfg, err := parseServe(args, os.LookupEnv, stdout, stderr)
			if err != nil {
				return err
			}
			logger, err := cfg.common.Logger(stdout)
			if err != nil {
				return err
			}
			// gRPC's process-wide logger, set before any gRPC activity.
			telemetry.InstallGRPCLogger(logger)
			cfg.globalTelemetry = true
			// Process-wide, so here rather than in serve, which tests run
			// several of in one process.
			defer startHeapFloor(cfg.gcMinHeapMiB)()
			return serve(ctx, *cfg, logger, stdout, nil)
		}},
		{Name: "migrate", Summary: "apply every service's PostgreSQL migrations", Server: true, Raw: func(ctx context.Context, args []string) error {
			return migrate(ctx, args, stdout, stderr)
		}},
		{Name: "principal", Summary: "sign a principal for an internal gRPC caller (docs/grpc.md)", Server: true, Raw: func(_ context.Context, args []string) error {
			return signPrincipal(args, os.LookupEnv, stdout, stderr)
		}},
		{Name: "load-rows", Summary: "stream NDJSON dataset rows into the data service (docs/datasets.md)", Server: true, Raw: func(ctx context.Context, args []string) error {
			return loadRows(ctx, args, os.LookupEnv, stdout, stderr)
		}},
		{Name: "openapi", Summary: "print the OpenAPI 3.1 document of the public API (--admin: the admin API's)", Server: true, Raw: func(_ context.Context, args []string) error {
			return printOpenAPI(args, stdout, stderr)
		}},
		{Name: "mcp", Summary: "serve the MCP tools over stdin and stdout, for AI clients (docs/mcp.md)", Server: true, Raw: func(ctx context.Context, args []string) error {
			return mcpStdio(ctx, args, os.LookupEnv, os.Stdin, os.Stdout, stderr)
		}},
		{Name: "version", Summary: "print the version (also --version)", Server: true, Raw: func(context.Context, []string) error {
			_, err := fmt.Fprintln(stdout, version)
			return err
		}},
	}
}
