// Command atrium-crm runs the CRM service alone, for the cluster
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
	"github.com/atrium-hq/atrium/services/crm/service"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	collections := cli.DefaultGRPCAddr("collections")
	settings, publicURL := service.DefaultSettings(), cli.DefaultPublicURL
	var mail service.Mail
	bind := func(fs *flag.FlagSet) {
		fs.StringVar(&collections, "collections-addr", collections, "gRPC address of the collections service, asked whether a site exists"+rpc.AddressForms)
		settings.BindFlags(fs)
		mail.BindFlags(fs)
		cli.BindPublicURL(fs, &publicURL, "invitation and password reset links start with it too; the gateway's public listener unless set")
	}
	runner.Main(service.Name, version, bind, func(ctx context.Context, cfg runner.Config) (runner.Service, error) {
		return service.New(ctx, service.Config{Config: cfg, CollectionsAddr: collections, Settings: settings, PublicURL: publicURL, Mail: mail})
	})
}
