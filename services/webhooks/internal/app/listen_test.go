package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/translate"
)

// source is an event source the test publishes to by hand.
type source struct {
	mu      sync.Mutex
	handles []func(id, subject string, payload []byte, at time.Time)
	stopped int
}

func (s *source) Subscribe(h func(id, subject string, payload []byte, at time.Time)) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handles = append(s.handles, h)
	return func() { s.mu.Lock(); s.stopped++; s.mu.Unlock() }, nil
}

func (s *source) publish(id, subject, payload string) {
	s.mu.Lock()
	hs := s.handles
	s.mu.Unlock()
	for _, h := range hs {
		h(id, subject, []byte(payload), time.Now())
	}
}

func itemEvent(site, change string) (string, string) {
	return "atrium.collections." + site + ".posts.item." + change,
		fmt.Sprintf(`{"id":"i-%s","site_id":%q,"collection":"posts","collection_id":"c","is_published":false,"version":1,"at":"2026-01-01T00:00:00Z"}`, site, site)
}

// received drains what the stream let through (C, then Wanted), in order.
func received(t *testing.T, st *app.Stream) []translate.Event {
	t.Helper()
	var out []translate.Event
	for {
		select {
		case ev := <-st.C:
			ok, err := st.Wanted(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				out = append(out, ev)
			}
		default:
			return out
		}
	}
}

// TestListenOwners: an event stream gets its key's tenants' events of the
// types it asked for, never another tenant's; a client's dataset change
// reaches the agencies the client is linked to.
func TestListenOwners(t *testing.T) {
	src := &source{}
	l := &app.Listen{Source: src, Links: links{"c-ours": {"a-ours"}, "c-theirs": {"a-theirs"}}}
	site, err := l.Open(app.OwnersOf("s-ours", ""), []string{"item.*"})
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	agency, err := l.Open(app.OwnersOf("", "a-ours"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer agency.Close()
	published, err := l.Open(app.OwnersOf("s-ours", "a-ours"), []string{"item.published", "dataset.changed"})
	if err != nil {
		t.Fatal(err)
	}
	defer published.Close()

	for _, e := range []struct{ site, change string }{{"s-theirs", "created"}, {"s-ours", "created"}, {"s-ours", "published"}} {
		subj, payload := itemEvent(e.site, e.change)
		src.publish("ev-"+e.site+"-"+e.change, subj, payload)
	}
	src.publish("ev-deal-theirs", "atrium.crm.deal.created", `{"id":"d1","agency_id":"a-theirs","at":"2026-01-01T00:00:00Z"}`)
	src.publish("ev-deal-ours", "atrium.crm.deal.created", `{"id":"d2","agency_id":"a-ours","at":"2026-01-01T00:00:00Z"}`)
	src.publish("ev-rows-theirs", "atrium.data.rows.inserted", `{"client_id":"c-theirs","resource":"keywords","count":1,"at":"2026-01-01T00:00:00Z"}`)
	src.publish("ev-rows-ours", "atrium.data.rows.inserted", `{"client_id":"c-ours","resource":"keywords","count":2,"at":"2026-01-01T00:00:00Z"}`)
	src.publish("ev-disabled-theirs", "atrium.webhooks.webhook.disabled",
		`{"webhook_id":"w1","url":"https://x.example","reason":"gone","disabled_at":"2026-01-01T00:00:00Z","owner":"site","tenant_id":"s-theirs"}`)
	src.publish("ev-garbage", "atrium.collections.s-ours.posts.item.created", `not json`)

	ids := func(evs []translate.Event) string {
		var out []string
		for _, e := range evs {
			out = append(out, e.ID+":"+e.Type)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		name string
		st   *app.Stream
		want string
	}{
		{"site key, item.*", site, "ev-s-ours-created:item.created ev-s-ours-published:item.published"},
		{"agency key, every type", agency, "ev-deal-ours:deal.created ev-rows-ours:dataset.changed"},
		{"both, item.published and dataset.changed", published, "ev-s-ours-published:item.published ev-rows-ours:dataset.changed"},
	} {
		if got := ids(received(t, c.st)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestListenFilter: a filter that names no type the key receives is a 400
// naming the allowed ones; a pattern is one entry (the gateway splits the
// query's commas), so a comma in one is no pattern.
func TestListenFilter(t *testing.T) {
	l := &app.Listen{Source: &source{}, Links: links{}}
	for _, c := range []struct {
		owners app.Owners
		events []string
		want   string
	}{
		{app.OwnersOf("s", ""), []string{"deal.*"}, `events[0] "deal.*" matches no event type this key receives; allowed: item.created`},
		{app.OwnersOf("s", ""), []string{"item.*", "nope"}, `events[1] "nope"`},
		{app.OwnersOf("s", ""), []string{"item.created,item.published"}, `events[0] "item.created,item.published"`},
		{app.OwnersOf("", "a"), []string{"item.created"}, "allowed: prospect.created"},
	} {
		_, err := l.Open(c.owners, c.events)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Kind != apperr.KindInvalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%v, %q) = %v, want a 400 saying %q", c.owners, c.events, err, c.want)
		}
	}
	if st, err := l.Open(app.OwnersOf("s", ""), []string{"item.*", " asset.created", "*"}); err != nil {
		t.Errorf("a valid filter: %v", err)
	} else {
		st.Close()
	}
}

// TestListenBehind: a client that does not read is given up once its
// bounded buffer is full, with a reason, rather than held in memory.
func TestListenBehind(t *testing.T) {
	src := &source{}
	l := &app.Listen{Source: src, Links: links{}, Buffer: 2}
	st, err := l.Open(app.OwnersOf("s", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 3 {
		subj, payload := itemEvent("s", "created")
		src.publish(fmt.Sprint("ev", i), subj, payload)
	}
	<-st.Done
	if err := st.Err(); !errors.Is(err, app.ErrListenerBehind) || !strings.Contains(err.Error(), "more than 2 events") {
		t.Fatalf("Err() = %v, want the listener behind after 2 events", err)
	}
}
