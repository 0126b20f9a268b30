// Command atrium-data runs the data service alone, for the cluster
// deployment. Every flag can also be set with an ATRIUM_* environment
// variable (--nats-url: ATRIUM_NATS_URL); run with -h for the list and
// --version for the version.
package main

import (
	"context"
	"flag"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/data/service"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	crm := cli.DefaultGRPCAddr("crm")
	bind := func(fs *flag.FlagSet) {
		fs.StringVar(&crm, "crm-addr", crm, "gRPC address of the CRM service, asked on every read which clients the agency may reach"+rpc.AddressForms)
	}
	runner.Main(service.Name, version, bind, func(ctx context.Context, cfg runner.Config) (runner.Service, error) {
		return service.New(ctx, service.Config{Config: cfg, CRMAddr: crm})
	})
}
