package cli

// The command table's promises, in-process against an HTTP server of the
// test's own (the live stack's tests are cmd/atrium's TestCLI): global
// flags before the command, required flags checked before anything is
// sent, usage and completion made from the table, and the test seam of
// each verb.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// recorder is an API that answers each request with the body given for
// its method ("" for any other) and records what it was asked.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, path, query, auth string
	body                      map[string]any
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

func newRecorder(t *testing.T, bodies map[string]string) (*recorder, string) {
	t.Helper()
	r := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := recorded{method: req.Method, path: req.URL.Path, query: req.URL.RawQuery, auth: req.Header.Get("Authorization")}
		if b, _ := io.ReadAll(req.Body); len(b) > 0 {
			_ = json.Unmarshal(b, &rec.body)
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, rec)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		body, ok := bodies[req.Method]
		if !ok {
			body = bodies[""]
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs a command line with env as the environment and no
// configuration file.
func runCLI(t *testing.T, env map[string]string, server []*Command, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := Env{Stdout: &stdout, Stderr: &stderr, Stdin: strings.NewReader(""),
		Lookup:    func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ConfigDir: func() (string, error) { return t.TempDir(), nil }}
	err := Run(t.Context(), args, e, Options{Version: "test", Server: server})
	code := ExitCode(err, &stderr)
	return result{stdout.String(), stderr.String(), code}
}

// TestGlobalFlagsBeforeTheCommand: --url, --api-key and -o written before
// the command are the command's, as docs/cli.md says; the same flags
// after it still win over the environment.
func TestGlobalFlagsBeforeTheCommand(t *testing.T) {
	rec, url := newRecorder(t, map[string]string{"": `{"resource":"keywords","client_id":"c1","data":[{"id":"r1","keyword":"rye"}],"pagination":{}}`})
	r := runCLI(t, nil, nil, "--url", url, "--api-key", "atr_before", "-o", "csv", "data", "read", "--resource", "keywords", "--client", "c1")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "id,keyword\nr1,rye") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the CSV of the page", r.code, r.stdout, r.stderr)
	}
	reqs := rec.requests()
	if len(reqs) != 1 || reqs[0].path != "/api/v1/data" || reqs[0].auth != "Bearer atr_before" || !strings.Contains(reqs[0].query, "client_id=c1") {
		t.Fatalf("requests: %+v", reqs)
	}
	// After the command, a flag overrides the one before it.
	r = runCLI(t, map[string]string{"ATRIUM_API_KEY": "atr_env"}, nil, "--url", url, "data", "read", "--resource", "keywords", "--client", "c1", "--api-key", "atr_after")
	if r.code != ExitOK || rec.requests()[1].auth != "Bearer atr_after" {
		t.Fatalf("exit %d (%s), auth %q", r.code, r.stderr, rec.requests()[1].auth)
	}
	// A flag no command has, before the command, is a usage error.
	if r := runCLI(t, nil, nil, "--bogus", "data", "read"); r.code != ExitUsage || !strings.Contains(r.stderr, "flag provided but not defined: -bogus") {
		t.Fatalf("--bogus: exit %d, stderr %q", r.code, r.stderr)
	}
	// --version and -h work before any command.
	if r := runCLI(t, nil, nil, "--version"); r.code != ExitOK || r.stdout != "test\n" {
		t.Fatalf("--version: %+v", r)
	}
}

// TestServerCommandsFromTheTable: serve and the others are dispatched from
// the same table with their arguments as given; a client flag before
// them is refused rather than silently dropped.
func TestServerCommandsFromTheTable(t *testing.T) {
	var got []string
	serve := &Command{Name: "serve", Summary: "run everything", Server: true, Raw: func(_ context.Context, args []string) error {
		got = args
		return nil
	}}
	if r := runCLI(t, nil, []*Command{serve}, "serve", "--http-addr", ":0", "extra"); r.code != ExitOK || !slices.Equal(got, []string{"--http-addr", ":0", "extra"}) {
		t.Fatalf("serve ran with %q: %+v", got, r)
	}
	r := runCLI(t, nil, []*Command{serve}, "--url", "http://x", "serve")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "atrium serve takes its own flags") {
		t.Fatalf("--url serve: %+v", r)
	}
	// The usage lists the server commands first, then every client noun.
	r = runCLI(t, nil, []*Command{serve}, "help")
	if r.code != ExitOK || !strings.Contains(r.stdout, "  serve ") || strings.Index(r.stdout, "serve") > strings.Index(r.stdout, "Client commands") {
		t.Fatalf("help:\n%s", r.stdout)
	}
	for _, c := range clientCommands(newFactory(Env{}, "")) {
		if !strings.Contains(r.stdout, "  "+c.Name+" ") {
			t.Fatalf("the usage lacks %s:\n%s", c.Name, r.stdout)
		}
	}
	if r := runCLI(t, nil, []*Command{serve}, "bake"); r.code != ExitUsage || !strings.Contains(r.stderr, `unknown command "bake"`) || !strings.Contains(r.stderr, "Usage: atrium") {
		t.Fatalf("bake: %+v", r)
	}
}

