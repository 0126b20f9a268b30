package gateway

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// TestRealtimeActions: what each class of key is told of each event. A
// published-only key never hears of a draft, sees a publish as a create
// (once, though two events announce it) and an unpublish as a delete.
func TestRealtimeActions(t *testing.T) {
	ev := func(change string, published bool) rtEvent {
		return rtEvent{siteID: "s", collection: "posts", id: "i", change: change, published: published, version: 2}
	}
	publishedPair := ev("published", true)
	otherItem := publishedPair
	otherItem.id = "j"
	for _, tc := range []struct {
		name       string
		ev         rtEvent
		next       *rtEvent
		full, page string
		paired     bool
	}{
		{"draft created", ev("created", false), nil, "create", "", false},
		{"created published (its published follows)", ev("created", true), nil, "create", "", false},
		{"published", ev("published", true), nil, "", "create", false},
		{"draft updated", ev("updated", false), nil, "update", "", false},
		{"published item updated", ev("updated", true), nil, "update", "update", false},
		{"update that published it", ev("updated", true), &publishedPair, "update", "create", true},
		{"update followed by another item's publish", ev("updated", true), &otherItem, "update", "update", false},
		{"unpublished", ev("unpublished", false), nil, "", "delete", false},
		{"draft deleted", ev("deleted", false), nil, "delete", "", false},
		{"published item deleted", ev("deleted", true), nil, "delete", "delete", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := action(tc.ev, tc.next, false); got != tc.full {
				t.Errorf("full key: %q, want %q", got, tc.full)
			}
			got, paired := action(tc.ev, tc.next, true)
			if got != tc.page || paired != tc.paired {
				t.Errorf("published-only key: %q (paired %v), want %q (paired %v)", got, paired, tc.page, tc.paired)
			}
		})
	}
}

// realtimeKeys are the keys the fake services know: two published-only
// keys and a full one of site A, a key of site B.
var realtimeKeys = map[string]struct {
	id, site string
	page     bool
}{
	"atr_PAGE1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA": {"page-1", "A", true},
	"atr_PAGE2AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA": {"page-2", "A", true},
	"atr_FULLAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA": {"full", "A", false},
	"atr_OTHERBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA": {"other", "B", false},
}

// realtimeServices are the CRM (the keys) and the collections service:
// site A has posts, site B news; an item's title is its id, and a draft
// (an id starting with "draft") is 404 to a published-only key.
type realtimeServices struct {
	crmv1.UnimplementedAPIKeyServiceServer
	collectionsv1.UnimplementedCollectionsServiceServer
	sites map[string]string // site id as the tests name it → its uuid
}

func (f *realtimeServices) VerifyAPIKey(_ context.Context, req *crmv1.VerifyAPIKeyRequest) (*crmv1.VerifyAPIKeyResponse, error) {
	for secret, k := range realtimeKeys {
		if d := sha256.Sum256([]byte(secret)); string(req.SecretSha256) == string(d[:]) {
			return &crmv1.VerifyAPIKeyResponse{Key: &crmv1.APIKey{
				Id: k.id, Scopes: []string{"read"}, SiteId: wrapperspb.String(f.sites[k.site]), PublishedOnly: proto.Bool(k.page), CreatedAt: timestamppb.Now(),
			}}, nil
		}
	}
	return nil, status.Error(codes.NotFound, "unknown API key")
}

func (f *realtimeServices) ListCollections(ctx context.Context, _ *collectionsv1.ListCollectionsRequest) (*collectionsv1.ListCollectionsResponse, error) {
	p, _ := principal.FromContext(ctx)
	slug := "news"
	if p.SiteID == f.sites["A"] {
		slug = "posts"
	}
	return &collectionsv1.ListCollectionsResponse{Collections: []*collectionsv1.Collection{{Name: slug, Slug: slug}}}, nil
}

func (f *realtimeServices) GetItem(ctx context.Context, req *collectionsv1.GetItemRequest) (*collectionsv1.GetItemResponse, error) {
	p, _ := principal.FromContext(ctx)
	if p.PublishedOnly && strings.HasPrefix(req.ItemId, "draft") {
		return nil, status.Error(codes.NotFound, "item not found")
	}
	item, _ := structpb.NewStruct(map[string]any{"id": req.ItemId, "title": req.ItemId, "seen_by_published_only": p.PublishedOnly})
	return &collectionsv1.GetItemResponse{Item: item}, nil
}

func startRealtimeServices(t *testing.T, f *realtimeServices) string {
	t.Helper()
	signer, _ := principal.NewSigner(secret)
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	crmv1.RegisterAPIKeyServiceServer(srv, f)
	collectionsv1.RegisterCollectionsServiceServer(srv, f)
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	return srv.Addr()
}

