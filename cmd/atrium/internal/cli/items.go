package cli

// atrium items list|get|create|update|delete: the items of a collection
// of the key's site (docs/collections.md).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func newItemsCmd(f *Factory) *Command {
	return &Command{Name: "items", Summary: "list, read, create, update and delete the items of a collection",
		Subs: []*Command{newItemsListCmd(f, nil), newItemsGetCmd(f, nil), newItemsWriteCmd(f, "create", nil),
			newItemsWriteCmd(f, "update", nil), newItemsDeleteCmd(f, nil)}}
}

type itemsListOptions struct {
	*Factory
	Collection               string
	Page                     pageFlags
	Published                string
	Filter, Order, Direction string
	Locale, Fallback         string
}

func newItemsListCmd(f *Factory, runF func(context.Context, *itemsListOptions) error) *Command {
	o := &itemsListOptions{Factory: f}
	const usage = "<collection> [flags]"
	return &Command{Name: "list", Summary: "list the items of a collection", Usage: usage,
		Flags: func(fs *flag.FlagSet) {
			o.Page.define(fs, "items")
			fs.StringVar(&o.Published, "published", "", "true or false: only the published, or unpublished, items")
			fs.StringVar(&o.Filter, "filter", "", "field=value: the items whose field equals the value")
			fs.StringVar(&o.Order, "order", "", "order by this field")
			fs.StringVar(&o.Direction, "direction", "", "asc or desc")
			localeFlags(fs, &o.Locale, &o.Fallback)
		},
		Args: f.exactArgs(usage, 1),
		Run: func(ctx context.Context, pos []string) error {
			o.Collection = pos[0]
			if err := o.Page.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(ctx, o)
			}
			return itemsList(ctx, o)
		}}
}

func itemsList(ctx context.Context, o *itemsListOptions) error {
	q := &atrium.ItemQuery{Limit: o.Page.limit, Offset: o.Page.offset, Order: o.Order, Direction: o.Direction, Locale: o.Locale, Fallback: o.Fallback}
	var err error
	if q.FilterField, q.FilterValue, err = filterFlag(o.Filter); err != nil {
		return err
	}
	if o.Published != "" {
		b, err := strconv.ParseBool(o.Published)
		if err != nil {
			return usagef("--published %s: true or false", o.Published)
		}
		q.IsPublished = &b
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	var items []atrium.Item
	var keys []string
	if o.Page.all {
		if items, err = collect(c.Items.All(ctx, o.Collection, q)); err != nil {
			return err
		}
		col, err := collectionFields(ctx, c, o.Collection)
		if err != nil {
			return err
		}
		keys = fieldKeys(col)
	} else {
		page, err := c.Items.List(ctx, o.Collection, q)
		if err != nil {
			return err
		}
		items, keys = page.Items, fieldKeys(&page.Collection)
	}
	if items == nil {
		items = []atrium.Item{}
	}
	return o.printList(items, itemColumns(keys))
}

type itemOptions struct {
	*Factory
	Collection, ID   string
	IfMatch          string
	Locale, Fallback string
}

// localeFlags are the flags of a read in a locale (docs/collections.md#locales).
func localeFlags(fs *flag.FlagSet, locale, fallback *string) {
	fs.StringVar(locale, "locale", "", "read the localized fields in this locale of the site (a BCP 47 tag such as de-AT), or * for every locale's values")
	fs.StringVar(fallback, "fallback", "", "none: only the locale's own values, without falling back to its language or the site's default")
}

func newItemsGetCmd(f *Factory, runF func(context.Context, *itemOptions) error) *Command {
	o := &itemOptions{Factory: f}
	const usage = "<collection> <id> [flags]"
	return &Command{Name: "get", Summary: "show an item", Usage: usage,
		Flags: func(fs *flag.FlagSet) { localeFlags(fs, &o.Locale, &o.Fallback) },
		Args:  f.exactArgs(usage, 2),
		Run: func(ctx context.Context, pos []string) error {
			o.Collection, o.ID = pos[0], pos[1]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			it, err := c.Items.GetWith(ctx, o.Collection, o.ID, atrium.ItemGet{Locale: o.Locale, Fallback: o.Fallback})
			if err != nil {
				return err
			}
			return o.printObject(it, nil)
		}}
}

func newItemsDeleteCmd(f *Factory, runF func(context.Context, *itemOptions) error) *Command {
	o := &itemOptions{Factory: f}
	const usage = "<collection> <id> [flags]"
	return &Command{Name: "delete", Summary: "delete an item", Usage: usage,
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.IfMatch, "if-match", "", "only if the item's ETag (its version) is still this one")
		},
		Args: f.exactArgs(usage, 2),
		Run: func(ctx context.Context, pos []string) error {
			o.Collection, o.ID = pos[0], pos[1]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			var opts []atrium.WriteOption
			if o.IfMatch != "" {
				opts = append(opts, atrium.IfMatch(o.IfMatch))
			}
			if err := c.Items.Delete(ctx, o.Collection, o.ID, opts...); err != nil {
				return err
			}
			fmt.Fprintf(o.env.Stderr, "deleted %s %s\n", o.Collection, o.ID)
			return nil
		}}
}

