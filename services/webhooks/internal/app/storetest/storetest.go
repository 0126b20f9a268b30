// Package storetest is the contract every webhooks store adapter must
// meet. Each adapter's test is one call to RunAll; a behaviour the memory
// store and the PostgreSQL store disagree on fails here rather than in
// production.
package storetest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
	"github.com/atrium-hq/atrium/services/webhooks/internal/signing"
)

// RunAll runs the contract against fresh stores made by newStore.
func RunAll(t *testing.T, newStore func(t *testing.T) app.Store) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, app.Store)
	}{
		{"EndpointRoundTrip", endpointRoundTrip},
		{"NewestFirstAndScoped", newestFirstAndScoped},
		{"AnotherTenantsIDIsNotFound", anotherTenantsIDIsNotFound},
		{"UpdateAndDelete", updateAndDelete},
		{"Subscribers", subscribers},
		{"FailedTransactionChangesNothing", failedTransactionChangesNothing},
		{"DeliveriesAddedOncePerEndpointAndEvent", deliveriesAddedOnce},
		{"ClaimLeasesDueDeliveries", claimLeasesDue},
		{"ConcurrentClaimsAreDisjoint", concurrentClaimsAreDisjoint},
		{"ClaimBoundedPerEndpoint", claimBoundedPerEndpoint},
		{"AttemptsAreRecorded", attemptsRecorded},
		{"DeliveryPages", deliveryPages},
		{"ResendAndRecover", resendAndRecover},
		{"DeletingAnEndpointDeletesItsDeliveries", deleteCascades},
		{"Backlog", backlog},
		{"ClaimOldestDueFirstAcrossEndpoints", claimOldestDueFirstAcrossEndpoints},
		{"HeldEndpointIsNotClaimedUntilItsHoldEnds", holdEndpoint},
		{"ReleaseEndsTheHold", releaseEndsTheHold},
		{"PruneKeepsPendingAndRecent", pruneKeepsPendingAndRecent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

var (
	siteA   = app.Tenant{Kind: eventtypes.Site, ID: uuid.NewString()}
	agencyA = app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}
	// agencySameID has siteA's id: kinds keep tenants apart.
	agencySameID = app.Tenant{Kind: eventtypes.Agency, ID: siteA.ID}
	base         = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
)

func secret(t *testing.T) signing.Secret {
	t.Helper()
	s, err := signing.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func endpoint(t *testing.T, tenant app.Tenant, n int, events ...string) app.Endpoint {
	at := base.Add(time.Duration(n) * time.Minute)
	return app.Endpoint{
		ID: uuid.Must(uuid.NewV7()).String(), Tenant: tenant, URL: "https://hooks.example.com/" + tenant.ID,
		Events: events, Description: "endpoint", Enabled: true, Secret: secret(t), CreatedAt: at, UpdatedAt: at,
	}
}

func insert(t *testing.T, s app.EndpointStore, eps ...app.Endpoint) {
	t.Helper()
	err := s.InTx(t.Context(), func(tx app.EndpointTx) error {
		for _, e := range eps {
			if err := tx.InsertEndpoint(t.Context(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// same compares endpoints as stored: secrets by their text, times to the
// microsecond PostgreSQL keeps.
func same(t *testing.T, got, want app.Endpoint) {
	t.Helper()
	norm := func(e app.Endpoint) map[string]any {
		return map[string]any{
			"id": e.ID, "tenant": e.Tenant, "url": e.URL, "events": slices.Clone(e.Events), "description": e.Description,
			"enabled": e.Enabled, "secret": e.Secret.String(), "previous": e.Previous.String(),
			"previous_until": e.PreviousUntil.UTC().Truncate(time.Microsecond), "disabled_reason": e.DisabledReason,
			"failing_since": e.FailingSince.UTC().Truncate(time.Microsecond),
			"created_at":    e.CreatedAt.UTC().Truncate(time.Microsecond), "updated_at": e.UpdatedAt.UTC().Truncate(time.Microsecond),
		}
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("endpoint\n got %v\nwant %v", g, w)
	}
}

func endpointRoundTrip(t *testing.T, s app.Store) {
	e := endpoint(t, siteA, 0, "item.*", "webhook.test")
	insert(t, s, e)
	got, err := s.Endpoint(t.Context(), siteA, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, got, e)
	if err := s.InTx(t.Context(), func(tx app.EndpointTx) error { return tx.InsertEndpoint(t.Context(), e) }); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("inserting an endpoint twice = %v, want store.ErrDuplicate", err)
	}
}

func newestFirstAndScoped(t *testing.T, s app.Store) {
	a1, a2, a3 := endpoint(t, agencyA, 1, "*"), endpoint(t, agencyA, 3, "*"), endpoint(t, agencyA, 2, "*")
	other := endpoint(t, agencySameID, 4, "*")
	site := endpoint(t, siteA, 5, "*")
	insert(t, s, a1, a2, a3, other, site)
	got, err := s.Endpoints(t.Context(), agencyA)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if want := []string{a2.ID, a3.ID, a1.ID}; !slices.Equal(ids, want) {
		t.Fatalf("agency's endpoints %v, want newest first %v", ids, want)
	}
	n := 0
	err = s.InTx(t.Context(), func(tx app.EndpointTx) error {
		var err error
		n, err = tx.CountEndpoints(t.Context(), agencySameID)
		return err
	})
	if err != nil || n != 1 {
		t.Fatalf("CountEndpoints of the agency with the site's id = %d, %v; want 1 (the site's are the site's)", n, err)
	}
}

func anotherTenantsIDIsNotFound(t *testing.T, s app.Store) {
	e := endpoint(t, siteA, 0, "*")
	insert(t, s, e)
	for _, other := range []app.Tenant{agencySameID, {Kind: eventtypes.Site, ID: uuid.NewString()}} {
		if _, err := s.Endpoint(t.Context(), other, e.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%v reading %v's endpoint = %v, want store.ErrNotFound", other, siteA, err)
		}
		err := s.InTx(t.Context(), func(tx app.EndpointTx) error {
			if _, err := tx.Endpoint(t.Context(), other, e.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%v reading it in a transaction = %v, want store.ErrNotFound", other, err)
			}
			changed := e
			changed.Tenant, changed.URL = other, "https://evil.example.com/"
			if err := tx.UpdateEndpoint(t.Context(), changed); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%v updating it = %v, want store.ErrNotFound", other, err)
			}
			if err := tx.DeleteEndpoint(t.Context(), other, e.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%v deleting it = %v, want store.ErrNotFound", other, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Endpoint(t.Context(), siteA, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, got, e)
}

func updateAndDelete(t *testing.T, s app.Store) {
	e := endpoint(t, agencyA, 0, "action_run.*")
	insert(t, s, e)
	changed := e
	changed.URL, changed.Events, changed.Description, changed.Enabled = "https://new.example.com/hook", []string{"credits.changed"}, "", false
	changed.Previous, changed.Secret, changed.PreviousUntil = e.Secret, secret(t), base.Add(24*time.Hour)
	changed.DisabledReason, changed.FailingSince, changed.UpdatedAt = "gone", base.Add(time.Hour), base.Add(2*time.Hour)
	if err := s.InTx(t.Context(), func(tx app.EndpointTx) error { return tx.UpdateEndpoint(t.Context(), changed) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Endpoint(t.Context(), agencyA, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, got, changed)
	if err := s.InTx(t.Context(), func(tx app.EndpointTx) error { return tx.DeleteEndpoint(t.Context(), agencyA, e.ID) }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Endpoint(t.Context(), agencyA, e.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a deleted endpoint = %v, want store.ErrNotFound", err)
	}
}

func subscribers(t *testing.T, s app.Store) {
	all := endpoint(t, agencyA, 1, "*")
	runs := endpoint(t, agencyA, 2, "action_run.*")
	credits := endpoint(t, agencyA, 3, "credits.changed")
	off := endpoint(t, agencyA, 4, "*")
	off.Enabled = false
	neighbour := endpoint(t, app.Tenant{Kind: eventtypes.Agency, ID: uuid.NewString()}, 5, "*")
	insert(t, s, all, runs, credits, off, neighbour)
	for typ, want := range map[string][]string{
		"action_run.failed": {runs.ID, all.ID},
		"credits.changed":   {credits.ID, all.ID},
		"deal.created":      {all.ID},
	} {
		got, err := s.Subscribers(t.Context(), agencyA, typ)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		slices.Sort(ids)
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Errorf("Subscribers(%s) = %v, want %v (enabled, subscribed, this agency's only)", typ, ids, want)
		}
	}
}

func failedTransactionChangesNothing(t *testing.T, s app.Store) {
	e := endpoint(t, siteA, 0, "*")
	boom := errors.New("boom")
	err := s.InTx(t.Context(), func(tx app.EndpointTx) error {
		if err := tx.InsertEndpoint(t.Context(), e); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v, want the function's error", err)
	}
	if _, err := s.Endpoint(context.WithoutCancel(t.Context()), siteA, e.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an endpoint inserted by a failed transaction = %v, want store.ErrNotFound", err)
	}
}
