package main

// The client commands over the public API: data, actions, collections,
// items, prospects, deals and webhooks (docs/cli.md).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// pageFlags are the paging flags of the lists.
type pageFlags struct {
	limit, offset int
	all           bool
	// pageSize: with --all, --limit is the size of each page read (the
	// datasets page by cursor at any size).
	pageSize bool
}

func (p *pageFlags) define(fs *flag.FlagSet, what string) {
	fs.IntVar(&p.limit, "limit", 0, "at most this many "+what+" (default: the API's page size; with --all, where the list allows it, the size of each page)")
	fs.IntVar(&p.offset, "offset", 0, "skip this many "+what)
	fs.BoolVar(&p.all, "all", false, "every "+what+", page after page")
}

func (p *pageFlags) check() error {
	if p.limit < 0 || p.offset < 0 {
		return usagef("--limit and --offset must be 0 or more")
	}
	if p.all && p.limit > 0 && !p.pageSize {
		return usagef("--all reads every page; it does not take --limit")
	}
	return nil
}

// noArgs refuses positional arguments a command does not take.
func noArgs(in *invocation, pos []string) error {
	if len(pos) > 0 {
		return usagef("%s takes no arguments, got %q", in.command, pos[0])
	}
	return nil
}

// filterFlag parses --filter field=value.
func filterFlag(s string) (field, value string, err error) {
	if s == "" {
		return "", "", nil
	}
	field, value, ok := strings.Cut(s, "=")
	if !ok || field == "" {
		return "", "", usagef("--filter %s: write it field=value", s)
	}
	return field, value, nil
}

func collect[T any](seq func(func(T, error) bool)) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func runData(ctx context.Context, in *invocation, args []string) error {
	_, args, err := in.subcommand(args, "read")
	if err != nil {
		return err
	}
	return dataRead(ctx, in, args)
}

func dataRead(ctx context.Context, in *invocation, args []string) error {
	fs := in.flags(in.command, "--resource <dataset> --client <id> [flags]")
	var q atrium.DataQuery
	var filter string
	var p pageFlags
	fs.StringVar(&q.Resource, "resource", "", "the dataset: keywords, blogs, ... (required)")
	fs.StringVar(&q.ClientID, "client", "", "the client's id (required for every dataset but the agency-wide ones)")
	fs.StringVar(&q.Order, "order", "", "order by this field")
	fs.StringVar(&q.Direction, "direction", "", "asc or desc")
	fs.StringVar(&filter, "filter", "", "field=value: the rows whose field equals the value")
	fs.StringVar(&q.Cursor, "cursor", "", "the page after the one that gave this cursor")
	p.define(fs, "rows")
	p.pageSize = true
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(in, pos); err != nil {
		return err
	}
	if q.Resource == "" {
		return usagef("%s: --resource is required (the dataset, such as keywords)", in.command)
	}
	if err := p.check(); err != nil {
		return err
	}
	if q.FilterField, q.FilterValue, err = filterFlag(filter); err != nil {
		return err
	}
	q.Limit, q.Offset = p.limit, p.offset
	c, err := in.client()
	if err != nil {
		return err
	}
	if p.all {
		rows, err := collect(c.Data.All(ctx, q))
		if err != nil {
			return err
		}
		return in.printList(rows, nil)
	}
	page, err := c.Data.Read(ctx, q)
	if err != nil {
		return err
	}
	if page.Rows == nil {
		page.Rows = []atrium.Row{}
	}
	if err := in.printList(page.Rows, nil); err != nil {
		return err
	}
	if page.Pagination.HasMore {
		fmt.Fprintf(in.env.stderr, "%d of %d rows; more with --all, or the next page with --cursor %s\n",
			len(page.Rows), page.Pagination.Total, page.Pagination.NextCursor)
	}
	return nil
}

func runActions(ctx context.Context, in *invocation, args []string) error {
	sub, args, err := in.subcommand(args, "list", "run")
	if err != nil {
		return err
	}
	if sub == "list" {
		fs := in.flags(in.command, "[flags]")
		pos, err := in.parse(fs, args)
		if err != nil {
			return err
		}
		if err := noArgs(in, pos); err != nil {
			return err
		}
		c, err := in.client()
		if err != nil {
			return err
		}
		actions, err := c.Actions.List(ctx)
		if err != nil {
			return err
		}
		if in.format() == "json" {
			return printJSON(in.env.stdout, actions)
		}
		type row struct {
			Name   string `json:"name"`
			Fields string `json:"fields"`
			AI     int    `json:"ai_credits"`
			Data   int    `json:"data_credits"`
			Writes string `json:"writes"`
		}
		rows := make([]row, len(actions))
		for i, a := range actions {
			var fields []string
			for _, f := range a.Fields {
				name := f.Name
				if f.Required {
					name += "*"
				}
				fields = append(fields, name)
			}
			rows[i] = row{a.Name, strings.Join(fields, " "), a.Cost.AI, a.Cost.Data, a.Writes}
		}
		return in.printList(rows, []string{"name", "fields", "ai_credits", "data_credits", "writes"})
	}
	return actionsRun(ctx, in, args)
}

