package main

// atrium admin: provisioning over the admin API (ATRIUM_ADMIN_URL,
// ATRIUM_ADMIN_TOKEN), so that setting up a tenant needs neither curl nor
// SQL: agencies, sites, clients (and their links to agencies), API keys
// and credits.

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func (in *invocation) adminFlags(usage string) *flag.FlagSet {
	fs := in.flags(in.command, usage)
	fs.StringVar(&in.adminURL, "admin-url", "", "the admin API's base URL (default: ATRIUM_ADMIN_URL)")
	fs.StringVar(&in.adminToken, "admin-token", "", "the admin token (default: ATRIUM_ADMIN_TOKEN)")
	return fs
}

func runAdmin(ctx context.Context, in *invocation, args []string) error {
	what, args, err := in.subcommand(args, "agencies", "sites", "clients", "keys", "credits")
	if err != nil {
		return err
	}
	sub, args, err := in.subcommand(args, adminSubs[what]...)
	if err != nil {
		return err
	}
	var name, domain, agency, site, scopes, client string
	var expires time.Duration
	var ai, data int
	usage := "[flags]"
	fs := in.adminFlags(usage)
	switch what + " " + sub {
	case "agencies create", "sites create":
		fs.StringVar(&name, "name", "", "its name (required)")
	case "clients list":
		fs.StringVar(&agency, "agency", "", "only the clients linked to this agency")
	case "clients create":
		fs.StringVar(&name, "name", "", "the business's name (required)")
		fs.StringVar(&domain, "domain", "", "the business's domain (required)")
		fs.StringVar(&agency, "agency", "", "link the new client to this agency")
	case "clients link", "clients unlink":
		fs.StringVar(&agency, "agency", "", "the agency's id (required)")
		fs.StringVar(&client, "client", "", "the client's id (required)")
	case "keys create":
		fs.StringVar(&name, "name", "", "what the key is for (required)")
		fs.StringVar(&scopes, "scopes", "read", "its scopes, comma-separated: read, write")
		fs.StringVar(&agency, "agency", "", "the agency the key acts for")
		fs.StringVar(&site, "site", "", "the site the key reads and writes the collections of")
		fs.DurationVar(&expires, "expires-in", 0, "the key expires after this long (such as 720h); default never")
	case "credits get", "credits add":
		fs.StringVar(&agency, "agency", "", "the agency's id (required)")
		if sub == "add" {
			fs.IntVar(&ai, "ai", 0, "AI credits to add (negative: remove)")
			fs.IntVar(&data, "data", 0, "data credits to add (negative: remove)")
		}
	}
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if what+" "+sub != "keys revoke" {
		if err := noArgs(in, pos); err != nil {
			return err
		}
	} else if len(pos) != 1 {
		return usagef("usage: %s <key id>", in.command)
	}
	required := func(pairs ...string) error {
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i+1] == "" {
				return usagef("%s: --%s is required", in.command, pairs[i])
			}
		}
		return nil
	}
	switch what + " " + sub {
	case "agencies create", "sites create":
		err = required("name", name)
	case "clients create":
		err = required("name", name, "domain", domain)
	case "clients link", "clients unlink":
		err = required("agency", agency, "client", client)
	case "keys create":
		err = required("name", name)
		if err == nil && expires < 0 {
			err = usagef("--expires-in must be positive")
		}
	case "credits get", "credits add":
		err = required("agency", agency)
	}
	if err != nil {
		return err
	}
	a, err := in.adminClient()
	if err != nil {
		return err
	}
	switch what + " " + sub {
	case "agencies list":
		return adminPrintAll(in, a.Agencies(ctx), []string{"id", "name", "created_at"})
	case "agencies create":
		ag, err := a.CreateAgency(ctx, name)
		if err != nil {
			return err
		}
		return in.printObject(ag, []string{"id", "name", "created_at"})
	case "sites list":
		return adminPrintAll(in, a.Sites(ctx), []string{"id", "name", "created_at"})
	case "sites create":
		s, err := a.CreateSite(ctx, name)
		if err != nil {
			return err
		}
		return in.printObject(s, []string{"id", "name", "created_at"})
	case "clients list":
		return adminPrintAll(in, a.Clients(ctx, agency), []string{"id", "name", "domain", "status", "created_at"})
	case "clients create":
		cl, err := a.CreateClient(ctx, name, domain)
		if err != nil {
			return err
		}
		if agency != "" {
			if err := a.LinkClient(ctx, agency, cl.ID); err != nil {
				return fmt.Errorf("client %s created, but linking it to agency %s failed: %w", cl.ID, agency, err)
			}
		}
		return in.printObject(cl, []string{"id", "name", "domain", "status", "created_at"})
	case "clients link":
		if err := a.LinkClient(ctx, agency, client); err != nil {
			return err
		}
		fmt.Fprintf(in.env.stderr, "agency %s now reaches client %s\n", agency, client)
		return nil
	case "clients unlink":
		if err := a.UnlinkClient(ctx, agency, client); err != nil {
			return err
		}
		fmt.Fprintf(in.env.stderr, "agency %s no longer reaches client %s\n", agency, client)
		return nil
	case "keys list":
		return adminPrintAll(in, a.Keys(ctx), []string{"id", "name", "prefix", "scopes", "agency_id", "site_id", "expires_at", "revoked_at"})
	case "keys create":
		k := atrium.NewKey{Name: name, AgencyID: agency, SiteID: site}
		for _, s := range strings.Split(scopes, ",") {
			if s = strings.TrimSpace(s); s != "" {
				k.Scopes = append(k.Scopes, s)
			}
		}
		if expires > 0 {
			at := time.Now().Add(expires).UTC()
			k.Expires = &at
		}
		key, err := a.CreateKey(ctx, k)
		if err != nil {
			return err
		}
		if err := in.printObject(key, []string{"id", "name", "scopes", "agency_id", "site_id", "expires_at", "secret"}); err != nil {
			return err
		}
		fmt.Fprintln(in.env.stderr, "Keep the secret: it is shown only now.")
		return nil
	case "keys revoke":
		key, err := a.RevokeKey(ctx, pos[0])
		if err != nil {
			return err
		}
		return in.printObject(key, []string{"id", "name", "prefix", "revoked_at"})
	case "credits get":
		bal, err := a.Credits(ctx, agency)
		if err != nil {
			return err
		}
		return in.printObject(bal, []string{"ai", "data"})
	default: // credits add
		bal, err := a.AddCredits(ctx, agency, atrium.Credits{AI: ai, Data: data})
		if err != nil {
			return err
		}
		return in.printObject(bal, []string{"ai", "data"})
	}
}

func adminPrintAll[T any](in *invocation, seq func(func(T, error) bool), cols []string) error {
	all, err := collect(seq)
	if err != nil {
		return err
	}
	return in.printList(all, cols)
}
