// Command atrium-collections runs the collections service alone, for the cluster
// deployment. Every flag can also be set with an ATRIUM_* environment
// variable (--nats-url: ATRIUM_NATS_URL); run with -h for the list and
// --version for the version.
package main

import (
	"context"
	"flag"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/objstore/backends"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/collections/service"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	settings, publicURL := service.DefaultSettings(), cli.DefaultPublicURL
	crm := cli.DefaultGRPCAddr("crm")
	var objects backends.Config
	bind := func(fs *flag.FlagSet) {
		settings.BindFlags(fs)
		fs.StringVar(&crm, "crm-addr", crm, "gRPC address of the CRM service, asked whether an agency exists and a client is linked to it when a site is given an owner"+rpc.AddressForms)
		objects.BindFlags(fs, "directory of the assets' files, shared with the gateway, which serves them")
		cli.BindPublicURL(fs, &publicURL, "the gateway's public listener unless set")
	}
	runner.Main(service.Name, version, bind, func(ctx context.Context, cfg runner.Config) (runner.Service, error) {
		if err := objects.CheckKept(cfg.Backing.DatabaseURL != ""); err != nil {
			return nil, err
		}
		store, err := backends.Open(ctx, objects)
		if err != nil {
			return nil, err
		}
		cfg.Logger.Info("assets' files", "store", store.Describe)
		if store.Temporary {
			cfg.Logger.Warn("the assets' files are kept in a temporary directory removed at exit: set --data-dir (shared with the gateway) or --s3-bucket")
		}
		svc, err := service.New(ctx, service.Config{Config: cfg, Settings: settings, Objects: store, PublicURL: publicURL, CRMAddr: crm})
		if err != nil {
			store.Close()
			return nil, err
		}
		return closing{svc, store.Close}, nil
	})
}

// closing runs a service, then releases what it ran on.
type closing struct {
	*service.Service
	close func()
}

func (c closing) Run(ctx context.Context) error {
	defer c.close()
	return c.Service.Run(ctx)
}
