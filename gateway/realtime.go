package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// Live updates for web pages over server-sent events (docs/realtime.md),
// PocketBase's protocol: GET /api/public/v1/realtime opens a stream and
// names it (event: connect, {"client_id"}); POST with a key sets what it
// receives. The key goes on the POST because EventSource cannot send
// headers; the first key binds the stream, and the stream only ever
// carries what that key could read.
//
// Each gateway feeds its streams from JetStream (the collections stream),
// so a write made anywhere reaches every gateway's streams. An event is
// read from the collections service once per site and visibility class
// (published-only keys, full keys) that has a subscriber, then the same
// frame is written to every subscriber of that class: a thousand
// subscribers cost one GetItem, not a thousand. The event's id is its
// JetStream sequence, so a client that reconnects with Last-Event-ID is
// replayed what it missed from the stream.

const (
	realtimePath = "/api/public/v1/realtime"
	// realtimeMaxSubscriptions bounds a POST's list.
	realtimeMaxSubscriptions = 100
	// realtimeMaxReplay is the most events a resume replays: a client
	// that missed more is told to refetch (event: reset), which is
	// cheaper for both than a long replay.
	realtimeMaxReplay = 10_000
	// realtimeBuffer is the frames a stream may have waiting for its
	// client; a client that falls further behind is cut and resumes
	// with Last-Event-ID.
	realtimeBuffer = 256
	// realtimePairWindow is how long, after an item.updated of a
	// published item, the hub waits for the item.published of the same
	// write (the collections service enqueues both in one transaction):
	// for a published-only key the pair is one "create".
	realtimePairWindow = 25 * time.Millisecond
	// assetsSubscription is the subscription to the site's assets.
	assetsSubscription = "assets"
)

// The RPC whose access rule a subscription is judged by.
const (
	// GetItem's: the key must read the site's content (GetAsset's and
	// ListCollections' rules are the same).
	getItemRPC = "/atrium.collections.v1.CollectionsService/GetItem"
)

// rtEvent is one collections event as the hub handles it.
type rtEvent struct {
	seq        uint64
	siteID     string
	collection string // the collection's slug; "assets" for an asset
	id         string
	change     string // created, updated, published, unpublished, deleted
	published  bool
	version    int64
}

// parseRealtimeEvent reads a collections stream message; ok is false for
// the events a stream does not carry (sites, collections' definitions).
func parseRealtimeEvent(seq uint64, subject string, data []byte) (rtEvent, bool) {
	for _, d := range []struct {
		change string
		def    *events.Def[events.ItemEvent]
	}{{"created", events.ItemCreated}, {"updated", events.ItemUpdated}, {"published", events.ItemPublished}, {"unpublished", events.ItemUnpublished}, {"deleted", events.ItemDeleted}} {
		if d.def.Matches(subject) {
			p, err := d.def.Parse(subject, data)
			if err != nil || p.ID == "" || p.SiteID == "" {
				return rtEvent{}, false
			}
			return rtEvent{seq: seq, siteID: p.SiteID, collection: p.Collection, id: p.ID, change: d.change, published: p.IsPublished, version: p.Version}, true
		}
	}
	for _, d := range []struct {
		change string
		def    *events.Def[events.AssetEvent]
	}{{"created", events.AssetCreated}, {"updated", events.AssetUpdated}, {"deleted", events.AssetDeleted}} {
		if d.def.Matches(subject) {
			p, err := d.def.Parse(subject, data)
			if err != nil || p.ID == "" || p.SiteID == "" {
				return rtEvent{}, false
			}
			return rtEvent{seq: seq, siteID: p.SiteID, collection: assetsSubscription, id: p.ID, change: d.change, published: true}, true
		}
	}
	return rtEvent{}, false
}

