package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
)

// The leases of running runs: the process executing a run renews its lease
// (app/leases.go), and recovery takes back a run whose lease has ended.
// The two must never both win: a renewed lease is not taken, and an owner
// whose run was taken back can neither renew it nor record its outcome.

func renew(t *testing.T, s Store, until time.Time, leases ...app.Lease) []string {
	t.Helper()
	got, err := s.RenewLeases(t.Context(), leases, until)
	if err != nil {
		t.Fatalf("RenewLeases: %v", err)
	}
	return got
}

// takeBack is recovery's take-back of a synchronous run: the expired runs
// at now, each recorded as an error with its cost released.
func takeBack(t *testing.T, s Store, now time.Time) []string {
	t.Helper()
	var ids []string
	mustTx(t, s, func(tx app.Tx) error {
		ids = ids[:0]
		runs, err := tx.ExpiredRuns(t.Context(), now, 10)
		if err != nil {
			return err
		}
		for _, r := range runs {
			r.Status, r.StatusCode, r.FinishedAt = app.StatusError, 500, now
			r.Data = map[string]any{"error": "interrupted"}
			if ok, _, err := tx.FinishRun(t.Context(), r, r.Cost, event()); err != nil || !ok {
				t.Errorf("recovery's finish of %s = %v, %v", r.ID, ok, err)
			}
			ids = append(ids, r.ID)
		}
		return nil
	})
	return ids
}

// testLeaseRenewalExtends: a renewal moves the lease of every pending run
// named, in one call, and only theirs; a renewed run is not expired until
// its new lease ends.
func testLeaseRenewalExtends(t *testing.T, s Store) {
	a := id()
	r1, r2, other := newRun(a), newRun(a), newRun(a)
	insert(t, s, r1, r2, other)
	until := base.Add(5 * time.Minute)
	got := renew(t, s, until, app.Lease{RunID: r1.ID}, app.Lease{RunID: r2.ID})
	slices.Sort(got)
	want := []string{r1.ID, r2.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("renewed %v, want both runs named %v", got, want)
	}
	for _, r := range []app.Run{r1, r2} {
		if read, err := s.Run(t.Context(), r.ID); err != nil || !read.LeaseUntil.Equal(until) {
			t.Fatalf("lease of %s after renewal = %s (%v), want %s", r.ID, read.LeaseUntil, err, until)
		}
	}
	// Past the first lease only the run nobody renewed has expired; past
	// the renewed one, all three.
	if got := expired(t, s, base.Add(2*time.Minute)); !slices.Equal(got, []string{other.ID}) {
		t.Fatalf("expired after the renewal = %v, want only the run not renewed %s", got, other.ID)
	}
	if got := expired(t, s, until.Add(time.Second)); len(got) != 3 {
		t.Fatalf("expired past the renewed lease = %v, want all three", got)
	}
	if got := renew(t, s, until, app.Lease{RunID: id()}); len(got) != 0 {
		t.Fatalf("renewing an unknown run renewed %v", got)
	}
	if got := renew(t, s, until); len(got) != 0 {
		t.Fatalf("renewing nothing renewed %v", got)
	}
}

// testExpiredLeaseIsTakenAndTheOwnerRefused: a run whose lease ended
// without renewal is taken back (recorded as an error, its cost
// released); the owner, late, can neither renew it nor record its
// outcome, and the balance is what the take-back left.
func testExpiredLeaseIsTakenAndTheOwnerRefused(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 10, Data: 10})
	r := reserved(t, s, a)
	if got := takeBack(t, s, base.Add(30*time.Second)); len(got) != 0 {
		t.Fatalf("recovery within the lease took %v", got)
	}
	if got := takeBack(t, s, base.Add(2*time.Minute)); !slices.Equal(got, []string{r.ID}) {
		t.Fatalf("recovery past the lease took %v, want %s", got, r.ID)
	}
	if got := renew(t, s, base.Add(3*time.Minute), app.Lease{RunID: r.ID}); len(got) != 0 {
		t.Fatalf("the owner renewed a run recovery took back: %v", got)
	}
	late := r
	late.Status, late.StatusCode, late.FinishedAt = app.StatusSuccess, 200, base.Add(3*time.Minute)
	if finish(t, s, late) {
		t.Fatal("the owner's late outcome was recorded over recovery's")
	}
	got, err := s.Run(t.Context(), r.ID)
	if err != nil || got.Status != app.StatusError || got.Data["error"] != "interrupted" || !got.LeaseUntil.Equal(r.LeaseUntil) {
		t.Fatalf("run after the late owner = %+v, %v; want recovery's error, lease untouched", got, err)
	}
	if b := balance(t, s, a); b != (app.Balance{AI: 10, Data: 10}) {
		t.Fatalf("balance = %+v, want the reservation released once", b)
	}
}

