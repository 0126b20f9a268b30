package cli

// atrium schedules list|get|create|update|delete|pause|resume|trigger:
// an action run for a client on a timing (docs/schedules.md).

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

// scheduleColumns are a schedule's columns in tables.
var scheduleColumns = []string{"id", "action", "client_id", "state", "timing", "timezone", "next_run_at", "failures", "description"}

func newSchedulesCmd(f *Factory) *Command {
	return &Command{Name: "schedules", Summary: "run an action for a client on a timing: preview, create, change, pause, resume, trigger",
		Subs: []*Command{newSchedulesListCmd(f, nil), newSchedulesGetCmd(f, nil), newSchedulesWriteCmd(f, "create", nil),
			newSchedulesWriteCmd(f, "update", nil), newSchedulesDeleteCmd(f, nil), newSchedulesStateCmd(f, "pause", nil),
			newSchedulesStateCmd(f, "resume", nil), newSchedulesTriggerCmd(f, nil)}}
}

// scheduleRow is a schedule as tables and CSV show it: its timing in one
// column, the credits it is expected to spend beside it.
type scheduleRow struct {
	*atrium.Schedule
	Timing string `json:"timing"`
}

func schedulePrintable(f *Factory, s *atrium.Schedule) any {
	if f.format() == "json" {
		return s // the API's object as it is, for scripts
	}
	return scheduleRow{Schedule: s, Timing: timing(s)}
}

// timing spells a schedule's slots: its cron expression, or "week monday
// 07:00".
func timing(s *atrium.Schedule) string {
	if s.Cron != nil {
		return "cron " + *s.Cron
	}
	parts := []string{}
	for _, p := range []*string{s.Every, s.Weekday, s.At} {
		if p != nil && *p != "" {
			parts = append(parts, *p)
		}
	}
	if s.Monthday != nil && *s.Monthday > 0 {
		parts = slices.Insert(parts, min(1, len(parts)), "day "+strconv.Itoa(*s.Monthday))
	}
	return "every " + strings.Join(parts, " ")
}

func oneSchedule(f *Factory) func([]string) error {
	return func(pos []string) error {
		if len(pos) != 1 {
			return usagef("%s: name one schedule by its id (atrium schedules list shows them)", f.command)
		}
		return nil
	}
}

type schedulesListOptions struct {
	*Factory
	Query atrium.ScheduleQuery
	Limit int
}

func newSchedulesListCmd(f *Factory, runF func(context.Context, *schedulesListOptions) error) *Command {
	o := &schedulesListOptions{Factory: f}
	return &Command{Name: "list", Summary: "list the schedules, oldest first", Usage: "[--client id] [--action a] [--state s] [--limit n] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Query.ClientID, "client", "", "only this client's schedules")
			fs.StringVar(&o.Query.Action, "action", "", "only schedules of this action")
			fs.StringVar(&o.Query.State, "state", "", "only schedules in this state: active, paused or ended")
			fs.IntVar(&o.Limit, "limit", 0, "the most schedules to print (0: every one)")
		},
		Run: func(ctx context.Context, _ []string) error {
			if o.Limit < 0 {
				return usagef("%s: --limit must be 0 (every schedule) or more; got %d", o.command, o.Limit)
			}
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			out := []any{}
			for s, err := range c.Schedules.List(ctx, o.Query) {
				if err != nil {
					return err
				}
				out = append(out, schedulePrintable(o.Factory, &s))
				if o.Limit > 0 && len(out) == o.Limit {
					break
				}
			}
			return o.printList(out, scheduleColumns)
		}}
}

type scheduleOptions struct {
	*Factory
	ScheduleID string
}