// action is what a subscriber of the class (publishedOnly or not) is told
// of ev: "create", "update", "delete", or "" for nothing. next is the
// event that follows ev, when the hub waited for it; paired reports that
// ev and next are one write told as one action (next is then consumed).
//
// Full keys see every item as their GET would: created, updated and
// deleted tell them everything (published and unpublished follow an
// update they were already told of). A published-only key sees an item
// appear when it is published (create), change while it is published
// (update) and disappear when it is unpublished or deleted (delete); a
// draft's changes never reach it, not even its id.
func action(ev rtEvent, next *rtEvent, publishedOnly bool) (act string, paired bool) {
	if !publishedOnly || ev.collection == assetsSubscription {
		switch ev.change {
		case "created":
			return "create", false
		case "updated":
			return "update", false
		case "deleted":
			return "delete", false
		}
		return "", false
	}
	switch ev.change {
	case "created":
		// A published create is followed by its item.published, which
		// says create.
		return "", false
	case "published":
		return "create", false
	case "unpublished":
		return "delete", false
	case "deleted":
		if ev.published {
			return "delete", false
		}
	case "updated":
		if !ev.published {
			return "", false
		}
		if next != nil && next.change == "published" && next.id == ev.id && next.siteID == ev.siteID && next.version == ev.version {
			return "create", true
		}
		return "update", false
	}
	return "", false
}

// needsPair reports whether the hub should wait for the event after ev
// before telling published-only keys of it.
func needsPair(ev rtEvent) bool {
	return ev.change == "updated" && ev.published && ev.collection != assetsSubscription
}

// rtClient is one open stream.
type rtClient struct {
	id     string
	origin string
	// frames are the frames waiting for the client, with their sequence.
	frames chan rtFrame
	// gone is closed when the stream must end: its client is too slow, or
	// the gateway stops.
	gone     chan struct{}
	goneOnce sync.Once
	// subsChanged wakes the stream's loop when its subscriptions change
	// (the idle timer).
	subsChanged chan struct{}
	// resumeAfter is the Last-Event-ID the stream was opened with, replayed
	// from at its first subscription when resuming is set. It may be 0: a
	// stream opened before this server had seen any event was told id 0
	// in its connect frame, and a browser's EventSource sends that back.
	resumeAfter uint64
	resuming    bool

	mu      sync.Mutex
	bound   bool
	p       principal.Principal
	subs    map[string]struct{}
	resumed bool
	// replaying: frames of live events are held in held until the replay
	// has caught up with them; last is the sequence last sent, and a live
	// frame at or before it was sent by the replay already.
	replaying bool
	held      []rtFrame
	last      uint64
}

type rtFrame struct {
	seq uint64
	b   []byte
}

func (c *rtClient) end() { c.goneOnce.Do(func() { close(c.gone) }) }

// wants reports whether the client subscribes to ev.
func (c *rtClient) wants(ev rtEvent) bool {
	if _, ok := c.subs[ev.collection]; ok {
		return true
	}
	_, ok := c.subs[ev.collection+"/"+ev.id]
	return ok
}

// push queues a live frame; a client whose buffer is full is cut (it
// resumes with Last-Event-ID).
func (c *rtClient) push(f rtFrame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.replaying {
		if len(c.held) >= realtimeMaxReplay {
			c.end()
			return
		}
		c.held = append(c.held, f)
		return
	}
	c.sendLocked(f)
}

func (c *rtClient) sendLocked(f rtFrame) {
	if f.seq != 0 && f.seq <= c.last {
		return
	}
	select {
	case c.frames <- f:
		if f.seq != 0 {
			c.last = f.seq
		}
	default:
		c.end()
	}
}

// realtimeHub holds one gateway's realtime streams and feeds them.
type realtimeHub struct {
	g      *Gateway
	prefix string // this gateway's client ids start with it
	js     jetstream.JetStream
	stream string
	// subject is the filter of the live consumer, site is its form for
	// one site's replay ("%s" is the site).
	subject, siteSubject string

	// seq is the last stream sequence the hub has handled (or the
	// stream's last when it started): the connect frame's id.
	seq atomic.Uint64

	mu      sync.Mutex
	clients map[string]*rtClient
	bySite  map[string]map[*rtClient]struct{}
	perKey  map[string]int
	perSite map[string]int

	// fetches counts the reads of items and assets the hub made, which
	// tests compare with the subscribers.
	fetches atomic.Int64
}

