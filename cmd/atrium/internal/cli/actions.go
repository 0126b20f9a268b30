package cli

// atrium actions list|run: the action catalog, and running an action at
// once or queued (docs/actions.md).

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

func newActionsCmd(f *Factory) *Command {
	return &Command{Name: "actions", Summary: "list the actions and run one (at once, or queued with --async or --wait)",
		Subs: []*Command{newActionsListCmd(f, nil), newActionsRunCmd(f, nil)}}
}

type actionsListOptions struct{ *Factory }

func newActionsListCmd(f *Factory, runF func(context.Context, *actionsListOptions) error) *Command {
	o := &actionsListOptions{Factory: f}
	return &Command{Name: "list", Summary: "list the actions: their fields, costs and datasets",
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			return actionsList(ctx, o)
		}}
}

func actionsList(ctx context.Context, o *actionsListOptions) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	actions, err := c.Actions.List(ctx)
	if err != nil {
		return err
	}
	if o.format() == "json" {
		return printJSON(o.env.Stdout, actions)
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
	return o.printList(rows, []string{"name", "fields", "ai_credits", "data_credits", "writes"})
}

type actionsRunOptions struct {
	*Factory
	Action         string
	ClientID       string
	Args           []string // field=value
	IdempotencyKey string
	Async, Wait    bool
}

func newActionsRunCmd(f *Factory, runF func(context.Context, *actionsRunOptions) error) *Command {
	o := &actionsRunOptions{Factory: f}
	return &Command{Name: "run", Summary: "run an action for a client",
		Usage: "<action> --client <id> [field=value ...] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.ClientID, "client", "", "the client's id")
			fs.StringVar(&o.IdempotencyKey, "idempotency-key", "", "send the action with this key, to get an earlier run's answer rather than a second run")
			fs.BoolVar(&o.Async, "async", false, "queue the run and print its id at once (Prefer: respond-async); atrium runs get shows its outcome")
			fs.BoolVar(&o.Wait, "wait", false, "queue the run and wait for its outcome, however long it takes (a progress line on a terminal)")
		},
		Args: func(pos []string) error {
			if len(pos) == 0 {
				return usagef("%s: name the action (atrium actions list shows them)", f.command)
			}
			return nil
		},
		Required: []string{"client"},
		Run: func(ctx context.Context, pos []string) error {
			o.Action, o.Args = pos[0], pos[1:]
			if runF != nil {
				return runF(ctx, o)
			}
			return actionsRun(ctx, o)
		}}
}

func actionsRun(ctx context.Context, o *actionsRunOptions) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	actions, err := c.Actions.List(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(actions, func(a atrium.Action) bool { return a.Name == o.Action })
	if i < 0 {
		names := make([]string, len(actions))
		for j, a := range actions {
			names[j] = a.Name
		}
		return usagef("%s: no action %q; the actions are: %s", o.command, o.Action, strings.Join(names, ", "))
	}
	fields, err := actionFields(actions[i], o.Args)
	if err != nil {
		return err
	}
	var opts []atrium.RunOption
	if o.IdempotencyKey != "" {
		opts = append(opts, atrium.WithIdempotencyKey(o.IdempotencyKey))
	}
	if o.Async || o.Wait {
		return submitAction(ctx, o, c, fields, opts)
	}
	res, err := c.Actions.Run(ctx, o.Action, o.ClientID, fields, opts...)
	if err != nil {
		return err
	}
	return printOutcome(o.Factory, res)
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

// submitAction queues an action (Prefer: respond-async). With --wait it
// then follows the run to its end, the server holding each request up to
// 20 s, and prints the finished run; a run that ended in error exits 1.
func submitAction(ctx context.Context, o *actionsRunOptions, c *atrium.Client, fields map[string]any, opts []atrium.RunOption) error {
	sub, err := c.Actions.Submit(ctx, o.Action, o.ClientID, fields, opts...)
	if err != nil {
		return err
	}
	if sub.Result != nil {
		// An Idempotency-Key's replay of a finished run: its outcome.
		return printOutcome(o.Factory, sub.Result)
	}
	if !o.Wait {
		return o.printObject(map[string]any{"run_id": sub.RunID, "state": sub.State, "url": "/api/v1/runs/" + sub.RunID},
			[]string{"run_id", "state", "url"})
	}
	stop := o.progress("waiting for run " + sub.RunID)
	run, err := c.Runs.Wait(ctx, sub.RunID)
	stop()
	if err != nil {
		return err
	}
	return printRun(o.Factory, run)
}

func printOutcome(f *Factory, res *atrium.ActionResult) error {
	if err := f.printObject(res, []string{"action", "client_id", "status", "status_code", "data"}); err != nil {
		return err
	}
	if !res.Succeeded() {
		return fmt.Errorf("the action ran and failed (status %s, %d); it was not charged", res.Status, res.StatusCode)
	}
	return nil
}

// progress shows what is being waited for on stderr, on a terminal only
// (a pipe or a log gets nothing), redrawn each second with the time
// waited; the returned func clears it.
func (f *Factory) progress(what string) func() {
	if !f.env.Terminal {
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
			fmt.Fprintf(f.env.Stderr, "\r%s… %ds", what, int(time.Since(start).Seconds()))
			select {
			case <-done:
				fmt.Fprint(f.env.Stderr, "\r\033[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
