package main

// The client commands against a running Atrium, run in-process as a user
// runs them: their tables, JSON and CSV, their exit codes, --all paging,
// the items round trip, admin provisioning and login. Their SDK client is
// http.DefaultClient, whose transport checks every answer against the
// OpenAPI documents.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	atriumcli "github.com/atrium-hq/atrium/cmd/atrium/internal/cli"
)

// cliRun is a place to run client commands from: an environment and a
// configuration directory of its own.
type cliRun struct {
	env      map[string]string
	dir      string
	terminal bool
	stdin    string
}

// The exit codes, as the tests name them.
const (
	exitAPI   = atriumcli.ExitAPI
	exitUsage = atriumcli.ExitUsage
)

// cliEnv is the environment the commands run in from c.
func (c cliRun) cliEnv(stdout, stderr io.Writer) atriumcli.Env {
	return atriumcli.Env{Stdout: stdout, Stderr: stderr, Stdin: strings.NewReader(c.stdin),
		Lookup:     func(k string) (string, bool) { v, ok := c.env[k]; return v, ok },
		ConfigDir:  func() (string, error) { return c.dir, nil },
		Terminal:   c.terminal,
		HTTPClient: http.DefaultClient}
}

type cliResult struct {
	stdout, stderr string
	code           int
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func (c cliRun) run(t *testing.T, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), args, c.cliEnv(&stdout, &stderr))
	code := atriumcli.ExitCode(err, &stderr)
	return cliResult{stdout.String(), stderr.String(), code}
}