func newRealtimeHub(g *Gateway, js jetstream.JetStream) *realtimeHub {
	id := randomID(5)
	return &realtimeHub{g: g, js: js, prefix: id, stream: events.CollectionsStream.Name,
		subject: events.CollectionsStream.Subjects, siteSubject: "atrium.collections.%s.>",
		clients: map[string]*rtClient{}, bySite: map[string]map[*rtClient]struct{}{}, perKey: map[string]int{}, perSite: map[string]int{}}
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(idEncoding.EncodeToString(b))
}

// run feeds the streams from JetStream until ctx ends, consuming the
// collections stream from its end: events before the gateway started
// reach a stream only through a resume.
func (h *realtimeHub) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := h.consume(ctx); err != nil && ctx.Err() == nil {
			h.g.cfg.Logger.Warn("realtime: consuming the collections stream failed; retrying", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (h *realtimeHub) consume(ctx context.Context) error {
	st, err := h.js.Stream(ctx, h.stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", h.stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	// The first time from the stream's end; after a failure from the
	// last event handled, so that none is skipped.
	if h.seq.Load() == 0 {
		h.seq.Store(info.State.LastSeq)
	}
	start := h.seq.Load() + 1
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{h.subject}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start,
	})
	if err != nil {
		return err
	}
	evs := make(chan rtEvent, 1024)
	errc := make(chan error, 1)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(evs)
		it, err := cons.Messages()
		if err != nil {
			errc <- err
			return
		}
		go func() { <-cctx.Done(); it.Stop() }()
		for {
			m, err := it.Next()
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					errc <- err
				}
				return
			}
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			ev, ok := parseRealtimeEvent(md.Sequence.Stream, m.Subject(), m.Data())
			if !ok {
				ev = rtEvent{seq: md.Sequence.Stream} // moves the hub's sequence on
			}
			select {
			case evs <- ev:
			case <-cctx.Done():
				return
			}
		}
	}()
	h.handle(ctx, evs, h.fanOut)
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// handle reads events from evs in order, pairing an item.updated with
// the item.published of the same write when one follows at once, and
// gives each to deliver with its pair.
func (h *realtimeHub) handle(ctx context.Context, evs <-chan rtEvent, deliver func(context.Context, rtEvent, *rtEvent)) {
	var peeked *rtEvent
	for {
		var ev rtEvent
		if peeked != nil {
			ev, peeked = *peeked, nil
		} else {
			var ok bool
			if ev, ok = <-evs; !ok {
				return
			}
		}
		if ev.siteID == "" {
			h.advance(ev.seq)
			continue
		}
		var next *rtEvent
		if needsPair(ev) && h.hasPublishedOnly(ev.siteID) {
			select {
			case n, ok := <-evs:
				if ok {
					next = &n
				}
			case <-time.After(realtimePairWindow):
			case <-ctx.Done():
				return
			}
		}
		deliver(ctx, ev, next)
		if next != nil {
			if _, paired := action(ev, next, true); paired {
				// The full keys' side of the pair: item.published tells
				// them nothing more, so it is only counted.
				h.advance(next.seq)
			} else {
				peeked = next
			}
		}
		h.advance(ev.seq)
	}
}

func (h *realtimeHub) advance(seq uint64) {
	for {
		cur := h.seq.Load()
		if seq <= cur || h.seq.CompareAndSwap(cur, seq) {
			return
		}
	}
}

func (h *realtimeHub) hasPublishedOnly(site string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.bySite[site] {
		if c.p.PublishedOnly {
			return true
		}
	}
	return false
}

