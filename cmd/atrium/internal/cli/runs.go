package cli

// atrium runs get|list|cancel: the queued runs of actions.

import (
	"context"
	"flag"
	"fmt"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// runColumns are a run's columns in tables.
var runColumns = []string{"id", "action", "client_id", "state", "status_code", "created_at", "finished_at"}

func newRunsCmd(f *Factory) *Command {
	return &Command{Name: "runs", Summary: "follow, list and cancel queued action runs",
		Subs: []*Command{newRunsGetCmd(f, nil), newRunsListCmd(f, nil), newRunsCancelCmd(f, nil)}}
}

type runOptions struct {
	*Factory
	RunID string
}

func oneRun(f *Factory) func([]string) error {
	return func(pos []string) error {
		if len(pos) != 1 {
			return usagef("%s: name one run by its id (atrium runs list shows them)", f.command)
		}
		return nil
	}
}

func newRunsGetCmd(f *Factory, runF func(context.Context, *runOptions) error) *Command {
	o := &runOptions{Factory: f}
	return &Command{Name: "get", Summary: "show a run: its state, status code, credits and data", Usage: "<run_id> [flags]",
		Args: oneRun(f),
		Run: func(ctx context.Context, pos []string) error {
			o.RunID = pos[0]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			run, err := c.Runs.Get(ctx, o.RunID)
			if err != nil {
				return err
			}
			return o.printObject(run, append(runColumns, "data"))
		}}
}

func newRunsCancelCmd(f *Factory, runF func(context.Context, *runOptions) error) *Command {
	o := &runOptions{Factory: f}
	return &Command{Name: "cancel", Summary: "cancel a queued or running run, releasing its credits", Usage: "<run_id> [flags]",
		Args: oneRun(f),
		Run: func(ctx context.Context, pos []string) error {
			o.RunID = pos[0]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			run, err := c.Runs.Cancel(ctx, o.RunID)
			if err != nil {
				return err
			}
			return o.printObject(run, runColumns)
		}}
}

type runsListOptions struct {
	*Factory
	Query atrium.RunQuery
	Limit int
}

func newRunsListCmd(f *Factory, runF func(context.Context, *runsListOptions) error) *Command {
	o := &runsListOptions{Factory: f}
	return &Command{Name: "list", Summary: "list the runs, newest first", Usage: "[--client id] [--state s] [--action a] [--limit n] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Query.ClientID, "client", "", "only this client's runs")
			fs.StringVar(&o.Query.State, "state", "", "only runs in this state: queued, running, success, error or canceled")
			fs.StringVar(&o.Query.Action, "action", "", "only runs of this action")
			fs.IntVar(&o.Limit, "limit", 20, "the most runs to print, newest first (0: every run)")
		},
		Run: func(ctx context.Context, _ []string) error {
			if o.Limit < 0 {
				return usagef("%s: --limit must be 0 (every run) or more; got %d", o.command, o.Limit)
			}
			if runF != nil {
				return runF(ctx, o)
			}
			return runsList(ctx, o)
		}}
}

func runsList(ctx context.Context, o *runsListOptions) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	out := []atrium.Run{}
	for run, err := range c.Runs.List(ctx, o.Query) {
		if err != nil {
			return err
		}
		out = append(out, run)
		if o.Limit > 0 && len(out) == o.Limit {
			break
		}
	}
	return o.printList(out, runColumns)
}

// printRun prints a run; one that ended in error or was canceled exits 1,
// as a failed synchronous run does.
func printRun(f *Factory, run *atrium.Run) error {
	if err := f.printObject(run, append(runColumns, "data")); err != nil {
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
