// Command atrium-collections runs the collections service alone, for the cluster
// deployment. Every flag can also be set with an ATRIUM_* environment
// variable (--nats-url: ATRIUM_NATS_URL); run with -h for the list and
// --version for the version.
package main

import (
	"context"

	"github.com/atrium-hq/atrium/platform/runner"
	"github.com/atrium-hq/atrium/services/collections/service"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	runner.Main(service.Name, version, nil, func(ctx context.Context, cfg runner.Config) (runner.Service, error) {
		return service.New(ctx, service.Config{Config: cfg})
	})
}
