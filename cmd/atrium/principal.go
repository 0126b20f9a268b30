package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/cli"
	"github.com/atrium-hq/atrium/platform/principal"
)

// signPrincipal prints a signed service principal, for an internal caller
// that calls a service's gRPC API directly (grpcurl, a script). Services in
// Go sign their own with principal.Signer; see docs/grpc.md.
func signPrincipal(args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("atrium principal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		common  cli.Common
		subject = "cli"
		agency  string
		site    string
		scopes  string
		ttl     = 5 * time.Minute
	)
	common.BindCaller(fs, "required: the deployment's")
	fs.StringVar(&subject, "subject", subject, "who the caller is, for logs (a service or job name)")
	fs.StringVar(&agency, "agency", agency, "the agency the caller acts for; with --site, neither means an internal or admin caller")
	fs.StringVar(&site, "site", site, "the site the caller acts for")
	fs.StringVar(&scopes, "scopes", scopes, "comma-separated scopes of a tenant caller: read, write")
	fs.DurationVar(&ttl, "ttl", ttl, "how long the token is valid, at most 1h")
	if err := cli.Parse(fs, args, version, stdout, lookup); err != nil {
		return err
	}
	signer, err := principal.NewSigner([]byte(common.InternalSecret))
	if err != nil {
		return fmt.Errorf("--internal-secret (ATRIUM_INTERNAL_SECRET): %w", err)
	}
	if ttl <= 0 || ttl > time.Hour {
		return errors.New("--ttl must be more than 0 and at most 1h")
	}
	p := principal.Principal{Kind: principal.KindService, Subject: subject, AgencyID: agency, SiteID: site}
	if scopes != "" {
		if p.Scopes, err = principal.ParseScopes(strings.Split(scopes, ",")); err != nil {
			return err
		}
	}
	if p.ActsForTenant() != (len(p.Scopes) > 0) {
		return errors.New("a caller acting for a tenant (--agency or --site) needs --scopes, and only such a caller has scopes")
	}
	fmt.Fprintln(stdout, signer.SignFor(p, ttl))
	return nil
}