func newSchedulesGetCmd(f *Factory, runF func(context.Context, *scheduleOptions) error) *Command {
	o := &scheduleOptions{Factory: f}
	return &Command{Name: "get", Summary: "show a schedule: its timing, next runs, estimated credits and latest slots", Usage: "<schedule_id> [flags]",
		Args: oneSchedule(f),
		Run: func(ctx context.Context, pos []string) error {
			o.ScheduleID = pos[0]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			s, err := c.Schedules.Get(ctx, o.ScheduleID)
			if err != nil {
				return err
			}
			return o.printObject(schedulePrintable(o.Factory, s), append(scheduleColumns, "params", "next_runs", "estimated_credits", "max_credits_per_month", "pause_after_failures", "last_run_id", "slots"))
		}}
}

// optString is a string flag that knows whether it was given, so that an
// update sends only the fields named on its command line.
type optString struct {
	v   string
	set bool
}

func (s *optString) String() string     { return s.v }
func (s *optString) Set(v string) error { s.v, s.set = v, true; return nil }
func (s *optString) ptr() *string {
	if !s.set {
		return nil
	}
	return &s.v
}

// optInt is an integer flag that knows whether it was given.
type optInt struct {
	v   int
	set bool
}

func (n *optInt) String() string {
	if !n.set {
		return ""
	}
	return strconv.Itoa(n.v)
}

func (n *optInt) Set(v string) error {
	i, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("must be a whole number")
	}
	n.v, n.set = i, true
	return nil
}

func (n *optInt) ptr() *int {
	if !n.set {
		return nil
	}
	return &n.v
}

// paramList is the repeatable --param k=v: unlike stringList, a comma is
// part of the value (an array field is typed by the action's schema).
type paramList []string

func (p *paramList) String() string     { return strings.Join(*p, " ") }
func (p *paramList) Set(v string) error { *p = append(*p, v); return nil }

type schedulesWriteOptions struct {
	*Factory
	// Verb is create or update; ScheduleID is update's.
	Verb, ScheduleID                                                  string
	Action, ClientID                                                  string
	Params                                                            paramList
	ParamsJSON                                                        string
	Cron, Every, At, Weekday, Timezone, Description, StartsAt, EndsAt optString
	Monthday, MaxAI, MaxData, PauseAfter                              optInt
	DryRun                                                            bool
}

func newSchedulesWriteCmd(f *Factory, verb string, runF func(context.Context, *schedulesWriteOptions) error) *Command {
	o := &schedulesWriteOptions{Factory: f, Verb: verb}
	c := &Command{Name: verb,
		Flags: func(fs *flag.FlagSet) {
			if verb == "create" {
				fs.StringVar(&o.Action, "action", "", "the action to run (atrium actions list shows them)")
				fs.StringVar(&o.ClientID, "client", "", "the client it runs for")
				fs.BoolVar(&o.DryRun, "dry-run", false, "print the schedule as it would be (next runs, estimated credits) and create nothing")
			}
			fs.Var(&o.Params, "param", "one of the action's fields, `field=value` (typed by the action's schema) or field:=<json>; repeatable")
			fs.StringVar(&o.ParamsJSON, "params-json", "", "the action's fields as one JSON object; --param values are added over it")
			fs.Var(&o.Cron, "cron", "a five-field cron `expression` in the time zone (\"0 7 * * 1\"); instead of --every")
			fs.Var(&o.Every, "every", "the `unit` of the timing: day, week or month, with --at (and --weekday or --monthday); instead of --cron")
			fs.Var(&o.At, "at", "the local time of each slot, `HH:MM`")
			fs.Var(&o.Weekday, "weekday", "with --every week: the `day`, monday ... sunday")
			fs.Var(&o.Monthday, "monthday", "with --every month: the `day` of the month, 1 to 28")
			fs.Var(&o.Timezone, "timezone", "an IANA time `zone` the timing is read in (Europe/London, UTC)")
			fs.Var(&o.StartsAt, "starts-at", "no slot before this `time` (RFC 3339)")
			fs.Var(&o.EndsAt, "ends-at", "no slot after this `time` (RFC 3339)")
			fs.Var(&o.MaxAI, "max-ai", "the most AI `credits` its runs may take in a calendar month (with --max-data: a kind not given is capped at 0)")
			fs.Var(&o.MaxData, "max-data", "the most data `credits` its runs may take in a calendar month (with --max-ai: a kind not given is capped at 0)")
			fs.Var(&o.PauseAfter, "pause-after", "pause after `n` failed runs or skipped slots in a row: 1 to 100 (default 3)")
			fs.Var(&o.Description, "description", "what the schedule is for, up to 500 characters of `text`")
		},
		Run: func(ctx context.Context, pos []string) error {
			if verb == "update" {
				o.ScheduleID = pos[0]
			}
			if runF != nil {
				return runF(ctx, o)
			}
			return schedulesWrite(ctx, o)
		}}
	if verb == "create" {
		c.Summary = "create a schedule (--dry-run: preview its next runs and credits first)"
		c.Usage = "--action <a> --client <id> --timezone <tz> (--cron <expr> | --every day|week|month --at HH:MM [--weekday d|--monthday n]) [--param k=v ...] [flags]"
		c.Required = []string{"action", "client", "timezone"}
	} else {
		c.Summary = "change a schedule's fields (only the flags given); the timing and parameters are checked again"
		c.Usage = "<schedule_id> [--cron ...|--every ...] [--param k=v ...] [flags]"
		c.Args = oneSchedule(f)
	}
	return c
}