// fanOut tells every subscriber of ev's site: one read and one frame per
// visibility class, written to each subscriber of the class.
func (h *realtimeHub) fanOut(ctx context.Context, ev rtEvent, next *rtEvent) {
	h.mu.Lock()
	var classes [2][]*rtClient // full, published-only
	var readers [2]principal.Principal
	for c := range h.bySite[ev.siteID] {
		c.mu.Lock()
		wants := c.wants(ev)
		c.mu.Unlock()
		if !wants {
			continue
		}
		i := 0
		if c.p.PublishedOnly {
			i = 1
		}
		if len(classes[i]) == 0 {
			readers[i] = c.p
		}
		classes[i] = append(classes[i], c)
	}
	h.mu.Unlock()
	for i, cs := range classes {
		if len(cs) == 0 {
			continue
		}
		frame, ok := h.frame(ctx, ev, next, readers[i])
		if !ok {
			continue
		}
		for _, c := range cs {
			c.push(frame)
		}
	}
}

// frame is the frame telling a reader of p's class of ev; ok is false
// when it is told nothing.
func (h *realtimeHub) frame(ctx context.Context, ev rtEvent, next *rtEvent, p principal.Principal) (rtFrame, bool) {
	act, _ := action(ev, next, p.PublishedOnly)
	if act == "" {
		return rtFrame{}, false
	}
	var item json.RawMessage
	if act == "delete" {
		item, _ = json.Marshal(map[string]string{"id": ev.id})
	} else {
		var err error
		item, err = h.read(ctx, ev, p)
		switch {
		case status.Code(err) == codes.NotFound:
			// Gone (or no longer visible to the key) since the event: a
			// later event says what became of it.
			if !p.PublishedOnly {
				return rtFrame{}, false
			}
			act, item = "delete", json.RawMessage(`{"id":`+strconv.Quote(ev.id)+`}`)
		case err != nil:
			h.g.cfg.Logger.Warn("realtime: cannot read the item of an event; its subscribers are not told of it", "site_id", ev.siteID, "collection", ev.collection, "id", ev.id, "error", err)
			return rtFrame{}, false
		}
	}
	data, err := json.Marshal(struct {
		Action     string          `json:"action"`
		Collection string          `json:"collection"`
		Item       json.RawMessage `json:"item"`
	}{act, ev.collection, item})
	if err != nil {
		return rtFrame{}, false
	}
	return rtFrame{seq: ev.seq, b: sseFrame(ev.collection, strconv.FormatUint(ev.seq, 10), data)}, true
}

// read reads ev's item or asset as p would.
func (h *realtimeHub) read(ctx context.Context, ev rtEvent, p principal.Principal) (json.RawMessage, error) {
	h.fetches.Add(1)
	ctx, cancel := context.WithTimeout(ctx, h.g.cfg.RequestTimeout)
	defer cancel()
	ctx = metadata.NewOutgoingContext(ctx, metadata.Pairs(principal.MetadataKey, h.g.signer.Token(p)))
	conn := h.g.conn("collections")
	if ev.collection == assetsSubscription {
		resp, err := collectionsv1.NewAssetsServiceClient(conn).GetAsset(ctx, &collectionsv1.GetAssetRequest{AssetId: ev.id})
		if err != nil {
			return nil, err
		}
		return rest.Marshaler().Marshal(resp.GetAsset())
	}
	resp, err := collectionsv1.NewCollectionsServiceClient(conn).GetItem(ctx, &collectionsv1.GetItemRequest{CollectionSlug: ev.collection, ItemId: ev.id})
	if err != nil {
		return nil, err
	}
	return protojson.Marshal(resp.GetItem())
}

// sseFrame is one server-sent event.
func sseFrame(event, id string, data []byte) []byte {
	b := make([]byte, 0, len(event)+len(id)+len(data)+24)
	b = append(b, "event: "...)
	b = append(b, event...)
	if id != "" {
		b = append(b, "\nid: "...)
		b = append(b, id...)
	}
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// open registers a new stream.
func (h *realtimeHub) open(origin string, resumeAfter uint64, resuming bool) *rtClient {
	c := &rtClient{id: h.prefix + "_" + randomID(15), origin: origin, frames: make(chan rtFrame, realtimeBuffer),
		gone: make(chan struct{}), subsChanged: make(chan struct{}, 1), resumeAfter: resumeAfter, resuming: resuming}
	h.mu.Lock()
	h.clients[c.id] = c
	h.mu.Unlock()
	return c
}

// close forgets a stream that ended.
func (h *realtimeHub) close(c *rtClient) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c.id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.bound {
		return
	}
	delete(h.bySite[c.p.SiteID], c)
	if len(h.bySite[c.p.SiteID]) == 0 {
		delete(h.bySite, c.p.SiteID)
	}
	if h.perKey[c.p.Subject]--; h.perKey[c.p.Subject] <= 0 {
		delete(h.perKey, c.p.Subject)
	}
	if h.perSite[c.p.SiteID]--; h.perSite[c.p.SiteID] <= 0 {
		delete(h.perSite, c.p.SiteID)
	}
}