func actionsRun(ctx context.Context, in *invocation, args []string) error {
	fs := in.flags(in.command, "<action> --client <id> [field=value ...] [flags]")
	var client, key string
	var async, wait bool
	fs.StringVar(&client, "client", "", "the client's id (required)")
	fs.StringVar(&key, "idempotency-key", "", "send the action with this key, to get an earlier run's answer rather than a second run")
	fs.BoolVar(&async, "async", false, "queue the run and print its id at once (Prefer: respond-async); atrium runs get shows its outcome")
	fs.BoolVar(&wait, "wait", false, "queue the run and wait for its outcome, however long it takes (a progress line on a terminal)")
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("%s: name the action (atrium actions list shows them)", in.command)
	}
	if client == "" {
		return usagef("%s: --client is required", in.command)
	}
	c, err := in.client()
	if err != nil {
		return err
	}
	actions, err := c.Actions.List(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(actions, func(a atrium.Action) bool { return a.Name == pos[0] })
	if i < 0 {
		names := make([]string, len(actions))
		for j, a := range actions {
			names[j] = a.Name
		}
		return usagef("%s: no action %q; the actions are: %s", in.command, pos[0], strings.Join(names, ", "))
	}
	fields, err := actionFields(actions[i], pos[1:])
	if err != nil {
		return err
	}
	var opts []atrium.RunOption
	if key != "" {
		opts = append(opts, atrium.WithIdempotencyKey(key))
	}
	if async || wait {
		return submitAction(ctx, in, c, pos[0], client, fields, wait, opts)
	}
	res, err := c.Actions.Run(ctx, pos[0], client, fields, opts...)
	if err != nil {
		return err
	}
	if err := in.printObject(res, []string{"action", "client_id", "status", "status_code", "data"}); err != nil {
		return err
	}
	if !res.Succeeded() {
		return fmt.Errorf("the action ran and failed (status %s, %d); it was not charged", res.Status, res.StatusCode)
	}
	return nil
}

// actionFields parses field=value arguments by the types the action's
// input_schema gives its fields: integers, numbers, booleans, arrays
// (comma-separated) and objects (JSON); field:=json sets any JSON value.
func actionFields(a atrium.Action, args []string) (map[string]any, error) {
	props, _ := a.InputSchema["properties"].(map[string]any)
	var names []string
	for n := range props {
		if n != "action" && n != "client_id" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	out := map[string]any{}
	for _, arg := range args {
		name, raw, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			return nil, usagef("%q: write the fields of %s as field=value; its fields are: %s", arg, a.Name, strings.Join(names, ", "))
		}
		if strings.HasSuffix(name, ":") {
			name = strings.TrimSuffix(name, ":")
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				return nil, usagef("%s:=%s: the value is not JSON: %v", name, raw, err)
			}
			out[name] = v
			continue
		}
		prop, ok := props[name].(map[string]any)
		if !ok || name == "action" || name == "client_id" {
			return nil, usagef("%s has no field %q; its fields are: %s", a.Name, name, strings.Join(names, ", "))
		}
		v, err := typedValue(prop, raw)
		if err != nil {
			return nil, usagef("%s=%s: %v", name, raw, err)
		}
		out[name] = v
	}
	return out, nil
}

// typedValue converts raw to the JSON type schema gives.
func typedValue(schema map[string]any, raw string) (any, error) {
	typ, _ := schema["type"].(string)
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("must be an integer")
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fmt.Errorf("must be a number")
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("must be true or false")
		}
		return b, nil
	case "array":
		items, _ := schema["items"].(map[string]any)
		out := []any{}
		if raw == "" {
			return out, nil
		}
		for _, part := range strings.Split(raw, ",") {
			v, err := typedValue(items, strings.TrimSpace(part))
			if err != nil {
				return nil, fmt.Errorf("each of the comma-separated values %w", err)
			}
			out = append(out, v)
		}
		return out, nil
	case "object":
		var v map[string]any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("must be a JSON object")
		}
		return v, nil
	}
	return raw, nil
}