// input turns the flags into the API's fields; params are typed
// separately (they need the action's schema).
func (o *schedulesWriteOptions) input() (atrium.ScheduleInput, error) {
	in := atrium.ScheduleInput{Action: o.Action, ClientID: o.ClientID, Timezone: o.Timezone.v,
		Cron: o.Cron.ptr(), Every: o.Every.ptr(), At: o.At.ptr(), Weekday: o.Weekday.ptr(), Monthday: o.Monthday.ptr(),
		PauseAfterFailures: o.PauseAfter.ptr(), Description: o.Description.ptr()}
	if o.Cron.set && o.Every.set {
		return in, usagef("%s: --cron and --every are two ways to give the timing; give one", o.command)
	}
	if o.Verb == "create" && !o.Cron.set && !o.Every.set {
		return in, usagef("%s: give the timing: --cron <expr>, or --every day|week|month with --at HH:MM", o.command)
	}
	for _, t := range []struct {
		name string
		v    *optString
		dst  **time.Time
	}{{"starts-at", &o.StartsAt, &in.StartsAt}, {"ends-at", &o.EndsAt, &in.EndsAt}} {
		if !t.v.set {
			continue
		}
		at, err := time.Parse(time.RFC3339, t.v.v)
		if err != nil {
			return in, usagef("%s: --%s %s: write an RFC 3339 time, such as 2027-01-01T00:00:00Z", o.command, t.name, t.v.v)
		}
		*t.dst = &at
	}
	if o.ParamsJSON != "" {
		if err := json.Unmarshal([]byte(o.ParamsJSON), &in.Params); err != nil || in.Params == nil {
			return in, usagef("%s: --params-json must be one JSON object of the action's fields, such as {\"seed\": \"rye\"}", o.command)
		}
	}
	if o.MaxAI.set || o.MaxData.set {
		if o.MaxAI.v < 0 || o.MaxData.v < 0 {
			return in, usagef("%s: --max-ai and --max-data must be 0 or more", o.command)
		}
		in.MaxCreditsPerMonth = &atrium.Credits{AI: o.MaxAI.v, Data: o.MaxData.v}
	}
	return in, nil
}

