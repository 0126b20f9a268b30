package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/atrium-hq/atrium/gateway/mcpserver"
	"github.com/atrium-hq/atrium/gateway/mcpserver/atriumsdk"
	"github.com/atrium-hq/atrium/platform/cli"
)

// mcpStdio is `atrium mcp`: the MCP server of /mcp (gateway/mcpserver)
// over stdin and stdout, for AI clients that start a process rather than
// call a URL (desktop clients). Its tools call the public API at --url
// with --api-key, so the key's scopes and binding decide what each may
// do, as over HTTP. Nothing but the protocol is written to stdout.
func mcpStdio(ctx context.Context, args []string, lookup func(string) (string, bool), stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) error {
	fs := flag.NewFlagSet("atrium mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		apiURL   = "http://127.0.0.1:8080"
		key      string
		readOnly bool
	)
	fs.StringVar(&apiURL, "url", apiURL, "base URL of Atrium's public API, which the tools call")
	fs.StringVar(&key, "api-key", "", "API key the tools call the API with (required); its scopes and binding decide what each tool may do")
	fs.BoolVar(&readOnly, "mcp-read-only", false, "list and serve the read tools only (no create_item, update_item or run_action), whatever the key may do")
	// -h and --version answer on stderr: stdout is the protocol's.
	if err := cli.Parse(fs, args, version, stderr, lookup); err != nil {
		return err
	}
	if key == "" {
		return errors.New("--api-key (ATRIUM_API_KEY) is required: the Atrium API key the tools call the API with")
	}
	if u, err := url.Parse(apiURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url (ATRIUM_URL) must be the API's absolute http(s) base URL, such as http://127.0.0.1:8080; got %q", apiURL)
	}
	srv, err := mcpserver.New(mcpserver.Config{ReadOnly: readOnly, Version: version})
	if err != nil {
		return err
	}
	return srv.ServeStdio(ctx, atriumsdk.New(apiURL, atriumsdk.Config{Version: version}).Connect(key), stdin, stdout)
}
