package cli

// atrium webhooks create|list|deliveries|listen: the key's webhook
// endpoints (docs/webhooks.md); listen is in listen.go.

import (
	"context"
	"flag"
	"fmt"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func newWebhooksCmd(f *Factory) *Command {
	return &Command{Name: "webhooks", Summary: "create and list webhook endpoints, list their deliveries, forward live events to a local URL",
		Subs: []*Command{newWebhooksCreateCmd(f, nil), newWebhooksListCmd(f, nil), newWebhooksDeliveriesCmd(f, nil), newWebhooksListenCmd(f, nil)}}
}

type webhooksCreateOptions struct {
	*Factory
	Endpoint, Events, Description string
}

func newWebhooksCreateCmd(f *Factory, runF func(context.Context, *webhooksCreateOptions) error) *Command {
	o := &webhooksCreateOptions{Factory: f}
	return &Command{Name: "create", Summary: "register an endpoint; prints its signing secret, once",
		Usage: "--endpoint <url> --events <type,...> [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Endpoint, "endpoint", "", "the endpoint's URL, where the deliveries go")
			fs.StringVar(&o.Events, "events", "", "the event types, comma-separated (GET /api/v1/event-types lists them)")
			fs.StringVar(&o.Description, "description", "", "what the endpoint is for")
		},
		Required: []string{"endpoint", "events"},
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			w, err := c.Webhooks.Create(ctx, atrium.NewWebhook{URL: o.Endpoint, Events: splitList(o.Events), Description: o.Description})
			if err != nil {
				return err
			}
			if err := o.printObject(w, []string{"id", "url", "events", "enabled", "secret"}); err != nil {
				return err
			}
			fmt.Fprintln(o.env.Stderr, "Keep the secret: it verifies the deliveries' signatures and is shown only now.")
			return nil
		}}
}

type webhooksListOptions struct{ *Factory }

func newWebhooksListCmd(f *Factory, runF func(context.Context, *webhooksListOptions) error) *Command {
	o := &webhooksListOptions{Factory: f}
	return &Command{Name: "list", Summary: "list the endpoints",
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
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
			return o.printList(hooks, []string{"id", "url", "events", "enabled", "owner", "disabled_reason", "created_at"})
		}}
}

type webhooksDeliveriesOptions struct {
	*Factory
	WebhookID, Status string
	Limit             int
	All               bool
}

func newWebhooksDeliveriesCmd(f *Factory, runF func(context.Context, *webhooksDeliveriesOptions) error) *Command {
	o := &webhooksDeliveriesOptions{Factory: f}
	const usage = "<webhook id> [flags]"
	return &Command{Name: "deliveries", Summary: "list an endpoint's deliveries, newest first", Usage: usage,
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Status, "status", "", "only the deliveries in this status (pending, succeeded, failed)")
			fs.IntVar(&o.Limit, "limit", 0, "at most this many deliveries (default: the API's page size)")
			fs.BoolVar(&o.All, "all", false, "every delivery, page after page")
		},
		Args: f.exactArgs(usage, 1),
		Run: func(ctx context.Context, pos []string) error {
			o.WebhookID = pos[0]
			if o.Limit < 0 || (o.All && o.Limit > 0) {
				return usagef("--limit must be 0 or more, and --all does not take it")
			}
			if runF != nil {
				return runF(ctx, o)
			}
			return webhooksDeliveries(ctx, o)
		}}
}

func webhooksDeliveries(ctx context.Context, o *webhooksDeliveriesOptions) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	var ds []atrium.Delivery
	if o.All {
		ds, err = collect(c.Webhooks.AllDeliveries(ctx, o.WebhookID, o.Status))
	} else {
		var next string
		ds, next, err = c.Webhooks.Deliveries(ctx, o.WebhookID, atrium.DeliveryQuery{Status: o.Status, Limit: o.Limit})
		if err == nil && next != "" {
			defer fmt.Fprintln(o.env.Stderr, "more deliveries: run again with --all")
		}
	}
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []atrium.Delivery{}
	}
	return o.printList(ds, []string{"id", "event_type", "status", "event_id", "next_attempt_at", "created_at"})
}
