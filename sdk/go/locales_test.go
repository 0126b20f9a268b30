package atrium

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestItemsInALocale: a read in a locale sends locale and fallback, and
// the item says the locale it was read in and where each field fell back
// from, apart from its fields; a collection's own field named locale
// stays a field; an update in a locale sends it in the body.
func TestItemsInALocale(t *testing.T) {
	page := `{"collection": {"slug": "posts", "fields": [{"key": "title", "type": "text", "localized": true}]},
		"items": [{"id": "i1", "is_published": true, "created_at": "2026-11-29T10:00:00Z", "updated_at": "2026-11-29T10:00:00Z",
		"locale": "de-AT", "locale_fallbacks": {"title": "de"}, "title": "Brot"}], "limit": 100, "offset": 0}`
	own := `{"collection": {"slug": "posts", "fields": [{"key": "locale", "type": "text"}]},
		"items": [{"id": "i2", "is_published": true, "created_at": "2026-11-29T10:00:00Z", "updated_at": "2026-11-29T10:00:00Z",
		"locale": "en-GB"}], "limit": 100, "offset": 0}`
	item := `{"item": {"id": "i1", "is_published": true, "created_at": "2026-11-29T10:00:00Z", "updated_at": "2026-11-29T10:00:00Z",
		"locale": "de", "locale_fallbacks": {}, "title": "Brot"}}`
	srv := newServer(t, status(200, page), status(200, own), status(200, item), status(200, item))
	c, _ := client(srv)
	p, err := c.Items.List(t.Context(), "posts", &ItemQuery{Locale: "de-AT"})
	if err != nil {
		t.Fatal(err)
	}
	it := p.Items[0]
	if it.Locale != "de-AT" || it.LocaleFallbacks["title"] != "de" || it.Fields["title"] != "Brot" || it.Fields["locale"] != nil || len(it.Fields) != 1 {
		t.Fatalf("item read in de-AT = locale %q, fallbacks %v, fields %v", it.Locale, it.LocaleFallbacks, it.Fields)
	}
	if got := srv.requests()[0].URL.Query(); got.Get("locale") != "de-AT" || got.Has("fallback") {
		t.Fatalf("the list's query = %v; want locale=de-AT and no fallback", got)
	}
	p, err = c.Items.List(t.Context(), "posts", &ItemQuery{Locale: "en-GB", Fallback: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if it := p.Items[0]; it.Locale != "" || it.Fields["locale"] != "en-GB" {
		t.Fatalf("a collection's own locale field = Locale %q, fields %v; want it kept as a field", it.Locale, it.Fields)
	}
	if got := srv.requests()[1].URL.Query().Get("fallback"); got != "none" {
		t.Fatalf("fallback = %q; want none", got)
	}
	got, err := c.Items.GetWith(t.Context(), "posts", "i1", ItemGet{Locale: "de", Expand: []string{"author"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Locale != "de" || len(got.LocaleFallbacks) != 0 || got.Fields["title"] != "Brot" || len(got.Fields) != 1 {
		t.Fatalf("GetWith in de = locale %q, fields %v", got.Locale, got.Fields)
	}
	if q := srv.requests()[2].URL.Query(); q.Get("locale") != "de" || q.Get("expand") != "author" {
		t.Fatalf("GetWith's query = %v", q)
	}
	if _, err := c.Items.Update(t.Context(), "posts", "i1", ItemWrite{Locale: "de", Data: map[string]any{"title": "Brot"}}); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	srv.mu.Lock()
	_ = json.Unmarshal([]byte(srv.bodies[3]), &body)
	method := srv.got[3].Method
	srv.mu.Unlock()
	if method != http.MethodPatch || body["locale"] != "de" {
		t.Fatalf("update in a locale = %s %v; want PATCH with locale de in the body", method, body)
	}
}