func schedulesWrite(ctx context.Context, o *schedulesWriteOptions) error {
	in, err := o.input()
	if err != nil {
		return err
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	if len(o.Params) > 0 {
		action := o.Action
		if action == "" { // an update: the schedule's own action types them
			s, err := c.Schedules.Get(ctx, o.ScheduleID)
			if err != nil {
				return err
			}
			action = s.Action
		}
		fields, err := scheduleParams(ctx, o, c, action)
		if err != nil {
			return err
		}
		if in.Params == nil {
			in.Params = map[string]any{}
		}
		for k, v := range fields { // over --params-json
			in.Params[k] = v
		}
	}
	var s *atrium.Schedule
	switch {
	case o.Verb == "update":
		s, err = c.Schedules.Update(ctx, o.ScheduleID, in)
	case o.DryRun:
		s, err = c.Schedules.Create(ctx, in, atrium.DryRun())
	default:
		s, err = c.Schedules.Create(ctx, in)
	}
	if err != nil {
		return err
	}
	if err := o.printObject(schedulePrintable(o.Factory, s), append(scheduleColumns, "params", "next_runs", "estimated_credits", "max_credits_per_month", "pause_after_failures")); err != nil {
		return err
	}
	if o.DryRun {
		fmt.Fprintln(o.env.Stderr, "A dry run: nothing was created. Run again without --dry-run to create it.")
	}
	return nil
}

// scheduleParams are the --param fields, typed by the action's input
// schema as atrium actions run types them.
func scheduleParams(ctx context.Context, o *schedulesWriteOptions, c *atrium.Client, action string) (map[string]any, error) {
	actions, err := c.Actions.List(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(actions, func(a atrium.Action) bool { return a.Name == action })
	if i < 0 {
		names := make([]string, len(actions))
		for j, a := range actions {
			names[j] = a.Name
		}
		return nil, usagef("%s: no action %q; the actions are: %s", o.command, action, strings.Join(names, ", "))
	}
	return actionFields(actions[i], o.Params)
}

func newSchedulesDeleteCmd(f *Factory, runF func(context.Context, *scheduleOptions) error) *Command {
	o := &scheduleOptions{Factory: f}
	return &Command{Name: "delete", Summary: "delete a schedule; the runs it started stay", Usage: "<schedule_id> [flags]",
		Args: oneSchedule(f),
		Run: func(ctx context.Context, pos []string) error {
			o.ScheduleID = pos[0]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			if err := c.Schedules.Delete(ctx, o.ScheduleID); err != nil {
				return err
			}
			fmt.Fprintln(o.env.Stdout, "deleted schedule", o.ScheduleID)
			return nil
		}}
}

// newSchedulesStateCmd is pause or resume.
func newSchedulesStateCmd(f *Factory, verb string, runF func(context.Context, *scheduleOptions) error) *Command {
	o := &scheduleOptions{Factory: f}
	summary := "stop a schedule's slots until it is resumed"
	if verb == "resume" {
		summary = "make a paused schedule active from its next slot after now, clearing its failures"
	}
	return &Command{Name: verb, Summary: summary, Usage: "<schedule_id> [flags]",
		Args: oneSchedule(f),
		Run: func(ctx context.Context, pos []string) error {
			o.ScheduleID = pos[0]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			change := c.Schedules.Pause
			if verb == "resume" {
				change = c.Schedules.Resume
			}
			s, err := change(ctx, o.ScheduleID)
			if err != nil {
				return err
			}
			return o.printObject(schedulePrintable(o.Factory, s), scheduleColumns)
		}}
}

type schedulesTriggerOptions struct {
	*Factory
	ScheduleID string
	Wait       bool
}

func newSchedulesTriggerCmd(f *Factory, runF func(context.Context, *schedulesTriggerOptions) error) *Command {
	o := &schedulesTriggerOptions{Factory: f}
	return &Command{Name: "trigger", Summary: "queue one run of a schedule now, whatever its state", Usage: "<schedule_id> [--wait] [flags]",
		Flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&o.Wait, "wait", false, "wait for the run's outcome and print the finished run (exit 1 if it fails)")
		},
		Args: oneSchedule(f),
		Run: func(ctx context.Context, pos []string) error {
			o.ScheduleID = pos[0]
			if runF != nil {
				return runF(ctx, o)
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			run, err := c.Schedules.Trigger(ctx, o.ScheduleID)
			if err != nil {
				return err
			}
			if !o.Wait {
				return o.printObject(run, runColumns)
			}
			done := o.progress("run " + run.ID)
			run, err = c.Runs.Wait(ctx, run.ID)
			done()
			if err != nil {
				return err
			}
			return printRun(o.Factory, run)
		}}
}
