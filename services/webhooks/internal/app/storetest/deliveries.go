package storetest

import (
	"errors"
	"fmt"
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
	if got.EventID != "evt-1" || string(got.Body) != string(d.Body) || got.Status != app.Pending || got.Tenant != agencyA || !got.CreatedAt.Equal(base) {
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
	got, err := s.Claim(t.Context(), now, 10, 0, 30*time.Second)
	if err != nil || !slices.Equal(ids(got), []string{early.ID, late.ID}) {
		t.Fatalf("Claim = %v, %v; want the two due, oldest due first", ids(got), err)
	}
	if again, _ := s.Claim(t.Context(), now.Add(29*time.Second), 10, 0, 30*time.Second); len(again) != 0 {
		t.Fatalf("claimed again within the lease: %v", ids(again))
	}
	back, err := s.Claim(t.Context(), now.Add(31*time.Second), 1, 0, 30*time.Second)
	if err != nil || len(back) != 1 || back[0].ID != early.ID {
		t.Fatalf("after the lease ended, Claim(limit 1) = %v, %v; want the oldest back", ids(back), err)
	}
}

func attemptsRecorded(t *testing.T, s app.Store) {
	ep := endpoint(t, agencyA, 0, "*")
	insert(t, s, ep)
	d := delivery(ep, "e1", base)
	add(t, s, d)
	if _, err := s.Claim(t.Context(), base, 10, 0, time.Minute); err != nil {
		t.Fatal(err)
	}
	first := app.Attempt{At: base, StatusCode: 503, Duration: 120 * time.Millisecond, ResponseBody: "busy"}
	if err := s.RecordAttempt(t.Context(), d.ID, first, app.Pending, base.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Claim(t.Context(), base.Add(4*time.Second), 10, 0, time.Minute); len(got) != 0 {
		t.Fatalf("claimed before its next attempt: %v", ids(got))
	}
	if got, _ := s.Claim(t.Context(), base.Add(5*time.Second), 10, 0, time.Minute); len(got) != 1 {
		t.Fatalf("not claimed at its next attempt (the recorded attempt ends the lease): %v", ids(got))
	}
	second := app.Attempt{At: base.Add(5 * time.Second), StatusCode: 200, Duration: 40 * time.Millisecond, ResponseBody: "ok"}
	if err := s.RecordAttempt(t.Context(), d.ID, second, app.Succeeded, time.Time{}); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, d)
	if got.Status != app.Succeeded || len(got.Attempts) != 2 || got.Attempts[0].StatusCode != 503 || got.Attempts[0].ResponseBody != "busy" ||
		got.Attempts[0].Duration != 120*time.Millisecond || got.Attempts[1].StatusCode != 200 || !got.NextAttemptAt.IsZero() {
		t.Fatalf("after two attempts: %+v", got)
	}
	if more, _ := s.Claim(t.Context(), base.Add(time.Hour), 10, 0, time.Minute); len(more) != 0 {
		t.Fatalf("a succeeded delivery was claimed: %v", ids(more))
	}
	if err := s.RecordAttempt(t.Context(), uuid.NewString(), second, app.Succeeded, time.Time{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an attempt of no delivery = %v, want store.ErrNotFound", err)
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
		if err := s.RecordAttempt(t.Context(), all[i].ID, app.Attempt{At: base, Error: "refused"}, app.Failed, time.Time{}); err != nil {
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
		if err := s.RecordAttempt(t.Context(), d.ID, app.Attempt{At: base, StatusCode: 500}, app.Failed, time.Time{}); err != nil {
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
	due, err := s.Claim(t.Context(), now, 10, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(due)
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
	if due, _ := s.Claim(t.Context(), base.Add(time.Hour), 10, 0, time.Minute); len(due) != 0 {
		t.Fatalf("a deleted endpoint's delivery was claimed: %v", ids(due))
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
		got, err := s.Claim(t.Context(), base.Add(time.Second), 15, 0, time.Minute)
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

// claimBoundedPerEndpoint: no endpoint gets more than perEndpoint leased at
// once, counting earlier claims' leases; others' deliveries fill the rest.
func claimBoundedPerEndpoint(t *testing.T, s app.Store) {
	slow, fast := endpoint(t, agencyA, 0, "*"), endpoint(t, agencyA, 1, "*")
	insert(t, s, slow, fast)
	var ds []app.Delivery
	for i := range 10 {
		ds = append(ds, delivery(slow, fmt.Sprint("s", i), base))
	}
	ds = append(ds, delivery(fast, "f0", base.Add(time.Second)), delivery(fast, "f1", base.Add(time.Second)))
	add(t, s, ds...)
	now := base.Add(time.Minute)
	count := func(got []app.Delivery) (nSlow, nFast int) {
		for _, d := range got {
			if d.EndpointID == slow.ID {
				nSlow++
			} else {
				nFast++
			}
		}
		return
	}
	first, err := s.Claim(t.Context(), now, 5, 2, time.Minute)
	if nSlow, nFast := count(first); err != nil || nSlow != 2 || nFast != 2 {
		t.Fatalf("Claim(5, 2 per endpoint) took %d of the slow endpoint's and %d of the fast one's, %v; want 2 and 2", nSlow, nFast, err)
	}
	second, err := s.Claim(t.Context(), now, 5, 2, time.Minute)
	if err != nil || len(second) != 0 {
		t.Fatalf("a second claim while both endpoints have 2 leased took %v, %v; want none", ids(second), err)
	}
	if err := s.RecordAttempt(t.Context(), first[0].ID, app.Attempt{At: now, StatusCode: 200}, app.Succeeded, time.Time{}); err != nil {
		t.Fatal(err)
	}
	third, err := s.Claim(t.Context(), now, 5, 2, time.Minute)
	if err != nil || len(third) != 1 || third[0].EndpointID != first[0].EndpointID {
		t.Fatalf("after one attempt ended, Claim took %v, %v; want one more of that endpoint", ids(third), err)
	}
}
