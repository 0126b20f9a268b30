// Command atrium-webhooks runs the webhooks service alone, for the cluster
// deployment. Every flag can also be set with an ATRIUM_* environment
// variable (--webhook-timeout: ATRIUM_WEBHOOK_TIMEOUT); run with -h for the
// list and --version for the version.
package main

import (
	"context"
	"flag"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/webhooks/service"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	settings := service.DefaultSettings()
	crm := cli.DefaultGRPCAddr("crm")
	bind := func(fs *flag.FlagSet) {
		settings.BindFlags(fs)
		settings.BindAllowPrivate(fs)
		fs.StringVar(&crm, "crm-addr", crm, "gRPC address of the CRM service, asked which agencies a client is linked to when one of its datasets changes"+rpc.AddressForms)
	}
	runner.Main(service.Name, version, bind, func(ctx context.Context, cfg runner.Config) (runner.Service, error) {
		return service.New(ctx, service.Config{Config: cfg, Settings: settings, CRMAddr: crm})
	})
}
