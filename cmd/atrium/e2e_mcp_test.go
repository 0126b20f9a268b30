package main

// The MCP server (gateway/mcpserver) at /mcp, driven by the official Go
// SDK's own client as an AI client would: the tools a read key and a write
// key see, reads, an action charged once however often it is sent with
// one idempotency key, content writes, and the API's refusals as tool
// errors.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds an API key to every request of an MCP client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// mcpSession connects the SDK's client to the stack's /mcp with key.
func mcpSession(t *testing.T, s *stack, key string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "atrium-e2e", Version: "1"}, nil)
	// http.DefaultClient's transport checks the API's answers against the
	// OpenAPI document; /mcp is not in it, so it passes those untouched.
	hc := &http.Client{Transport: bearer{key: key, base: http.DefaultClient.Transport}}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.api + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func toolNamesOf(tools map[string]*mcp.Tool) []string {
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// callTool calls a tool and returns its JSON result (or, for a tool
// error, its message under "error"), failing on a protocol error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("tools/call %s: %d content blocks, want 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("tools/call %s: content %T, want text", name, res.Content[0])
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text.Text), &out); err != nil {
		if !res.IsError {
			t.Fatalf("tools/call %s: result is not a JSON object: %v\n%s", name, err, text.Text)
		}
		out = map[string]any{"error": text.Text}
	}
	if !res.IsError && res.StructuredContent == nil {
		t.Fatalf("tools/call %s: no structuredContent beside the text", name)
	}
	return out, res.IsError
}

// The tools by who may call them.
var (
	mcpReadTools  = []string{"get_asset", "get_item", "get_run", "list_actions", "list_assets", "list_clients", "list_collections", "list_datasets", "list_deals", "list_items", "list_prospects", "read_dataset"}
	mcpWriteTools = []string{"create_item", "run_action", "update_asset", "update_item"}
)

func wantReadTools() []string { return mcpReadTools }

