// Package storetest is the contract every audit store adapter must meet.
// Each adapter's test is one call to RunAll; a behaviour the memory store
// and the PostgreSQL store disagree on fails here rather than in
// production.
package storetest

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
)

// RunAll runs the contract against fresh stores made by newStore.
func RunAll(t *testing.T, newStore func(t *testing.T) app.Store) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, app.Store)
	}{
		{"RoundTrip", roundTrip},
		{"AddedOnce", addedOnce},
		{"ConcurrentAddsKeepOne", concurrentAddsKeepOne},
		{"NewestFirstAndPaged", newestFirstAndPaged},
		{"Filters", filters},
		{"DeleteBeforeTheCutoffOnly", deleteBefore},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

var base = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func event(n int, agency string) app.Event {
	return app.Event{ID: uuid.Must(uuid.NewV7()).String(), AuditEvent: events.AuditEvent{
		Service: "webhooks", Action: "webhook.created", ResourceType: "webhook", ResourceID: uuid.NewString(),
		AgencyID: agency, ActorKind: "key", ActorID: "key-1", At: base.Add(time.Duration(n) * time.Second),
	}}
}

func add(t *testing.T, s app.Store, evs ...app.Event) {
	t.Helper()
	for _, e := range evs {
		if ok, err := s.Add(t.Context(), e); err != nil || !ok {
			t.Fatalf("Add(%s) = %v, %v; want it added", e.ID, ok, err)
		}
	}
}

func ids(evs []app.Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func list(t *testing.T, s app.Store, f app.Filter) []app.Event {
	t.Helper()
	if f.Limit == 0 {
		f.Limit = 100
	}
	evs, err := s.Events(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func roundTrip(t *testing.T, s app.Store) {
	e := app.Event{ID: uuid.NewString(), AuditEvent: events.AuditEvent{
		Service: "crm", Action: "deal.updated", ResourceType: "deal", ResourceID: uuid.NewString(),
		Fields: []string{"stage", "value"}, AgencyID: uuid.NewString(), SiteID: uuid.NewString(),
		ActorKind: "user", ActorID: uuid.NewString(), MemberID: uuid.NewString(), SessionID: uuid.NewString(),
		Method: "/atrium.crm.v1.CRMAdminService/UpdateDeal", ClientAddress: "203.0.113.7", UserAgent: "curl/8.5.0",
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", At: base.Add(123456 * time.Microsecond),
	}}
	add(t, s, e)
	got := list(t, s, app.Filter{})
	if len(got) != 1 || !reflect.DeepEqual(got[0], e) {
		t.Fatalf("kept %+v, want %+v", got, e)
	}
	// No fields is no fields, not an empty list.
	bare := event(1, "")
	add(t, s, bare)
	if got := list(t, s, app.Filter{ResourceID: bare.ResourceID}); len(got) != 1 || got[0].Fields != nil || !reflect.DeepEqual(got[0], bare) {
		t.Fatalf("kept %+v, want %+v", got, bare)
	}
}

func addedOnce(t *testing.T, s app.Store) {
	e := event(0, uuid.NewString())
	add(t, s, e)
	again := e
	again.Action = "webhook.deleted" // a redelivery is the same event; nothing of it changes what is kept
	if ok, err := s.Add(t.Context(), again); err != nil || ok {
		t.Fatalf("Add of a kept id = %v, %v; want false, nil", ok, err)
	}
	got := list(t, s, app.Filter{})
	if len(got) != 1 || got[0].Action != "webhook.created" {
		t.Fatalf("after a redelivery the trail holds %+v, want the first event once", got)
	}
}

func concurrentAddsKeepOne(t *testing.T, s app.Store) {
	e := event(0, uuid.NewString())
	var wg sync.WaitGroup
	added := make(chan bool, 8)
	for range 8 {
		wg.Go(func() {
			ok, err := s.Add(t.Context(), e)
			if err != nil {
				t.Error(err)
			}
			added <- ok
		})
	}
	wg.Wait()
	close(added)
	n := 0
	for ok := range added {
		if ok {
			n++
		}
	}
	if n != 1 || len(list(t, s, app.Filter{})) != 1 {
		t.Fatalf("8 concurrent adds of one event: %d said added, the trail holds %d; want 1 and 1", n, len(list(t, s, app.Filter{})))
	}
}

func newestFirstAndPaged(t *testing.T, s app.Store) {
	agency := uuid.NewString()
	var evs []app.Event
	for i := range 7 {
		evs = append(evs, event(i/2, agency)) // pairs share a time: the id breaks the tie
	}
	// Added out of order, as replicas and redeliveries do.
	for _, i := range []int{3, 0, 6, 1, 5, 2, 4} {
		add(t, s, evs[i])
	}
	var want []string
	for i := len(evs) - 1; i >= 0; i-- {
		want = append(want, evs[i].ID)
	}
	// Within a pair, the larger id first.
	for i := 0; i+1 < len(want); i++ {
		a, b := find(evs, want[i]), find(evs, want[i+1])
		if a.At.Equal(b.At) && a.ID < b.ID {
			want[i], want[i+1] = want[i+1], want[i]
		}
	}
	if got := ids(list(t, s, app.Filter{AgencyID: agency})); !reflect.DeepEqual(got, want) {
		t.Fatalf("newest first = %v, want %v", got, want)
	}
	var paged []string
	f := app.Filter{AgencyID: agency, Limit: 3}
	for range 5 {
		page := list(t, s, f)
		paged = append(paged, ids(page)...)
		if len(page) < 3 {
			break
		}
		last := page[len(page)-1]
		f.After = &app.Position{At: last.At, ID: last.ID}
	}
	if !reflect.DeepEqual(paged, want) {
		t.Fatalf("pages of 3 = %v, want %v", paged, want)
	}
}

func find(evs []app.Event, id string) app.Event {
	for _, e := range evs {
		if e.ID == id {
			return e
		}
	}
	return app.Event{}
}

func filters(t *testing.T, s app.Store) {
	agencyA, agencyB, site := uuid.NewString(), uuid.NewString(), uuid.NewString()
	a0, a1, a2 := event(0, agencyA), event(10, agencyA), event(20, agencyA)
	a1.ActorKind, a1.ActorID, a1.ResourceType, a1.Action = "admin", "admin", "deal", "deal.updated"
	a2.SiteID = site
	b := event(10, agencyB)
	b.ResourceID = a0.ResourceID // the same id elsewhere is still elsewhere
	add(t, s, a0, a1, a2, b)
	// b and a1 share a time: the larger id comes first.
	sameTime := []app.Event{b, a1}
	if a1.ID > b.ID {
		sameTime = []app.Event{a1, b}
	}
	for name, tc := range map[string]struct {
		f    app.Filter
		want []app.Event
	}{
		"agency":                         {app.Filter{AgencyID: agencyA}, []app.Event{a2, a1, a0}},
		"another agency":                 {app.Filter{AgencyID: agencyB}, []app.Event{b}},
		"site":                           {app.Filter{SiteID: site}, []app.Event{a2}},
		"actor":                          {app.Filter{AgencyID: agencyA, Actor: "admin"}, []app.Event{a1}},
		"resource type":                  {app.Filter{AgencyID: agencyA, ResourceType: "webhook"}, []app.Event{a2, a0}},
		"resource id":                    {app.Filter{AgencyID: agencyA, ResourceID: a0.ResourceID}, []app.Event{a0}},
		"resource id alone":              {app.Filter{ResourceID: a0.ResourceID}, []app.Event{b, a0}},
		"since inclusive":                {app.Filter{AgencyID: agencyA, Since: a1.At}, []app.Event{a2, a1}},
		"until exclusive":                {app.Filter{AgencyID: agencyA, Until: a1.At}, []app.Event{a0}},
		"window":                         {app.Filter{Since: a1.At, Until: a2.At}, sameTime},
		"nothing":                        {app.Filter{AgencyID: agencyA, Actor: "key-2"}, nil},
		"action":                         {app.Filter{AgencyID: agencyA, Action: a1.Action}, []app.Event{a1}},
		"action prefix":                  {app.Filter{AgencyID: agencyA, Action: "webhook."}, []app.Event{a2, a0}},
		"action prefix is not a pattern": {app.Filter{AgencyID: agencyA, Action: "%."}, nil},
		"action is whole":                {app.Filter{AgencyID: agencyA, Action: "webhook"}, nil},
	} {
		got := list(t, s, tc.f)
		if w := ids(tc.want); !reflect.DeepEqual(ids(got), w) {
			t.Errorf("%s: %v, want %v", name, ids(got), w)
		}
	}
}

func deleteBefore(t *testing.T, s app.Store) {
	agency := uuid.NewString()
	var evs []app.Event
	for i := range 5 {
		evs = append(evs, event(i, agency))
	}
	add(t, s, evs...)
	cutoff := evs[3].At // deletes 0, 1, 2
	n, err := s.DeleteBefore(t.Context(), cutoff, 2)
	if err != nil || n != 2 {
		t.Fatalf("DeleteBefore with limit 2 = %d, %v; want 2", n, err)
	}
	if got := ids(list(t, s, app.Filter{})); !reflect.DeepEqual(got, ids([]app.Event{evs[4], evs[3], evs[2]})) {
		t.Fatalf("after deleting the 2 oldest: %v", got)
	}
	if n, err := s.DeleteBefore(t.Context(), cutoff, 10); err != nil || n != 1 {
		t.Fatalf("second DeleteBefore = %d, %v; want the 1 left before the cutoff", n, err)
	}
	if n, err := s.DeleteBefore(t.Context(), cutoff, 10); err != nil || n != 0 {
		t.Fatalf("DeleteBefore again = %d, %v; want 0: pruning twice is pruning once", n, err)
	}
	if got := ids(list(t, s, app.Filter{})); !reflect.DeepEqual(got, ids([]app.Event{evs[4], evs[3]})) {
		t.Fatalf("kept %v, want the events at and after the cutoff", got)
	}
}
