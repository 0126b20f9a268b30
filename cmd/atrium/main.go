// Command atrium is Atrium in one binary.
//
//	atrium serve     run the gateway and all four services in one process
//	atrium migrate   apply every service's PostgreSQL migrations
//	atrium version   print the version
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
	"os/signal"
	"syscall"
)

var version = "dev"

const usage = `Usage: atrium <command> [flags]

Commands:
  serve     run the gateway and all four services in one process
  migrate   apply every service's PostgreSQL migrations
  version   print the version

Run "atrium <command> -h" for the flags of a command. Every flag can also
be set with an ATRIUM_* environment variable (--http-addr: ATRIUM_HTTP_ADDR).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "atrium:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("a command is required")
	}
	switch args[0] {
	case "serve":
		cfg, err := parseServe(args[1:], os.LookupEnv, stderr)
		if err != nil || cfg == nil {
			return err
		}
		return serve(ctx, *cfg, stdout, nil)
	case "migrate":
		return migrate(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
