package cli

// atrium data read: a dataset of a client (docs/datasets.md).

import (
	"context"
	"flag"
	"fmt"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// clientsDataset is the one dataset read without --client (it lists the
// clients themselves).
const clientsDataset = "clients"

func newDataCmd(f *Factory) *Command {
	return &Command{Name: "data", Summary: "read a dataset of a client", Subs: []*Command{newDataReadCmd(f, nil)}}
}

type dataReadOptions struct {
	*Factory
	Query  atrium.DataQuery
	Filter string
	Page   pageFlags
}

func newDataReadCmd(f *Factory, runF func(context.Context, *dataReadOptions) error) *Command {
	o := &dataReadOptions{Factory: f, Page: pageFlags{pageSize: true}}
	return &Command{
		Name: "read", Summary: "read the rows of a dataset, a page or --all",
		Usage: "--resource <dataset> --client <id> [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Query.Resource, "resource", "", "the dataset, such as keywords or blogs")
			fs.StringVar(&o.Query.ClientID, "client", "", "the client's id (every dataset but clients)")
			fs.StringVar(&o.Query.Order, "order", "", "order by this field")
			fs.StringVar(&o.Query.Direction, "direction", "", "asc or desc")
			fs.StringVar(&o.Filter, "filter", "", "field=value: the rows whose field equals the value")
			fs.StringVar(&o.Query.Cursor, "cursor", "", "the page after the one that gave this cursor")
			o.Page.define(fs, "rows")
		},
		Required: []string{"resource"},
		Run: func(ctx context.Context, _ []string) error {
			if err := o.Page.check(); err != nil {
				return err
			}
			var err error
			if o.Query.FilterField, o.Query.FilterValue, err = filterFlag(o.Filter); err != nil {
				return err
			}
			// --client is required but for the clients dataset: checked
			// here, so that the API is not asked what it would refuse.
			if o.Query.ClientID == "" && o.Query.Resource != clientsDataset {
				return usagef("%s: --client is required for the dataset %s (every dataset but %s)", o.command, o.Query.Resource, clientsDataset)
			}
			o.Query.Limit, o.Query.Offset = o.Page.limit, o.Page.offset
			if runF != nil {
				return runF(ctx, o)
			}
			return dataRead(ctx, o)
		},
	}
}

func dataRead(ctx context.Context, o *dataReadOptions) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	if o.Page.all {
		rows, err := collect(c.Data.All(ctx, o.Query))
		if err != nil {
			return err
		}
		return o.printList(rows, nil)
	}
	page, err := c.Data.Read(ctx, o.Query)
	if err != nil {
		return err
	}
	if page.Rows == nil {
		page.Rows = []atrium.Row{}
	}
	if err := o.printList(page.Rows, nil); err != nil {
		return err
	}
	if page.Pagination.HasMore {
		fmt.Fprintf(o.env.Stderr, "%d of %d rows; more with --all, or the next page with --cursor %s\n",
			len(page.Rows), page.Pagination.Total, page.Pagination.NextCursor)
	}
	return nil
}
