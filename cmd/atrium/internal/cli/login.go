package cli

// atrium login: saves the API's URL and key (and, for operators, the
// admin API's URL and token) in os.UserConfigDir()/atrium/config.json,
// readable by the user only, after checking that the key is accepted.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

type loginOptions struct{ *Factory }

func newLoginCmd(f *Factory, runF func(context.Context, *loginOptions) error) *Command {
	o := &loginOptions{Factory: f}
	return &Command{Name: "login", Summary: "save the API's URL and key in the configuration file",
		Usage: "--url <url> [--api-key <key>] [--admin-url <url> --admin-token <token>]", Admin: true,
		Run: func(ctx context.Context, _ []string) error {
			if runF != nil {
				return runF(ctx, o)
			}
			return login(ctx, o)
		}}
}

func login(ctx context.Context, o *loginOptions) error {
	f := o.Factory
	cfg, err := f.readConfig()
	if err != nil {
		return err
	}
	cfg.URL = f.resolve(f.url, "ATRIUM_URL", cfg.URL)
	if cfg.URL == "" {
		return usagef("%s: --url is required (the API's base URL, such as https://api.example.com)", f.command)
	}
	key := f.resolve(f.apiKey, "ATRIUM_API_KEY", "")
	if key == "-" || key == "" {
		// Read from stdin, so that the key stays out of the shell's history.
		fmt.Fprint(f.env.Stderr, "API key: ")
		line, err := bufio.NewReader(f.env.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return usagef("%s: no API key: pass --api-key, or type it (or pipe it) on standard input", f.command)
		}
		key = strings.TrimSpace(line)
	}
	cfg.APIKey = key
	if f.adminURL != "" {
		cfg.AdminURL = f.adminURL
	}
	if f.adminToken != "" {
		cfg.AdminToken = f.adminToken
	}
	// A key the API refuses (401) is not saved; one that may not list
	// the actions (403) is still a key.
	c := atrium.New(cfg.URL, cfg.APIKey, f.sdkOptions()...)
	if _, err := c.Actions.List(ctx); err != nil && atrium.StatusOf(err) != http.StatusForbidden {
		return err
	}
	p, err := f.configPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("create the configuration directory: %w", err)
	}
	b, err := json.MarshalIndent(cfg, "", "  ") //nolint:gosec // G117: saving the key is what login is for
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write the configuration file: %w", err)
	}
	// WriteFile keeps an existing file's mode: make sure it is private.
	if err := os.Chmod(p, 0o600); err != nil {
		return fmt.Errorf("make the configuration file private: %w", err)
	}
	fmt.Fprintf(f.env.Stderr, "Logged in to %s; saved in %s\n", cfg.URL, p)
	return nil
}
