package cli

// atrium branding get|set and atrium report-shares list|create|revoke:
// how the client reports look, and the links a client opens them with
// (docs/reports.md).

import (
	"context"
	"flag"
	"fmt"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

var brandingColumns = []string{"name", "logo_asset_id", "colors"}

func newBrandingCmd(f *Factory) *Command {
	return &Command{Name: "branding", Summary: "show or set the name, logo and colours the client reports are drawn with",
		Subs: []*Command{newBrandingGetCmd(f, nil), newBrandingSetCmd(f, nil)}}
}

type brandingGetOptions struct{ *Factory }

func newBrandingGetCmd(f *Factory, runF func(context.Context, *brandingGetOptions) error) *Command {
	o := &brandingGetOptions{Factory: f}
	return &Command{Name: "get", Summary: "show the reports' branding",
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			b, err := c.Branding.Get(ctx)
			if err != nil {
				return err
			}
			return o.printObject(b, brandingColumns)
		}}
}

type brandingSetOptions struct {
	*Factory
	Name, Logo, Primary, Accent string
}

func newBrandingSetCmd(f *Factory, runF func(context.Context, *brandingSetOptions) error) *Command {
	o := &brandingSetOptions{Factory: f}
	return &Command{Name: "set", Summary: "replace the reports' branding (a colour not given is the default)",
		Usage: "--name <agency name> [--logo <asset id>] [--primary #rrggbb] [--accent #rrggbb] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Name, "name", "", "the agency's name the reports are signed with: one line, 1 to 100 characters")
			fs.StringVar(&o.Logo, "logo", "", "the id of an image asset of the agency's logo")
			fs.StringVar(&o.Primary, "primary", "", "the masthead's and headings' colour, #rrggbb (default #1f3a5f)")
			fs.StringVar(&o.Accent, "accent", "", "the rules' and the agency name's colour, #rrggbb (default #e07a2e)")
		},
		Required: []string{"name"},
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			in := atrium.Branding{Name: o.Name, Colors: atrium.BrandColors{Primary: o.Primary, Accent: o.Accent}}
			if o.Logo != "" {
				in.LogoAssetID = &o.Logo
			}
			b, err := c.Branding.Put(ctx, in)
			if err != nil {
				return err
			}
			return o.printObject(b, brandingColumns)
		}}
}

var shareColumns = []string{"id", "run_id", "client_id", "state", "created_at", "expires_at", "revoked_at"}

func newReportSharesCmd(f *Factory) *Command {
	return &Command{Name: "report-shares", Summary: "list, create and revoke the links clients open their reports with, without a key",
		Subs: []*Command{newSharesListCmd(f, nil), newSharesCreateCmd(f, nil), newSharesRevokeCmd(f, nil)}}
}

type sharesListOptions struct {
	*Factory
	Query atrium.ReportShareQuery
	Limit int
}

func newSharesListCmd(f *Factory, runF func(context.Context, *sharesListOptions) error) *Command {
	o := &sharesListOptions{Factory: f}
	return &Command{Name: "list", Summary: "list the share links, newest first (never their tokens)", Usage: "[--client id] [--run id] [--limit n] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Query.ClientID, "client", "", "only this client's links")
			fs.StringVar(&o.Query.RunID, "run", "", "only the links of this report run")
			fs.IntVar(&o.Limit, "limit", 0, "the most links to print (0: every one)")
		},
		Run: func(ctx context.Context, _ []string) error {
			if o.Limit < 0 {
				return usagef("%s: --limit must be 0 (every link) or more; got %d", o.command, o.Limit)
			}
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			out := []atrium.ReportShare{}
			for s, err := range c.ReportShares.List(ctx, o.Query) {
				if err != nil {
					return err
				}
				out = append(out, s)
				if o.Limit > 0 && len(out) == o.Limit {
					break
				}
			}
			return o.printList(out, shareColumns)
		}}
}

type sharesCreateOptions struct {
	*Factory
	RunID string
	Days  int
}

func newSharesCreateCmd(f *Factory, runF func(context.Context, *sharesCreateOptions) error) *Command {
	o := &sharesCreateOptions{Factory: f}
	return &Command{Name: "create", Summary: "make a new link to a generate_report run; prints its URL, once",
		Usage: "--run <run id> [--days n] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.RunID, "run", "", "a successful generate_report run")
			fs.IntVar(&o.Days, "days", 0, "how many days the link works: 1 to 365 (default 90)")
		},
		Required: []string{"run"},
		Run: func(ctx context.Context, _ []string) error {
			if o.Days < 0 {
				return usagef("%s: --days is 1 to 365 (or not given: 90); got %d", o.command, o.Days)
			}
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			s, err := c.ReportShares.Create(ctx, atrium.NewReportShare{RunID: o.RunID, ExpiresInDays: o.Days})
			if err != nil {
				return err
			}
			if err := o.printObject(s, append([]string{"url"}, shareColumns...)); err != nil {
				return err
			}
			fmt.Fprintln(o.env.Stderr, "Send the URL to the client: it is shown only now (atrium report-shares revoke ends it).")
			return nil
		}}
}

type sharesRevokeOptions struct {
	*Factory
	ShareID string
}

func newSharesRevokeCmd(f *Factory, runF func(context.Context, *sharesRevokeOptions) error) *Command {
	o := &sharesRevokeOptions{Factory: f}
	const usage = "<share id> [flags]"
	return &Command{Name: "revoke", Summary: "end a share link at once (it answers 410 from then on)", Usage: usage,
		Args: f.exactArgs(usage, 1),
		Run: func(ctx context.Context, pos []string) error {
			o.ShareID = pos[0]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			s, err := c.ReportShares.Revoke(ctx, o.ShareID)
			if err != nil {
				return err
			}
			return o.printObject(s, shareColumns)
		}}
}