// realtimeStack is a gateway with NATS in front of realtimeServices, and
// a JetStream to publish the collections' events to (the shared test
// server's collections stream, with sites of this test's own).
type realtimeStack struct {
	r     *running
	base  string
	js    jetstream.JetStream
	sites map[string]string
	// another starts another gateway on the same services and NATS.
	another func(t *testing.T) *realtimeStack
}

func startRealtime(t *testing.T, tweak func(*Config)) *realtimeStack {
	t.Helper()
	url := natstest.URL(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(t.Context(), events.CollectionsStream.Name); err != nil {
		// As the collections service creates it (platform/runner).
		if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: events.CollectionsStream.Name, Subjects: []string{events.CollectionsStream.Subjects},
			Storage: jetstream.FileStorage, MaxAge: 7 * 24 * time.Hour}); err != nil && !strings.Contains(err.Error(), "already in use") {
			t.Fatal(err)
		}
	}
	f := &realtimeServices{sites: map[string]string{"A": testUUID(), "B": testUUID()}}
	addr := startRealtimeServices(t, f)
	other := closedAddr(t)
	start := func(t *testing.T) *realtimeStack {
		r := startGatewayTo(t, map[string]string{"crm": addr, "collections": addr, "data": other, "actions": other, "webhooks": other, "audit": other}, func(c *Config) {
			c.NATSURL = url
			if tweak != nil {
				tweak(c)
			}
		})
		// The hub consumes from the stream's end once it has read where
		// that is: events published before then would not reach it.
		deadline := time.Now().Add(10 * time.Second)
		for r.gw.realtime.seq.Load() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the realtime hub did not start consuming within 10 s")
			}
			time.Sleep(10 * time.Millisecond) // why sleep: poll of the hub's first read of the JetStream stream, which has no push form
		}
		return &realtimeStack{r: r, base: "http://" + r.gw.HTTPAddr(), js: js, sites: f.sites}
	}
	s := start(t)
	s.another = start
	return s
}

