// Command atrium-gateway runs the gateway alone, for the cluster deployment:
// the public JSON API and the admin API in front of the five services. Every
// flag can also be set with an ATRIUM_* environment variable; run with -h
// for the list and --version for the version.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/objstore/backends"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// version is set at build time (make build).
var version = "dev"

func main() {
	if err := run(os.Args[1:]); err != nil && !errors.Is(err, cli.ErrDone) {
		fmt.Fprintln(os.Stderr, "atrium-gateway:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("atrium-gateway", flag.ContinueOnError)
	cfg := gateway.DefaultConfig()
	cfg.HTTPAddr, cfg.AdminAddr, cfg.Version = "0.0.0.0:8080", "127.0.0.1:8081", version
	cfg.BindFlags(fs)
	upstreams := map[string]*string{}
	for _, name := range gateway.UpstreamNames() {
		upstreams[name] = new(cli.DefaultGRPCAddr(name))
		fs.StringVar(upstreams[name], name+"-addr", *upstreams[name], "gRPC address of the "+name+" service"+rpc.AddressForms)
	}
	cli.BindNATSURL(fs, &cfg.NATSURL, "when set, key revocations evict cached keys at once")
	var objects backends.Config
	objects.BindFlags(fs, "directory of the files the public listener serves (assets at /files/, generated images at /media/), the one the collections and actions services write")
	common := cli.Common{DrainDelay: cli.DefaultDrainDelay}
	common.Bind(fs, "required, and the same in every process")
	if err := cli.Parse(fs, args, version, os.Stdout, nil); err != nil {
		return err
	}
	cfg.Upstreams = map[string]string{}
	for name, addr := range upstreams {
		cfg.Upstreams[name] = *addr
	}
	logger, err := common.Logger(os.Stderr)
	if err != nil {
		return err
	}
	cfg.Logger, cfg.InternalSecret, cfg.ShutdownTimeout, cfg.DrainDelay = logger, []byte(common.InternalSecret), common.ShutdownTimeout, common.DrainDelay
	// SIGTERM: drain, stop, flush the traces, exit 0 (gateway.Run).
	cli.TuneGC()
	ctx, stop := cli.SignalContext()
	defer stop()
	telemetry.InstallGRPCLogger(logger)
	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "atrium-gateway", Version: version})
	if err != nil {
		return err
	}
	tel.InstallGlobal()
	defer func() {
		if err := tel.Shutdown(context.WithoutCancel(ctx)); err != nil {
			logger.Warn("telemetry: the last spans and metrics were not exported", "error", err)
		}
	}()
	cfg.Telemetry = tel
	if objects.DataDir == "" && objects.S3Bucket == "" {
		// An empty temporary directory would answer every file 404.
		logger.Warn("no --data-dir or --s3-bucket: /files/ answers 503 and /media/ is asked of the actions service; give the gateway the directory or bucket the services write")
	} else {
		store, err := backends.Open(ctx, objects)
		if err != nil {
			return err
		}
		defer store.Close()
		cfg.Objects = store
		logger.Info("files served from the object store", "store", store.Describe)
	}
	gw, err := gateway.New(ctx, cfg)
	if err != nil {
		return err
	}
	return gw.Run(ctx)
}
