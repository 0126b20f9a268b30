package cli

// atrium admin: provisioning over the admin API (ATRIUM_ADMIN_URL,
// ATRIUM_ADMIN_TOKEN), so that setting up a tenant needs neither curl nor
// SQL: agencies, sites, clients (and their links to agencies), API keys,
// credits, and the collections of a site (admin_collections.go).

import (
	"context"
	"flag"
	"fmt"
	"time"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func newAdminCmd(f *Factory) *Command {
	return &Command{Name: "admin", Summary: "provision agencies, sites, collections, clients, keys and credits (admin API)", Admin: true,
		Subs: []*Command{
			{Name: "agencies", Summary: "list and create agencies", Subs: []*Command{
				adminListCmd(f, "agencies", func(ctx context.Context, a *atrium.Admin) (any, error) { return collect(a.Agencies(ctx)) },
					[]string{"id", "name", "created_at"}),
				newAdminNamedCreateCmd(f, "agency", nil),
			}},
			{Name: "sites", Summary: "list and create sites", Subs: []*Command{
				adminListCmd(f, "sites", func(ctx context.Context, a *atrium.Admin) (any, error) { return collect(a.Sites(ctx)) },
					[]string{"id", "name", "created_at"}),
				newAdminNamedCreateCmd(f, "site", nil),
			}},
			newAdminCollectionsCmd(f),
			{Name: "clients", Summary: "list, create, link and unlink clients", Subs: []*Command{
				newAdminClientsListCmd(f, nil), newAdminClientsCreateCmd(f, nil),
				newAdminClientsLinkCmd(f, true, nil), newAdminClientsLinkCmd(f, false, nil),
			}},
			{Name: "keys", Summary: "list, create and revoke API keys", Subs: []*Command{
				adminListCmd(f, "keys", func(ctx context.Context, a *atrium.Admin) (any, error) { return collect(a.Keys(ctx)) },
					[]string{"id", "name", "prefix", "scopes", "agency_id", "site_id", "expires_at", "revoked_at"}),
				newAdminKeysCreateCmd(f, nil), newAdminKeysRevokeCmd(f, nil),
			}},
			{Name: "credits", Summary: "show and add an agency's credits", Subs: []*Command{
				newAdminCreditsCmd(f, false, nil), newAdminCreditsCmd(f, true, nil),
			}},
		}}
}

// adminListCmd is a list verb with no flags of its own.
func adminListCmd(f *Factory, what string, list func(context.Context, *atrium.Admin) (any, error), cols []string) *Command {
	return &Command{Name: "list", Summary: "list the " + what + ", newest first",
		Run: func(ctx context.Context, _ []string) error {
			a, err := f.AdminClient()
			if err != nil {
				return err
			}
			all, err := list(ctx, a)
			if err != nil {
				return err
			}
			return f.printList(all, cols)
		}}
}

type adminNamedCreateOptions struct {
	*Factory
	What string // agency or site
	Name string
	// AgencyID and ClientID own a site (sites only): a key bound to an
	// agency reaches only the sites that agency owns.
	AgencyID, ClientID string
}

// newAdminNamedCreateCmd is atrium admin agencies create and sites create:
// a name is all an agency takes; a site may also name its owner.
func newAdminNamedCreateCmd(f *Factory, what string, runF func(context.Context, *adminNamedCreateOptions) error) *Command {
	o := &adminNamedCreateOptions{Factory: f, What: what}
	return &Command{Name: "create", Summary: map[string]string{"agency": "create an agency", "site": "create a site"}[what], Usage: "--name <name> [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Name, "name", "", "its name")
			if what == "site" {
				fs.StringVar(&o.AgencyID, "agency", "", "the agency that owns it (its keys and members reach it)")
				fs.StringVar(&o.ClientID, "client", "", "the agency's client it is for (needs --agency)")
			}
		},
		Required: []string{"name"},
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			var v any
			if o.What == "agency" {
				v, err = a.CreateAgency(ctx, o.Name)
			} else {
				v, err = a.CreateSite(ctx, atrium.NewSite{Name: o.Name, AgencyID: o.AgencyID, ClientID: o.ClientID})
			}
			if err != nil {
				return err
			}
			if o.What == "site" {
				return o.printObject(v, []string{"id", "name", "agency_id", "client_id", "created_at"})
			}
			return o.printObject(v, []string{"id", "name", "created_at"})
		}}
}

var clientColumns = []string{"id", "name", "domain", "status", "created_at"}

type adminClientsListOptions struct {
	*Factory
	AgencyID string
}

func newAdminClientsListCmd(f *Factory, runF func(context.Context, *adminClientsListOptions) error) *Command {
	o := &adminClientsListOptions{Factory: f}
	return &Command{Name: "list", Summary: "list the clients, or those linked to an agency",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.AgencyID, "agency", "", "only the clients linked to this agency")
		},
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			all, err := collect(a.Clients(ctx, o.AgencyID))
			if err != nil {
				return err
			}
			return o.printList(all, clientColumns)
		}}
}

type adminClientsCreateOptions struct {
	*Factory
	Name, Domain, AgencyID string
}

func newAdminClientsCreateCmd(f *Factory, runF func(context.Context, *adminClientsCreateOptions) error) *Command {
	o := &adminClientsCreateOptions{Factory: f}
	return &Command{Name: "create", Summary: "create a client (a business), linked to an agency with --agency",
		Usage: "--name <name> --domain <domain> [--agency id] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Name, "name", "", "the business's name")
			fs.StringVar(&o.Domain, "domain", "", "the business's domain")
			fs.StringVar(&o.AgencyID, "agency", "", "link the new client to this agency")
		},
		Required: []string{"name", "domain"},
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			cl, err := a.CreateClient(ctx, o.Name, o.Domain)
			if err != nil {
				return err
			}
			if o.AgencyID != "" {
				if err := a.LinkClient(ctx, o.AgencyID, cl.ID); err != nil {
					return fmt.Errorf("client %s created, but linking it to agency %s failed: %w", cl.ID, o.AgencyID, err)
				}
			}
			return o.printObject(cl, clientColumns)
		}}
}

