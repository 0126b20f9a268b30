package envflag

import (
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
