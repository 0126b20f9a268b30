package atriumsdk_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/gateway/mcpserver"
	"github.com/atrium-hq/atrium/gateway/mcpserver/atriumsdk"
)

// The adapter calls the routes the tools name, with the caller's key and
// the MCP server's User-Agent, and gives the tools what the API answered:
// objects as their JSON, an action's outcome with the headers' balance and
// replay, an item with its version, a refusal as an APIError.
func TestCallsTheAPIWithTheKey(t *testing.T) {
	var got *http.Request
	var body map[string]any
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		b, _ := io.ReadAll(r.Body)
		body = nil
		_ = json.Unmarshal(b, &body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Atrium-Trace-Id", "trace-1")
		switch r.Method + " " + r.URL.Path {
		case "GET /api/v1/data":
			_, _ = io.WriteString(w, `{"resource":"keywords","client_id":"c1","data":[{"keyword":"<rye> & co"}],"pagination":{"total":3,"limit":1,"offset":0,"has_more":true,"next_cursor":"n"}}`)
		case "POST /api/v1/data":
			w.Header().Set("Idempotent-Replayed", "true")
			w.Header().Set("Atrium-AI-Credits-Remaining", "9")
			w.Header().Set("Atrium-Data-Credits-Remaining", "4")
			_, _ = io.WriteString(w, `{"action":"generate_gbp_post","client_id":"c1","status":"success","status_code":200,"data":{"id":"r1"}}`)
		case "GET /api/public/v1/collections/posts/i1":
			w.Header().Set("ETag", `"8"`)
			_, _ = io.WriteString(w, `{"item":{"id":"i1","is_published":true,"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:06Z","locale":"de-AT","locale_fallbacks":{"title":"de"},"title":"Brot"}}`)
		case "PATCH /api/public/v1/collections/posts/i1":
			if r.Header.Get("If-Match") != `"7"` {
				w.WriteHeader(http.StatusPreconditionFailed)
				_, _ = io.WriteString(w, `{"error":"the item changed since version 7"}`)
				return
			}
			w.Header().Set("ETag", `"8"`)
			_, _ = io.WriteString(w, `{"item":{"id":"i1","is_published":true,"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:06Z","title":"Rye"}}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"no route"}`)
		}
	}))
	defer api.Close()
	c := atriumsdk.New(api.URL, atriumsdk.Config{Version: "1.2.3"}).Connect("key-1")
	ctx := t.Context()

	// An item read in a locale: the locale in the query, the item's
	// locale and fallbacks in its JSON.
	read, err := c.GetItem(ctx, "posts", "i1", mcpserver.ItemRead{Locale: "de-AT", Fallback: "none", Expand: []string{"author"}})
	if err != nil {
		t.Fatal(err)
	}
	if q := got.URL.Query(); q.Get("locale") != "de-AT" || q.Get("fallback") != "none" || q.Get("expand") != "author" {
		t.Errorf("GET …/posts/i1?%s: want locale, fallback and expand", got.URL.RawQuery)
	}
	if s := string(read.JSON); !strings.Contains(s, `"locale":"de-AT"`) || !strings.Contains(s, `"locale_fallbacks":{"title":"de"}`) || !strings.Contains(s, `"title":"Brot"`) {
		t.Errorf("the item read in de-AT = %s", s)
	}

	page, err := c.ReadDataset(ctx, mcpserver.DataQuery{Resource: "keywords", ClientID: "c1", Limit: 1, Order: "position", FilterField: "status", FilterValue: "a&b"})
	if err != nil {
		t.Fatal(err)
	}
	if q := got.URL.Query(); q.Get("resource") != "keywords" || q.Get("client_id") != "c1" || q.Get("limit") != "1" || q.Get("order") != "position" || q.Get("filter_value") != "a&b" {
		t.Errorf("GET /api/v1/data?%s: the query's parameters are not the route's", got.URL.RawQuery)
	}
	if got.Header.Get("Authorization") != "Bearer key-1" || !strings.HasPrefix(got.Header.Get("User-Agent"), "atrium-mcp/1.2.3 ") {
		t.Errorf("Authorization %q, User-Agent %q; want the caller's key and atrium-mcp/1.2.3 first", got.Header.Get("Authorization"), got.Header.Get("User-Agent"))
	}
	var p struct {
		Data       []map[string]any `json:"data"`
		Pagination struct {
			NextCursor string `json:"next_cursor"`
		} `json:"pagination"`
	}
	if err := json.Unmarshal(page, &p); err != nil || len(p.Data) != 1 || p.Data[0]["keyword"] != "<rye> & co" || p.Pagination.NextCursor != "n" {
		t.Errorf("page = %s (%v); want the API's row and cursor", page, err)
	}

	run, err := c.RunAction(ctx, mcpserver.RunRequest{Action: "generate_gbp_post", ClientID: "c1", Fields: map[string]any{"topic": "Rye"}, IdempotencyKey: "k-9"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("Idempotency-Key") != "k-9" || body["topic"] != "Rye" || body["action"] != "generate_gbp_post" || body["client_id"] != "c1" {
		t.Errorf("POST /api/v1/data with Idempotency-Key %q and %v; want k-9 and the action's fields", got.Header.Get("Idempotency-Key"), body)
	}
	if run.Action != "generate_gbp_post" || run.Status != "success" || run.StatusCode != 200 || run.Data["id"] != "r1" ||
		run.Remaining != (mcpserver.Credits{AI: 9, Data: 4}) || !run.Replayed || run.IdempotencyKey != "k-9" {
		t.Errorf("outcome = %+v; want success, 9 AI and 4 data credits left, replayed, key k-9", run)
	}

	it, err := c.UpdateItem(ctx, "posts", "i1", mcpserver.ItemWrite{Data: map[string]any{"title": "Rye"}}, "7")
	if err != nil {
		t.Fatal(err)
	}
	var item map[string]any
	if err := json.Unmarshal(it.JSON, &item); err != nil || it.ETag != "8" || item["title"] != "Rye" || item["id"] != "i1" {
		t.Errorf("item = %s, etag %q (%v); want the item and version 8", it.JSON, it.ETag, err)
	}

	_, err = c.UpdateItem(ctx, "posts", "i1", mcpserver.ItemWrite{Data: map[string]any{"title": "Stale"}}, "6")
	var ae *mcpserver.APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusPreconditionFailed || ae.Message != "the item changed since version 7" || ae.TraceID != "trace-1" {
		t.Fatalf("a stale update: %#v; want the API's 412, its message and trace id", err)
	}
}
