package main

// The client commands of the atrium binary (docs/cli.md): atrium data,
// actions, collections, items, prospects, deals, webhooks, admin, login and
// completion call a running Atrium through the Go SDK. This file holds
// what they share: the environment they run in, their flags and the
// configuration they resolve (flags, then ATRIUM_* variables, then the file
// `atrium login` writes), and the exit codes scripts test.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/atrium-hq/atrium/platform/cli"
	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// Exit codes of the client commands: scripts tell a refused request from
// a mistyped command line.
const (
	exitOK    = 0
	exitAPI   = 1 // the API (or the network) failed the request
	exitUsage = 2 // the command line is wrong; nothing was sent
)

// cliEnv is what a client command runs in: the process's in main, buffers
// and a made-up environment in the tests.
type cliEnv struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	lookup         func(string) (string, bool)
	// configDir is where atrium/config.json lives (os.UserConfigDir).
	configDir func() (string, error)
	// terminal: stdout is a terminal, so lists print as tables.
	terminal bool
	// httpClient, when set, sends the SDK's requests (the tests' checked
	// transport); nil is the SDK's own client.
	httpClient *http.Client
}

func osCLIEnv(stdout, stderr io.Writer) cliEnv {
	return cliEnv{stdout: stdout, stderr: stderr, stdin: os.Stdin, lookup: os.LookupEnv,
		configDir: os.UserConfigDir, terminal: isTerminal(stdout)}
}

// isTerminal reports whether w is a character device (a terminal) rather
// than a pipe or a file.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// usageError is a wrong command line: exit 2. Its message says what was
// wrong and what is allowed.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// clientCommand is a client command: what atrium's usage says of it, its
// subcommands (which the completions offer) and what runs it.
type clientCommand struct {
	summary string
	subs    []string
	run     func(ctx context.Context, in *invocation, args []string) error
}

// clientCommands are the commands this file's machinery runs. They are
// set in init because completion prints the table it is in.
var clientCommands map[string]clientCommand

func init() {
	clientCommands = map[string]clientCommand{
		"data":        {"read a dataset of a client", []string{"read"}, runData},
		"actions":     {"list the actions and run one (at once, or queued with --async or --wait)", []string{"list", "run"}, runActions},
		"runs":        {"follow, list and cancel queued action runs", []string{"get", "list", "cancel"}, runRuns},
		"collections": {"list the collections of the key's site", []string{"list"}, runCollections},
		"items":       {"list, read, create, update and delete the items of a collection", []string{"list", "get", "create", "update", "delete"}, runItems},
		"prospects":   {"list the agency's prospects", []string{"list"}, runProspects},
		"deals":       {"list the agency's deals", []string{"list"}, runDeals},
		"webhooks":    {"create and list webhook endpoints, list their deliveries, forward live events to a local URL", []string{"create", "list", "deliveries", "listen"}, runWebhooks},
		"admin":       {"provision agencies, sites, clients and keys (admin API)", []string{"agencies", "sites", "clients", "keys", "credits"}, runAdmin},
		"login":       {"save the API's URL and key in the configuration file", nil, runLogin},
		"completion":  {"print a shell completion script (bash, zsh or fish)", []string{"bash", "zsh", "fish"}, runCompletion},
	}
}

// runClientCommand runs a client command; exitCode turns what it
// returned into the process's exit code.
func runClientCommand(ctx context.Context, args []string, env cliEnv) error {
	c, ok := clientCommands[args[0]]
	if !ok {
		return usagef("unknown command %q", args[0])
	}
	in := &invocation{env: env, command: "atrium " + args[0]}
	return c.run(ctx, in, args[1:])
}

// exitCode prints err as a user should read it and returns the exit code:
// an API error as the API's message with its status and trace id.
func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	var ae *atrium.Error
	switch {
	case err == nil, errors.Is(err, cli.ErrDone):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, prefixed(ue.msg))
		return exitUsage
	case errors.Is(err, errFlagParse):
		return exitUsage // the flag package printed the error and the usage
	case errors.As(err, &ae):
		msg := fmt.Sprintf("atrium: %s (HTTP %d", ae.Message, ae.StatusCode)
		if ae.TraceID != "" {
			msg += ", trace id " + ae.TraceID
		}
		fmt.Fprintln(stderr, msg+")")
		return exitAPI
	default:
		fmt.Fprintln(stderr, prefixed(err.Error()))
		return exitAPI
	}
}

// prefixed starts a message with atrium's name, once.
func prefixed(msg string) string {
	if strings.HasPrefix(msg, "atrium") {
		return msg
	}
	return "atrium: " + msg
}

// errFlagParse is a flag the flag package refused (and explained).
var errFlagParse = errors.New("invalid flags")

// invocation is one client command being run: its flags, once parsed.
type invocation struct {
	env     cliEnv
	command string
	url     string
	apiKey  string
	output  string
	// The admin API's, for atrium admin.
	adminURL, adminToken string
}