// publish publishes an item event of site as the collections service
// would.
func (s *realtimeStack) publish(t *testing.T, def *events.Def[events.ItemEvent], site, collection, id string, published bool) {
	t.Helper()
	subject, payload, err := def.Marshal(events.ItemEvent{ID: id, SiteID: s.sites[site], Collection: collection, IsPublished: published, Version: 1, At: time.Now(), CollectionID: testUUID()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.js.Publish(t.Context(), subject, payload); err != nil {
		t.Fatal(err)
	}
}

type rtTestStream struct {
	clientID string
	events   chan sseEvent
	body     interface{ Close() error }
}

type sseEvent struct {
	event, id, data string
}

func (s *realtimeStack) open(t *testing.T) *rtTestStream {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", s.base+realtimePath, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET realtime = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	st := &rtTestStream{events: make(chan sseEvent, 32), body: resp.Body}
	go func() {
		defer close(st.events)
		br := bufio.NewReader(resp.Body)
		var ev sseEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "" && ev.event != "":
				st.events <- ev
				ev = sseEvent{}
			case line == ": ping":
				st.events <- sseEvent{event: "ping"}
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	connect := st.next(t)
	var d struct {
		ClientID string `json:"client_id"`
	}
	if err := json.Unmarshal([]byte(connect.data), &d); connect.event != "connect" || err != nil || d.ClientID == "" {
		t.Fatalf("first event = %+v, want connect with a client_id", connect)
	}
	st.clientID = d.ClientID
	return st
}

func (st *rtTestStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-st.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second): // why sleep: the bound of a wait for an event the server pushes
		t.Fatal("no event within 10 s")
	}
	return sseEvent{}
}

func (s *realtimeStack) subscribe(t *testing.T, key, clientID string, subs ...string) (int, string) {
	t.Helper()
	if subs == nil {
		subs = []string{}
	}
	b, _ := json.Marshal(map[string]any{"client_id": clientID, "subscriptions": subs})
	req, _ := http.NewRequest("POST", s.base+realtimePath, strings.NewReader(string(b)))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Error
}

const (
	page1 = "atr_PAGE1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	page2 = "atr_PAGE2AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	full  = "atr_FULLAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	keyB  = "atr_OTHERBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
)

// TestRealtimeFansOutOneReadPerClass: five subscribers of two classes
// cost two reads an event; each gets the item as its key reads it; a
// draft reaches only the full key; another site's stream hears nothing.
func TestRealtimeFansOutOneReadPerClass(t *testing.T) {
	s := startRealtime(t, nil)
	var pages, fulls []*rtTestStream
	for i, key := range []string{page1, page2, page1, full, full} {
		st := s.open(t)
		if code, msg := s.subscribe(t, key, st.clientID, "posts"); code != http.StatusNoContent {
			t.Fatalf("subscribe %d = %d %s", i, code, msg)
		}
		if i < 3 {
			pages = append(pages, st)
		} else {
			fulls = append(fulls, st)
		}
	}
	spy := s.open(t)
	if code, msg := s.subscribe(t, keyB, spy.clientID, "news"); code != http.StatusNoContent {
		t.Fatalf("site B's subscription = %d %s", code, msg)
	}

	s.publish(t, events.ItemCreated, "A", "posts", "draft-1", false)
	s.publish(t, events.ItemCreated, "A", "posts", "live-1", true)
	s.publish(t, events.ItemPublished, "A", "posts", "live-1", true)
	s.publish(t, events.ItemCreated, "B", "news", "theirs", true)
	for _, st := range fulls {
		for _, want := range []string{"draft-1", "live-1"} {
			ev := st.next(t)
			if ev.event != "posts" || !strings.Contains(ev.data, `"action":"create"`) || !strings.Contains(ev.data, `"title":"`+want+`"`) || !strings.Contains(ev.data, `"seen_by_published_only":false`) {
				t.Fatalf("full key's event = %+v, want the create of %s as it reads it", ev, want)
			}
		}
	}
	for _, st := range pages {
		ev := st.next(t)
		if ev.event != "posts" || !strings.Contains(ev.data, `"action":"create"`) || !strings.Contains(ev.data, `"title":"live-1"`) || !strings.Contains(ev.data, `"seen_by_published_only":true`) {
			t.Fatalf("published-only key's first event = %+v, want the create of live-1 (never the draft)", ev)
		}
	}
	if ev := spy.next(t); !strings.Contains(ev.data, `"title":"theirs"`) {
		t.Fatalf("site B's stream got %+v, want only its own site's item", ev)
	}
	// draft-1 for the full keys, live-1 for each class, theirs for site
	// B: four reads for nine frames.
	if n := s.r.gw.realtime.fetches.Load(); n != 4 {
		t.Fatalf("%d reads of items, want 4 (one per event, site and class of key)", n)
	}
	// Unpublished: a delete with the id only, for the published-only keys.
	s.publish(t, events.ItemUpdated, "A", "posts", "live-1", false)
	s.publish(t, events.ItemUnpublished, "A", "posts", "live-1", false)
	ev := pages[0].next(t)
	if !strings.Contains(ev.data, `"action":"delete"`) || strings.Contains(ev.data, "title") {
		t.Fatalf("unpublish = %+v, want a delete carrying only the id", ev)
	}
}

// TestRealtimeRefusals: each wrong POST names what was wrong, and the
// stream is bound to its first key.
func TestRealtimeRefusals(t *testing.T) {
	s := startRealtime(t, func(c *Config) { c.RealtimeMaxStreamsPerKey = 2 })
	st := s.open(t)
	for _, tc := range []struct {
		name, key, client string
		subs              []string
		code              int
		words             string
	}{
		{"no key", "", st.clientID, []string{"posts"}, http.StatusUnauthorized, ""},
		{"unknown client", page1, "nope", []string{"posts"}, http.StatusNotFound, "client_id"},
		{"missing client", page1, "", []string{"posts"}, http.StatusBadRequest, "client_id"},
		{"another site's collection", page1, st.clientID, []string{"news"}, http.StatusBadRequest, `"news"`},
		{"not a subscription", page1, st.clientID, []string{"posts/a/b"}, http.StatusBadRequest, "subscriptions[0]"},
		{"too many", page1, st.clientID, make([]string, 101), http.StatusBadRequest, "at most 100"},
	} {
		if code, msg := s.subscribe(t, tc.key, tc.client, tc.subs...); code != tc.code || !strings.Contains(msg, tc.words) {
			t.Errorf("%s: %d %q, want %d naming %s", tc.name, code, msg, tc.code, tc.words)
		}
	}
	if code, msg := s.subscribe(t, page1, st.clientID, "posts"); code != http.StatusNoContent {
		t.Fatalf("subscribe = %d %s", code, msg)
	}
	for _, key := range []string{page2, keyB} {
		if code, msg := s.subscribe(t, key, st.clientID, "posts"); code != http.StatusForbidden || !strings.Contains(msg, "another API key") {
			t.Errorf("a second key on the stream: %d %q, want 403", code, msg)
		}
	}
	// The key's cap: a third stream bound to it is refused, naming the
	// flag; another key of the site is not held by it.
	second, third := s.open(t), s.open(t)
	if code, _ := s.subscribe(t, page1, second.clientID, "posts"); code != http.StatusNoContent {
		t.Fatalf("second stream = %d", code)
	}
	if code, msg := s.subscribe(t, page1, third.clientID, "posts"); code != http.StatusTooManyRequests || !strings.Contains(msg, "--realtime-max-streams-per-key") {
		t.Errorf("third stream of a key with a cap of 2 = %d %q, want 429 naming the flag", code, msg)
	}
	if code, _ := s.subscribe(t, page2, third.clientID, "posts"); code != http.StatusNoContent {
		t.Errorf("another key on the refused stream = %d, want 204", code)
	}
}

// TestRealtimeHeartbeatAndIdle: an open stream gets heartbeats; one
// without subscriptions ends once idle.
func TestRealtimeHeartbeatAndIdle(t *testing.T) {
	s := startRealtime(t, func(c *Config) {
		c.RealtimeHeartbeat = 20 * time.Millisecond
		c.realtimeIdle = 300 * time.Millisecond
	})
	busy, idle := s.open(t), s.open(t)
	if code, _ := s.subscribe(t, page1, busy.clientID, "posts"); code != http.StatusNoContent {
		t.Fatal("subscribe")
	}
	if ev := busy.next(t); ev.event != "ping" {
		t.Fatalf("event = %+v, want a heartbeat", ev)
	}
	deadline := time.After(10 * time.Second) // why sleep: the bound of the wait for the idle stream's end
	for {
		select {
		case _, ok := <-idle.events:
			if !ok {
				// Ended; the subscribed one is still open.
				if ev := busy.next(t); ev.event != "ping" {
					t.Fatalf("subscribed stream after the idle one ended: %+v", ev)
				}
				return
			}
		case <-deadline:
			t.Fatal("a stream without subscriptions was not closed")
		}
	}
}

// testUUID is a random UUID (version 4), as the events' ids are.
func testUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// TestRealtimeSubscriptionsReachAnotherGatewaysStream: a POST that a load
// balancer sends to another gateway than the stream's is applied by the
// stream's gateway, under the same rules: the stream gets its events, it
// stays bound to its first key, the key's cap holds, and a stream that
// ended (or a client id no gateway holds) is 404.
func TestRealtimeSubscriptionsReachAnotherGatewaysStream(t *testing.T) {
	a := startRealtime(t, func(c *Config) { c.RealtimeMaxStreamsPerKey = 1 })
	b := a.another(t)
	if a.r.gw.realtime.prefix == b.r.gw.realtime.prefix {
		t.Fatal("two gateways share a client id prefix")
	}
	st := a.open(t)
	if code, msg := b.subscribe(t, page1, st.clientID, "posts"); code != http.StatusNoContent {
		t.Fatalf("subscribe through the other gateway = %d %s; want 204", code, msg)
	}
	// A published-only key hears of an item when it is published.
	a.publish(t, events.ItemCreated, "A", "posts", "live-1", true)
	a.publish(t, events.ItemPublished, "A", "posts", "live-1", true)
	if ev := st.next(t); ev.event != "posts" || !strings.Contains(ev.data, `"title":"live-1"`) {
		t.Fatalf("the stream's event = %+v; want live-1's create", ev)
	}
	for _, tc := range []struct {
		name, key, client string
		subs              []string
		code              int
		words             string
	}{
		{"another key", page2, st.clientID, []string{"posts"}, http.StatusForbidden, "another API key"},
		{"another site's collection", page1, st.clientID, []string{"news"}, http.StatusBadRequest, `"news"`},
		{"no gateway's client", page1, "zzzzzzzz_nope", []string{"posts"}, http.StatusNotFound, "client_id"},
	} {
		if code, msg := b.subscribe(t, tc.key, tc.client, tc.subs...); code != tc.code || !strings.Contains(msg, tc.words) {
			t.Errorf("%s: %d %q, want %d naming %s", tc.name, code, msg, tc.code, tc.words)
		}
	}
	second := a.open(t)
	if code, msg := b.subscribe(t, page1, second.clientID, "posts"); code != http.StatusTooManyRequests || !strings.Contains(msg, "--realtime-max-streams-per-key") {
		t.Errorf("a second stream of a key with a cap of 1, through the other gateway = %d %q; want 429 naming the flag", code, msg)
	}
	// The stream ends: its id is no one's.
	_ = st.body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, msg := b.subscribe(t, page1, st.clientID, "posts")
		if code == http.StatusNotFound && strings.Contains(msg, "client_id") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an ended stream's id through the other gateway = %d %q; want 404", code, msg)
		}
		time.Sleep(20 * time.Millisecond) // why sleep: the stream's gateway notices the closed connection on its own time
	}
}