// subscribe replaces c's subscriptions, binding c to p on its first
// call. It returns the error the POST answers.
func (h *realtimeHub) subscribe(c *rtClient, p principal.Principal, subs []string) (resume bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bound && c.p.Subject != p.Subject {
		return false, errBoundToAnother
	}
	if !c.bound {
		if h.perKey[p.Subject] >= h.g.cfg.RealtimeMaxStreamsPerKey {
			return false, errRealtimeCap{fmt.Sprintf("too many realtime streams: this API key may bind at most %d on this server (--realtime-max-streams-per-key); close one, or retry after %d seconds", h.g.cfg.RealtimeMaxStreamsPerKey, longRetryAfter)}
		}
		if h.perSite[p.SiteID] >= h.g.cfg.RealtimeMaxStreamsPerSite {
			return false, errRealtimeCap{fmt.Sprintf("too many realtime streams: the API keys of this site may bind at most %d on this server together (--realtime-max-streams-per-site); close one, or retry after %d seconds", h.g.cfg.RealtimeMaxStreamsPerSite, longRetryAfter)}
		}
		c.bound, c.p = true, p
		h.perKey[p.Subject]++
		h.perSite[p.SiteID]++
		if h.bySite[p.SiteID] == nil {
			h.bySite[p.SiteID] = map[*rtClient]struct{}{}
		}
		h.bySite[p.SiteID][c] = struct{}{}
	}
	c.subs = make(map[string]struct{}, len(subs))
	for _, s := range subs {
		c.subs[s] = struct{}{}
	}
	select {
	case c.subsChanged <- struct{}{}:
	default:
	}
	if c.resuming && !c.resumed && len(subs) > 0 {
		// Live frames are held from now on, so that none falls between
		// the replay's end and the live feed.
		c.resumed, c.replaying = true, true
		return true, nil
	}
	return false, nil
}

// errBoundToAnother refuses a key the subscriptions of another key's
// stream.
var errBoundToAnother = apperr.PermissionDenied("this realtime stream is bound to another API key (the key of its first subscription); open a stream of your own with GET %s", realtimePath)

// errRealtimeCap is a refusal over a realtime cap: 429.
type errRealtimeCap struct{ msg string }

func (e errRealtimeCap) Error() string { return e.msg }

