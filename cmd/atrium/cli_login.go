package main

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

func runLogin(ctx context.Context, in *invocation, args []string) error {
	in.command = "atrium login"
	fs := in.flags(in.command, "--url <url> --api-key <key> [--admin-url <url> --admin-token <token>]")
	fs.StringVar(&in.adminURL, "admin-url", "", "the admin API's base URL, for atrium admin")
	fs.StringVar(&in.adminToken, "admin-token", "", "the admin token, for atrium admin")
	pos, err := in.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(in, pos); err != nil {
		return err
	}
	cfg, err := in.readConfig()
	if err != nil {
		return err
	}
	cfg.URL = in.resolve(in.url, "ATRIUM_URL", cfg.URL)
	if cfg.URL == "" {
		return usagef("%s: --url is required (the API's base URL, such as https://api.example.com)", in.command)
	}
	key := in.resolve(in.apiKey, "ATRIUM_API_KEY", "")
	if key == "-" || key == "" {
		// Read from stdin, so that the key stays out of the shell's history.
		fmt.Fprint(in.env.stderr, "API key: ")
		line, err := bufio.NewReader(in.env.stdin).ReadString('\n')
		if err != nil && line == "" {
			return usagef("%s: no API key: pass --api-key, or type it (or pipe it) on standard input", in.command)
		}
		key = strings.TrimSpace(line)
	}
	cfg.APIKey = key
	if in.adminURL != "" {
		cfg.AdminURL = in.adminURL
	}
	if in.adminToken != "" {
		cfg.AdminToken = in.adminToken
	}
	// A key the API refuses (401) is not saved; one that may not list
	// the actions (403) is still a key.
	c := atrium.New(cfg.URL, cfg.APIKey, in.sdkOptions()...)
	if _, err := c.Actions.List(ctx); err != nil && atrium.StatusOf(err) != http.StatusForbidden {
		return err
	}
	p, err := in.configPath()
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
	fmt.Fprintf(in.env.stderr, "Logged in to %s; saved in %s\n", cfg.URL, p)
	return nil
}
