package cli

// What the client commands share: the environment they run in, the global
// flags, and the configuration they resolve (flags, then ATRIUM_*
// variables, then the file `atrium login` writes) into the SDK's clients.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// Env is what a command runs in: the process's in main, buffers and a
// made-up environment in the tests.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Lookup         func(string) (string, bool)
	// ConfigDir is where atrium/config.json lives (os.UserConfigDir).
	ConfigDir func() (string, error)
	// Terminal: stdout is a terminal, so lists print as tables.
	Terminal bool
	// HTTPClient, when set, sends the SDK's requests (the tests' checked
	// transport); nil is the SDK's own client.
	HTTPClient *http.Client
}

// OSEnv is the process's environment, with stdout and stderr as given.
func OSEnv(stdout, stderr io.Writer) Env {
	return Env{Stdout: stdout, Stderr: stderr, Stdin: os.Stdin, Lookup: os.LookupEnv,
		ConfigDir: os.UserConfigDir, Terminal: isTerminal(stdout)}
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

// Factory is one run of the command line: its environment, the global
// flags once parsed, and the clients they configure. Every verb's options
// embed it.
type Factory struct {
	env     Env
	version string
	root    *Command
	// command is the path of the command being run (atrium data read),
	// for messages.
	command string
	// The global flags.
	url, apiKey, output  string
	adminURL, adminToken string
}

func newFactory(env Env, version string) *Factory {
	return &Factory{env: env, version: version}
}

// bindGlobal defines the global flags on fs: before the command, and
// among any verb's flags (the admin API's on the admin verbs and login).
func (f *Factory) bindGlobal(fs *flag.FlagSet, admin bool) {
	fs.StringVar(&f.url, "url", f.url, "the API's base URL (default: ATRIUM_URL, then the configuration file)")
	fs.StringVar(&f.apiKey, "api-key", f.apiKey, "the API key (default: ATRIUM_API_KEY, then the configuration file)")
	fs.StringVar(&f.output, "o", f.output, "output: table, json or csv (default: table on a terminal, json otherwise)")
	fs.StringVar(&f.output, "output", f.output, "same as -o")
	if admin {
		fs.StringVar(&f.adminURL, "admin-url", f.adminURL, "the admin API's base URL (default: ATRIUM_ADMIN_URL, then the configuration file)")
		fs.StringVar(&f.adminToken, "admin-token", f.adminToken, "the admin token (default: ATRIUM_ADMIN_TOKEN, then the configuration file)")
	}
}

func (f *Factory) checkOutput() error {
	switch f.output {
	case "", "table", "json", "csv":
		return nil
	}
	return usagef("-o %s: the output is one of table, json or csv", f.output)
}

// format is the output format: -o, else a table on a terminal and JSON
// when piped.
func (f *Factory) format() string {
	if f.output != "" {
		return f.output
	}
	if f.env.Terminal {
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

func (f *Factory) configPath() (string, error) {
	dir, err := f.env.ConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the configuration directory: %w", err)
	}
	return filepath.Join(dir, "atrium", "config.json"), nil
}

// readConfig reads the configuration file; a missing file is an empty
// configuration.
func (f *Factory) readConfig() (cliConfig, error) {
	var c cliConfig
	p, err := f.configPath()
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
func (f *Factory) resolve(flagValue, env, fromFile string) string {
	if flagValue != "" {
		return flagValue
	}
	if v, ok := f.env.Lookup(env); ok && v != "" {
		return v
	}
	return fromFile
}

func (f *Factory) sdkOptions() []atrium.Option {
	opts := []atrium.Option{atrium.WithUserAgent("atrium-cli/" + f.version)}
	if f.env.HTTPClient != nil {
		opts = append(opts, atrium.WithHTTPClient(f.env.HTTPClient))
	}
	return opts
}

// Client is the public API's client, configured by flags, environment
// and configuration file in that order.
func (f *Factory) Client() (*atrium.Client, error) {
	cfg, err := f.readConfig()
	if err != nil {
		return nil, err
	}
	url := f.resolve(f.url, "ATRIUM_URL", cfg.URL)
	key := f.resolve(f.apiKey, "ATRIUM_API_KEY", cfg.APIKey)
	if url == "" {
		return nil, usagef("no API URL: pass --url, set ATRIUM_URL, or run atrium login")
	}
	if key == "" {
		return nil, usagef("no API key: pass --api-key, set ATRIUM_API_KEY, or run atrium login")
	}
	return atrium.New(url, key, f.sdkOptions()...), nil
}

// AdminClient is the admin API's client (ATRIUM_ADMIN_URL,
// ATRIUM_ADMIN_TOKEN).
func (f *Factory) AdminClient() (*atrium.Admin, error) {
	cfg, err := f.readConfig()
	if err != nil {
		return nil, err
	}
	url := f.resolve(f.adminURL, "ATRIUM_ADMIN_URL", cfg.AdminURL)
	token := f.resolve(f.adminToken, "ATRIUM_ADMIN_TOKEN", cfg.AdminToken)
	if url == "" {
		return nil, usagef("no admin API URL: pass --admin-url or set ATRIUM_ADMIN_URL")
	}
	if token == "" {
		return nil, usagef("no admin token: pass --admin-token or set ATRIUM_ADMIN_TOKEN")
	}
	return atrium.NewAdmin(url, token, f.sdkOptions()...), nil
}
