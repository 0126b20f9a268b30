// Command atrium-actions runs the actions service alone, for the cluster
// deployment. Every flag can also be set with an ATRIUM_* environment
// variable (--nats-url: ATRIUM_NATS_URL); run with -h for the list and
// --version for the version.
package main

import (
	"context"
	"flag"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/actions/service"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	settings := service.DefaultSettings()
	crm, data := cli.DefaultGRPCAddr("crm"), cli.DefaultGRPCAddr("data")
	bind := func(fs *flag.FlagSet) {
		settings.BindFlags(fs)
		fs.StringVar(&crm, "crm-addr", crm, "gRPC address of the CRM service, asked on every action whether the client is linked")
		fs.StringVar(&data, "data-addr", data, "gRPC address of the data service, which takes the records actions write")
	}
	runner.Main(service.Name, version, bind, func(ctx context.Context, cfg runner.Config) (runner.Service, error) {
		return service.New(ctx, service.Config{Config: cfg, Settings: settings, CRMAddr: crm, DataAddr: data})
	})
}
