package main

// A real browser as the client: a page served from another origin lists
// published items with a published-only key, and its write is refused.
// Chromium (Debian's package, installed by make services-up) driven with
// chromedp, the standard Go driver of the DevTools protocol: only a browser
// applies CORS, so only a browser shows that a page can really call the API.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// pageScript lists the posts and tries a write, and returns what the page
// saw as JSON.
const pageScript = `
async function run(api, key) {
  const list = await fetch(api + "/api/public/v1/collections/posts", {headers: {Authorization: "Bearer " + key}});
  const body = await list.json();
  const write = await fetch(api + "/api/public/v1/collections/posts", {method: "POST",
    headers: {Authorization: "Bearer " + key, "Content-Type": "application/json"},
    body: JSON.stringify({data: {title: "From the page"}})});
  const refused = await write.json();
  return JSON.stringify({status: list.status, titles: body.items.map(i => i.title), write: write.status, error: refused.error});
}`

func testBrowserPage(t *testing.T, s *stack) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (make services-up installs it): %v", err)
		}
		t.Skipf("chromium is not installed (make services-up installs it): %v", err)
	}
	c := s.newCMS(t)
	c.createItem(t, "posts", map[string]any{"is_published": true, "data": map[string]any{"title": "Published"}})
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Draft"}})
	key := s.newKey(t, map[string]any{"scopes": []string{"read"}, "site_id": c.site, "published_only": true})

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, "<!doctype html><title>Shop</title><script>%s</script>", pageScript)
	}))
	defer page.Close()
	wantStatus(t, s.adminCall(t, "PUT", "/admin/v1/sites/"+c.site+"/allowed_origins", map[string]any{"allowed_origins": []string{page.URL}}), http.StatusOK)

	// Bounded: a browser that does not answer fails the test rather than
	// hanging it. Starting Chromium takes a second or more.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	alloc, stop := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()))...)
	defer stop()
	bctx, closeBrowser := chromedp.NewContext(alloc)
	defer closeBrowser()
	if _, err := chromedp.Run(bctx, chromedp.Navigate(page.URL)); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](fmt.Sprintf("run(%q, %q)", s.api, key), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the page's script: %v", err)
	}
	var saw struct {
		Status int
		Titles []string
		Write  int
		Error  string
	}
	if err := json.Unmarshal([]byte(raw), &saw); err != nil {
		t.Fatalf("the page returned %q: %v", raw, err)
	}
	if saw.Status != http.StatusOK || !slices.Equal(saw.Titles, []string{"Published"}) {
		t.Fatalf("the page listed %d %v, want 200 and only the published post", saw.Status, saw.Titles)
	}
	if saw.Write != http.StatusForbidden || saw.Error == "" {
		t.Fatalf("the page's write = %d %q, want 403 saying why", saw.Write, saw.Error)
	}
	if got := call(t, "GET", c.base+"/posts", c.read, nil); len(got.json["items"].([]any)) != 2 {
		t.Fatalf("the refused write changed the collection: %s", got)
	}
}
