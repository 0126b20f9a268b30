package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/natstest"
)

// What `atrium serve --demo` prints is what a new user works from: the
// banner comes last, after the seeding's access log lines, and everything
// it prints works as printed.

var (
	bannerSecret = regexp.MustCompile(`(?m)^  internal secret: ([0-9a-f]{64})   \(generated for this run`)
	bannerAgency = regexp.MustCompile(`(?m)^Demo data (seeded|found, seeded at an earlier start \(not seeded again\)): agency ([0-9a-f-]{36}) \(Northwind Digital\)`)
	bannerBakery = regexp.MustCompile(`Sunrise Bakery: ([0-9a-f-]{36})|client ([0-9a-f-]{36}) \(Sunrise Bakery\)`)
	bannerRead   = regexp.MustCompile(`(?m)^  read key:    (atr_\S{43})   \(scopes: read\)$`)
	bannerWrite  = regexp.MustCompile(`(?m)^  write key:   (atr_\S{43})   \(scopes: read, write\)$`)
)

// banner is what the last "Atrium is running." block of out says.
type banner struct {
	text                                string
	seeded                              bool // false: found from an earlier start
	secret, agency, bakery, read, write string
	// accessLogLinesBefore counts the access log lines printed before it.
	accessLogLinesBefore int
}

func readBanner(t *testing.T, out string) banner {
	t.Helper()
	i := strings.LastIndex(out, "\nAtrium is running.\n")
	if i < 0 {
		t.Fatalf("no banner in the output:\n%s", out)
	}
	// The test harness's own requests for /openapi.json (checkContract,
	// once the stack is up) are no part of what a user sees at start.
	var kept []string
	for line := range strings.SplitAfterSeq(out[i:], "\n") {
		if !strings.Contains(line, `route="GET /openapi.json"`) {
			kept = append(kept, line)
		}
	}
	b := banner{text: strings.Join(kept, ""), accessLogLinesBefore: strings.Count(out[:i], "msg=request")}
	m := bannerAgency.FindStringSubmatch(b.text)
	if m == nil {
		t.Fatalf("the banner does not name the demo agency:\n%s", b.text)
	}
	b.seeded, b.agency = m[1] == "seeded", m[2]
	if m := bannerBakery.FindStringSubmatch(b.text); m != nil {
		b.bakery = m[1] + m[2]
	}
	for _, f := range []struct {
		re  *regexp.Regexp
		dst *string
	}{{bannerRead, &b.read}, {bannerWrite, &b.write}, {bannerSecret, &b.secret}} {
		if m := f.re.FindStringSubmatch(b.text); m != nil {
			*f.dst = m[1]
		}
	}
	if b.bakery == "" || b.read == "" || b.write == "" {
		t.Fatalf("the banner lacks the client, the read key or the write key:\n%s", b.text)
	}
	return b
}

