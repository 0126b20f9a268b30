// Command atrium-audit runs the audit service alone, for the cluster
// deployment. Every flag can also be set with an ATRIUM_* environment
// variable (--audit-retention: ATRIUM_AUDIT_RETENTION); run with -h for
// the list and --version for the version.
package main

import (
	"context"
	"flag"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/audit/service"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	settings := service.DefaultSettings()
	collections := cli.DefaultGRPCAddr("collections")
	bind := func(fs *flag.FlagSet) {
		settings.BindFlags(fs)
		fs.StringVar(&collections, "collections-addr", collections, "gRPC address of the collections service, asked which agency owns a site whose audit event names none"+rpc.AddressForms)
	}
	runner.Main(service.Name, version, bind, func(ctx context.Context, cfg runner.Config) (runner.Service, error) {
		return service.New(ctx, service.Config{Config: cfg, Settings: settings, CollectionsAddr: collections})
	})
}