// replay sends c what its site's stream holds after c.resumeAfter, then
// lets the live frames held meanwhile through. A gap the stream no longer
// holds, or longer than realtimeMaxReplay, is a reset event instead.
func (h *realtimeHub) replay(ctx context.Context, c *rtClient) {
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		held := c.held
		c.replaying, c.held = false, nil
		for _, f := range held {
			c.sendLocked(f)
		}
	}()
	reset := func(reason string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		data, _ := json.Marshal(map[string]string{"reason": reason})
		// The reset has the sequence the client may resume after next:
		// what it was told before it is to be refetched.
		c.sendLocked(rtFrame{b: sseFrame("reset", strconv.FormatUint(h.seq.Load(), 10), data)})
		c.last = max(c.last, h.seq.Load())
	}
	st, err := h.js.Stream(ctx, h.stream)
	if err != nil {
		reset("the events since Last-Event-ID cannot be read now; refetch what you show")
		return
	}
	info, err := st.Info(ctx)
	if err != nil {
		reset("the events since Last-Event-ID cannot be read now; refetch what you show")
		return
	}
	from, to := c.resumeAfter+1, info.State.LastSeq
	switch {
	case c.resumeAfter > to:
		reset("Last-Event-ID names an event this server has not sent; refetch what you show")
		return
	case from < info.State.FirstSeq:
		reset("the events since Last-Event-ID are no longer kept; refetch what you show")
		return
	case to-c.resumeAfter > realtimeMaxReplay:
		reset(fmt.Sprintf("more than %d events happened since Last-Event-ID; refetch what you show", realtimeMaxReplay))
		return
	case from > to:
		return
	}
	c.mu.Lock()
	p := c.p
	c.mu.Unlock()
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{fmt.Sprintf(h.siteSubject, p.SiteID)}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from,
	})
	if err != nil {
		reset("the events since Last-Event-ID cannot be read now; refetch what you show")
		return
	}
	evs := make(chan rtEvent, 64)
	rctx, cancel := context.WithTimeout(ctx, h.g.cfg.RequestTimeout)
	defer cancel()
	go func() {
		defer close(evs)
		for {
			// The site's last event may be before to: the batch's end is
			// then the fetch's timeout, once the stream has no more.
			batch, err := cons.FetchNoWait(256)
			if err != nil {
				return
			}
			n := 0
			for m := range batch.Messages() {
				n++
				md, err := m.Metadata()
				if err != nil {
					continue
				}
				if ev, ok := parseRealtimeEvent(md.Sequence.Stream, m.Subject(), m.Data()); ok && ev.seq <= to {
					select {
					case evs <- ev:
					case <-rctx.Done():
						return
					}
				}
				if md.Sequence.Stream >= to || md.NumPending == 0 {
					return
				}
			}
			if n == 0 || batch.Error() != nil {
				return
			}
		}
	}()
	h.handle(rctx, evs, func(ctx context.Context, ev rtEvent, next *rtEvent) {
		c.mu.Lock()
		wants := c.wants(ev)
		c.mu.Unlock()
		if !wants {
			return
		}
		if f, ok := h.frame(ctx, ev, next, p); ok {
			c.mu.Lock()
			c.sendLocked(f)
			c.mu.Unlock()
		}
	})
	c.mu.Lock()
	c.last = max(c.last, to)
	c.mu.Unlock()
}

// withRealtime serves the realtime routes in front of next.
func (g *Gateway) withRealtime(next http.Handler) http.Handler {
	getStats := g.metrics.named(http.MethodGet, realtimePath)
	postStats := g.metrics.named(http.MethodPost, realtimePath)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != realtimePath {
			next.ServeHTTP(w, r)
			return
		}
		switch r.Method {
		case http.MethodGet:
			nameRequest(r.Context(), "GET "+realtimePath, getStats)
			g.realtimeStream(w, r)
		case http.MethodPost:
			nameRequest(r.Context(), "POST "+realtimePath, postStats)
			g.realtimeSubscribe(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: fmt.Sprintf("method %s is not allowed on %s; allowed: GET (open a stream), POST (set its subscriptions)", r.Method, realtimePath)})
		}
	})
}

