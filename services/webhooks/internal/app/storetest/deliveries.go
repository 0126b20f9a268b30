package storetest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
)

func delivery(ep app.Endpoint, event string, created time.Time) app.Delivery {
	return app.Delivery{
		ID: uuid.Must(uuid.NewV7()).String(), EndpointID: ep.ID, Tenant: ep.Tenant, EventID: event, EventType: "deal.created",
		Body:   []byte(`{"type":"deal.created","timestamp":"2026-11-25T10:00:00Z","data":{"id":"` + event + `"}}`),
		Status: app.Pending, NextAttemptAt: created, CreatedAt: created,
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "atrium=" + event,
	}
}

func add(t *testing.T, s app.Store, ds ...app.Delivery) {
	t.Helper()
	if err := s.AddDeliveries(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
}

func ids(ds []app.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func claimed(ds []app.Due) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// record records one attempt.
func record(t *testing.T, s app.Store, id string, a app.Attempt, status app.DeliveryStatus, next time.Time) error {
	t.Helper()
	return s.RecordAttempts(t.Context(), []app.AttemptRecord{{ID: id, Attempt: a, Status: status, Next: next}})
}

func get(t *testing.T, s app.Store, d app.Delivery) app.Delivery {
	t.Helper()
	got, err := s.Delivery(t.Context(), d.Tenant, d.EndpointID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func deliveriesAddedOnce(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	d := delivery(ep, "evt-1", base)
	add(t, s, d)
	again := delivery(ep, "evt-1", base.Add(time.Minute))
	add(t, s, again, delivery(ep, "evt-2", base))
	page, err := s.Deliveries(t.Context(), agencyA, ep.ID, app.DeliveryFilter{Limit: 10})
	if err != nil || len(page.Deliveries) != 2 {
		t.Fatalf("deliveries after adding evt-1 twice = %v, %v; want evt-1 once and evt-2", ids(page.Deliveries), err)
	}
	got := get(t, s, d)
	if got.EventID != "evt-1" || string(got.Body) != string(d.Body) || got.Status != app.Pending || got.Tenant != agencyA || !got.CreatedAt.Equal(base) ||
		got.TraceParent != d.TraceParent || got.TraceState != d.TraceState {
		t.Fatalf("delivery read back %+v, want what was added", got)
	}
	if _, err := s.Delivery(t.Context(), agencySameID, ep.ID, d.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another tenant reading the delivery = %v, want store.ErrNotFound", err)
	}
}

func claimLeasesDue(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	early, late, future := delivery(ep, "e1", base), delivery(ep, "e2", base.Add(time.Second)), delivery(ep, "e3", base.Add(time.Hour))
	add(t, s, future, late, early)
	now := base.Add(time.Minute)
	got, err := s.Claim(t.Context(), now, 10, app.Bound{}, 30*time.Second)
	if err != nil || !slices.Equal(claimed(got), []string{early.ID, late.ID}) {
		t.Fatalf("Claim = %v, %v; want the two due, oldest due first", claimed(got), err)
	}
	if e := got[0].Endpoint; e.ID != ep.ID || e.URL != ep.URL || e.Secret.String() != ep.Secret.String() || !e.Enabled || e.Tenant != ep.Tenant {
		t.Fatalf("a claimed delivery's endpoint is %+v, want %+v", e, ep)
	}
	if again, _ := s.Claim(t.Context(), now.Add(29*time.Second), 10, app.Bound{}, 30*time.Second); len(again) != 0 {
		t.Fatalf("claimed again within the lease: %v", claimed(again))
	}
	back, err := s.Claim(t.Context(), now.Add(31*time.Second), 1, app.Bound{}, 30*time.Second)
	if err != nil || len(back) != 1 || back[0].ID != early.ID {
		t.Fatalf("after the lease ended, Claim(limit 1) = %v, %v; want the oldest back", claimed(back), err)
	}
}

func attemptsRecorded(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	d := delivery(ep, "e1", base)
	add(t, s, d)
	if _, err := s.Claim(t.Context(), base, 10, app.Bound{}, time.Minute); err != nil {
		t.Fatal(err)
	}
	first := app.Attempt{At: base, StatusCode: 503, Duration: 120 * time.Millisecond, ResponseBody: "busy"}
	if err := record(t, s, d.ID, first, app.Pending, base.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Claim(t.Context(), base.Add(4*time.Second), 10, app.Bound{}, time.Minute); len(got) != 0 {
		t.Fatalf("claimed before its next attempt: %v", claimed(got))
	}
	if got, _ := s.Claim(t.Context(), base.Add(5*time.Second), 10, app.Bound{}, time.Minute); len(got) != 1 {
		t.Fatalf("not claimed at its next attempt (the recorded attempt ends the lease): %v", claimed(got))
	}
	second := app.Attempt{At: base.Add(5 * time.Second), StatusCode: 200, Duration: 40 * time.Millisecond, ResponseBody: "ok"}
	if err := record(t, s, d.ID, second, app.Succeeded, time.Time{}); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, d)
	if got.Status != app.Succeeded || len(got.Attempts) != 2 || got.Attempts[0].StatusCode != 503 || got.Attempts[0].ResponseBody != "busy" ||
		got.Attempts[0].Duration != 120*time.Millisecond || got.Attempts[1].StatusCode != 200 || !got.NextAttemptAt.IsZero() {
		t.Fatalf("after two attempts: %+v", got)
	}
	if more, _ := s.Claim(t.Context(), base.Add(time.Hour), 10, app.Bound{}, time.Minute); len(more) != 0 {
		t.Fatalf("a succeeded delivery was claimed: %v", claimed(more))
	}
	// An attempt of a delivery that is gone (its endpoint was deleted
	// meanwhile) is skipped, and the rest of its batch recorded.
	other := delivery(ep, "e2", base)
	add(t, s, other)
	err := s.RecordAttempts(t.Context(), []app.AttemptRecord{
		{ID: uuid.NewString(), Attempt: second, Status: app.Succeeded},
		{ID: other.ID, Attempt: first, Status: app.Failed},
	})
	if got := get(t, s, other); err != nil || got.Status != app.Failed || len(got.Attempts) != 1 {
		t.Fatalf("a batch with a delivery that is gone = %v, the other %+v; want it recorded", err, got)
	}
}

func deliveryPages(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	var all []app.Delivery
	for i := range 7 {
		all = append(all, delivery(ep, fmt.Sprint("e", i), base.Add(time.Duration(i)*time.Second)))
	}
	add(t, s, all...)
	for _, i := range []int{1, 4} {
		if err := record(t, s, all[i].ID, app.Attempt{At: base, Error: "refused"}, app.Failed, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	cursor := ""
	for {
		page, err := s.Deliveries(t.Context(), agencyA, ep.ID, app.DeliveryFilter{Limit: 3, After: cursor})
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, ids(page.Deliveries)...)
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	want := ids(all)
	slices.Reverse(want)
	if !slices.Equal(seen, want) {
		t.Fatalf("pages of 3 gave %v, want every delivery once, newest first %v", seen, want)
	}
	failed, err := s.Deliveries(t.Context(), agencyA, ep.ID, app.DeliveryFilter{Status: app.Failed, Limit: 10})
	if err != nil || !slices.Equal(ids(failed.Deliveries), []string{all[4].ID, all[1].ID}) || failed.Next != "" {
		t.Fatalf("failed deliveries = %v (next %q), %v; want the two failed", ids(failed.Deliveries), failed.Next, err)
	}
	if other, err := s.Deliveries(t.Context(), agencySameID, ep.ID, app.DeliveryFilter{Limit: 10}); err != nil || len(other.Deliveries) != 0 {
		t.Fatalf("another tenant listing the endpoint's deliveries = %v, %v; want none", ids(other.Deliveries), err)
	}
}

func resendAndRecover(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	var ds []app.Delivery
	for i := range 4 {
		ds = append(ds, delivery(ep, fmt.Sprint("e", i), base.Add(time.Duration(i)*time.Hour)))
	}
	add(t, s, ds...)
	for _, d := range ds[:3] {
		if err := record(t, s, d.ID, app.Attempt{At: base, StatusCode: 500}, app.Failed, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	now := base.Add(10 * time.Hour)
	if _, err := s.Recover(t.Context(), agencySameID, ep.ID, base, now, now); err != nil {
		t.Fatal(err)
	}
	n, err := s.Recover(t.Context(), agencyA, ep.ID, base.Add(time.Hour), base.Add(3*time.Hour), now)
	if err != nil || n != 2 {
		t.Fatalf("Recover of hours 1 and 2 = %d, %v; want the 2 failed ones there", n, err)
	}
	due, err := s.Claim(t.Context(), now, 10, app.Bound{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := claimed(due)
	slices.Sort(got)
	want := []string{ds[1].ID, ds[2].ID, ds[3].ID} // ds[3] was never attempted
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("due after recover = %v, want %v (another tenant's recover changed nothing)", got, want)
	}
	r, err := s.Resend(t.Context(), agencyA, ep.ID, ds[0].ID, now)
	if err != nil || r.Status != app.Pending || !r.NextAttemptAt.Equal(now) || len(r.Attempts) != 1 {
		t.Fatalf("Resend = %+v, %v; want pending, due now, its attempts kept", r, err)
	}
	if _, err := s.Resend(t.Context(), agencySameID, ep.ID, ds[0].ID, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another tenant's resend = %v, want store.ErrNotFound", err)
	}
}

func deleteCascades(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	d := delivery(ep, "e1", base)
	add(t, s, d)
	if err := s.InTx(t.Context(), func(tx app.EndpointTx) error { return tx.DeleteEndpoint(t.Context(), agencyA, ep.ID) }); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.Claim(t.Context(), base.Add(time.Hour), 10, app.Bound{}, time.Minute); len(due) != 0 {
		t.Fatalf("a deleted endpoint's delivery was claimed: %v", claimed(due))
	}
	if _, err := s.Delivery(t.Context(), agencyA, ep.ID, d.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a deleted endpoint's delivery = %v, want store.ErrNotFound", err)
	}
}

// concurrentClaimsAreDisjoint: deliverers claiming at once (replicas) never
// get the same delivery, and between them take every due one.
func concurrentClaimsAreDisjoint(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	var ds []app.Delivery
	for i := range 40 {
		ds = append(ds, delivery(ep, fmt.Sprint("e", i), base))
	}
	add(t, s, ds...)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	claim := func() int {
		got, err := s.Claim(t.Context(), base.Add(time.Second), 15, app.Bound{}, time.Minute)
		if err != nil {
			t.Error(err)
			return 0
		}
		mu.Lock()
		defer mu.Unlock()
		for _, d := range got {
			seen[d.ID]++
		}
		return len(got)
	}
	for range 4 {
		wg.Go(func() {
			for claim() > 0 {
			}
		})
	}
	wg.Wait()
	for claim() > 0 { // what a claimer that lost a race left
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("delivery %s claimed %d times by concurrent deliverers", id, n)
		}
	}
	if len(seen) != 40 {
		t.Errorf("the claims took %d of the 40 due deliveries, want all 40", len(seen))
	}
}

// claimBoundedPerEndpoint: a claim gives no endpoint more than the bound
// allows beside what the deliverer holds of it already; others' deliveries
// fill the rest, even when the full endpoint's backlog, due first, is far
// longer than a claim reads.
func claimBoundedPerEndpoint(t *testing.T, s app.Store) {
	slow, fast := endpoint(t, agencyA, 0, "*"), endpoint(t, agencyA, 1, "*")
	insert(t, s, slow, fast)
	var ds []app.Delivery
	for i := range 200 {
		ds = append(ds, delivery(slow, fmt.Sprint("s", i), base))
	}
	ds = append(ds, delivery(fast, "f0", base.Add(time.Second)), delivery(fast, "f1", base.Add(time.Second)), delivery(fast, "f2", base.Add(time.Second)))
	add(t, s, ds...)
	now := base.Add(time.Minute)
	held := map[string]int{}
	claim := func() []app.Due {
		got, err := s.Claim(t.Context(), now, 5, app.Bound{PerEndpoint: 2, Held: maps.Clone(held)}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range got {
			held[d.EndpointID]++
		}
		return got
	}
	// A claim may stop at a window of candidates that the slow backlog
	// fills: within two claims the fast endpoint has its two.
	var fastOnes []app.Due
	for range 2 {
		for _, d := range claim() {
			if d.EndpointID == fast.ID {
				fastOnes = append(fastOnes, d)
			}
		}
	}
	if held[slow.ID] != 2 || held[fast.ID] != 2 {
		t.Fatalf("two claims (5, 2 per endpoint) took %d of the slow endpoint's 200 and %d of the fast one's 3; want 2 and 2", held[slow.ID], held[fast.ID])
	}
	if third := claim(); len(third) != 0 {
		t.Fatalf("a claim while both endpoints are full took %v; want none", claimed(third))
	}
	// One of the fast endpoint's attempts ends: it may take one more.
	if err := record(t, s, fastOnes[0].ID, app.Attempt{At: now, StatusCode: 200}, app.Succeeded, time.Time{}); err != nil {
		t.Fatal(err)
	}
	held[fast.ID]--
	if fourth := claim(); len(fourth) != 1 || fourth[0].EndpointID != fast.ID {
		t.Fatalf("after one of its attempts ended, Claim took %v; want the fast endpoint's last", claimed(fourth))
	}
}

// backlog counts the pending deliveries, how many are due, and the oldest
// of each, across tenants; neither a succeeded nor a leased-then-recorded
// one counts.
func backlog(t *testing.T, s app.Store) {
	now := base.Add(time.Hour)
	if b, err := s.Backlog(t.Context(), now); err != nil || b != (app.Backlog{}) {
		t.Fatalf("Backlog of an empty store = %+v, %v; want zero", b, err)
	}
	a, b := endpoint(t, agencyA, 0, "*"), endpoint(t, siteA, 1, "*")
	insert(t, s, a, b)
	oldest := delivery(a, "e1", base)
	later := delivery(b, "e2", base.Add(10*time.Minute))
	future := delivery(a, "e3", base.Add(5*time.Minute))
	future.NextAttemptAt = now.Add(time.Hour) // a retry scheduled later
	done := delivery(b, "e4", base.Add(-time.Hour))
	add(t, s, oldest, later, future, done)
	if err := record(t, s, done.ID, app.Attempt{At: base, StatusCode: 200}, app.Succeeded, time.Time{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Backlog(t.Context(), now)
	want := app.Backlog{Pending: 3, Due: 2, OldestPending: base, OldestDue: base}
	if err != nil || got.Pending != want.Pending || got.Due != want.Due || !got.OldestPending.Equal(want.OldestPending) || !got.OldestDue.Equal(want.OldestDue) {
		t.Fatalf("Backlog = %+v, %v; want %+v", got, err, want)
	}
}

// pruneKeepsPendingAndRecent: the log's retention removes only finished
// deliveries created before the cut.
func pruneKeepsPendingAndRecent(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	oldOK, oldFailed, oldPending := delivery(ep, "e1", base), delivery(ep, "e2", base), delivery(ep, "e3", base)
	recent := delivery(ep, "e4", base.Add(48*time.Hour))
	add(t, s, oldOK, oldFailed, oldPending, recent)
	for _, c := range []struct {
		d      app.Delivery
		status app.DeliveryStatus
	}{{oldOK, app.Succeeded}, {oldFailed, app.Failed}, {recent, app.Succeeded}} {
		if err := record(t, s, c.d.ID, app.Attempt{At: base, StatusCode: 200}, c.status, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Prune(t.Context(), base.Add(24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want the 2 finished deliveries older than the cut", n, err)
	}
	page, err := s.Deliveries(t.Context(), agencyA, ep.ID, app.DeliveryFilter{Limit: 10})
	if got, want := ids(page.Deliveries), []string{recent.ID, oldPending.ID}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("deliveries after Prune = %v, %v; want the recent and the pending %v", got, err, want)
	}
}

// holdEndpoint: an endpoint held back has none of its deliveries claimed
// until the hold ends (those due then, a retry coming due meanwhile, one
// added meanwhile, due when the hold ends), by any claimer of the store;
// its due, unleased ones read back due at the hold's end; its leased one,
// and another endpoint's, are untouched; a shorter hold does not shorten
// it; once it ends they are claimed, oldest due first.
func holdEndpoint(t *testing.T, s app.Store) {
	slow, other := endpoint(t, agencyA, 0, "*"), endpoint(t, agencyA, 1, "*")
	insert(t, s, slow, other)
	now := base.Add(time.Minute)
	leased, due1, due2 := delivery(slow, "a", base), delivery(slow, "b", base.Add(time.Second)), delivery(slow, "c", base.Add(2*time.Second))
	later := delivery(slow, "d", base)
	later.NextAttemptAt = now.Add(time.Hour)
	retried := delivery(slow, "r", base)
	theirs := delivery(other, "e", base.Add(3*time.Second))
	add(t, s, leased, due1, due2, later, retried, theirs)
	if got, err := s.Claim(t.Context(), now, 2, app.Bound{}, time.Hour); err != nil || len(got) != 2 {
		t.Fatalf("the first claim = %v, %v; want the two oldest", claimed(got), err)
	}
	until := now.Add(15 * time.Second)
	n, err := s.Hold(t.Context(), slow.ID, now, until)
	if err != nil || n != 2 {
		t.Fatalf("Hold = %d, %v; want the endpoint's 2 due and unleased deliveries pushed back", n, err)
	}
	if n, err := s.Hold(t.Context(), slow.ID, now, now.Add(time.Second)); err != nil || n != 0 {
		t.Fatalf("a shorter Hold = %d, %v; want nothing changed (the longer hold stays)", n, err)
	}
	// One of the two leased is attempted meanwhile and due again soon (a
	// retry): it waits for the hold too.
	if err := record(t, s, retried.ID, app.Attempt{At: now, Error: "timed out"}, app.Pending, now.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	// A new event for the held endpoint, due now: added due when the hold
	// ends.
	fresh := delivery(slow, "f", now)
	add(t, s, fresh)
	for _, c := range []struct {
		d    app.Delivery
		next time.Time
	}{{due1, until}, {due2, until}, {later, later.NextAttemptAt}, {fresh, until}, {theirs, theirs.NextAttemptAt}} {
		if got := get(t, s, c.d); !got.NextAttemptAt.Equal(c.next) {
			t.Errorf("delivery %s due at %s after Hold, want %s", c.d.EventID, got.NextAttemptAt, c.next)
		}
	}
	for _, at := range []time.Time{now, now.Add(10 * time.Second), until.Add(-time.Microsecond)} {
		got, err := s.Claim(t.Context(), at, 10, app.Bound{}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range got {
			if d.EndpointID == slow.ID {
				t.Fatalf("claimed %s of the held endpoint at %s, before its hold ends at %s", d.EventID, at, until)
			}
		}
		if at.Equal(now) && (len(got) != 1 || got[0].ID != theirs.ID) {
			t.Fatalf("a claim during the hold = %v; want the other endpoint's delivery", claimed(got))
		}
	}
	got, err := s.Claim(t.Context(), until, 10, app.Bound{}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{retried.ID, due1.ID, due2.ID, fresh.ID}
	gotIDs := claimed(got)
	slices.Sort(gotIDs)
	slices.Sort(wantIDs)
	if !slices.Equal(gotIDs, wantIDs) {
		t.Fatalf("the claim when the hold ends = %v; want the retry, the two pushed back and the one added during the hold %v", claimed(got), wantIDs)
	}
	if got[0].ID != retried.ID {
		t.Errorf("the claim when the hold ends took %s first; want the retry, due longest (at %s)", got[0].EventID, now.Add(5*time.Second))
	}
}

// releaseEndsTheHold: Release ends a hold under way: the deliveries that
// waited for its end are due at once and claimed; a delivery due later
// on its own schedule keeps it; releasing an endpoint not held changes
// nothing.
func releaseEndsTheHold(t *testing.T, s app.Store) {
	held, other := endpoint(t, agencyA, 0, "*"), endpoint(t, agencyA, 1, "*")
	insert(t, s, held, other)
	now := base.Add(time.Minute)
	waiting := delivery(held, "a", base)
	scheduled := delivery(held, "b", base)
	scheduled.NextAttemptAt = now.Add(2 * time.Hour)
	theirs := delivery(other, "c", now.Add(30*time.Minute))
	add(t, s, waiting, scheduled, theirs)
	until := now.Add(time.Hour) // a Retry-After of an hour
	if n, err := s.Hold(t.Context(), held.ID, now, until); err != nil || n != 1 {
		t.Fatalf("Hold = %d, %v; want the due delivery pushed back", n, err)
	}
	fresh := delivery(held, "d", now)
	add(t, s, fresh)
	later := now.Add(time.Second)
	if n, err := s.Release(t.Context(), other.ID, later); err != nil || n != 0 {
		t.Fatalf("Release of an endpoint not held = %d, %v; want nothing", n, err)
	}
	if got := get(t, s, theirs); !got.NextAttemptAt.Equal(theirs.NextAttemptAt) {
		t.Fatalf("releasing an endpoint not held moved its delivery to %s", got.NextAttemptAt)
	}
	n, err := s.Release(t.Context(), held.ID, later)
	if err != nil || n != 2 {
		t.Fatalf("Release = %d, %v; want the 2 deliveries that waited for the hold", n, err)
	}
	if got := get(t, s, scheduled); !got.NextAttemptAt.Equal(scheduled.NextAttemptAt) {
		t.Fatalf("a delivery scheduled after the hold is due at %s after Release, want %s still", got.NextAttemptAt, scheduled.NextAttemptAt)
	}
	got, err := s.Claim(t.Context(), later, 10, app.Bound{}, time.Minute)
	gotIDs, wantIDs := claimed(got), []string{waiting.ID, fresh.ID}
	slices.Sort(gotIDs)
	slices.Sort(wantIDs)
	if err != nil || !slices.Equal(gotIDs, wantIDs) {
		t.Fatalf("a claim just after Release = %v, %v; want the two that waited for the hold %v", gotIDs, err, wantIDs)
	}
	after := delivery(held, "e", later)
	add(t, s, after)
	if d := get(t, s, after); !d.NextAttemptAt.Equal(later) {
		t.Fatalf("a delivery added after Release is due at %s, want when added (%s)", d.NextAttemptAt, later)
	}
}

// claimOldestDueFirstAcrossEndpoints: the claim takes due deliveries by
// how long they have been due, whatever their endpoint and whether first
// attempts or retries: a failing endpoint's retries, due later, come
// after a healthy endpoint's first attempts due before them, and before
// those due after them.
func claimOldestDueFirstAcrossEndpoints(t *testing.T, s app.Store) {
	failing, healthy := endpoint(t, agencyA, 0, "*"), endpoint(t, siteA, 1, "*")
	insert(t, s, failing, healthy)
	var retries []app.Delivery
	for i := range 3 {
		retries = append(retries, delivery(failing, fmt.Sprint("r", i), base))
	}
	first := []app.Delivery{
		delivery(healthy, "h0", base.Add(2*time.Second)), delivery(healthy, "h1", base.Add(4*time.Second)),
		delivery(healthy, "h2", base.Add(8*time.Second)),
	}
	add(t, s, append(slices.Clone(retries), first...)...)
	if got, err := s.Claim(t.Context(), base, 10, app.Bound{}, time.Minute); err != nil || len(got) != 3 {
		t.Fatalf("the failing endpoint's first attempts: claimed %v, %v; want its 3", claimed(got), err)
	}
	// They fail and are due again at 3, 5 and 6 s: interleaved with the
	// healthy endpoint's first attempts.
	for i, at := range []time.Duration{3 * time.Second, 5 * time.Second, 6 * time.Second} {
		if err := record(t, s, retries[i].ID, app.Attempt{At: base, StatusCode: 503}, app.Pending, base.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{first[0].ID, retries[0].ID, first[1].ID, retries[1].ID, retries[2].ID, first[2].ID}
	var order []string
	for range want {
		got, err := s.Claim(t.Context(), base.Add(time.Minute), 1, app.Bound{}, time.Hour)
		if err != nil || len(got) != 1 {
			t.Fatalf("Claim(limit 1) = %v, %v; want one", claimed(got), err)
		}
		order = append(order, got[0].ID)
	}
	if !slices.Equal(order, want) {
		t.Fatalf("claimed one at a time in the order %v; want by due time across both endpoints %v", order, want)
	}
	if got, err := s.Claim(t.Context(), base.Add(time.Minute), 10, app.Bound{}, time.Hour); err != nil {
		t.Fatal(err)
	} else if all := claimed(got); len(all) != 0 {
		t.Fatalf("a claim after all six = %v, want none", all)
	}
}