// flags is a new flag set for a (sub)command with the flags every client
// command takes.
func (in *invocation) flags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(in.env.stderr)
	fs.StringVar(&in.url, "url", "", "the API's base URL (default: ATRIUM_URL, then the configuration file)")
	fs.StringVar(&in.apiKey, "api-key", "", "the API key (default: ATRIUM_API_KEY, then the configuration file)")
	fs.StringVar(&in.output, "o", "", "output: table, json or csv (default: table on a terminal, json otherwise)")
	fs.StringVar(&in.output, "output", "", "same as -o")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s %s\n\nFlags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args into fs, flags and positional arguments in any order
// (atrium items get posts 42 -o json), and returns the positional ones.
func (in *invocation) parse(fs *flag.FlagSet, args []string) ([]string, error) {
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
	switch in.output {
	case "", "table", "json", "csv":
	default:
		return nil, usagef("-o %s: the output is one of table, json or csv", in.output)
	}
	return pos, nil
}

// format is the output format: -o, else a table on a terminal and JSON
// when piped.
func (in *invocation) format() string {
	if in.output != "" {
		return in.output
	}
	if in.env.terminal {
		return "table"
	}
	return "json"
}

// cliConfig is the configuration file `atrium login` writes.
type cliConfig struct {
	URL        string `json:"url,omitempty"`
	APIKey     string `json:"api_key,omitempty"`
	AdminURL   string `json:"admin_url,omitempty"`
	AdminToken string `json:"admin_token,omitempty"`
}

func (in *invocation) configPath() (string, error) {
	dir, err := in.env.configDir()
	if err != nil {
		return "", fmt.Errorf("find the configuration directory: %w", err)
	}
	return filepath.Join(dir, "atrium", "config.json"), nil
}

// readConfig reads the configuration file; a missing file is an empty
// configuration.
func (in *invocation) readConfig() (cliConfig, error) {
	var c cliConfig
	p, err := in.configPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(p) //nolint:gosec // the user's own configuration file
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read the configuration file: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("the configuration file %s is not valid JSON (run atrium login again): %w", p, err)
	}
	return c, nil
}

// resolve returns the first of the flag's value, the environment
// variable's and the configuration file's that is set.
func (in *invocation) resolve(flagValue, env, fromFile string) string {
	if flagValue != "" {
		return flagValue
	}
	if v, ok := in.env.lookup(env); ok && v != "" {
		return v
	}
	return fromFile
}

func (in *invocation) sdkOptions() []atrium.Option {
	opts := []atrium.Option{atrium.WithUserAgent("atrium-cli/" + version)}
	if in.env.httpClient != nil {
		opts = append(opts, atrium.WithHTTPClient(in.env.httpClient))
	}
	return opts
}

// client is the public API's client, configured by flags, environment
// and configuration file in that order.
func (in *invocation) client() (*atrium.Client, error) {
	cfg, err := in.readConfig()
	if err != nil {
		return nil, err
	}
	url := in.resolve(in.url, "ATRIUM_URL", cfg.URL)
	key := in.resolve(in.apiKey, "ATRIUM_API_KEY", cfg.APIKey)
	if url == "" {
		return nil, usagef("no API URL: pass --url, set ATRIUM_URL, or run atrium login")
	}
	if key == "" {
		return nil, usagef("no API key: pass --api-key, set ATRIUM_API_KEY, or run atrium login")
	}
	return atrium.New(url, key, in.sdkOptions()...), nil
}

// adminClient is the admin API's client (ATRIUM_ADMIN_URL,
// ATRIUM_ADMIN_TOKEN).
func (in *invocation) adminClient() (*atrium.Admin, error) {
	cfg, err := in.readConfig()
	if err != nil {
		return nil, err
	}
	url := in.resolve(in.adminURL, "ATRIUM_ADMIN_URL", cfg.AdminURL)
	token := in.resolve(in.adminToken, "ATRIUM_ADMIN_TOKEN", cfg.AdminToken)
	if url == "" {
		return nil, usagef("no admin API URL: pass --admin-url or set ATRIUM_ADMIN_URL")
	}
	if token == "" {
		return nil, usagef("no admin token: pass --admin-token or set ATRIUM_ADMIN_TOKEN")
	}
	return atrium.NewAdmin(url, token, in.sdkOptions()...), nil
}

// subcommand splits args into a subcommand, one of subs, and the rest;
// -h lists the subcommands.
func (in *invocation) subcommand(args []string, subs ...string) (string, []string, error) {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintf(in.env.stdout, "Usage: %s <%s> [flags]\n\nRun \"%s <subcommand> -h\" for its flags.\n", in.command, strings.Join(subs, "|"), in.command)
		return "", nil, cli.ErrDone
	}
	if len(args) == 0 {
		return "", nil, usagef("%s needs a subcommand, one of: %s", in.command, strings.Join(subs, ", "))
	}
	for _, s := range subs {
		if args[0] == s {
			in.command += " " + s
			return s, args[1:], nil
		}
	}
	return "", nil, usagef("%s %s: unknown subcommand; one of: %s", in.command, args[0], strings.Join(subs, ", "))
}

// clientUsage is the client commands' part of atrium's usage.
func clientUsage() string {
	names := make([]string, 0, len(clientCommands))
	for n := range clientCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %-12s %s\n", n, clientCommands[n].summary)
	}
	return b.String()
}
