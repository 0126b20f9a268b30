package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sseEvent is one server-sent event as a client reads it.
type sseEvent struct {
	event, id string
	data      map[string]any
}

// sseStream is an open realtime stream read frame by frame.
type sseStream struct {
	t        *testing.T
	clientID string
	connect  sseEvent
	events   chan sseEvent
	close    func()
}

// openRealtime opens GET /api/public/v1/realtime (with Last-Event-ID when
// lastID is set) and reads its connect event.
func openRealtime(t *testing.T, s *stack, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, "GET", s.api+"/api/public/v1/realtime", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req) //nolint:bodyclose // the stream's reader owns the body; st.close closes it
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		resp.Body.Close()
		t.Fatalf("GET realtime = %d %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	st := &sseStream{t: t, events: make(chan sseEvent, 64)}
	st.close = func() { cancel(); resp.Body.Close() }
	t.Cleanup(st.close)
	go func() {
		defer close(st.events)
		br := bufio.NewReader(resp.Body)
		var ev sseEvent
		var data strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if ev.event != "" {
					if data.Len() > 0 {
						_ = json.Unmarshal([]byte(data.String()), &ev.data)
					}
					st.events <- ev
				}
				ev, data = sseEvent{}, strings.Builder{}
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				data.WriteString(strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	st.connect = st.next()
	if st.connect.event != "connect" {
		t.Fatalf("first event = %+v, want connect", st.connect)
	}
	st.clientID, _ = st.connect.data["client_id"].(string)
	if st.clientID == "" {
		t.Fatalf("connect event without client_id: %+v", st.connect)
	}
	if _, err := strconv.ParseUint(st.connect.id, 10, 64); err != nil {
		t.Fatalf("connect event id %q is not a sequence", st.connect.id)
	}
	return st
}

// next is the stream's next event, failing after 15 s without one.
func (st *sseStream) next() sseEvent {
	st.t.Helper()
	select {
	case ev, ok := <-st.events:
		if !ok {
			st.t.Fatal("the realtime stream ended")
		}
		return ev
	case <-time.After(15 * time.Second): // why sleep: the bound of a wait for an event pushed by the server
		st.t.Fatal("no realtime event within 15 s")
	}
	return sseEvent{}
}

// nextItem is the next event, which must be action on collection's item
// titled title; it returns the event.
func (st *sseStream) nextItem(collection, action, title string) sseEvent {
	st.t.Helper()
	ev := st.next()
	item, _ := ev.data["item"].(map[string]any)
	if ev.event != collection || ev.data["action"] != action || ev.data["collection"] != collection || item == nil {
		st.t.Fatalf("event = %+v, want %s %s", ev, action, collection)
	}
	if title != "" && item["title"] != title {
		st.t.Fatalf("event item = %v, want title %q", item, title)
	}
	if _, err := strconv.ParseUint(ev.id, 10, 64); err != nil {
		st.t.Fatalf("event id %q is not a sequence", ev.id)
	}
	return ev
}

// appears reads a published-only key's events of an item published by a
// PATCH: a create; or, when the gateway did not see the write's
// item.published within its pairing window (a loaded machine), an update
// and then the create (docs/realtime.md). It returns the create.
func (st *sseStream) appears(collection, title string) sseEvent {
	st.t.Helper()
	ev := st.next()
	if ev.data["action"] == "update" {
		if item, _ := ev.data["item"].(map[string]any); item["title"] != title {
			st.t.Fatalf("event = %+v, want %s appearing", ev, title)
		}
		ev = st.next()
	}
	item, _ := ev.data["item"].(map[string]any)
	if ev.event != collection || ev.data["action"] != "create" || item["title"] != title {
		st.t.Fatalf("event = %+v, want the create of %s", ev, title)
	}
	return ev
}

func subscribe(t *testing.T, s *stack, key, clientID string, subs ...string) response {
	t.Helper()
	if subs == nil {
		subs = []string{}
	}
	return call(t, "POST", s.api+"/api/public/v1/realtime", key, map[string]any{"client_id": clientID, "subscriptions": subs})
}

// testRealtime: a published-only key's stream sees a post appear when it
// is published, change, and disappear when it is unpublished, never a
// draft; a full key's sees the drafts; a stream resumes with
// Last-Event-ID; refusals name what was wrong.
func testRealtime(t *testing.T, s *stack) {
	c, other := s.newCMS(t), s.newCMS(t)
	s.create(t, "/admin/v1/sites/"+other.site+"/collections", "collection", map[string]any{"name": "News", "slug": "news",
		"fields": []map[string]any{{"key": "title", "type": "text"}}})
	r := s.adminCall(t, "POST", "/admin/v1/keys", map[string]any{"name": "page", "scopes": []string{"read"}, "site_id": c.site, "published_only": true})
	wantStatus(t, r, http.StatusCreated)
	page := r.json["key"].(map[string]any)["secret"].(string)

	pub := openRealtime(t, s, "")
	full := openRealtime(t, s, "")
	if pub.clientID == full.clientID {
		t.Fatalf("two streams share client_id %s", pub.clientID)
	}

	// Refusals: nothing is subscribed by them.
	wantError(t, call(t, "POST", s.api+"/api/public/v1/realtime", page, map[string]any{"subscriptions": []string{"posts"}}), http.StatusBadRequest, "client_id")
	wantError(t, subscribe(t, s, page, "nope", "posts"), http.StatusNotFound, "client_id")
	wantError(t, subscribe(t, s, page, pub.clientID, "news"), http.StatusBadRequest, `"news"`, "posts")
	wantError(t, subscribe(t, s, page, pub.clientID, "posts/"), http.StatusBadRequest, "subscriptions[0]")
	many := make([]string, 101)
	for i := range many {
		many[i] = "posts"
	}
	wantError(t, subscribe(t, s, page, pub.clientID, many...), http.StatusBadRequest, "at most 100")
	wantError(t, subscribe(t, s, "", pub.clientID, "posts"), http.StatusUnauthorized)

	wantStatus(t, subscribe(t, s, page, pub.clientID, "posts"), http.StatusNoContent)
	wantStatus(t, subscribe(t, s, c.read, full.clientID, "posts"), http.StatusNoContent)
	// The stream is the page key's now: another tenant's key, or another
	// key of the same site, is refused.
	wantError(t, subscribe(t, s, other.read, pub.clientID, "posts"), http.StatusForbidden, "another API key")
	wantError(t, subscribe(t, s, c.read, pub.clientID, "posts"), http.StatusForbidden, "another API key")
	// Another tenant's key cannot subscribe to this site's collection
	// through a stream of its own either: its site has no posts' events
	// of this site (and names only its own collections).
	spy := openRealtime(t, s, "")
	wantStatus(t, subscribe(t, s, other.read, spy.clientID, "posts", "news"), http.StatusNoContent)

	draft := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Draft"}})
	id := draft["id"].(string)
	full.nextItem("posts", "create", "Draft")
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{"title": "Still a draft"}}), http.StatusOK)
	full.nextItem("posts", "update", "Still a draft")
	// Published: it appears for the page, once, as a create.
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{"title": "Live"}, "is_published": true}), http.StatusOK)
	ev := pub.appears("posts", "Live")
	if ev.data["item"].(map[string]any)["id"] != id {
		t.Fatalf("create event = %+v, want item %s", ev, id)
	}
	full.nextItem("posts", "update", "Live")
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{"title": "Live, edited"}}), http.StatusOK)
	pub.nextItem("posts", "update", "Live, edited")
	full.nextItem("posts", "update", "Live, edited")
	// Unpublished: it disappears, without its data.
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{}, "is_published": false}), http.StatusOK)
	ev = pub.next()
	if ev.event != "posts" || ev.data["action"] != "delete" || ev.data["item"].(map[string]any)["id"] != id || ev.data["item"].(map[string]any)["title"] != nil {
		t.Fatalf("unpublish event = %+v, want a delete of %s carrying only its id", ev, id)
	}
	lastID := ev.id
	full.nextItem("posts", "update", "Live, edited")
	// A draft's edit never reaches the page: the next event it sees is
	// the next published item's.
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{"title": "Secret"}}), http.StatusOK)
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Second"}, "is_published": true})
	pub.nextItem("posts", "create", "Second")
	full.nextItem("posts", "update", "Secret")
	full.nextItem("posts", "create", "Second")

	// The other tenant's stream heard nothing of this site: its next
	// event is its own site's.
	otherItem := call(t, "POST", other.base+"/news", other.write, map[string]any{"data": map[string]any{"title": "Theirs"}, "is_published": true})
	wantStatus(t, otherItem, http.StatusCreated)
	spy.nextItem("news", "create", "Theirs")

	// Resume: what happened while the page was away arrives on the new
	// stream, after the last id it saw, without a gap.
	pub.close()
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "While away"}, "is_published": true})
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "A draft while away"}})
	back := openRealtime(t, s, lastID)
	wantStatus(t, subscribe(t, s, page, back.clientID, "posts"), http.StatusNoContent)
	ev = back.nextItem("posts", "create", "Second")
	if mustUint(t, ev.id) <= mustUint(t, lastID) {
		t.Fatalf("resumed event id %s is not after Last-Event-ID %s", ev.id, lastID)
	}
	back.nextItem("posts", "create", "While away")
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Back live"}, "is_published": true})
	back.nextItem("posts", "create", "Back live")

	// An id the server never sent: the client is told to refetch.
	far := openRealtime(t, s, strconv.FormatUint(mustUint(t, ev.id)+1_000_000, 10))
	wantStatus(t, subscribe(t, s, page, far.clientID, "posts"), http.StatusNoContent)
	if ev := far.next(); ev.event != "reset" {
		t.Fatalf("a resume from an unknown id = %+v, want a reset event", ev)
	}
	wantError(t, call(t, "GET", s.api+"/api/public/v1/realtime", "", nil, "Last-Event-ID", "x"), http.StatusBadRequest, "Last-Event-ID")
	// Id 0, the connect frame's id on a server that had seen no event yet,
	// is what a browser's EventSource sends back when it reconnects: it
	// resumes (an answer other than 200 would end the EventSource for good).
	zero := openRealtime(t, s, "0")
	wantStatus(t, subscribe(t, s, page, zero.clientID, "posts"), http.StatusNoContent)
	zero.close()
	// An empty list unsubscribes.
	wantStatus(t, subscribe(t, s, page, back.clientID), http.StatusNoContent)
	c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Unheard"}, "is_published": true})
	wantStatus(t, subscribe(t, s, page, back.clientID, fmt.Sprintf("posts/%s", id)), http.StatusNoContent)
	wantStatus(t, call(t, "PATCH", c.base+"/posts/"+id, c.write, map[string]any{"data": map[string]any{}, "is_published": true}), http.StatusOK)
	back.appears("posts", "Secret")
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not a sequence", s)
	}
	return n
}