func runCollections(ctx context.Context, in *invocation, args []string) error {
	_, args, err := in.subcommand(args, "list")
	if err != nil {
		return err
	}
	fs := in.flags(in.command, "[flags]")
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(in, pos); err != nil {
		return err
	}
	c, err := in.client()
	if err != nil {
		return err
	}
	cols, err := c.Collections.List(ctx)
	if err != nil {
		return err
	}
	if in.format() == "json" {
		return printJSON(in.env.stdout, cols)
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
	return in.printList(rows, []string{"slug", "name", "system", "fields"})
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

func runItems(ctx context.Context, in *invocation, args []string) error {
	sub, args, err := in.subcommand(args, "list", "get", "create", "update", "delete")
	if err != nil {
		return err
	}
	var (
		p                   pageFlags
		published, ifMatch  string
		filter, order, dir  string
		want                int
		usage               string
		publishFlag, unpubl bool
	)
	switch sub {
	case "list":
		usage, want = "<collection> [flags]", 1
	case "get", "delete":
		usage, want = "<collection> <id> [flags]", 2
	case "create":
		usage, want = "<collection> [field=value ...] [flags]", -1
	case "update":
		usage, want = "<collection> <id> [field=value ...] [flags]", -2
	}
	fs := in.flags(in.command, usage)
	switch sub {
	case "list":
		p.define(fs, "items")
		fs.StringVar(&published, "published", "", "true or false: only the published, or unpublished, items")
		fs.StringVar(&filter, "filter", "", "field=value: the items whose field equals the value")
		fs.StringVar(&order, "order", "", "order by this field")
		fs.StringVar(&dir, "direction", "", "asc or desc")
	case "create", "update":
		fs.BoolVar(&publishFlag, "publish", false, "publish the item")
		fs.BoolVar(&unpubl, "unpublish", false, "unpublish the item")
	}
	if sub == "update" || sub == "delete" {
		fs.StringVar(&ifMatch, "if-match", "", "only if the item's ETag (its version) is still this one")
	}
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < abs(want) || (want > 0 && len(pos) > want) {
		return usagef("usage: %s %s", in.command, usage)
	}
	slug := pos[0]
	c, err := in.client()
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		if err := p.check(); err != nil {
			return err
		}
		q := &atrium.ItemQuery{Limit: p.limit, Offset: p.offset, Order: order, Direction: dir}
		if q.FilterField, q.FilterValue, err = filterFlag(filter); err != nil {
			return err
		}
		if published != "" {
			b, err := strconv.ParseBool(published)
			if err != nil {
				return usagef("--published %s: true or false", published)
			}
			q.IsPublished = &b
		}
		var items []atrium.Item
		var keys []string
		if p.all {
			if items, err = collect(c.Items.All(ctx, slug, q)); err != nil {
				return err
			}
			col, err := collectionFields(ctx, c, slug)
			if err != nil {
				return err
			}
			keys = fieldKeys(col)
		} else {
			page, err := c.Items.List(ctx, slug, q)
			if err != nil {
				return err
			}
			items, keys = page.Items, fieldKeys(&page.Collection)
		}
		if items == nil {
			items = []atrium.Item{}
		}
		return in.printList(items, itemColumns(keys))
	case "get":
		it, err := c.Items.Get(ctx, slug, pos[1])
		if err != nil {
			return err
		}
		return in.printObject(it, nil)
	case "delete":
		var opts []atrium.WriteOption
		if ifMatch != "" {
			opts = append(opts, atrium.IfMatch(ifMatch))
		}
		if err := c.Items.Delete(ctx, slug, pos[1], opts...); err != nil {
			return err
		}
		fmt.Fprintf(in.env.stderr, "deleted %s %s\n", slug, pos[1])
		return nil
	}
	if publishFlag && unpubl {
		return usagef("--publish and --unpublish: one or the other")
	}
	col, err := collectionFields(ctx, c, slug)
	if err != nil {
		return err
	}
	rest := pos[1:]
	if sub == "update" {
		rest = pos[2:]
	}
	data, err := itemData(col, rest)
	if err != nil {
		return err
	}
	w := atrium.ItemWrite{Data: data}
	if publishFlag || unpubl {
		w.IsPublished = &publishFlag
	}
	var it *atrium.Item
	if sub == "create" {
		it, err = c.Items.Create(ctx, slug, w)
	} else {
		var opts []atrium.WriteOption
		if ifMatch != "" {
			opts = append(opts, atrium.IfMatch(ifMatch))
		}
		it, err = c.Items.Update(ctx, slug, pos[1], w, opts...)
	}
	if err != nil {
		return err
	}
	return in.printObject(it, itemColumns(fieldKeys(col)))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
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

func runProspects(ctx context.Context, in *invocation, args []string) error {
	return crmList(ctx, in, args, "prospects", []string{"id", "business_name", "domain", "pipeline_stage", "lead_score", "health_score", "created_at"},
		func(c *atrium.Client, p *atrium.Page) (any, error) { return c.Prospects.List(ctx, p) },
		func(c *atrium.Client, p *atrium.Page) (any, error) { return collect(c.Prospects.All(ctx, p)) })
}

func runDeals(ctx context.Context, in *invocation, args []string) error {
	return crmList(ctx, in, args, "deals", []string{"id", "title", "stage", "value", "currency", "expected_close_date", "created_at"},
		func(c *atrium.Client, p *atrium.Page) (any, error) { return c.Deals.List(ctx, p) },
		func(c *atrium.Client, p *atrium.Page) (any, error) { return collect(c.Deals.All(ctx, p)) })
}

func crmList(ctx context.Context, in *invocation, args []string, what string, cols []string,
	page, all func(*atrium.Client, *atrium.Page) (any, error)) error {
	_, args, err := in.subcommand(args, "list")
	if err != nil {
		return err
	}
	fs := in.flags(in.command, "[flags]")
	var p pageFlags
	p.define(fs, what)
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(in, pos); err != nil {
		return err
	}
	if err := p.check(); err != nil {
		return err
	}
	c, err := in.client()
	if err != nil {
		return err
	}
	fetch := page
	if p.all {
		fetch = all
	}
	v, err := fetch(c, &atrium.Page{Limit: p.limit, Offset: p.offset})
	if err != nil {
		return err
	}
	return in.printList(v, cols)
}

func runWebhooks(ctx context.Context, in *invocation, args []string) error {
	sub, args, err := in.subcommand(args, "create", "list", "deliveries", "listen")
	if err != nil {
		return err
	}
	if sub == "listen" {
		return runWebhooksListen(ctx, in, args)
	}
	usage := map[string]string{"create": "--endpoint <url> --events <type,...> [flags]", "list": "[flags]", "deliveries": "<webhook id> [flags]"}[sub]
	fs := in.flags(in.command, usage)
	var url, events, description, status string
	var p pageFlags
	switch sub {
	case "create":
		fs.StringVar(&url, "endpoint", "", "the endpoint's URL, where the deliveries go (required)")
		fs.StringVar(&events, "events", "", "the event types, comma-separated (required; GET /api/v1/event-types lists them)")
		fs.StringVar(&description, "description", "", "what the endpoint is for")
	case "deliveries":
		fs.StringVar(&status, "status", "", "only the deliveries in this status (pending, succeeded, failed)")
		fs.IntVar(&p.limit, "limit", 0, "at most this many deliveries (default: the API's page size)")
		fs.BoolVar(&p.all, "all", false, "every delivery, page after page")
	}
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		if err := noArgs(in, pos); err != nil {
			return err
		}
		if url == "" || events == "" {
			return usagef("%s: --endpoint and --events are required", in.command)
		}
		c, err := in.client()
		if err != nil {
			return err
		}
		var types []string
		for _, e := range strings.Split(events, ",") {
			if e = strings.TrimSpace(e); e != "" {
				types = append(types, e)
			}
		}
		w, err := c.Webhooks.Create(ctx, atrium.NewWebhook{URL: url, Events: types, Description: description})
		if err != nil {
			return err
		}
		if err := in.printObject(w, []string{"id", "url", "events", "enabled", "secret"}); err != nil {
			return err
		}
		fmt.Fprintln(in.env.stderr, "Keep the secret: it verifies the deliveries' signatures and is shown only now.")
		return nil
	case "list":
		if err := noArgs(in, pos); err != nil {
			return err
		}
		c, err := in.client()
		if err != nil {
			return err
		}
		hooks, err := c.Webhooks.List(ctx)
		if err != nil {
			return err
		}
		if hooks == nil {
			hooks = []atrium.Webhook{}
		}
		return in.printList(hooks, []string{"id", "url", "events", "enabled", "owner", "disabled_reason", "created_at"})
	}
	if len(pos) != 1 {
		return usagef("usage: %s %s", in.command, usage)
	}
	if p.limit < 0 || (p.all && p.limit > 0) {
		return usagef("--limit must be 0 or more, and --all does not take it")
	}
	c, err := in.client()
	if err != nil {
		return err
	}
	var ds []atrium.Delivery
	if p.all {
		ds, err = collect(c.Webhooks.AllDeliveries(ctx, pos[0], status))
	} else {
		var next string
		ds, next, err = c.Webhooks.Deliveries(ctx, pos[0], atrium.DeliveryQuery{Status: status, Limit: p.limit})
		if err == nil && next != "" {
			defer fmt.Fprintln(in.env.stderr, "more deliveries: run again with --all")
		}
	}
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []atrium.Delivery{}
	}
	return in.printList(ds, []string{"id", "event_type", "status", "event_id", "next_attempt_at", "created_at"})
}

