package main

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/cli"
)

// TestServeStopsInReverseOrderOfStart stops a stack as SIGTERM does and
// reads the order in which its parts said they stopped: the gateway first,
// then each service after the ones that call it, then the embedded NATS.
func TestServeStopsInReverseOrderOfStart(t *testing.T) {
	s := startStack(t, "--log-level=info", "--log-format=json")
	if err := s.stop(); err != nil {
		t.Fatalf("atrium serve returned %v", err)
	}
	var order []string
	sc := bufio.NewScanner(strings.NewReader(s.logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg     string `json:"msg"`
			Service string `json:"service"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue // the banner
		}
		switch {
		case line.Msg == "gateway stopped":
			order = append(order, "gateway")
		case line.Msg == "stopped" && line.Service != "":
			order = append(order, line.Service)
		case line.Msg == "embedded NATS stopped":
			order = append(order, "nats")
		}
	}
	if want := []string{"gateway", "audit", "webhooks", "actions", "data", "crm", "collections", "nats"}; !slices.Equal(order, want) {
		t.Fatalf("stop order = %v, want %v (the reverse of start)", order, want)
	}
}

// TestServeDrainsLikeTheClusterBinaries: with no setting, `atrium serve`
// drains for as long as the per-component binaries do (sigterm_test.go
// shows what that drain does for clients).
func TestServeDrainsLikeTheClusterBinaries(t *testing.T) {
	cfg, err := parseServe(nil, func(string) (string, bool) { return "", false }, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.common.DrainDelay != cli.DefaultDrainDelay {
		t.Fatalf("atrium serve's default drain delay = %s, want the cluster binaries' %s", cfg.common.DrainDelay, cli.DefaultDrainDelay)
	}
}

// A deployment with a database keeps its files: atrium serve refuses to
// start with --database-url and nowhere lasting for them, and says what
// to set.
func TestServeWithADatabaseNeedsAPlaceForFiles(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	_, err := parseServe([]string{"--database-url=postgres://127.0.0.1/atrium"}, none, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--data-dir") || !strings.Contains(err.Error(), "--s3-bucket") {
		t.Fatalf("--database-url without --data-dir: %v; want a refusal naming --data-dir and --s3-bucket", err)
	}
	if _, err := parseServe([]string{"--database-url=postgres://127.0.0.1/atrium", "--data-dir=" + t.TempDir()}, none, io.Discard, io.Discard); err != nil {
		t.Fatalf("--database-url with --data-dir: %v", err)
	}
}

// TestServeSingleSignOnCallbackFromPublicURL: `atrium serve` with
// --oidc-issuer and --public-url needs no --oidc-redirect-url: the
// callback is at the public URL.
func TestServeSingleSignOnCallbackFromPublicURL(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	cfg, err := parseServe([]string{"--oidc-issuer=https://id.example.com/", "--oidc-client-id=atrium", "--public-url=https://atrium.example.com/"}, none, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://atrium.example.com/api/v1/sessions/oidc/callback"; cfg.gateway.OIDCRedirectURL != want {
		t.Fatalf("--oidc-redirect-url = %q, want %q", cfg.gateway.OIDCRedirectURL, want)
	}
}
