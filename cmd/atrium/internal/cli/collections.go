package cli

// atrium collections list: the collections of the key's site.

import (
	"context"
	"strings"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func newCollectionsCmd(f *Factory) *Command {
	return &Command{Name: "collections", Summary: "list the collections of the key's site",
		Subs: []*Command{newCollectionsListCmd(f, nil)}}
}

type collectionsListOptions struct{ *Factory }

func newCollectionsListCmd(f *Factory, runF func(context.Context, *collectionsListOptions) error) *Command {
	o := &collectionsListOptions{Factory: f}
	return &Command{Name: "list", Summary: "list the collections and their fields",
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			cols, err := c.Collections.List(ctx)
			if err != nil {
				return err
			}
			return printCollections(o.Factory, cols)
		}}
}

// printCollections prints collections as JSON, or a row each with its
// fields as key:type (atrium admin collections list too).
func printCollections(f *Factory, cols []atrium.Collection) error {
	if cols == nil {
		cols = []atrium.Collection{}
	}
	if f.format() == "json" {
		return printJSON(f.env.Stdout, cols)
	}
	type row struct {
		Slug   string `json:"slug"`
		Name   string `json:"name"`
		System bool   `json:"system"`
		Fields string `json:"fields"`
	}
	rows := make([]row, len(cols))
	for i, col := range cols {
		var fields []string
		for _, f := range col.Fields {
			fields = append(fields, f.Key+":"+f.Type)
		}
		rows[i] = row{col.Slug, col.Name, col.IsSystem, strings.Join(fields, " ")}
	}
	return f.printList(rows, []string{"slug", "name", "system", "fields"})
}