// realtimeStream answers GET: the stream itself, until its client goes,
// it idles without subscriptions, it falls too far behind, or the
// gateway stops.
func (g *Gateway) realtimeStream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if g.realtime == nil {
		w.Header().Set("Retry-After", "5")
		rest.WriteJSON(w, http.StatusServiceUnavailable, rest.Body{Error: "live updates are off on this server: the gateway runs without NATS (--nats-url)"})
		return
	}
	if r.URL.RawQuery != "" {
		rest.WriteJSON(w, http.StatusBadRequest, rest.Body{Error: fmt.Sprintf("GET %s takes no query parameters; set what the stream receives with POST %s", realtimePath, realtimePath)})
		return
	}
	var (
		resume   uint64
		resuming bool
	)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			rest.WriteJSON(w, http.StatusBadRequest, rest.Body{Error: fmt.Sprintf("Last-Event-ID %q is not an id this stream sent: ids are whole numbers; omit the header to start afresh", v)})
			return
		}
		resume, resuming = n, true
	}
	origin := r.Header.Get("Origin")
	h := w.Header()
	if origin != "" {
		// The stream itself says nothing but its client id: the origin is
		// judged when a key subscribes it (POST), by the key's site.
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Allow-Origin", origin)
	}
	c := g.realtime.open(origin, resume, resuming)
	defer g.realtime.close(c)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(g.cfg.RequestTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	data, _ := json.Marshal(map[string]string{"client_id": c.id})
	if !write(sseFrame("connect", strconv.FormatUint(g.realtime.seq.Load(), 10), data)) {
		return
	}
	heartbeat := time.NewTicker(g.cfg.RealtimeHeartbeat)
	defer heartbeat.Stop()
	idle := time.NewTimer(g.cfg.realtimeIdle)
	defer idle.Stop()
	for {
		select {
		case f := <-c.frames:
			if !write(f.b) {
				return
			}
		case <-heartbeat.C:
			if !write([]byte(": ping\n\n")) {
				return
			}
		case <-c.subsChanged:
			c.mu.Lock()
			n := len(c.subs)
			c.mu.Unlock()
			if n == 0 {
				idle.Reset(g.cfg.realtimeIdle)
			} else {
				idle.Stop()
			}
		case <-idle.C:
			c.mu.Lock()
			n := len(c.subs)
			c.mu.Unlock()
			if n == 0 {
				return
			}
		case <-c.gone:
			return
		case <-g.streamsEnd:
			return
		case <-ctx.Done():
			return
		}
	}
}

// realtimeRequest is the POST's body.
type realtimeRequest struct {
	ClientID      *string  `json:"client_id"`
	Subscriptions []string `json:"subscriptions"`
}