func testMCP(t *testing.T, s *stack) {
	c := s.newCMS(t)
	client := s.newClient(t, c.tenant, true)
	s.grant(t, c.agency, 10, 10)
	s.loadRows(t, client, "keywords",
		map[string]any{"keyword": "rye bread", "position": 4, "status": "active"},
		map[string]any{"keyword": "sourdough", "position": 1, "status": "active"},
		map[string]any{"keyword": "baguette", "position": 9, "status": "paused"})
	s.newProspect(t, c.tenant, "Corner Bakery")

	// No key, or a wrong one: the gateway's 401, before any MCP exchange.
	r := call(t, "POST", s.api+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	wantError(t, r, http.StatusUnauthorized)
	if r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("a 401 at /mcp without WWW-Authenticate: %v", r.header)
	}

	// Stateless: POST only, answered in the API's error shape otherwise.
	r = call(t, "GET", s.api+"/mcp", c.read, nil)
	wantError(t, r, http.StatusMethodNotAllowed, "POST")
	if r.header.Get("Allow") != "POST" {
		t.Fatalf("GET /mcp: Allow = %q, want POST", r.header.Get("Allow"))
	}

	read, write := mcpSession(t, s, c.read), mcpSession(t, s, c.write)

	// A read key sees the read tools only; a write key every tool.
	readTools, writeTools := listTools(t, read), listTools(t, write)
	if got, want := toolNamesOf(readTools), wantReadTools(); !slices.Equal(got, want) {
		t.Fatalf("a read key's tools = %v, want %v", got, want)
	}
	all := append(wantReadTools(), mcpWriteTools...)
	slices.Sort(all)
	if got := toolNamesOf(writeTools); !slices.Equal(got, all) {
		t.Fatalf("a write key's tools = %v, want %v", got, all)
	}
	for name, tl := range writeTools {
		write := slices.Contains(mcpWriteTools, name)
		if tl.Annotations == nil || tl.Annotations.ReadOnlyHint == write {
			t.Errorf("%s: readOnlyHint = %v, want %v", name, tl.Annotations != nil && tl.Annotations.ReadOnlyHint, !write)
		}
	}
	if a := writeTools["update_item"].Annotations; a.DestructiveHint == nil || !*a.DestructiveHint || !a.IdempotentHint {
		t.Errorf("update_item replaces fields: want destructiveHint and idempotentHint, got %+v", a)
	}
	if a := writeTools["create_item"].Annotations; a.DestructiveHint == nil || *a.DestructiveHint || a.IdempotentHint {
		t.Errorf("create_item adds an item each call: want neither destructiveHint nor idempotentHint, got %+v", a)
	}
	run := writeTools["run_action"]
	if !strings.Contains(run.Description, "generate_gbp_post (1 AI credit)") || !strings.Contains(run.Description, "seo_audit (") {
		t.Errorf("run_action's description does not give each action's cost:\n%s", run.Description)
	}
	schema, _ := json.Marshal(readTools["read_dataset"].InputSchema)
	for _, arg := range []string{`"resource"`, `"client_id"`, `"limit"`, `"order"`, `"direction"`, `"filter_field"`, `"filter_value"`, `"cursor"`, `"keywords"`} {
		if !strings.Contains(string(schema), arg) {
			t.Errorf("read_dataset's input schema has no %s: %s", arg, schema)
		}
	}
	// A write tool is not there for a read key: calling it is refused.
	if _, err := read.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_action", Arguments: map[string]any{"action": "generate_gbp_post", "client_id": client}}); err == nil {
		t.Fatal("a read key called run_action")
	}

	// Data: a page ordered and limited as the HTTP API's parameters say.
	page, isErr := callTool(t, read, "read_dataset", map[string]any{"resource": "keywords", "client_id": client, "order": "created_at", "direction": "asc", "limit": 2})
	rows, _ := page["data"].([]any)
	if isErr || len(rows) != 2 || rows[0].(map[string]any)["keyword"] != "rye bread" || page["pagination"].(map[string]any)["has_more"] != true {
		t.Fatalf("read_dataset = %v (error %v); want the first 2 keywords, more to come", page, isErr)
	}
	clients, _ := callTool(t, read, "list_clients", nil)
	if rows, _ := clients["data"].([]any); len(rows) != 1 || rows[0].(map[string]any)["id"] != client {
		t.Fatalf("list_clients = %v, want the one linked client", clients)
	}
	datasets, _ := callTool(t, read, "list_datasets", nil)
	if ds, _ := datasets["datasets"].([]any); len(ds) < 30 {
		t.Fatalf("list_datasets = %v", datasets)
	}
	prospects, _ := callTool(t, read, "list_prospects", map[string]any{"limit": 10})
	if rows, _ := prospects["data"].([]any); len(rows) != 1 || rows[0].(map[string]any)["business_name"] != "Corner Bakery" {
		t.Fatalf("list_prospects = %v", prospects)
	}

	// The API's refusals are tool errors carrying its message: another
	// agency's client, a resource that does not exist.
	other := s.newTenant(t)
	theirs := s.newClient(t, other, true)
	res, isErr := callTool(t, read, "read_dataset", map[string]any{"resource": "keywords", "client_id": theirs})
	if msg, _ := res["error"].(string); !isErr || !strings.Contains(msg, "is not linked to this key's agency") || !strings.Contains(msg, "403") {
		t.Fatalf("read_dataset of another agency's client = %v (error %v); want the API's 403 as a tool error", res, isErr)
	}
	res, isErr = callTool(t, write, "run_action", map[string]any{"action": "generate_gbp_post", "client_id": theirs, "input": map[string]any{"topic": "Rye"}})
	if msg, _ := res["error"].(string); !isErr || !strings.Contains(msg, "is not linked") {
		t.Fatalf("run_action for another agency's client = %v (error %v)", res, isErr)
	}
	res, isErr = callTool(t, read, "read_dataset", map[string]any{"resource": "nope", "client_id": client})
	if !isErr || !strings.Contains(res["error"].(string), "resource") {
		t.Fatalf("read_dataset of no such resource = %v (error %v); want a tool error naming resource", res, isErr)
	}

	// Actions: discovery with costs and the balance; a run charged once
	// however often it is sent with its idempotency key.
	acts, _ := callTool(t, read, "list_actions", nil)
	if acts["balance"].(map[string]any)["ai"] != float64(10) || len(acts["actions"].([]any)) < 17 {
		t.Fatalf("list_actions = %v", acts)
	}
	for _, a := range acts["actions"].([]any) {
		if a := a.(map[string]any); a["name"] == "generate_gbp_post" && (a["cost"].(map[string]any)["ai"] != float64(1) || a["input_schema"] == nil) {
			t.Fatalf("list_actions's generate_gbp_post = %v, want its cost and input_schema", a)
		}
	}
	args := map[string]any{"action": "generate_gbp_post", "client_id": client, "input": map[string]any{"topic": "Fresh rye"}, "idempotency_key": "mcp-e2e-" + client}
	first, isErr := callTool(t, write, "run_action", args)
	if isErr || first["status"] != "success" || first["replayed"] != false || first["remaining_credits"].(map[string]any)["ai"] != float64(9) {
		t.Fatalf("run_action = %v (error %v)", first, isErr)
	}
	again, isErr := callTool(t, write, "run_action", args)
	if isErr || again["replayed"] != true || again["data"].(map[string]any)["id"] != first["data"].(map[string]any)["id"] {
		t.Fatalf("run_action again with its key = %v (error %v); want the first run's answer, replayed", again, isErr)
	}
	if ai, _ := s.credits(t, c.agency); ai != 9 {
		t.Fatalf("AI credits after one run sent twice = %v, want 9", ai)
	}
	// The action's fields at the top level, as the HTTP body has them.
	top, isErr := callTool(t, write, "run_action", map[string]any{"action": "generate_gbp_post", "client_id": client, "topic": "Seeded rye"})
	if isErr || top["status"] != "success" || top["idempotency_key"] == "" {
		t.Fatalf("run_action with top-level fields = %v (error %v)", top, isErr)
	}
	// get_run reads a run as GET /api/v1/runs/{run_id} answers it.
	runs := call(t, "GET", s.api+"/api/v1/runs?client_id="+client+"&limit=1", c.read, nil)
	wantStatus(t, runs, http.StatusOK)
	newest := runs.json["runs"].([]any)[0].(map[string]any)
	gotRun, isErr := callTool(t, read, "get_run", map[string]any{"run_id": newest["id"]})
	if run, _ := gotRun["run"].(map[string]any); isErr || run["id"] != newest["id"] || run["state"] != "success" || run["action"] != "generate_gbp_post" {
		t.Fatalf("get_run = %v (error %v)", gotRun, isErr)
	}

	// Content: a created item read back with its etag, updated under it.
	created, isErr := callTool(t, write, "create_item", map[string]any{"collection_slug": "posts", "data": map[string]any{"title": "From MCP"}, "is_published": true})
	item, _ := created["item"].(map[string]any)
	if isErr || item["title"] != "From MCP" || created["etag"] != "1" {
		t.Fatalf("create_item = %v (error %v)", created, isErr)
	}
	got, isErr := callTool(t, read, "get_item", map[string]any{"collection_slug": "posts", "item_id": item["id"]})
	if isErr || got["item"].(map[string]any)["title"] != "From MCP" || got["etag"] != "1" {
		t.Fatalf("get_item = %v (error %v)", got, isErr)
	}
	upd, isErr := callTool(t, write, "update_item", map[string]any{"collection_slug": "posts", "item_id": item["id"], "data": map[string]any{"title": "Changed"}, "if_match": "1"})
	if isErr || upd["item"].(map[string]any)["title"] != "Changed" {
		t.Fatalf("update_item = %v (error %v)", upd, isErr)
	}
	stale, isErr := callTool(t, write, "update_item", map[string]any{"collection_slug": "posts", "item_id": item["id"], "data": map[string]any{"title": "Stale"}, "if_match": "1"})
	if !isErr || !strings.Contains(stale["error"].(string), "412") {
		t.Fatalf("update_item with a stale etag = %v (error %v); want the API's 412", stale, isErr)
	}
	cols, _ := callTool(t, read, "list_collections", nil)
	items, _ := callTool(t, read, "list_items", map[string]any{"collection_slug": "posts", "is_published": true})
	if len(cols["collections"].([]any)) != 3 || len(items["items"].([]any)) != 1 {
		t.Fatalf("list_collections = %v, list_items = %v", cols, items)
	}
	// Search and expand, as the API's q and expand.
	author, _ := callTool(t, write, "create_item", map[string]any{"collection_slug": "authors", "data": map[string]any{"name": "Ana"}, "is_published": true})
	authorID := author["item"].(map[string]any)["id"]
	byAna, _ := callTool(t, write, "create_item", map[string]any{"collection_slug": "posts", "data": map[string]any{"title": "Rye starter notes", "author": authorID}})
	found, isErr := callTool(t, read, "list_items", map[string]any{"collection_slug": "posts", "q": "starter", "expand": "author"})
	if list, _ := found["items"].([]any); isErr || len(list) != 1 || list[0].(map[string]any)["author"].(map[string]any)["id"] != authorID {
		t.Fatalf("list_items q=starter expand=author = %v (error %v); want the one post, its author expanded", found, isErr)
	}
	one, isErr := callTool(t, read, "get_item", map[string]any{"collection_slug": "posts", "item_id": byAna["item"].(map[string]any)["id"], "expand": "author"})
	if a, _ := one["item"].(map[string]any)["author"].(map[string]any); isErr || a == nil || a["id"] != authorID {
		t.Fatalf("get_item expand=author = %v (error %v)", one, isErr)
	}
	// Assets: listed, read, their alt text written.
	asset := s.newAsset(t, c.write, "loaf.png", pngBytes(t, 4, 4))["id"].(string)
	assets, isErr := callTool(t, read, "list_assets", nil)
	if list, _ := assets["assets"].([]any); isErr || len(list) != 1 || list[0].(map[string]any)["id"] != asset {
		t.Fatalf("list_assets = %v (error %v); want the one asset", assets, isErr)
	}
	alt, isErr := callTool(t, write, "update_asset", map[string]any{"asset_id": asset, "alt": "A loaf of rye"})
	if isErr || alt["asset"].(map[string]any)["alt"] != "A loaf of rye" {
		t.Fatalf("update_asset = %v (error %v)", alt, isErr)
	}
	if got, isErr := callTool(t, read, "get_asset", map[string]any{"asset_id": asset}); isErr || got["asset"].(map[string]any)["alt"] != "A loaf of rye" {
		t.Fatalf("get_asset after update_asset = %v (error %v)", got, isErr)
	}
	if _, err := read.CallTool(t.Context(), &mcp.CallToolParams{Name: "update_asset", Arguments: map[string]any{"asset_id": asset, "alt": "x"}}); err == nil {
		t.Fatal("a read key called update_asset")
	}
}

