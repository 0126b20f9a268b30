package cli

// The command table and its dispatcher: atrium's commands are one tree of
// Commands, which Run walks to the verb to run, Usage prints and the
// completion scripts (completion.go) are generated from.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/cli"
	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// Exit codes: scripts tell a refused request from a mistyped command line.
const (
	ExitOK    = 0
	ExitAPI   = 1 // the API (or the network) failed the request
	ExitUsage = 2 // the command line is wrong; nothing was sent
)

// Command is a node of atrium's command tree: a noun with its verbs
// (Subs), a verb (Run), or a server command that parses its own flags
// (Raw).
type Command struct {
	Name    string
	Summary string
	// Usage is what follows the command's path in its usage line.
	Usage string
	// Server puts the command in the usage's first section.
	Server bool
	Subs   []*Command
	// Raw runs a server command with its arguments as given.
	Raw func(ctx context.Context, args []string) error

	// Flags declares a verb's own flags, bound to its options.
	Flags func(fs *flag.FlagSet)
	// Required names the flags a verb cannot run without: one not given
	// is a usage error naming it, and nothing is sent.
	Required []string
	// Args checks a verb's positional arguments; nil means it takes none.
	Args func(pos []string) error
	// Run runs a verb once its flags are parsed and checked.
	Run func(ctx context.Context, pos []string) error
	// Admin: the verb (and every verb under the noun) takes --admin-url
	// and --admin-token.
	Admin bool
}

// Options are what Run needs besides the command line.
type Options struct {
	Version string
	// Server are the commands package main runs (serve, migrate, ...),
	// listed first in the usage.
	Server []*Command
}

// Run runs atrium's command line: global flags, then a command, its
// subcommands, and their flags and arguments in any order.
func Run(ctx context.Context, args []string, env Env, opts Options) error {
	f := newFactory(env, opts.Version)
	root := &Command{Name: "atrium", Subs: append(slices.Clone(opts.Server), clientCommands(f)...)}
	f.root = root
	return root.runRoot(ctx, f, args)
}

// clientCommands is the table of the client commands, one constructor per
// noun (a file each).
func clientCommands(f *Factory) []*Command {
	return []*Command{
		newDataCmd(f), newActionsCmd(f), newRunsCmd(f), newCollectionsCmd(f), newItemsCmd(f),
		newSchedulesCmd(f), newBrandingCmd(f), newReportSharesCmd(f),
		newProspectsCmd(f), newDealsCmd(f), newWebhooksCmd(f), newAdminCmd(f), newLoginCmd(f, nil),
		newCompletionCmd(f, nil),
	}
}

// UsageError is a wrong command line: exit 2. Its message says what was
// wrong and what is allowed.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// errFlagParse is a flag the flag package refused (and explained).
var errFlagParse = errors.New("invalid flags")

// ExitCode prints err as a user should read it and returns the exit code:
// an API error as the API's message with its status and trace id.
func ExitCode(err error, stderr io.Writer) int {
	var ue *UsageError
	var ae *atrium.Error
	switch {
	case err == nil, errors.Is(err, cli.ErrDone):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, prefixed(ue.msg))
		return ExitUsage
	case errors.Is(err, errFlagParse):
		return ExitUsage // the flag package printed the error and the usage
	case errors.As(err, &ae):
		msg := fmt.Sprintf("atrium: %s (HTTP %d", ae.Message, ae.StatusCode)
		if ae.TraceID != "" {
			msg += ", trace id " + ae.TraceID
		}
		fmt.Fprintln(stderr, msg+")")
		return ExitAPI
	default:
		fmt.Fprintln(stderr, prefixed(err.Error()))
		return ExitAPI
	}
}

// prefixed starts a message with atrium's name, once.
func prefixed(msg string) string {
	if strings.HasPrefix(msg, "atrium") {
		return msg
	}
	return "atrium: " + msg
}

// runRoot parses the global flags written before the command
// (atrium --url X data read ...), then runs the command.
func (c *Command) runRoot(ctx context.Context, f *Factory, args []string) error {
	fs := flag.NewFlagSet("atrium", flag.ContinueOnError)
	fs.SetOutput(f.env.Stderr)
	f.bindGlobal(fs, true)
	showVersion := fs.Bool("version", false, "print the version")
	fs.Usage = func() { c.printUsage(f.env.Stderr) }
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help") {
		c.printUsage(f.env.Stdout)
		return nil
	}
	if err := fs.Parse(args); err != nil {
		return errFlagParse
	}
	if *showVersion {
		fmt.Fprintln(f.env.Stdout, f.version)
		return nil
	}
	args = fs.Args()
	if len(args) == 0 {
		c.printUsage(f.env.Stderr)
		return usagef("a command is required")
	}
	sub := c.sub(args[0])
	if sub == nil {
		c.printUsage(f.env.Stderr)
		return usagef("unknown command %q", args[0])
	}
	if sub.Raw != nil {
		var set []string
		fs.Visit(func(fl *flag.Flag) { set = append(set, "-"+fl.Name) })
		if len(set) > 0 {
			return usagef("atrium %s takes its own flags after its name (atrium %s -h); %s is a flag of the client commands",
				sub.Name, sub.Name, strings.Join(set, ", "))
		}
		return sub.Raw(ctx, args[1:])
	}
	return sub.run(ctx, f, "atrium "+sub.Name, sub.Admin, args[1:])
}