// realtimeSubscribe answers POST: it authenticates the key, checks the
// page's origin, the subscriptions against the key's site, and replaces
// the stream's subscriptions (204).
func (g *Gateway) realtimeSubscribe(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fail := func(err error) { rest.WriteError(ctx, g.cfg.Logger, w, r, err) }
	if g.realtime == nil {
		w.Header().Set("Retry-After", "5")
		rest.WriteJSON(w, http.StatusServiceUnavailable, rest.Body{Error: "live updates are off on this server: the gateway runs without NATS (--nats-url)"})
		return
	}
	if r.URL.RawQuery != "" {
		fail(status.Errorf(codes.InvalidArgument, "POST %s takes no query parameters; send client_id and subscriptions in the JSON body", realtimePath))
		return
	}
	p, err := g.authenticateKey(r)
	if err != nil {
		fail(err)
		return
	}
	if p.Kind != principal.KindKey {
		fail(status.Errorf(codes.PermissionDenied, "POST %s takes an API key (Authorization: Bearer <API key>)", realtimePath))
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if err := g.checkOrigin(ctx, w, p, origin); err != nil {
			fail(apperr.ToStatus(err).Err())
			return
		}
	}
	access, _ := principal.AccessOf(getItemRPC)
	access.Name = "POST " + realtimePath
	if err := principal.Authorize(p, access); err != nil {
		fail(apperr.ToStatus(err).Err())
		return
	}
	if g.limiter != nil {
		if ok, wait := g.limiter.allow(rateKey(p)); !ok {
			g.limiter.writeRateLimited(w, wait)
			return
		}
	}
	var req realtimeRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(status.Errorf(codes.InvalidArgument, "the body must be a JSON object {\"client_id\": string, \"subscriptions\": [string]}: %v", err))
		return
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		fail(status.Error(codes.InvalidArgument, "the body must be one JSON object, with nothing after it"))
		return
	}
	if req.ClientID == nil || *req.ClientID == "" {
		fail(status.Errorf(codes.InvalidArgument, "client_id is required: the client_id of the stream's connect event (GET %s)", realtimePath))
		return
	}
	if req.Subscriptions == nil {
		fail(status.Error(codes.InvalidArgument, "subscriptions is required: a list of \"<collection>\", \"<collection>/<item_id>\", \"assets\" or \"assets/<asset_id>\"; an empty list unsubscribes from everything"))
		return
	}
	if len(req.Subscriptions) > realtimeMaxSubscriptions {
		fail(status.Errorf(codes.InvalidArgument, "subscriptions has %d entries; at most %d are allowed", len(req.Subscriptions), realtimeMaxSubscriptions))
		return
	}
	g.realtime.mu.Lock()
	c := g.realtime.clients[*req.ClientID]
	g.realtime.mu.Unlock()
	if c != nil {
		err = g.realtime.apply(ctx, c, p, r.Header.Get("Origin"), req.Subscriptions, true)
	} else {
		// Another gateway's stream, when a load balancer sent the POST
		// elsewhere than the GET: that gateway applies it
		// (realtime_forward.go).
		err = g.realtime.forward(ctx, *req.ClientID, p, r.Header.Get("Origin"), req.Subscriptions)
	}
	var capped errRealtimeCap
	switch {
	case errors.As(err, &capped):
		g.long.refuse(ctx, kindStream, capKey)
		w.Header().Set("Retry-After", strconv.Itoa(longRetryAfter))
		rest.WriteJSON(w, http.StatusTooManyRequests, rest.Body{Error: capped.msg})
	case err != nil:
		if _, isStatus := status.FromError(err); !isStatus {
			err = apperr.ToStatus(err).Err()
		}
		fail(err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// apply sets the subscriptions of c, a stream of this gateway's, for the
// key p from a page of origin (or none). check reads the subscriptions
// against the key's site first; a forwarded request's were read by the
// gateway that took it. The error is what the POST answers: a status, or
// errRealtimeCap (429).
func (h *realtimeHub) apply(ctx context.Context, c *rtClient, p principal.Principal, origin string, subs []string, check bool) error {
	if c.origin != "" && origin != c.origin {
		return status.Errorf(codes.PermissionDenied, "the realtime stream %q was opened by a page of %s; only that origin may set its subscriptions", c.id, c.origin)
	}
	// Another key's stream is refused before its subscriptions are read:
	// they are not this key's to judge (subscribe checks again, atomically).
	c.mu.Lock()
	other := c.bound && c.p.Subject != p.Subject
	c.mu.Unlock()
	if other {
		return errBoundToAnother
	}
	if check {
		var err error
		if subs, err = h.g.checkSubscriptions(ctx, p, subs); err != nil {
			return err
		}
	}
	resume, err := h.subscribe(c, p, subs)
	if err != nil {
		return err
	}
	if resume {
		// The replay reads under the gateway's context: the POST is
		// answered at once, the stream gets the events.
		go h.replay(context.WithoutCancel(ctx), c)
	}
	return nil
}

// checkSubscriptions reads subscriptions as the key's site has them: each
// a collection of the site or one of its items, or the assets; a
// duplicate counts once.
func (g *Gateway) checkSubscriptions(ctx context.Context, p principal.Principal, subs []string) ([]string, error) {
	if len(subs) == 0 {
		return nil, nil
	}
	octx := metadata.NewOutgoingContext(ctx, metadata.Pairs(principal.MetadataKey, g.signer.Token(p)))
	resp, err := collectionsv1.NewCollectionsServiceClient(g.conn("collections")).ListCollections(octx, &collectionsv1.ListCollectionsRequest{})
	if err != nil {
		return nil, err
	}
	slugs := map[string]bool{assetsSubscription: true}
	var names []string
	for _, c := range resp.GetCollections() {
		slugs[c.GetSlug()] = true
		names = append(names, c.GetSlug())
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(subs))
	for i, s := range subs {
		slug, id, hasID := strings.Cut(s, "/")
		switch {
		case s == "" || (hasID && (id == "" || strings.Contains(id, "/") || len(id) > 100)):
			return nil, status.Errorf(codes.InvalidArgument, "subscriptions[%d] %q is not a subscription: use \"<collection>\", \"<collection>/<item_id>\", \"assets\" or \"assets/<asset_id>\"", i, s)
		case !slugs[slug]:
			return nil, status.Errorf(codes.InvalidArgument, "subscriptions[%d] names collection %q, which this key's site does not have; its collections: %s (and assets)", i, slug, strings.Join(names, ", "))
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, nil
}
