package envflag

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParsePrecedence(t *testing.T) {
	env := map[string]string{
		"ATRIUM_HTTP_ADDR":  "0.0.0.0:9000",
		"ATRIUM_ADMIN_ADDR": "127.0.0.1:9001",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	httpAddr := fs.String("http-addr", "127.0.0.1:8080", "")
	adminAddr := fs.String("admin-addr", "127.0.0.1:8081", "")
	db := fs.String("database-url", "", "")
	if err := Parse(fs, []string{"--admin-addr", "127.0.0.1:7000"}, "ATRIUM_", lookup); err != nil {
		t.Fatal(err)
	}
	if *httpAddr != "0.0.0.0:9000" {
		t.Errorf("http-addr = %q, want the environment's value", *httpAddr)
	}
	if *adminAddr != "127.0.0.1:7000" {
		t.Errorf("admin-addr = %q, want the flag's value over the environment's", *adminAddr)
	}
	if *db != "" {
		t.Errorf("database-url = %q, want the default", *db)
	}
}

func TestParseRejectsBadEnvironmentValue(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Duration("key-cache-ttl", 0, "")
	lookup := func(k string) (string, bool) { return "soon", k == "ATRIUM_KEY_CACHE_TTL" }
	err := Parse(fs, nil, "ATRIUM_", lookup)
	if err == nil || !strings.Contains(err.Error(), "ATRIUM_KEY_CACHE_TTL") {
		t.Fatalf("Parse() error = %v, want one naming ATRIUM_KEY_CACHE_TTL", err)
	}
}

func TestCommandLineOnlyFlags(t *testing.T) {
	lookup := func(k string) (string, bool) { return "true", k == "ATRIUM_VERSION" || k == "ATRIUM_VERBOSE" }
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var help strings.Builder
	fs.SetOutput(&help)
	version := fs.Bool("version", false, "print the version and exit")
	verbose := fs.Bool("verbose", false, "say more")
	CommandLineOnly(fs, "version")
	if err := Parse(fs, nil, "ATRIUM_", lookup); err != nil {
		t.Fatal(err)
	}
	if *version || !*verbose {
		t.Fatalf("version = %v (want false: ATRIUM_VERSION is not read), verbose = %v (want true)", *version, *verbose)
	}
	// Still a boolean flag on the command line.
	if err := Parse(fs, []string{"--version"}, "ATRIUM_", lookup); err != nil || !*version {
		t.Fatalf("--version: %v, set %v", err, *version)
	}
	if err := Parse(fs, []string{"-h"}, "ATRIUM_", lookup); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if h := help.String(); strings.Contains(h, "ATRIUM_VERSION") || !strings.Contains(h, "--version  (command line only)") ||
		!strings.Contains(h, "--verbose  (ATRIUM_VERBOSE)") {
		t.Fatalf("usage names a variable for --version, or none for --verbose:\n%s", h)
	}
}
