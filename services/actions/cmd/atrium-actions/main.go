// Command atrium-actions runs the actions service alone, for the cluster
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
	"github.com/atrium-hq/atrium/services/actions/service"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	settings := service.DefaultSettings()
	crm, data, collections := cli.DefaultGRPCAddr("crm"), cli.DefaultGRPCAddr("data"), cli.DefaultGRPCAddr("collections")
	publicURL := cli.DefaultPublicURL
	var objects backends.Config
	bind := func(fs *flag.FlagSet) {
		settings.BindFlags(fs)
		fs.StringVar(&crm, "crm-addr", crm, "gRPC address of the CRM service, asked on every action whether the client is linked"+rpc.AddressForms)
		fs.StringVar(&collections, "collections-addr", collections, "gRPC address of the collections service, asked for the agency's logo (an asset) as a report is drawn; empty: reports without a logo"+rpc.AddressForms)
		fs.StringVar(&data, "data-addr", data, "gRPC address of the data service, which takes the records actions write"+rpc.AddressForms)
		objects.BindFlags(fs, "directory of the generated files (images), shared with the gateway, which serves them")
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
		cfg.Logger.Info("generated files", "store", store.Describe)
		if store.Temporary {
			cfg.Logger.Warn("generated images are kept in a temporary directory removed at exit: set --data-dir (shared with the gateway) or --s3-bucket")
		}
		svc, err := service.New(ctx, service.Config{Config: cfg, Settings: settings, CRMAddr: crm, DataAddr: data, CollectionsAddr: collections,
			Objects: store, PublicURL: publicURL, LegacyBlobDir: objects.DataDir})
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