// testRenewedLeaseIsNotTaken: an owner that renews a lease that has just
// ended keeps its run: recovery after the renewal finds nothing, and the
// owner records its outcome.
func testRenewedLeaseIsNotTaken(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 10, Data: 10})
	r := reserved(t, s, a)
	now := base.Add(2 * time.Minute) // past the lease, not yet taken back
	if got := renew(t, s, now.Add(15*time.Second), app.Lease{RunID: r.ID}); !slices.Equal(got, []string{r.ID}) {
		t.Fatalf("renewal of a live owner's expired lease = %v, want it renewed", got)
	}
	if got := takeBack(t, s, now); len(got) != 0 {
		t.Fatalf("recovery took back renewed runs %v", got)
	}
	r.Status, r.StatusCode, r.FinishedAt = app.StatusSuccess, 200, now
	if !finish(t, s, r) {
		t.Fatal("the owner's outcome was refused after its renewal")
	}
}

// testRenewalAndTakeBackSerialise: a renewal sent while recovery holds the
// run waits for it (or, on PostgreSQL, re-reads the row once recovery
// commits) and renews nothing; whichever order, never both.
func testRenewalAndTakeBackSerialise(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 10, Data: 10})
	r := reserved(t, s, a)
	now := base.Add(2 * time.Minute)
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.InTx(t.Context(), func(tx app.Tx) error {
			runs, err := tx.ExpiredRuns(t.Context(), now, 10)
			if err != nil || len(runs) != 1 {
				close(held)
				return err
			}
			close(held)
			<-release
			x := runs[0]
			x.Status, x.StatusCode, x.FinishedAt = app.StatusError, 500, now
			_, _, err = tx.FinishRun(t.Context(), x, x.Cost, event())
			return err
		})
	}()
	<-held
	renewed := make(chan []string, 1)
	go func() {
		got, err := s.RenewLeases(t.Context(), []app.Lease{{RunID: r.ID}}, now.Add(15*time.Second))
		if err != nil {
			t.Error(err)
		}
		renewed <- got
	}()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := <-renewed; len(got) != 0 {
		t.Fatalf("a renewal racing recovery's take-back renewed %v", got)
	}
	if got, _ := s.Run(t.Context(), r.ID); got.Status != app.StatusError {
		t.Fatalf("run after the race = %+v, want recovery's error", got)
	}
	if b := balance(t, s, a); b != (app.Balance{AI: 10, Data: 10}) {
		t.Fatalf("balance = %+v, want the reservation released once", b)
	}
}

// testRenewalMatchesTheAttempt: a queued run taken back (queued again)
// and claimed by another worker is the new claim's: the first worker's
// renewal and outcome are refused, the second's accepted.
func testRenewalMatchesTheAttempt(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 10, Data: 10})
	r := queuedRun(a, base)
	mustTx(t, s, func(tx app.Tx) error {
		_, _, err := tx.StartRun(t.Context(), r)
		return err
	})
	first, ok := claim(t, s, base)
	if !ok || first.Attempts != 1 {
		t.Fatalf("claim = %+v, %v", first, ok)
	}
	if got := renew(t, s, base.Add(time.Minute), app.Lease{RunID: r.ID, Attempt: 2}); len(got) != 0 {
		t.Fatalf("a renewal naming another attempt renewed %v", got)
	}
	// Its worker dies; recovery queues it again once its lease is over,
	// and another worker claims it.
	mustTx(t, s, func(tx app.Tx) error {
		runs, err := tx.ExpiredRuns(t.Context(), base.Add(2*time.Minute), 10)
		if err != nil || len(runs) != 1 {
			t.Errorf("expired = %d runs, %v", len(runs), err)
			return err
		}
		_, err = tx.RequeueRun(t.Context(), r.ID, runs[0].Attempts)
		return err
	})
	if got := renew(t, s, base.Add(3*time.Minute), app.Lease{RunID: r.ID, Attempt: 1}); len(got) != 0 {
		t.Fatalf("the first worker renewed a run back in the queue: %v", got)
	}
	second, _ := claim(t, s, base.Add(2*time.Minute))
	if got := renew(t, s, base.Add(3*time.Minute), app.Lease{RunID: r.ID, Attempt: 1}); len(got) != 0 {
		t.Fatalf("the first worker renewed a run the second claimed: %v", got)
	}
	first.Status, first.StatusCode, first.FinishedAt = app.StatusSuccess, 200, base.Add(3*time.Minute)
	if finish(t, s, first) {
		t.Fatal("the first worker's outcome was recorded over the second claim")
	}
	if got := renew(t, s, base.Add(3*time.Minute), app.Lease{RunID: r.ID, Attempt: second.Attempts}); !slices.Equal(got, []string{r.ID}) {
		t.Fatalf("the second worker's renewal = %v, want it renewed", got)
	}
	second.Status, second.StatusCode, second.FinishedAt = app.StatusSuccess, 200, base.Add(3*time.Minute)
	if !finish(t, s, second) {
		t.Fatal("the current claim's outcome was refused")
	}
	if got := renew(t, s, base.Add(4*time.Minute), app.Lease{RunID: r.ID, Attempt: second.Attempts}); len(got) != 0 {
		t.Fatalf("a finished run's lease was renewed: %v", got)
	}
	if b := balance(t, s, a); b != (app.Balance{AI: 8, Data: 9}) {
		t.Fatalf("balance = %+v, want the run charged once", b)
	}
}

func event() outbox.Event {
	return outbox.Event{ID: uuid.NewString(), Subject: "atrium.actions.test", Payload: []byte("{}"), CreatedAt: base}
}
