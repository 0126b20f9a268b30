package cli

// atrium prospects list and atrium deals list: the agency's CRM.

import (
	"context"
	"flag"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func newProspectsCmd(f *Factory) *Command {
	return &Command{Name: "prospects", Summary: "list the agency's prospects", Subs: []*Command{newCRMListCmd(f, "prospects",
		[]string{"id", "business_name", "domain", "pipeline_stage", "lead_score", "health_score", "created_at"},
		func(ctx context.Context, c *atrium.Client, p *atrium.Page) (any, error) {
			return c.Prospects.List(ctx, p)
		},
		func(ctx context.Context, c *atrium.Client, p *atrium.Page) (any, error) {
			return collect(c.Prospects.All(ctx, p))
		},
		nil)}}
}

func newDealsCmd(f *Factory) *Command {
	return &Command{Name: "deals", Summary: "list the agency's deals", Subs: []*Command{newCRMListCmd(f, "deals",
		[]string{"id", "title", "stage", "value", "currency", "expected_close_date", "created_at"},
		func(ctx context.Context, c *atrium.Client, p *atrium.Page) (any, error) { return c.Deals.List(ctx, p) },
		func(ctx context.Context, c *atrium.Client, p *atrium.Page) (any, error) {
			return collect(c.Deals.All(ctx, p))
		},
		nil)}}
}

// crmFetch reads one page (or, with --all, every page) of a CRM list.
type crmFetch func(context.Context, *atrium.Client, *atrium.Page) (any, error)

type crmListOptions struct {
	*Factory
	What string
	Page pageFlags
}

func newCRMListCmd(f *Factory, what string, cols []string, page, all crmFetch, runF func(context.Context, *crmListOptions) error) *Command {
	o := &crmListOptions{Factory: f, What: what}
	return &Command{Name: "list", Summary: "list the agency's " + what,
		Flags: func(fs *flag.FlagSet) { o.Page.define(fs, what) },
		Run: func(ctx context.Context, _ []string) error {
			if err := o.Page.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			fetch := page
			if o.Page.all {
				fetch = all
			}
			v, err := fetch(ctx, c, &atrium.Page{Limit: o.Page.limit, Offset: o.Page.offset})
			if err != nil {
				return err
			}
			return o.printList(v, cols)
		}}
}