// runColumns are a run's columns in tables.
var runColumns = []string{"id", "action", "client_id", "state", "status_code", "created_at", "finished_at"}

// submitAction queues an action (Prefer: respond-async). With wait it
// then follows the run to its end, the server holding each request up to
// 20 s, and prints the finished run; a run that ended in error exits 1.
func submitAction(ctx context.Context, in *invocation, c *atrium.Client, action, client string, fields map[string]any, wait bool, opts []atrium.RunOption) error {
	sub, err := c.Actions.Submit(ctx, action, client, fields, opts...)
	if err != nil {
		return err
	}
	if sub.Result != nil {
		// An Idempotency-Key's replay of a finished run: its outcome.
		return printOutcome(in, sub.Result)
	}
	if !wait {
		return in.printObject(map[string]any{"run_id": sub.RunID, "state": sub.State, "url": "/api/v1/runs/" + sub.RunID},
			[]string{"run_id", "state", "url"})
	}
	stop := in.progress("waiting for run " + sub.RunID)
	run, err := c.Runs.Wait(ctx, sub.RunID)
	stop()
	if err != nil {
		return err
	}
	return printRun(in, run)
}

func printOutcome(in *invocation, res *atrium.ActionResult) error {
	if err := in.printObject(res, []string{"action", "client_id", "status", "status_code", "data"}); err != nil {
		return err
	}
	if !res.Succeeded() {
		return fmt.Errorf("the action ran and failed (status %s, %d); it was not charged", res.Status, res.StatusCode)
	}
	return nil
}