type itemsWriteOptions struct {
	*Factory
	Create             bool
	Collection, ID     string
	Args               []string // field=value
	Publish, Unpublish bool
	IfMatch            string
	// Locale (update only) writes that locale's values of localized fields.
	Locale string
}

// newItemsWriteCmd is atrium items create or update (verb), which share
// their flags and the parsing of field=value.
func newItemsWriteCmd(f *Factory, verb string, runF func(context.Context, *itemsWriteOptions) error) *Command {
	o := &itemsWriteOptions{Factory: f, Create: verb == "create"}
	usage, want, summary := "<collection> [field=value ...] [flags]", 1, "create an item"
	if !o.Create {
		usage, want, summary = "<collection> <id> [field=value ...] [flags]", 2, "update an item's fields or publication"
	}
	return &Command{Name: verb, Summary: summary, Usage: usage,
		Flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&o.Publish, "publish", false, "publish the item")
			fs.BoolVar(&o.Unpublish, "unpublish", false, "unpublish the item")
			if !o.Create {
				fs.StringVar(&o.IfMatch, "if-match", "", "only if the item's ETag (its version) is still this one")
				fs.StringVar(&o.Locale, "locale", "", "write the localized fields' values of this locale of the site (only localized fields then); default: the site's default locale")
			}
		},
		Args: func(pos []string) error {
			if len(pos) < want {
				return usagef("usage: %s %s", f.command, usage)
			}
			return nil
		},
		Run: func(ctx context.Context, pos []string) error {
			o.Collection, o.Args = pos[0], pos[1:]
			if !o.Create {
				o.ID, o.Args = pos[1], pos[2:]
			}
			if o.Publish && o.Unpublish {
				return usagef("--publish and --unpublish: one or the other")
			}
			if runF != nil {
				return runF(ctx, o)
			}
			return itemsWrite(ctx, o)
		}}
}

func itemsWrite(ctx context.Context, o *itemsWriteOptions) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	col, err := collectionFields(ctx, c, o.Collection)
	if err != nil {
		return err
	}
	data, err := itemData(col, o.Args)
	if err != nil {
		return err
	}
	w := atrium.ItemWrite{Data: data, Locale: o.Locale}
	if o.Publish || o.Unpublish {
		w.IsPublished = &o.Publish
	}
	var it *atrium.Item
	if o.Create {
		it, err = c.Items.Create(ctx, o.Collection, w)
	} else {
		var opts []atrium.WriteOption
		if o.IfMatch != "" {
			opts = append(opts, atrium.IfMatch(o.IfMatch))
		}
		it, err = c.Items.Update(ctx, o.Collection, o.ID, w, opts...)
	}
	if err != nil {
		return err
	}
	return o.printObject(it, itemColumns(fieldKeys(col)))
}

// itemColumns are an item's columns: its fields (by the collection's
// definition, else by name) between its id and its system fields.
func itemColumns(fields []string) []string {
	return append(append([]string{"id"}, fields...), "is_published", "created_at", "updated_at")
}

func collectionFields(ctx context.Context, c *atrium.Client, slug string) (*atrium.Collection, error) {
	cols, err := c.Collections.List(ctx)
	if err != nil {
		return nil, err
	}
	for i := range cols {
		if cols[i].Slug == slug {
			return &cols[i], nil
		}
	}
	slugs := make([]string, len(cols))
	for i, col := range cols {
		slugs[i] = col.Slug
	}
	return nil, usagef("no collection %q; the key's site has: %s", slug, strings.Join(slugs, ", "))
}

func fieldKeys(col *atrium.Collection) []string {
	keys := make([]string, len(col.Fields))
	for i, f := range col.Fields {
		keys[i] = f.Key
	}
	return keys
}

// itemData parses field=value arguments by the collection's field types:
// numbers, booleans, multi_select (comma-separated) and json; field:=json
// sets any JSON value; field= (empty) clears a field to null.
func itemData(col *atrium.Collection, args []string) (map[string]any, error) {
	types := map[string]string{}
	for _, f := range col.Fields {
		types[f.Key] = f.Type
	}
	keys := fieldKeys(col)
	out := map[string]any{}
	for _, arg := range args {
		name, raw, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			return nil, usagef("%q: write the fields as field=value; the fields of %s are: %s", arg, col.Slug, strings.Join(keys, ", "))
		}
		asJSON := strings.HasSuffix(name, ":")
		name = strings.TrimSuffix(name, ":")
		typ, known := types[name]
		if !known {
			return nil, usagef("%s has no field %q; its fields are: %s", col.Slug, name, strings.Join(keys, ", "))
		}
		if asJSON || typ == "json" {
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				return nil, usagef("%s=%s: the value is not JSON: %v", name, raw, err)
			}
			out[name] = v
			continue
		}
		if raw == "" {
			out[name] = nil
			continue
		}
		switch typ {
		case "number", "integer":
			f, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				return nil, usagef("%s=%s: %s is a number field", name, raw, name)
			}
			out[name] = f
		case "boolean":
			b, err := strconv.ParseBool(raw)
			if err != nil {
				return nil, usagef("%s=%s: %s is true or false", name, raw, name)
			}
			out[name] = b
		case "multi_select":
			parts := strings.Split(raw, ",")
			for i := range parts {
				parts[i] = strings.TrimSpace(parts[i])
			}
			out[name] = parts
		default:
			out[name] = raw
		}
	}
	return out, nil
}
