// Command atrium is Atrium in one binary.
//
//	atrium serve      run the gateway and all four services in one process
//	atrium migrate    apply every service's PostgreSQL migrations
//	atrium principal  sign a principal for an internal gRPC caller
//	atrium openapi    print the OpenAPI 3.1 document (--admin: the admin API's)
//	atrium mcp        serve the MCP tools over stdio (docs/mcp.md)
//	atrium version    print the version (also atrium --version)
//
// and the client commands, which call a running Atrium's API through the
// Go SDK (cli*.go, docs/cli.md): data, actions, collections, items,
// prospects, deals, webhooks, admin, login and completion.
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

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// version is set at build time (make build).
var version = "dev"

const usage = `Usage: atrium <command> [flags]

Commands:
  serve      run the gateway and all four services in one process
  migrate    apply every service's PostgreSQL migrations
  principal  sign a principal for an internal gRPC caller (docs/grpc.md)
  load-rows  stream NDJSON dataset rows into the data service (docs/datasets.md)
  openapi    print the OpenAPI 3.1 document of the public API (--admin: the admin API's)
  mcp        serve the MCP tools over stdin and stdout, for AI clients (docs/mcp.md)
  version    print the version (also --version)

Client commands (a running Atrium's API; docs/cli.md):
` + "%s" + `
Run "atrium <command> -h" for the flags of a command. Every flag can also
be set with an ATRIUM_* environment variable (--http-addr: ATRIUM_HTTP_ADDR).
`

func main() {
	// The first SIGINT or SIGTERM stops gracefully; a second, at once.
	cli.TuneGC()
	ctx, stop := cli.SignalContext()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	// exitCode prints the error: 2 for a wrong command line, 1 for any
	// other failure (an API error with its message and trace id).
	if code := exitCode(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, clientUsage())
		return usagef("a command is required")
	}
	if _, ok := clientCommands[args[0]]; ok {
		return runClientCommand(ctx, args, osCLIEnv(stdout, stderr))
	}
	switch args[0] {
	case "serve":
		cfg, err := parseServe(args[1:], os.LookupEnv, stdout, stderr)
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
		return serve(ctx, *cfg, logger, stdout, nil)
	case "migrate":
		return migrate(ctx, args[1:], stdout, stderr)
	case "principal":
		return signPrincipal(args[1:], os.LookupEnv, stdout, stderr)
	case "load-rows":
		return loadRows(ctx, args[1:], os.LookupEnv, stdout, stderr)
	case "openapi":
		return printOpenAPI(args[1:], stdout, stderr)
	case "mcp":
		return mcpStdio(ctx, args[1:], os.LookupEnv, os.Stdin, os.Stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprintf(stdout, usage, clientUsage())
		return nil
	}
	fmt.Fprintf(stderr, usage, clientUsage())
	return usagef("unknown command %q", args[0])
}