func TestDemoBannerComesLastAndWorksAsPrinted(t *testing.T) {
	// No --internal-secret: one is generated, and must be shown.
	s := startStack(t, "--demo", "--log-level=info", "--internal-secret=")
	b := readBanner(t, s.logs.String())
	if b.accessLogLinesBefore < 20 {
		t.Fatalf("%d access log lines before the banner, want the demo's seeding (about 22) above it:\n%s", b.accessLogLinesBefore, s.logs)
	}
	if strings.Contains(b.text, "msg=") {
		t.Fatalf("a log line is inside or after the banner:\n%s", b.text)
	}
	if !b.seeded {
		t.Fatalf("a first start on memory says the demo was found:\n%s", b.text)
	}
	for _, want := range []string{
		"public API:  " + s.api, "admin API:   " + s.admin,
		"Try:\n", "/api/v1/prospects", "/admin/v1/agencies",
		"export ATRIUM_INTERNAL_SECRET=" + b.secret,
		"go run ./cmd/atrium principal --agency " + b.agency + " --scopes read",
		"load-rows --data-addr " + s.dataAddr + " --client " + b.bakery + " --resource keywords -",
		"ATRIUM_URL=" + s.api + " ATRIUM_API_KEY=" + b.read + " go run ./cmd/atrium mcp",
	} {
		if !strings.Contains(b.text, want) {
			t.Errorf("the banner does not say %q:\n%s", want, b.text)
		}
	}
	if b.secret == "" {
		t.Fatalf("the generated internal secret is not shown:\n%s", b.text)
	}

	// The keys read the demo's data.
	if rows := s.list(t, "/api/v1/prospects", b.read); len(rows) != 3 {
		t.Fatalf("the demo read key lists %d prospects, want 3", len(rows))
	}
	// A first page on a local development server can call the API with
	// the demo's keys, as the banner says; another origin cannot.
	if !strings.Contains(b.text, "http://localhost:3000") {
		t.Errorf("the banner does not name the origins the demo site admits:\n%s", b.text)
	}
	for origin, want := range map[string]int{"http://localhost:3000": http.StatusOK, "http://localhost:5173": http.StatusOK, "https://elsewhere.example": http.StatusForbidden} {
		req, err := http.NewRequestWithContext(t.Context(), "GET", s.api+"/api/public/v1/collections/posts", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+b.read)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want || (want == http.StatusOK && resp.Header.Get("Access-Control-Allow-Origin") != origin) {
			t.Errorf("the demo read key from a page on %s: %d, Access-Control-Allow-Origin %q; want %d", origin, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), want)
		}
	}
	// The printed secret is the deployment's: the bulk loader, which signs
	// its own principal with it, loads a row as the banner's line does.
	file := filepath.Join(t.TempDir(), "rows.ndjson")
	if err := os.WriteFile(file, []byte(`{"keyword":"rye bread","position":12,"status":"active"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) { return b.secret, k == "ATRIUM_INTERNAL_SECRET" }
	var out strings.Builder
	if err := loadRows(t.Context(), []string{"--data-addr", s.dataAddr, "--client", b.bakery, "--resource", "keywords", file}, env, &out, io.Discard); err != nil {
		t.Fatalf("load-rows with the printed secret: %v", err)
	}
	r := call(t, "GET", s.api+"/api/v1/data?resource=keywords&client_id="+b.bakery, b.read, nil)
	wantStatus(t, r, http.StatusOK)
	if total := r.json["pagination"].(map[string]any)["total"]; total != float64(4) {
		t.Fatalf("keyword rows after loading one = %v, want 4", total)
	}
}

func TestDemoOnPostgresIsSeededOnce(t *testing.T) {
	db, natsURL := migratedDatabase(t), natstest.URL(t)
	flags := []string{"--demo", "--database-url=" + db, "--nats-url=" + natsURL}
	first := startStack(t, flags...)
	seeded := readBanner(t, first.logs.String())
	if !seeded.seeded {
		t.Fatalf("the first start on an empty database did not seed:\n%s", seeded.text)
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	again := startStack(t, flags...)
	found := readBanner(t, again.logs.String())
	if found.seeded || found.agency != seeded.agency || found.bakery != seeded.bakery {
		t.Fatalf("the second start did not find the first one's demo (agency %s, client %s):\n%s", seeded.agency, seeded.bakery, found.text)
	}
	if !strings.Contains(found.text, "new keys for this run") || found.read == seeded.read {
		t.Fatalf("the second start does not say its keys are new ones:\n%s", found.text)
	}
	r := again.adminCall(t, "GET", "/admin/v1/agencies", nil)
	wantStatus(t, r, http.StatusOK)
	if n := len(r.json["agencies"].([]any)); n != 1 {
		t.Fatalf("%d agencies after two demo starts, want 1: %s", n, r.body)
	}
	for _, key := range []string{found.read, seeded.read} {
		if rows := again.list(t, "/api/v1/prospects", key); len(rows) != 3 {
			t.Fatalf("key %s lists %d prospects, want the demo's 3", key[:12], len(rows))
		}
	}
}