// TestMCPReadOnlyAndStdio: --mcp-read-only hides the write tools even from
// a write key; `atrium mcp` serves the same tools over stdio, configured
// from ATRIUM_URL and ATRIUM_API_KEY, and the API refuses what its key
// may not do. Read-only mode is a start-up setting, so the test starts a
// stack of its own: most of its 10 s on this machine.
func TestMCPReadOnlyAndStdio(t *testing.T) {
	s := startStack(t, "--mcp-read-only")
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 5, 5)

	write := mcpSession(t, s, tn.write)
	if got, want := toolNamesOf(listTools(t, write)), wantReadTools(); !slices.Equal(got, want) {
		t.Fatalf("read-only mode: a write key's tools = %v, want the read tools %v", got, want)
	}
	if _, err := write.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_action", Arguments: map[string]any{"action": "generate_gbp_post", "client_id": client, "topic": "Rye"}}); err == nil {
		t.Fatal("read-only mode: run_action was called")
	}

	// stdio, with a read key: every tool is listed (the process cannot
	// know the key's scopes), and the API refuses the write with its 403.
	env := map[string]string{"ATRIUM_URL": s.api, "ATRIUM_API_KEY": tn.read}
	stdio := stdioSession(t, env)
	tools := listTools(t, stdio)
	if _, ok := tools["run_action"]; !ok || len(tools) < len(mcpReadTools)+len(mcpWriteTools) {
		t.Fatalf("atrium mcp lists %v", toolNamesOf(tools))
	}
	res, isErr := callTool(t, stdio, "run_action", map[string]any{"action": "generate_gbp_post", "client_id": client, "input": map[string]any{"topic": "Rye"}})
	if msg, _ := res["error"].(string); !isErr || !strings.Contains(msg, "lacks the write scope") || !strings.Contains(msg, "403") {
		t.Fatalf("run_action with a read key over stdio = %v (error %v); want the API's 403", res, isErr)
	}
	acts, isErr := callTool(t, stdio, "list_actions", nil)
	if isErr || acts["balance"].(map[string]any)["ai"] != float64(5) {
		t.Fatalf("list_actions over stdio = %v (error %v)", acts, isErr)
	}
	// With --mcp-read-only (ATRIUM_MCP_READ_ONLY) it lists the read tools only.
	env["ATRIUM_MCP_READ_ONLY"] = "true"
	if got, want := toolNamesOf(listTools(t, stdioSession(t, env))), wantReadTools(); !slices.Equal(got, want) {
		t.Fatalf("atrium mcp --mcp-read-only lists %v, want %v", got, want)
	}

	// Without a key it says which setting is missing.
	err := mcpStdio(t.Context(), nil, func(string) (string, bool) { return "", false }, io.NopCloser(strings.NewReader("")), nopWriteCloser{io.Discard}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ATRIUM_API_KEY") {
		t.Fatalf("atrium mcp without a key: %v", err)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// stdioSession runs `atrium mcp` in process on a pair of pipes, with env
// as its environment, and connects the SDK's client to it.
func stdioSession(t *testing.T, env map[string]string) *mcp.ClientSession {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan error, 1)
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	go func() { done <- mcpStdio(context.Background(), nil, lookup, toServer, fromServer, io.Discard) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "atrium-e2e", Version: "1"}, nil).
		Connect(t.Context(), &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatalf("connect to atrium mcp: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close() // closes its pipe ends: the server reads EOF and returns
		if err := <-done; err != nil {
			t.Errorf("atrium mcp returned %v once its client closed", err)
		}
	})
	return cs
}
