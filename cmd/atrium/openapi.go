package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/atrium-hq/atrium/gateway/openapi"
)

// printOpenAPI prints the document a gateway of this version serves at
// /openapi.json, for generators and validators that work offline.
func printOpenAPI(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("atrium openapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	admin := fs.Bool("admin", false, "print the admin listener's document instead of the public one")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: atrium openapi [--admin]\n\nPrints the OpenAPI 3.1 document the gateway serves at /openapi.json (the public\nlistener's, or with --admin the admin listener's).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("atrium openapi takes no arguments; got %q", fs.Args())
	}
	build := openapi.Public
	if *admin {
		build = openapi.Admin
	}
	doc, err := build(version)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", doc.JSON)
	return err
}