// ok runs a command that must succeed and returns its standard output.
func (c cliRun) ok(t *testing.T, args ...string) string {
	t.Helper()
	r := c.run(t, args...)
	if r.code != 0 {
		t.Fatalf("atrium %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// fails runs a command that must exit with code, its standard error
// saying each of words.
func (c cliRun) fails(t *testing.T, code int, words []string, args ...string) {
	t.Helper()
	r := c.run(t, args...)
	if r.code != code {
		t.Fatalf("atrium %s exited %d, want %d: %s", strings.Join(args, " "), r.code, code, r)
	}
	for _, w := range words {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("atrium %s: stderr %q does not say %q", strings.Join(args, " "), r.stderr, w)
		}
	}
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not the JSON expected: %v\n%s", err, s)
	}
	return v
}

func TestCLI(t *testing.T) {
	s := startStack(t)
	c := s.newCMS(t)
	client := s.newClient(t, c.tenant, true)
	other := s.newClient(t, c.tenant, false)
	s.grant(t, c.agency, 10, 10)
	s.loadRows(t, client, "keywords",
		map[string]any{"keyword": "baguette", "position": 9, "status": "paused"},
		map[string]any{"keyword": "croissant", "position": 3, "status": "active"},
		map[string]any{"keyword": "rye bread", "position": 4, "status": "active"},
		map[string]any{"keyword": "sourdough", "position": 1, "status": "active"},
		map[string]any{"keyword": "spelt", "position": 7, "status": "active"})
	s.newProspect(t, c.tenant, "Corner Bakery")
	cl := cliRun{env: map[string]string{"ATRIUM_URL": s.api, "ATRIUM_API_KEY": c.write}, dir: t.TempDir()}
	term := cl
	term.terminal = true

	t.Run("data read", func(t *testing.T) {
		// Piped: JSON; one page, and a note on stderr that there is more.
		r := cl.run(t, "data", "read", "--resource", "keywords", "--client", client, "--order", "created_at", "--direction", "asc", "--limit", "2")
		if r.code != 0 {
			t.Fatalf("one page: %s", r)
		}
		rows := decodeJSON[[]map[string]any](t, r.stdout)
		if r.code != 0 || len(rows) != 2 || rows[0]["keyword"] != "baguette" || !strings.Contains(r.stderr, "--all") {
			t.Fatalf("one page: %s", r)
		}
		// --all pages by cursor, two rows a page, to the last row.
		rows = decodeJSON[[]map[string]any](t, cl.ok(t, "data", "read", "--resource", "keywords", "--client", client,
			"--order", "created_at", "--direction", "asc", "--limit", "2", "--all"))
		var got []any
		for _, row := range rows {
			got = append(got, row["keyword"])
		}
		if !slices.Equal(got, []any{"baguette", "croissant", "rye bread", "sourdough", "spelt"}) {
			t.Fatalf("--all read %v", got)
		}
		// A filter; a terminal gets a table with a header.
		out := term.ok(t, "data", "read", "--resource", "keywords", "--client", client, "--filter", "status=paused")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], "KEYWORD") || !strings.Contains(lines[0], "POSITION") || !strings.Contains(lines[1], "baguette") {
			t.Fatalf("table:\n%s", out)
		}
		// CSV: a header and a record per row.
		recs, err := csv.NewReader(strings.NewReader(cl.ok(t, "data", "read", "--resource", "keywords", "--client", client,
			"--order", "created_at", "--direction", "asc", "-o", "csv"))).ReadAll()
		if err != nil || len(recs) != 6 {
			t.Fatalf("csv: %v %v", recs, err)
		}
		col := slices.Index(recs[0], "keyword")
		if col < 0 || recs[1][col] != "baguette" || recs[5][col] != "spelt" {
			t.Fatalf("csv: %v", recs)
		}
	})

	t.Run("usage errors exit 2", func(t *testing.T) {
		cl.fails(t, exitUsage, []string{"--resource is required"}, "data", "read", "--client", client)
		cl.fails(t, exitUsage, []string{"table, json or csv"}, "data", "read", "--resource", "keywords", "-o", "xml")
		cl.fails(t, exitUsage, []string{"flag provided but not defined: -bogus"}, "data", "read", "--bogus")
		cl.fails(t, exitUsage, []string{"one of: read"}, "data", "write")
		cl.fails(t, exitUsage, []string{"field=value"}, "data", "read", "--resource", "keywords", "--filter", "status")
		cl.fails(t, exitUsage, []string{"generate_gbp_post has no field \"colour\"", "topic"}, "actions", "run", "generate_gbp_post", "--client", client, "colour=red")
		cl.fails(t, exitUsage, []string{"no action \"bake\"", "generate_gbp_post"}, "actions", "run", "bake", "--client", client)
		cl.fails(t, exitUsage, []string{"posts has no field \"colour\""}, "items", "create", "posts", "colour=red")
		noKey := cliRun{env: map[string]string{"ATRIUM_URL": s.api}, dir: t.TempDir()}
		noKey.fails(t, exitUsage, []string{"ATRIUM_API_KEY", "atrium login"}, "collections", "list")
	})

	t.Run("API errors exit 1 with the message and trace id", func(t *testing.T) {
		cl.fails(t, exitAPI, []string{"is not linked to this key's agency", "HTTP 403", "trace id "}, "data", "read", "--resource", "keywords", "--client", other)
		bad := cliRun{env: map[string]string{"ATRIUM_URL": s.api, "ATRIUM_API_KEY": "atr_not-a-key"}, dir: t.TempDir()}
		bad.fails(t, exitAPI, []string{"HTTP 401"}, "collections", "list")
		// Flags win over the environment.
		bad.ok(t, "collections", "list", "--api-key", c.read)
		cl.fails(t, exitAPI, []string{"HTTP 403"}, "items", "create", "posts", "title=x", "--api-key", c.read)
	})

	t.Run("actions", func(t *testing.T) {
		var names []string
		for _, a := range decodeJSON[[]map[string]any](t, cl.ok(t, "actions", "list")) {
			names = append(names, a["name"].(string))
		}
		if !slices.Contains(names, "generate_gbp_post") {
			t.Fatalf("actions list: %v", names)
		}
		if out := term.ok(t, "actions", "list"); !strings.Contains(out, "NAME") || !strings.Contains(out, "generate_gbp_post") {
			t.Fatalf("actions list table:\n%s", out)
		}
		res := decodeJSON[map[string]any](t, cl.ok(t, "actions", "run", "generate_gbp_post", "--client", client, "topic=Fresh rye"))
		if res["status"] != "success" || res["action"] != "generate_gbp_post" {
			t.Fatalf("actions run: %v", res)
		}
		if ai, _ := s.credits(t, c.agency); ai != 9 {
			t.Fatalf("after one run the agency has %v AI credits, want 9", ai)
		}
	})

	t.Run("queued runs", func(t *testing.T) {
		// --wait queues the run and prints it once finished; a pipe gets
		// no progress line.
		run := decodeJSON[map[string]any](t, cl.ok(t, "actions", "run", "generate_gbp_post", "--client", client, "topic=Rye by the loaf", "--wait"))
		id, _ := run["id"].(string)
		if run["state"] != "success" || id == "" || run["action"] != "generate_gbp_post" {
			t.Fatalf("actions run --wait: %v", run)
		}
		if ai, _ := s.credits(t, c.agency); ai != 8 {
			t.Fatalf("after a waited run the agency has %v AI credits, want 8", ai)
		}
		got := decodeJSON[map[string]any](t, cl.ok(t, "runs", "get", id))
		if got["id"] != id || got["state"] != "success" {
			t.Fatalf("runs get: %v", got)
		}
		// --async answers at once with the run to follow.
		sub := decodeJSON[map[string]any](t, cl.ok(t, "actions", "run", "generate_gbp_post", "--client", client, "topic=Seeded rye", "--async"))
		subID, _ := sub["run_id"].(string)
		if subID == "" || sub["url"] != "/api/v1/runs/"+subID {
			t.Fatalf("actions run --async: %v", sub)
		}
		var listed []string
		for _, r := range decodeJSON[[]map[string]any](t, cl.ok(t, "runs", "list", "--client", client, "--action", "generate_gbp_post")) {
			listed = append(listed, r["id"].(string))
		}
		if !slices.Contains(listed, id) || !slices.Contains(listed, subID) {
			t.Fatalf("runs list %v lacks %s or %s", listed, id, subID)
		}
		if out := term.ok(t, "runs", "list", "--client", client, "--limit", "1"); !strings.Contains(out, "STATE") || strings.Count(out, "generate_gbp_post") != 1 {
			t.Fatalf("runs list --limit 1 table:\n%s", out)
		}
		// A finished run cannot be canceled: the API's 409, exit 1.
		cl.fails(t, exitAPI, []string{"HTTP 409"}, "runs", "cancel", id)
		cl.fails(t, exitUsage, []string{"name one run"}, "runs", "get")
		cl.fails(t, exitAPI, []string{"HTTP 404"}, "runs", "get", "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b")
	})

	t.Run("collections and items", func(t *testing.T) {
		out := term.ok(t, "collections", "list")
		if !strings.Contains(out, "SLUG") || !strings.Contains(out, "posts") || !strings.Contains(out, "title:text") {
			t.Fatalf("collections list:\n%s", out)
		}
		it := decodeJSON[map[string]any](t, cl.ok(t, "items", "create", "posts", "title=From the CLI", "tags=bread,vegan", "--publish"))
		id, _ := it["id"].(string)
		if id == "" || it["title"] != "From the CLI" || it["is_published"] != true || len(it["tags"].([]any)) != 2 {
			t.Fatalf("items create: %v", it)
		}
		got := decodeJSON[map[string]any](t, cl.ok(t, "items", "get", "posts", id))
		if got["title"] != "From the CLI" {
			t.Fatalf("items get: %v", got)
		}
		cl.ok(t, "items", "update", "posts", id, "title=Changed", "--if-match", "1")
		cl.fails(t, exitAPI, []string{"HTTP 412"}, "items", "update", "posts", id, "title=Stale", "--if-match", "1")
		out = term.ok(t, "items", "list", "posts", "--published", "true")
		if !strings.Contains(out, "TITLE") || !strings.Contains(out, "Changed") {
			t.Fatalf("items list:\n%s", out)
		}
		if all := decodeJSON[[]map[string]any](t, cl.ok(t, "items", "list", "posts", "--all")); len(all) != 1 {
			t.Fatalf("items list --all: %v", all)
		}
		cl.ok(t, "items", "delete", "posts", id)
		cl.fails(t, exitAPI, []string{"HTTP 404"}, "items", "get", "posts", id)
	})

	t.Run("prospects and deals", func(t *testing.T) {
		recs, err := csv.NewReader(strings.NewReader(cl.ok(t, "prospects", "list", "-o", "csv"))).ReadAll()
		if err != nil || len(recs) != 2 || recs[0][1] != "business_name" || recs[1][1] != "Corner Bakery" {
			t.Fatalf("prospects csv: %v %v", recs, err)
		}
		if all := decodeJSON[[]map[string]any](t, cl.ok(t, "prospects", "list", "--all")); len(all) != 1 {
			t.Fatalf("prospects --all: %v", all)
		}
		if deals := decodeJSON[[]map[string]any](t, cl.ok(t, "deals", "list")); len(deals) != 0 {
			t.Fatalf("deals: %v", deals)
		}
		// An empty list on a terminal says so, on stderr.
		if r := term.run(t, "deals", "list"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "nothing found") {
			t.Fatalf("an empty table: %s", r)
		}
	})

	t.Run("webhooks", func(t *testing.T) {
		hook := decodeJSON[map[string]any](t, cl.ok(t, "webhooks", "create", "--endpoint", "https://hooks.example.com/cli", "--events", "item.*"))
		id, _ := hook["id"].(string)
		if id == "" || !strings.HasPrefix(hook["secret"].(string), "whsec_") {
			t.Fatalf("webhooks create: %v", hook)
		}
		if out := term.ok(t, "webhooks", "list"); !strings.Contains(out, id) || !strings.Contains(out, "https://hooks.example.com/cli") {
			t.Fatalf("webhooks list:\n%s", out)
		}
		if ds := decodeJSON[[]map[string]any](t, cl.ok(t, "webhooks", "deliveries", id, "--all")); len(ds) != 0 {
			t.Fatalf("deliveries of a new endpoint: %v", ds)
		}
		cl.fails(t, exitUsage, []string{"--endpoint and --events are required"}, "webhooks", "create", "--events", "item.*")
	})

	t.Run("schedules and branding", func(t *testing.T) {
		create := []string{"schedules", "create", "--action", "generate_gbp_post", "--client", client, "--param", "topic=Rye on Mondays",
			"--every", "week", "--weekday", "monday", "--at", "07:00", "--timezone", "Europe/London", "--max-ai", "4", "--description", "Weekly post"}
		preview := decodeJSON[map[string]any](t, cl.ok(t, append(create, "--dry-run")...))
		if preview["id"] != "" || len(preview["next_runs"].([]any)) != 5 {
			t.Fatalf("schedules create --dry-run: %v", preview)
		}
		if got := decodeJSON[[]map[string]any](t, cl.ok(t, "schedules", "list")); len(got) != 0 {
			t.Fatalf("a dry run created %v", got)
		}
		sched := decodeJSON[map[string]any](t, cl.ok(t, create...))
		id, _ := sched["id"].(string)
		if id == "" || sched["params"].(map[string]any)["topic"] != "Rye on Mondays" || sched["state"] != "active" {
			t.Fatalf("schedules create: %v", sched)
		}
		if out := term.ok(t, "schedules", "list", "--client", client); !strings.Contains(out, id) || !strings.Contains(out, "every week monday 07:00") {
			t.Fatalf("schedules list table:\n%s", out)
		}
		if u := decodeJSON[map[string]any](t, cl.ok(t, "schedules", "update", id, "--at", "08:30")); u["at"] != "08:30" || u["description"] != "Weekly post" {
			t.Fatalf("schedules update --at: %v", u)
		}
		if p := decodeJSON[map[string]any](t, cl.ok(t, "schedules", "pause", id)); p["state"] != "paused" {
			t.Fatalf("schedules pause: %v", p)
		}
		run := decodeJSON[map[string]any](t, cl.ok(t, "schedules", "trigger", id, "--wait"))
		if run["state"] != "success" || run["action"] != "generate_gbp_post" {
			t.Fatalf("schedules trigger --wait: %v", run)
		}
		if r := decodeJSON[map[string]any](t, cl.ok(t, "schedules", "resume", id)); r["state"] != "active" {
			t.Fatalf("schedules resume: %v", r)
		}
		cl.fails(t, exitAPI, []string{"HTTP 400", "every week needs weekday"}, "schedules", "update", id, "--weekday", "")
		cl.fails(t, exitAPI, []string{"HTTP 403"}, "schedules", "pause", id, "--api-key", c.read)
		if out := cl.ok(t, "schedules", "delete", id); !strings.Contains(out, "deleted schedule "+id) {
			t.Fatalf("schedules delete: %s", out)
		}
		cl.fails(t, exitAPI, []string{"HTTP 404"}, "schedules", "get", id)

		b := decodeJSON[map[string]any](t, cl.ok(t, "branding", "set", "--name", "Northwind SEO", "--accent", "#aa5500"))
		if got := decodeJSON[map[string]any](t, cl.ok(t, "branding", "get")); got["name"] != "Northwind SEO" || got["colors"].(map[string]any)["accent"] != "#aa5500" {
			t.Fatalf("branding get after set (%v): %v", b, got)
		}
		cl.fails(t, exitAPI, []string{"HTTP 400", "#rrggbb"}, "branding", "set", "--name", "X", "--primary", "blue")
		if got := decodeJSON[[]map[string]any](t, cl.ok(t, "report-shares", "list")); len(got) != 0 {
			t.Fatalf("report-shares list with no report: %v", got)
		}
		cl.fails(t, exitAPI, []string{"HTTP 404"}, "report-shares", "revoke", "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b")
	})

	t.Run("admin provisions a tenant whose key then works", func(t *testing.T) {
		op := cliRun{env: map[string]string{"ATRIUM_ADMIN_URL": s.admin, "ATRIUM_ADMIN_TOKEN": testAdminToken, "ATRIUM_URL": s.api}, dir: t.TempDir()}
		agency := decodeJSON[map[string]any](t, op.ok(t, "admin", "agencies", "create", "--name", "CLI Agency"))["id"].(string)
		created := decodeJSON[map[string]any](t, op.ok(t, "admin", "sites", "create", "--name", "CLI Site", "--agency", agency))
		site, _ := created["id"].(string)
		if created["agency_id"] != agency {
			t.Fatalf("admin sites create --agency: %v", created)
		}
		// A key of the agency reaches only the sites it owns.
		unowned := decodeJSON[map[string]any](t, op.ok(t, "admin", "sites", "create", "--name", "Unowned"))["id"].(string)
		op.fails(t, exitAPI, []string{"HTTP 400", "site_id"}, "admin", "keys", "create", "--name", "x", "--scopes", "read", "--agency", agency, "--site", unowned)
		cid := decodeJSON[map[string]any](t, op.ok(t, "admin", "clients", "create", "--name", "Bakery", "--domain", "bakery.example", "--agency", agency))["id"].(string)
		key := decodeJSON[map[string]any](t, op.ok(t, "admin", "keys", "create", "--name", "cli", "--scopes", "read,write", "--agency", agency, "--site", site))
		secret, _ := key["secret"].(string)
		if secret == "" {
			t.Fatalf("keys create: %v", key)
		}
		if clients := decodeJSON[[]map[string]any](t, op.ok(t, "admin", "clients", "list", "--agency", agency)); len(clients) != 1 || clients[0]["id"] != cid {
			t.Fatalf("admin clients list --agency: %v", clients)
		}
		if out := op.ok(t, "admin", "agencies", "list", "-o", "table"); !strings.Contains(out, "CLI Agency") {
			t.Fatalf("admin agencies list:\n%s", out)
		}
		if bal := decodeJSON[map[string]any](t, op.ok(t, "admin", "credits", "add", "--agency", agency, "--ai", "5")); bal["ai"] != float64(5) {
			t.Fatalf("credits add: %v", bal)
		}
		op.env["ATRIUM_API_KEY"] = secret
		if cols := decodeJSON[[]map[string]any](t, op.ok(t, "collections", "list")); len(cols) != 0 {
			t.Fatalf("the new site's collections: %v", cols)
		}
		op.ok(t, "data", "read", "--resource", "keywords", "--client", cid)
		// Collections and fields without raw JSON: the key's site then has
		// the collection, and an item of it is written by its fields.
		op.ok(t, "admin", "collections", "create", "--site", site, "--slug", "loaves", "--name", "Loaves",
			"--field", "title:text:required", "--field", "kind:select:options=rye|spelt")
		op.ok(t, "admin", "collections", "update", "loaves", "--site", site, "--add-field", "weight:integer")
		if cols := decodeJSON[[]map[string]any](t, op.ok(t, "admin", "collections", "list", "--site", site)); len(cols) != 1 || len(cols[0]["fields"].([]any)) != 3 {
			t.Fatalf("admin collections list: %v", cols)
		}
		if it := decodeJSON[map[string]any](t, op.ok(t, "items", "create", "loaves", "title=Rye", "kind=rye", "weight=800")); it["weight"] != float64(800) {
			t.Fatalf("an item of the CLI's collection: %v", it)
		}
		op.fails(t, exitAPI, []string{"HTTP 400", "kind"}, "items", "create", "loaves", "title=Oat", "kind=oat")
		op.fails(t, exitUsage, []string{"--slug"}, "admin", "collections", "create", "--site", site, "--name", "No slug")
		op.fails(t, exitUsage, []string{"--name is required"}, "admin", "agencies", "create")
		badToken := cliRun{env: map[string]string{"ATRIUM_ADMIN_URL": s.admin, "ATRIUM_ADMIN_TOKEN": "adm_wrong-token-0123456789abcdef"}, dir: t.TempDir()}
		badToken.fails(t, exitAPI, []string{"HTTP 401"}, "admin", "agencies", "list")
	})

	t.Run("login saves a private configuration the other commands read", func(t *testing.T) {
		dir := t.TempDir()
		in := cliRun{env: map[string]string{}, dir: dir, stdin: c.read + "\n"}
		in.fails(t, exitAPI, []string{"HTTP 401"}, "login", "--url", s.api, "--api-key", "atr_not-a-key")
		if _, err := os.Stat(filepath.Join(dir, "atrium", "config.json")); !os.IsNotExist(err) {
			t.Fatalf("a refused key was saved: %v", err)
		}
		in.ok(t, "login", "--url", s.api) // the key from stdin
		st, err := os.Stat(filepath.Join(dir, "atrium", "config.json"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("config.json: %v, %v; want mode 0600", st, err)
		}
		if cols := decodeJSON[[]map[string]any](t, in.ok(t, "collections", "list")); len(cols) != 3 {
			t.Fatalf("collections with the saved key: %v", cols)
		}
		// The environment wins over the file.
		in.env["ATRIUM_API_KEY"] = "atr_not-a-key"
		in.fails(t, exitAPI, []string{"HTTP 401"}, "collections", "list")
	})
}

// TestCLICompletion: each shell's script names the commands; another
// shell is a usage error.
func TestCLICompletion(t *testing.T) {
	cl := cliRun{env: map[string]string{}, dir: t.TempDir()}
	for shell, want := range map[string]string{"bash": "complete -F _atrium atrium", "zsh": "#compdef atrium", "fish": "complete -c atrium"} {
		out := cl.ok(t, "completion", shell)
		for _, w := range []string{want, "webhooks", "agencies", "deliveries"} {
			if !strings.Contains(out, w) {
				t.Fatalf("%s completion lacks %q:\n%s", shell, w, out)
			}
		}
	}
	cl.fails(t, exitUsage, []string{"bash, zsh, fish"}, "completion", "tcsh")
}
