package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/audit/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
)

// owners is a site directory held in a map: the port's answer, as the
// collections service gives it.
type owners map[string]string

func (o owners) SiteOwner(_ context.Context, site string) (string, error) { return o[site], nil }

func record(t *testing.T, r *app.Recorder, id string, e events.AuditEvent) {
	t.Helper()
	b, _ := json.Marshal(e)
	if _, err := r.Handle(t.Context(), id, "atrium.audit."+e.Service+".recorded", b); err != nil {
		t.Fatal(err)
	}
}

// TestSiteEventsReachTheirAgency: an event of a site made by a key bound
// to the site alone names no agency; the trail gives it the site's owner,
// so the agency's owners read it.
func TestSiteEventsReachTheirAgency(t *testing.T) {
	st := memory.New(memdb.New(nil))
	agency, site, unowned := uuid.NewString(), uuid.NewString(), uuid.NewString()
	r := &app.Recorder{Store: st, Sites: owners{site: agency}}
	at := time.Now()
	record(t, r, "e1", events.AuditEvent{Service: "collections", Action: "item.created", ResourceType: "item", ResourceID: "i", SiteID: site, ActorKind: "key", ActorID: "k", At: at})
	record(t, r, "e2", events.AuditEvent{Service: "collections", Action: "item.created", ResourceType: "item", ResourceID: "j", SiteID: unowned, ActorKind: "key", ActorID: "k", At: at})
	page, err := (&app.Trail{Store: st}).List(t.Context(), app.Scope{AgencyID: agency}, app.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || page.Events[0].ID != "e1" || page.Events[0].SiteID != site {
		t.Fatalf("the owner's trail = %+v, want the event of its site only", page.Events)
	}
	if _, err := r.Handle(t.Context(), "e3", "atrium.audit.crm.recorded", []byte(`{"service":"webhooks"}`)); !errors.Is(err, app.ErrMalformed) {
		t.Fatalf("an event whose subject and payload disagree: %v, want ErrMalformed (dropped, never retried)", err)
	}
}

// TestTrailQueries: filters, paging with a cursor bound to its filters,
// and a 400 naming what was wrong for each bad parameter.
func TestTrailQueries(t *testing.T) {
	st := memory.New(memdb.New(nil))
	r := &app.Recorder{Store: st}
	agency := uuid.NewString()
	base := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for i := range 5 {
		record(t, r, uuid.NewString(), events.AuditEvent{Service: "crm", Action: "deal.updated", ResourceType: "deal", ResourceID: "d",
			AgencyID: agency, ActorKind: "admin", ActorID: "admin", At: base.Add(time.Duration(i) * time.Minute)})
	}
	tr := &app.Trail{Store: st}
	scope := app.Scope{AgencyID: agency}
	two := int32(2)
	var got []app.Event
	q := app.Query{Actor: "admin", Limit: &two}
	for range 5 {
		page, err := tr.List(t.Context(), scope, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Events...)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if len(got) != 5 || !got[0].At.Equal(base.Add(4*time.Minute)) || !got[4].At.Equal(base) {
		t.Fatalf("paged %d events, want the 5 newest first", len(got))
	}
	first, _ := tr.List(t.Context(), scope, app.Query{Limit: &two})
	window, err := tr.List(t.Context(), scope, app.Query{Since: base.Add(time.Minute).Format(time.RFC3339), Until: base.Add(3 * time.Minute).Format(time.RFC3339)})
	if err != nil || len(window.Events) != 2 {
		t.Fatalf("since 1m until 3m: %d events, %v; want 2", len(window.Events), err)
	}
	zero, big := int32(0), int32(500)
	for name, tc := range map[string]struct {
		q    app.Query
		want string
	}{
		"since":                    {app.Query{Since: "yesterday"}, "since must be"},
		"until":                    {app.Query{Until: "2026-13-01T00:00:00Z"}, "until must be"},
		"since after until":        {app.Query{Since: "2026-11-29T10:00:00Z", Until: "2026-11-29T09:00:00Z"}, "since must be before until"},
		"limit zero":               {app.Query{Limit: &zero}, "limit must be an integer from 1 to 200"},
		"limit too big":            {app.Query{Limit: &big}, "limit must be an integer from 1 to 200"},
		"actor":                    {app.Query{Actor: "a\nb"}, "actor must be one line"},
		"resource type":            {app.Query{ResourceType: strings.Repeat("x", 65)}, "resource_type must be one line of at most 64"},
		"action":                   {app.Query{Action: strings.Repeat("x", 65)}, "action must be one line of at most 64"},
		"cursor of another action": {app.Query{Cursor: first.Next, Action: "item."}, "cursor belongs to another query"},
		"cursor":                   {app.Query{Cursor: "%%%"}, "cursor is malformed"},
		"cursor of another":        {app.Query{Cursor: first.Next, Actor: "key-1"}, "cursor belongs to another query"},
		"cursor's time":            {app.Query{Cursor: pagination.Cursor("922337203685477580/x", agency, "", "", "", "", "", "")}, "cursor is malformed"},
	} {
		_, err := tr.List(t.Context(), scope, tc.q)
		if apperr.KindOf(err) != apperr.KindInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a 400 saying %q", name, err, tc.want)
		}
	}
	// Another agency's cursor is another query: it reads nothing of this one.
	if _, err := tr.List(t.Context(), app.Scope{AgencyID: uuid.NewString()}, app.Query{Cursor: first.Next, Limit: &two}); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("a cursor used by another agency: %v, want a 400", err)
	}
}

// TestRetentionDeletesOnlyPastIt: the retention deletes what is older
// than it, keeps the rest, and a second pass finds nothing.
func TestRetentionDeletesOnlyPastIt(t *testing.T) {
	st := memory.New(memdb.New(nil))
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for i, age := range []time.Duration{401 * 24 * time.Hour, 399 * 24 * time.Hour, time.Hour} {
		if _, err := st.Add(t.Context(), app.Event{ID: string(rune('a' + i)), AuditEvent: events.AuditEvent{ActorKind: "admin", At: now.Add(-age)}}); err != nil {
			t.Fatal(err)
		}
	}
	r := &app.Retention{Store: st, Keep: app.DefaultRetention, Now: func() time.Time { return now }}
	if n, err := r.Prune(t.Context()); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want the one event older than 400 days", n, err)
	}
	if n, err := r.Prune(t.Context()); err != nil || n != 0 {
		t.Fatalf("Prune again = %d, %v; want 0", n, err)
	}
	if app.DefaultRetention != 400*24*time.Hour || app.DefaultPruneInterval != time.Hour {
		t.Fatalf("defaults %s and %s, want 400 days and an hour, as docs/audit.md says", app.DefaultRetention, app.DefaultPruneInterval)
	}
}