// printRun prints a run; one that ended in error or was canceled exits 1,
// as a failed synchronous run does.
func printRun(in *invocation, run *atrium.Run) error {
	if err := in.printObject(run, append(runColumns, "data")); err != nil {
		return err
	}
	switch run.State {
	case "error":
		return fmt.Errorf("run %s ended in error (%d); it was not charged", run.ID, run.StatusCode)
	case "canceled":
		return fmt.Errorf("run %s was canceled; it was not charged", run.ID)
	}
	return nil
}

// progress shows what is being waited for on stderr, on a terminal only
// (a pipe or a log gets nothing), redrawn each second with the time
// waited; the returned func clears it.
func (in *invocation) progress(what string) func() {
	if !in.env.terminal {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			fmt.Fprintf(in.env.stderr, "\r%s… %ds", what, int(time.Since(start).Seconds()))
			select {
			case <-done:
				fmt.Fprint(in.env.stderr, "\r\033[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// runRuns is atrium runs get|list|cancel.
func runRuns(ctx context.Context, in *invocation, args []string) error {
	sub, args, err := in.subcommand(args, "get", "list", "cancel")
	if err != nil {
		return err
	}
	if sub == "list" {
		return runsList(ctx, in, args)
	}
	fs := in.flags(in.command, "<run_id> [flags]")
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s: name one run by its id (atrium runs list shows them)", in.command)
	}
	c, err := in.client()
	if err != nil {
		return err
	}
	if sub == "cancel" {
		run, err := c.Runs.Cancel(ctx, pos[0])
		if err != nil {
			return err
		}
		return in.printObject(run, runColumns)
	}
	run, err := c.Runs.Get(ctx, pos[0])
	if err != nil {
		return err
	}
	return in.printObject(run, append(runColumns, "data"))
}

func runsList(ctx context.Context, in *invocation, args []string) error {
	fs := in.flags(in.command, "[--client id] [--state s] [--action a] [--limit n] [flags]")
	var q atrium.RunQuery
	limit := 0
	fs.StringVar(&q.ClientID, "client", "", "only this client's runs")
	fs.StringVar(&q.State, "state", "", "only runs in this state: queued, running, success, error or canceled")
	fs.StringVar(&q.Action, "action", "", "only runs of this action")
	fs.IntVar(&limit, "limit", 20, "the most runs to print, newest first (0: every run)")
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(in, pos); err != nil {
		return err
	}
	if limit < 0 {
		return usagef("%s: --limit must be 0 (every run) or more; got %d", in.command, limit)
	}
	c, err := in.client()
	if err != nil {
		return err
	}
	out := []atrium.Run{}
	for run, err := range c.Runs.List(ctx, q) {
		if err != nil {
			return err
		}
		out = append(out, run)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return in.printList(out, runColumns)
}
