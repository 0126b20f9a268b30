package cli

// atrium admin collections list|create|update: a site's collections and
// their fields over the admin API (docs/collections.md#admin-routes), each
// field written as one --field flag rather than raw JSON.

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func newAdminCollectionsCmd(f *Factory) *Command {
	return &Command{Name: "collections", Summary: "list, create and change the collections of a site and their fields",
		Subs: []*Command{newAdminCollectionsListCmd(f, nil), newAdminCollectionsCreateCmd(f, nil), newAdminCollectionsUpdateCmd(f, nil)}}
}

// fieldSpecHelp says how a --field is written, in each flag's usage.
const fieldSpecHelp = "key:type[:required][:options=a|b][:target=slug][:max_length=n]"

// fieldSpecs is a repeatable flag of field definitions.
type fieldSpecs []atrium.Field

func (s *fieldSpecs) String() string {
	parts := make([]string, len(*s))
	for i, f := range *s {
		parts[i] = f.Key + ":" + f.Type
	}
	return strings.Join(parts, " ")
}

func (s *fieldSpecs) Set(v string) error {
	f, err := parseFieldSpec(v)
	if err != nil {
		return err
	}
	*s = append(*s, f)
	return nil
}

// stringList is a repeatable string flag, commas splitting it too.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, splitList(v)...); return nil }

// parseFieldSpec reads key:type followed by the field's settings, each
// after a colon: required, options=a|b|c (select and multi_select),
// target=slug (reference) and max_length=n (text, rich_text, email, url).
// The service checks what the values may be; this only reads them.
func parseFieldSpec(spec string) (atrium.Field, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return atrium.Field{}, fmt.Errorf("%q: write a field as %s, such as title:text:required", spec, fieldSpecHelp)
	}
	f := atrium.Field{Key: parts[0], Type: parts[1]}
	for _, p := range parts[2:] {
		name, value, hasValue := strings.Cut(p, "=")
		switch {
		case name == "required" && !hasValue:
			f.Required = true
		case name == "options" && hasValue && value != "":
			f.Options = strings.Split(value, "|")
		case name == "target" && hasValue && value != "":
			f.Target = value
		case (name == "max_length" || name == "max-length") && hasValue:
			n, err := strconv.Atoi(value)
			if err != nil || n <= 0 {
				return atrium.Field{}, fmt.Errorf("%q: max_length must be a positive integer", spec)
			}
			f.MaxLength = n
		default:
			return atrium.Field{}, fmt.Errorf("%q: unknown setting %q; the settings are required, options=a|b, target=slug and max_length=n", spec, p)
		}
	}
	return f, nil
}

type adminCollectionsListOptions struct {
	*Factory
	SiteID string
}

func newAdminCollectionsListCmd(f *Factory, runF func(context.Context, *adminCollectionsListOptions) error) *Command {
	o := &adminCollectionsListOptions{Factory: f}
	return &Command{Name: "list", Summary: "list a site's collections and their fields, system ones included",
		Usage:    "--site <id> [flags]",
		Flags:    func(fs *flag.FlagSet) { fs.StringVar(&o.SiteID, "site", "", "the site's id") },
		Required: []string{"site"},
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			cols, err := a.SiteCollections(ctx, o.SiteID)
			if err != nil {
				return err
			}
			return printCollections(o.Factory, cols)
		}}
}

type adminCollectionsCreateOptions struct {
	*Factory
	SiteID     string
	Collection atrium.NewCollection
	Fields     fieldSpecs
}

func newAdminCollectionsCreateCmd(f *Factory, runF func(context.Context, *adminCollectionsCreateOptions) error) *Command {
	o := &adminCollectionsCreateOptions{Factory: f}
	return &Command{Name: "create", Summary: "define a collection of a site",
		Usage: "--site <id> --slug <slug> --name <name> [--field " + fieldSpecHelp + " ...] [--system] [--search-language l] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.SiteID, "site", "", "the site's id")
			fs.StringVar(&o.Collection.Slug, "slug", "", "the slug items are addressed by (lower case letters, digits, - and _)")
			fs.StringVar(&o.Collection.Name, "name", "", "its display name")
			fs.Var(&o.Fields, "field", "a field, as "+fieldSpecHelp+"; repeat it for each field, in order")
			fs.BoolVar(&o.Collection.IsSystem, "system", false, "a system collection: its items are written over the admin API only")
			fs.StringVar(&o.Collection.SearchLanguage, "search-language", "", "the text search configuration (default simple; docs/collections.md lists them)")
		},
		Required: []string{"site", "slug", "name"},
		Run: func(ctx context.Context, _ []string) error {
			o.Collection.Fields = o.Fields
			if o.Collection.Fields == nil {
				o.Collection.Fields = []atrium.Field{}
			}
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			col, err := a.CreateCollection(ctx, o.SiteID, o.Collection)
			if err != nil {
				return err
			}
			return printCollection(o.Factory, col)
		}}
}

type adminCollectionsUpdateOptions struct {
	*Factory
	SiteID, Slug         string
	Name, SearchLanguage string
	Add, Update          fieldSpecs
	Remove               stringList
}

func newAdminCollectionsUpdateCmd(f *Factory, runF func(context.Context, *adminCollectionsUpdateOptions) error) *Command {
	o := &adminCollectionsUpdateOptions{Factory: f}
	const usage = "<slug> --site <id> [--name n] [--add-field spec ...] [--update-field spec ...] [--remove-field key ...] [--search-language l] [flags]"
	return &Command{Name: "update", Summary: "rename a collection, add, change or remove its fields", Usage: usage,
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.SiteID, "site", "", "the site's id")
			fs.StringVar(&o.Name, "name", "", "a new display name")
			fs.StringVar(&o.SearchLanguage, "search-language", "", "a new text search configuration")
			fs.Var(&o.Add, "add-field", "a field to add (optional: existing items lack it), as "+fieldSpecHelp+"; repeatable")
			fs.Var(&o.Update, "update-field", "a field whose settings change, matched by key (its type cannot), as "+fieldSpecHelp+"; repeatable")
			fs.Var(&o.Remove, "remove-field", "the key of a field to remove, with its values in every item; repeatable")
		},
		Required: []string{"site"},
		Args:     f.exactArgs(usage, 1),
		Run: func(ctx context.Context, pos []string) error {
			o.Slug = pos[0]
			if o.Name == "" && o.SearchLanguage == "" && len(o.Add)+len(o.Update)+len(o.Remove) == 0 {
				return usagef("%s: nothing to change: give --name, --search-language, --add-field, --update-field or --remove-field", o.command)
			}
			if runF != nil {
				return runF(ctx, o)
			}
			a, err := o.AdminClient()
			if err != nil {
				return err
			}
			col, err := a.UpdateCollection(ctx, o.SiteID, o.Slug, o.change())
			if err != nil {
				return err
			}
			return printCollection(o.Factory, col)
		}}
}

// change is the update's request: only what the flags set.
func (o *adminCollectionsUpdateOptions) change() atrium.CollectionChange {
	c := atrium.CollectionChange{AddFields: o.Add, UpdateFields: o.Update, RemoveFields: o.Remove}
	if o.Name != "" {
		c.Name = &o.Name
	}
	if o.SearchLanguage != "" {
		c.SearchLanguage = &o.SearchLanguage
	}
	return c
}

// printCollection prints one collection: JSON, or its row of a list.
func printCollection(f *Factory, col *atrium.Collection) error {
	if f.format() == "json" {
		return printJSON(f.env.Stdout, col)
	}
	return printCollections(f, []atrium.Collection{*col})
}