func (c *Command) sub(name string) *Command {
	for _, s := range c.Subs {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (c *Command) subNames() []string {
	names := make([]string, len(c.Subs))
	for i, s := range c.Subs {
		names[i] = s.Name
	}
	return names
}

// run runs c, named path, with the arguments that follow its name: a
// noun picks its verb; a verb parses its flags and runs.
func (c *Command) run(ctx context.Context, f *Factory, path string, admin bool, args []string) error {
	admin = admin || c.Admin
	f.command = path
	if len(c.Subs) > 0 {
		subs := c.subNames()
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintf(f.env.Stdout, "Usage: %s <%s> [flags]\n\n", path, strings.Join(subs, "|"))
			if c.Summary != "" {
				fmt.Fprintf(f.env.Stdout, "%s.\n\n", upperFirst(c.Summary))
			}
			fmt.Fprintf(f.env.Stdout, "Run \"%s <subcommand> -h\" for its flags.\n", path)
			return cli.ErrDone
		}
		if len(args) == 0 {
			return usagef("%s needs a subcommand, one of: %s", path, strings.Join(subs, ", "))
		}
		sub := c.sub(args[0])
		if sub == nil {
			return usagef("%s %s: unknown subcommand; one of: %s", path, args[0], strings.Join(subs, ", "))
		}
		return sub.run(ctx, f, path+" "+sub.Name, admin, args[1:])
	}
	fs := c.flagSet(f, path, admin)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if err := f.checkOutput(); err != nil {
		return err
	}
	if err := c.checkRequired(fs, path); err != nil {
		return err
	}
	if c.Args != nil {
		err = c.Args(pos)
	} else if len(pos) > 0 {
		err = usagef("%s takes no arguments, got %q", path, pos[0])
	}
	if err != nil {
		return err
	}
	return c.Run(ctx, pos)
}

// flagSet is the verb's flags: the global ones and its own.
func (c *Command) flagSet(f *Factory, path string, admin bool) *flag.FlagSet {
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(f.env.Stderr)
	f.bindGlobal(fs, admin)
	if c.Flags != nil {
		c.Flags(fs)
	}
	usage := c.Usage
	if usage == "" {
		usage = "[flags]"
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s %s\n\n", path, usage)
		if c.Summary != "" {
			fmt.Fprintf(fs.Output(), "%s.\n\n", upperFirst(c.Summary))
		}
		fmt.Fprintln(fs.Output(), "Flags:")
		fs.PrintDefaults()
	}
	return fs
}

// checkRequired refuses a verb whose required flags are not all given,
// naming those missing.
func (c *Command) checkRequired(fs *flag.FlagSet, path string) error {
	var missing []string
	for _, name := range c.Required {
		if fl := fs.Lookup(name); fl != nil && fl.Value.String() == "" {
			missing = append(missing, "--"+name)
		}
	}
	switch {
	case len(missing) == 0:
		return nil
	case len(c.Required) == 1:
		return usagef("%s: %s is required (%s)", path, missing[0], fs.Lookup(c.Required[0]).Usage)
	}
	all := make([]string, len(c.Required))
	for i, n := range c.Required {
		all[i] = "--" + n
	}
	return usagef("%s: %s are required; missing: %s", path, joinAnd(all), strings.Join(missing, ", "))
}

// parseInterleaved parses args into fs, flags and positional arguments in
// any order (atrium items get posts 42 -o json), and returns the
// positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, cli.ErrDone
			}
			return nil, errFlagParse
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...) // everything after -- is positional
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

// printUsage prints atrium's usage: the server commands, then the client
// commands, from the table.
func (c *Command) printUsage(w io.Writer) {
	var server, client strings.Builder
	for _, s := range c.Subs {
		b := &client
		if s.Server {
			b = &server
		}
		fmt.Fprintf(b, "  %-14s %s\n", s.Name, s.Summary)
	}
	fmt.Fprintf(w, `Usage: atrium [global flags] <command> [flags]

Commands:
%s
Client commands (a running Atrium's API; docs/cli.md):
%s
Global flags, before the command or among its flags:
  --url, --api-key, -o/--output, --admin-url, --admin-token; --version

Run "atrium <command> -h" for the flags of a command. Every flag of the
server commands can also be set with an ATRIUM_* environment variable
(--http-addr: ATRIUM_HTTP_ADDR).
`, server.String(), client.String())
}

// exactArgs is an Args check for verbs that take n positional arguments.
func (f *Factory) exactArgs(usage string, n int) func([]string) error {
	return func(pos []string) error {
		if len(pos) != n {
			return usagef("usage: %s %s", f.command, usage)
		}
		return nil
	}
}

func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