type adminClientsLinkOptions struct {
	*Factory
	Link               bool
	AgencyID, ClientID string
}

// newAdminClientsLinkCmd is atrium admin clients link (link) or unlink.
func newAdminClientsLinkCmd(f *Factory, link bool, runF func(context.Context, *adminClientsLinkOptions) error) *Command {
	o := &adminClientsLinkOptions{Factory: f, Link: link}
	name, summary := "link", "let an agency reach a client"
	if !link {
		name, summary = "unlink", "stop an agency reaching a client"
	}
	return &Command{Name: name, Summary: summary, Usage: "--agency <id> --client <id> [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.AgencyID, "agency", "", "the agency's id")
			fs.StringVar(&o.ClientID, "client", "", "the client's id")
		},
		Required: []string{"agency", "client"},
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			if o.Link {
				if err := a.LinkClient(ctx, o.AgencyID, o.ClientID); err != nil {
					return err
				}
				fmt.Fprintf(o.env.Stderr, "agency %s now reaches client %s\n", o.AgencyID, o.ClientID)
				return nil
			}
			if err := a.UnlinkClient(ctx, o.AgencyID, o.ClientID); err != nil {
				return err
			}
			fmt.Fprintf(o.env.Stderr, "agency %s no longer reaches client %s\n", o.AgencyID, o.ClientID)
			return nil
		}}
}

type adminKeysCreateOptions struct {
	*Factory
	Name, Scopes, AgencyID, SiteID string
	ExpiresIn                      time.Duration
}

func newAdminKeysCreateCmd(f *Factory, runF func(context.Context, *adminKeysCreateOptions) error) *Command {
	o := &adminKeysCreateOptions{Factory: f}
	return &Command{Name: "create", Summary: "issue an API key; prints its secret, once",
		Usage: "--name <name> [--scopes read,write --agency id --site id --expires-in 720h] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Name, "name", "", "what the key is for")
			fs.StringVar(&o.Scopes, "scopes", "read", "its scopes, comma-separated: read, write")
			fs.StringVar(&o.AgencyID, "agency", "", "the agency the key acts for")
			fs.StringVar(&o.SiteID, "site", "", "the site the key reads and writes the collections of")
			fs.DurationVar(&o.ExpiresIn, "expires-in", 0, "the key expires after this long (such as 720h); default never")
		},
		Required: []string{"name"},
		Run: func(ctx context.Context, _ []string) error {
			if o.ExpiresIn < 0 {
				return usagef("--expires-in must be positive")
			}
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			k := atrium.NewKey{Name: o.Name, AgencyID: o.AgencyID, SiteID: o.SiteID, Scopes: splitList(o.Scopes)}
			if o.ExpiresIn > 0 {
				at := time.Now().Add(o.ExpiresIn).UTC()
				k.Expires = &at
			}
			key, err := a.CreateKey(ctx, k)
			if err != nil {
				return err
			}
			if err := o.printObject(key, []string{"id", "name", "scopes", "agency_id", "site_id", "expires_at", "secret"}); err != nil {
				return err
			}
			fmt.Fprintln(o.env.Stderr, "Keep the secret: it is shown only now.")
			return nil
		}}
}

type adminKeysRevokeOptions struct {
	*Factory
	KeyID string
}

func newAdminKeysRevokeCmd(f *Factory, runF func(context.Context, *adminKeysRevokeOptions) error) *Command {
	o := &adminKeysRevokeOptions{Factory: f}
	const usage = "<key id> [flags]"
	return &Command{Name: "revoke", Summary: "revoke a key", Usage: usage,
		Args: f.exactArgs(usage, 1),
		Run: func(ctx context.Context, pos []string) error {
			o.KeyID = pos[0]
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			key, err := a.RevokeKey(ctx, o.KeyID)
			if err != nil {
				return err
			}
			return o.printObject(key, []string{"id", "name", "prefix", "revoked_at"})
		}}
}

type adminCreditsOptions struct {
	*Factory
	Add      bool
	AgencyID string
	AI, Data int
}

// newAdminCreditsCmd is atrium admin credits get, or add (add).
func newAdminCreditsCmd(f *Factory, add bool, runF func(context.Context, *adminCreditsOptions) error) *Command {
	o := &adminCreditsOptions{Factory: f, Add: add}
	name, summary, usage := "get", "show an agency's balance", "--agency <id> [flags]"
	if add {
		name, summary, usage = "add", "add (or, negative, remove) credits", "--agency <id> [--ai n --data n] [flags]"
	}
	return &Command{Name: name, Summary: summary, Usage: usage,
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.AgencyID, "agency", "", "the agency's id")
			if add {
				fs.IntVar(&o.AI, "ai", 0, "AI credits to add (negative: remove)")
				fs.IntVar(&o.Data, "data", 0, "data credits to add (negative: remove)")
			}
		},
		Required: []string{"agency"},
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			var bal atrium.Credits
			if o.Add {
				bal, err = a.AddCredits(ctx, o.AgencyID, atrium.Credits{AI: o.AI, Data: o.Data})
			} else {
				bal, err = a.Credits(ctx, o.AgencyID)
			}
			if err != nil {
				return err
			}
			return o.printObject(bal, []string{"ai", "data"})
		}}
}
