package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/grpc"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
)

// loadChunk is how much NDJSON goes in one stream message.
const loadChunk = 256 << 10

// loadRows streams an NDJSON file (or stdin) of dataset rows to the data
// service's bulk path (DataAdminService/LoadRows), printing a progress line
// every two seconds on long loads.
func loadRows(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("atrium load-rows", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		common           cli.Common
		addr             = cli.DefaultGRPCAddr("data")
		client, resource string
	)
	common.BindCaller(fs, "required: the deployment's")
	fs.StringVar(&addr, "data-addr", addr, "gRPC address of the data service")
	fs.StringVar(&client, "client", "", "the client whose dataset the rows go to (required)")
	fs.StringVar(&resource, "resource", "", "the dataset, such as keywords (required)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: atrium load-rows --client ID --resource NAME [flags] [FILE.ndjson | -]")
		fs.PrintDefaults()
	}
	// cli.Parse refuses positional arguments; the file is one.
	var file string
	if n := len(args); n > 0 && (args[n-1] == "-" || (len(args[n-1]) > 0 && args[n-1][0] != '-')) {
		file, args = args[n-1], args[:n-1]
	}
	if err := cli.Parse(fs, args, version, stdout, lookup); err != nil {
		return err
	}
	if client == "" || resource == "" {
		return errors.New("--client and --resource are required")
	}
	signer, err := principal.NewSigner([]byte(common.InternalSecret))
	if err != nil {
		return fmt.Errorf("--internal-secret (ATRIUM_INTERNAL_SECRET): %w", err)
	}
	in := io.Reader(os.Stdin)
	if file != "" && file != "-" {
		f, err := os.Open(file) //nolint:gosec // G304: the file the operator names on the command line
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	conn, err := rpc.Dial(addr, grpc.WithPerRPCCredentials(signer.Credentials(principal.Principal{Kind: principal.KindService, Subject: "load-rows"})))
	if err != nil {
		return err
	}
	defer conn.Close()
	stream, err := datav1.NewDataAdminServiceClient(conn).LoadRows(ctx)
	if err != nil {
		return err
	}
	start, last := time.Now(), time.Now()
	var sent, lines int64
	r := bufio.NewReaderSize(in, loadChunk)
	first := &datav1.LoadRowsRequest{ClientId: client, Resource: resource}
	for {
		// A fresh buffer per message: gRPC may still hold the last one.
		buf := make([]byte, loadChunk)
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			msg := &datav1.LoadRowsRequest{Ndjson: buf[:n]}
			if first != nil {
				first.Ndjson, msg, first = buf[:n], first, nil
			}
			if err := stream.Send(msg); err != nil {
				break // the server's answer says why
			}
			sent += int64(n)
			for _, b := range buf[:n] {
				if b == '\n' {
					lines++
				}
			}
			if time.Since(last) >= 2*time.Second {
				last = time.Now()
				fmt.Fprintf(stderr, "load-rows: %d lines sent (%.1f MB), %.0f lines/s\n", lines, float64(sent)/1e6, float64(lines)/time.Since(start).Seconds())
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if first != nil { // an empty input still names the dataset
		if err := stream.Send(first); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "loaded %d %s rows for client %s in %s\n", resp.Loaded, resource, client, time.Since(start).Round(time.Millisecond))
	return nil
}