// TestRequiredFlagsAreCheckedBeforeSending: a verb without a required
// flag exits 2 naming the flag, and the API is never called.
func TestRequiredFlagsAreCheckedBeforeSending(t *testing.T) {
	rec, url := newRecorder(t, map[string]string{"": `{}`})
	env := map[string]string{"ATRIUM_URL": url, "ATRIUM_API_KEY": "atr_k", "ATRIUM_ADMIN_URL": url, "ATRIUM_ADMIN_TOKEN": "adm_t"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"data", "read", "--client", "c1"}, "--resource is required"},
		{[]string{"data", "read", "--resource", "keywords"}, "--client is required for the dataset keywords"},
		{[]string{"actions", "run", "generate_blog", "keyword=rye"}, "--client is required"},
		{[]string{"webhooks", "create", "--events", "item.*"}, "missing: --endpoint"},
		{[]string{"webhooks", "listen"}, "--forward-to is required"},
		{[]string{"admin", "clients", "link", "--agency", "a1"}, "missing: --client"},
		{[]string{"admin", "credits", "add", "--ai", "5"}, "--agency is required"},
		{[]string{"admin", "collections", "create", "--site", "s1", "--name", "Posts"}, "missing: --slug"},
		{[]string{"admin", "collections", "list"}, "--site is required"},
		{[]string{"admin", "collections", "update", "posts", "--site", "s1"}, "nothing to change"},
		{[]string{"admin", "collections", "create", "--site", "s1", "--name", "P", "--slug", "p", "--field", "title"}, "key:type"},
	} {
		r := runCLI(t, env, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("atrium %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
	if reqs := rec.requests(); len(reqs) != 0 {
		t.Fatalf("a usage error reached the API: %+v", reqs)
	}
	// The clients dataset is the one read without --client.
	if r := runCLI(t, env, nil, "data", "read", "--resource", "clients"); r.code != ExitOK {
		t.Fatalf("data read --resource clients: %+v", r)
	}
}

// TestCompletionFollowsTheTable: every noun and verb of the table, at
// every depth, is offered, with each verb's own flags.
func TestCompletionFollowsTheTable(t *testing.T) {
	r := runCLI(t, nil, nil, "completion", "bash")
	if r.code != ExitOK {
		t.Fatalf("completion bash: %+v", r)
	}
	var walk func(c *Command, path string)
	walk = func(c *Command, path string) {
		if len(c.Subs) > 0 && !strings.Contains(r.stdout, `"`+path+`") words="`+strings.Join(c.subNames(), " ")+`";`) {
			t.Errorf("bash completion lacks %q's subcommands %v", path, c.subNames())
		}
		for _, s := range c.Subs {
			walk(s, strings.TrimSpace(path+" "+s.Name))
		}
	}
	walk(&Command{Subs: clientCommands(newFactory(Env{}, ""))}, "")
	for _, w := range []string{`"admin collections create") words=""; flags="`, "--field", "--search-language", "--forward-to", "--params-json", "--pause-after"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("bash completion lacks %q", w)
		}
	}
	fish := runCLI(t, nil, nil, "completion", "fish")
	if !strings.Contains(fish.stdout, `__atrium_path "admin collections"' -a "list create update"`) {
		t.Errorf("fish completion lacks admin collections:\n%s", fish.stdout)
	}
}

// TestAdminCollections: the collections commands send the admin API the
// definitions their --field flags spell, and print the answer.
func TestAdminCollections(t *testing.T) {
	rec, url := newRecorder(t, map[string]string{
		"":    `{"collection":{"name":"Posts","slug":"posts","is_system":false,"fields":[{"key":"title","type":"text","required":true}]}}`,
		"GET": `{"collections":[{"name":"Posts","slug":"posts","is_system":false,"fields":[{"key":"title","type":"text","required":true}]}]}`})
	env := map[string]string{"ATRIUM_ADMIN_URL": url, "ATRIUM_ADMIN_TOKEN": "adm_t"}
	r := runCLI(t, env, nil, "admin", "collections", "create", "--site", "s1", "--slug", "posts", "--name", "Posts",
		"--field", "title:text:required:max_length=120", "--field", "tags:multi_select:options=bread|vegan", "--field", "author:reference:target=authors",
		"--search-language", "english")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"slug": "posts"`) {
		t.Fatalf("create: %+v", r)
	}
	req := rec.requests()[0]
	want := `{"fields":[{"key":"title","max_length":120,"options":null,"required":true,"type":"text"},` +
		`{"key":"tags","options":["bread","vegan"],"required":false,"type":"multi_select"},` +
		`{"key":"author","options":null,"required":false,"target":"authors","type":"reference"}],` +
		`"name":"Posts","search_language":"english","slug":"posts"}`
	if b, _ := json.Marshal(req.body); req.method != "POST" || req.path != "/admin/v1/sites/s1/collections" || req.auth != "Bearer adm_t" || string(b) != want {
		t.Fatalf("create sent %s %s %s\nwant %s", req.method, req.path, b, want)
	}

	r = runCLI(t, env, nil, "admin", "collections", "update", "posts", "--site", "s1", "--name", "Articles",
		"--add-field", "summary:text", "--remove-field", "legacy,old", "--update-field", "title:text:max_length=200")
	if r.code != ExitOK {
		t.Fatalf("update: %+v", r)
	}
	req = rec.requests()[1]
	want = `{"add_fields":[{"key":"summary","options":null,"required":false,"type":"text"}],"name":"Articles",` +
		`"remove_fields":["legacy","old"],"update_fields":[{"key":"title","max_length":200,"options":null,"required":false,"type":"text"}]}`
	if b, _ := json.Marshal(req.body); req.method != "PATCH" || req.path != "/admin/v1/sites/s1/collections/posts" || string(b) != want {
		t.Fatalf("update sent %s %s %s\nwant %s", req.method, req.path, b, want)
	}

	r = runCLI(t, env, nil, "admin", "collections", "list", "--site", "s1", "-o", "table")
	if r.code != ExitOK || !strings.Contains(r.stdout, "SLUG") || !strings.Contains(r.stdout, "title:text") {
		t.Fatalf("list:\n%+v", r)
	}
}

// TestVerbSeam: a verb's constructor takes a runF that receives the parsed
// options instead of running, as cli/cli's do; the options hold what the
// flags and arguments said.
func TestVerbSeam(t *testing.T) {
	f := newFactory(Env{Stderr: io.Discard, Stdout: io.Discard}, "test")
	var got *itemsWriteOptions
	cmd := newItemsWriteCmd(f, "update", func(_ context.Context, o *itemsWriteOptions) error { got = o; return nil })
	if err := cmd.run(t.Context(), f, "atrium items update", false, []string{"posts", "42", "title=Rye", "--publish", "--if-match", "3"}); err != nil {
		t.Fatal(err)
	}
	if got.Collection != "posts" || got.ID != "42" || !slices.Equal(got.Args, []string{"title=Rye"}) || !got.Publish || got.IfMatch != "3" || got.Create {
		t.Fatalf("options: %+v", got)
	}
	if err := cmd.run(t.Context(), f, "atrium items update", false, []string{"posts", "42", "title=Brot", "--locale", "de"}); err != nil || got.Locale != "de" {
		t.Fatalf("--locale de: %+v, %v", got, err)
	}
	var read *itemOptions
	get := newItemsGetCmd(f, func(_ context.Context, o *itemOptions) error { read = o; return nil })
	if err := get.run(t.Context(), f, "atrium items get", false, []string{"posts", "42", "--locale", "de-AT", "--fallback", "none"}); err != nil ||
		read.Locale != "de-AT" || read.Fallback != "none" {
		t.Fatalf("items get --locale de-AT --fallback none: %+v, %v", read, err)
	}
	var listed *itemsListOptions
	list := newItemsListCmd(f, func(_ context.Context, o *itemsListOptions) error { listed = o; return nil })
	if err := list.run(t.Context(), f, "atrium items list", false, []string{"posts", "--locale", "*"}); err != nil || listed.Locale != "*" {
		t.Fatalf("items list --locale '*': %+v, %v", listed, err)
	}
	err := cmd.run(t.Context(), f, "atrium items update", false, []string{"posts", "42", "--publish", "--unpublish"})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "one or the other") {
		t.Fatalf("--publish --unpublish: %v", err)
	}
}

// TestParseFieldSpec: the --field syntax, and its refusals naming what is
// allowed.
func TestParseFieldSpec(t *testing.T) {
	f, err := parseFieldSpec("rating:integer:required")
	if err != nil || f.Key != "rating" || f.Type != "integer" || !f.Required {
		t.Fatalf("rating: %+v %v", f, err)
	}
	for spec, words := range map[string]string{
		"title":                   "key:type",
		":text":                   "key:type",
		"title:text:mandatory":    `unknown setting "mandatory"`,
		"title:text:max_length=x": "positive integer",
		"tags:select:options=":    `unknown setting "options="`,
	} {
		if _, err := parseFieldSpec(spec); err == nil || !strings.Contains(err.Error(), words) {
			t.Errorf("%s: %v; want an error saying %q", spec, err, words)
		}
	}
}
