package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
)

// queuedRun is an asynchronous run of agency waiting in the queue,
// submitted at.
func queuedRun(agency string, at time.Time) app.Run {
	r := newRun(agency)
	r.Status, r.Async, r.CreatedAt, r.StartedAt = app.StatusQueued, true, at, at
	r.Input = map[string]any{"action": "generate_blog", "client_id": r.ClientID, "keyword": "rye"}
	return r
}

func claim(t *testing.T, s Store, now time.Time) (app.Run, bool) {
	t.Helper()
	var (
		r  app.Run
		ok bool
	)
	mustTx(t, s, func(tx app.Tx) error {
		var err error
		r, ok, err = tx.ClaimRun(t.Context(), now, now.Add(time.Minute))
		return err
	})
	return r, ok
}

func queuedCount(t *testing.T, s Store, agency string) int {
	t.Helper()
	var n int
	mustTx(t, s, func(tx app.Tx) error {
		var err error
		n, err = tx.QueuedRuns(t.Context(), agency, 1000)
		return err
	})
	return n
}

// testQueueClaims: a claim makes the run pending with its start, lease and
// attempt, and returns its request; an agency with many queued runs does
// not hold back another's single run beyond one claim; concurrent claims
// never take one run twice.
func testQueueClaims(t *testing.T, s Store) {
	if _, ok := claim(t, s, base); ok {
		t.Fatal("a claim on an empty queue took a run")
	}
	big, small := id(), id()
	var bigRuns []app.Run
	for i := range 20 {
		bigRuns = append(bigRuns, queuedRun(big, base.Add(time.Duration(i)*time.Millisecond)))
	}
	insert(t, s, bigRuns...)
	if n := queuedCount(t, s, big); n != 20 {
		t.Fatalf("QueuedRuns = %d, want 20", n)
	}
	mustTx(t, s, func(tx app.Tx) error {
		if n, err := tx.QueuedRuns(t.Context(), big, 5); n != 5 || err != nil {
			t.Errorf("QueuedRuns up to 5 = %d, %v; want 5", n, err)
		}
		return nil
	})
	now := base.Add(time.Second)
	first, ok := claim(t, s, now)
	if !ok || first.ID != bigRuns[0].ID || first.Status != app.StatusPending || first.Attempts != 1 ||
		!first.StartedAt.Equal(now) || !first.LeaseUntil.Equal(now.Add(time.Minute)) || !first.CreatedAt.Equal(bigRuns[0].CreatedAt) {
		t.Fatalf("first claim = %+v, %v; want the oldest run, pending, started now, attempt 1", first, ok)
	}
	if !jsonEqual(t, first.Input, bigRuns[0].Input) || !first.Async {
		t.Fatalf("claimed run's request = %v (async %v), want %v", first.Input, first.Async, bigRuns[0].Input)
	}
	// The small agency's one run, queued after all of the big one's, is
	// next: the big agency has a run running, the small one none.
	lone := queuedRun(small, base.Add(time.Hour))
	insert(t, s, lone)
	if next, ok := claim(t, s, now); !ok || next.ID != lone.ID {
		t.Fatalf("claim after another agency's run = %s, want the small agency's %s", next.ID, lone.ID)
	}
	if n := queuedCount(t, s, big); n != 19 {
		t.Fatalf("QueuedRuns after a claim = %d, want 19", n)
	}
	// Concurrent claims take the remaining 19 once each.
	var (
		mu  sync.Mutex
		got = map[string]int{}
		wg  sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for {
				var (
					r  app.Run
					ok bool
				)
				err := s.InTx(t.Context(), func(tx app.Tx) error {
					var err error
					r, ok, err = tx.ClaimRun(t.Context(), now, now.Add(time.Minute))
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				got[r.ID]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != 19 {
		t.Fatalf("concurrent claims took %d runs, want 19", len(got))
	}
	for id, n := range got {
		if n != 1 {
			t.Fatalf("run %s claimed %d times", id, n)
		}
	}
}

// testQueueCancelAndRequeue: a queued run finishes (canceled) with its
// refund; a pending run goes back to the queue and is claimed again with
// its next attempt; a finish that read an earlier attempt changes nothing.
func testQueueCancelAndRequeue(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 10, Data: 10})
	r := queuedRun(a, base)
	mustTx(t, s, func(tx app.Tx) error {
		_, ok, err := tx.StartRun(t.Context(), r)
		if !ok {
			return fmt.Errorf("StartRun refused")
		}
		return err
	})
	if b := balance(t, s, a); b != (app.Balance{AI: 8, Data: 9}) {
		t.Fatalf("balance after queuing = %+v", b)
	}
	canceled := r
	canceled.Status, canceled.StatusCode, canceled.FinishedAt = app.StatusCanceled, app.StatusCodeCanceled, base.Add(time.Second)
	canceled.Data = map[string]any{"error": "canceled"}
	var ok bool
	var b app.Balance
	mustTx(t, s, func(tx app.Tx) error {
		var err error
		ok, b, err = tx.FinishRun(t.Context(), canceled, r.Cost, outbox.Event{ID: uuid.NewString(), Subject: "atrium.actions.test", Payload: []byte("{}"), CreatedAt: base})
		return err
	})
	if !ok || b != (app.Balance{AI: 10, Data: 10}) {
		t.Fatalf("cancel of a queued run = %v, %+v; want done, the cost released", ok, b)
	}
	if got, err := s.Run(t.Context(), r.ID); err != nil || got.Status != app.StatusCanceled || got.StatusCode != app.StatusCodeCanceled {
		t.Fatalf("canceled run reads %+v, %v", got, err)
	}
	if n := queuedCount(t, s, a); n != 0 {
		t.Fatalf("QueuedRuns after a cancel = %d", n)
	}
	if _, ok := claim(t, s, base); ok {
		t.Fatal("a canceled run was claimed")
	}

	r2 := queuedRun(a, base)
	insert(t, s, r2)
	c1, _ := claim(t, s, base)
	requeue := func(attempt int) (requeued bool) {
		mustTx(t, s, func(tx app.Tx) error {
			var err error
			requeued, err = tx.RequeueRun(t.Context(), r2.ID, attempt)
			return err
		})
		return requeued
	}
	if requeue(c1.Attempts + 1) {
		t.Fatal("RequeueRun with another attempt than the claim's put the run back")
	}
	if !requeue(c1.Attempts) {
		t.Fatal("RequeueRun of a pending run = false")
	}
	if n := queuedCount(t, s, a); n != 1 {
		t.Fatalf("QueuedRuns after a requeue = %d, want 1", n)
	}
	c2, ok := claim(t, s, base.Add(time.Second))
	if !ok || c2.ID != r2.ID || c2.Attempts != 2 {
		t.Fatalf("second claim = %+v, %v; want attempt 2 of the run", c2, ok)
	}
	// The first attempt's worker, cut late, may not put back the run the
	// second attempt runs.
	if requeue(c1.Attempts) {
		t.Fatal("the first attempt's requeue took the run from the second")
	}
	// The first attempt's finish comes too late: the second attempt owns
	// the run.
	c1.Status, c1.StatusCode, c1.FinishedAt = app.StatusSuccess, 200, base.Add(2*time.Second)
	if finish(t, s, c1) {
		t.Fatal("a finish of an earlier attempt was recorded")
	}
	c2.Status, c2.StatusCode, c2.FinishedAt = app.StatusSuccess, 200, base.Add(2*time.Second)
	if !finish(t, s, c2) {
		t.Fatal("the current attempt's finish was refused")
	}
	if requeue(c2.Attempts) {
		t.Fatal("a finished run went back to the queue")
	}
	if n := queuedCount(t, s, a); n != 0 {
		t.Fatalf("QueuedRuns after the run finished = %d, want 0", n)
	}
}

// testListRuns: an agency's runs newest first, by client, action and
// status, paged with Before; never another agency's.
func testListRuns(t *testing.T, s Store) {
	a, other := id(), id()
	client := id()
	var all []app.Run
	for i := range 5 {
		r := newRun(a)
		if i%2 == 0 {
			r.ClientID = client
		}
		if i == 4 {
			r.Status, r.Action = app.StatusQueued, "seo_audit"
		}
		all = append(all, r)
	}
	insert(t, s, all...)
	insert(t, s, newRun(other))
	list := func(f app.RunFilter) []string {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 10
		}
		runs, err := s.ListRuns(t.Context(), a, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	want := func(runs ...int) []string {
		var ids []string
		for _, i := range runs {
			ids = append(ids, all[i].ID)
		}
		return ids
	}
	check := func(name string, got, want []string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s = %v, want %v", name, got, want)
		}
	}
	check("all", list(app.RunFilter{}), want(4, 3, 2, 1, 0))
	check("client", list(app.RunFilter{ClientID: client}), want(4, 2, 0))
	check("action", list(app.RunFilter{Action: "seo_audit"}), want(4))
	check("status", list(app.RunFilter{Status: app.StatusPending}), want(3, 2, 1, 0))
	check("page", list(app.RunFilter{Limit: 2}), want(4, 3))
	check("next page", list(app.RunFilter{Limit: 2, Before: all[3].ID}), want(2, 1))
}

// testQueueRoundRobin: of agencies with as many runs running, the one
// served longest ago goes first, whatever the age of their runs.
func testQueueRoundRobin(t *testing.T, s Store) {
	x, y := id(), id()
	insert(t, s, queuedRun(x, base), queuedRun(x, base.Add(time.Millisecond)), queuedRun(x, base.Add(2*time.Millisecond)),
		queuedRun(y, base.Add(time.Second)), queuedRun(y, base.Add(2*time.Second)))
	var order []string
	for i := range 5 {
		r, ok := claim(t, s, base.Add(time.Hour+time.Duration(i)*time.Second))
		if !ok {
			t.Fatalf("claim %d found nothing", i)
		}
		// It finishes before the next claim: both agencies have none
		// running each time.
		r.Status, r.StatusCode, r.FinishedAt = app.StatusSuccess, 200, base.Add(time.Hour)
		if !finish(t, s, r) {
			t.Fatalf("finish of claim %d refused", i)
		}
		name := "x"
		if r.AgencyID == y {
			name = "y"
		}
		order = append(order, name)
	}
	if fmt.Sprint(order) != "[x y x y x]" {
		t.Fatalf("claims served %v, want [x y x y x]", order)
	}
}

// testQueueDepthUnderConcurrency: submissions, cancels and claims of one
// agency's runs at once leave its count of queued runs exact.
func testQueueDepthUnderConcurrency(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 1000, Data: 1000})
	const submitters, each = 8, 10
	var wg sync.WaitGroup
	for g := range submitters {
		wg.Go(func() {
			for i := range each {
				r := queuedRun(a, base.Add(time.Duration(g*each+i)*time.Millisecond))
				if err := s.InTx(t.Context(), func(tx app.Tx) error {
					_, _, ok, err := tx.QueueRun(t.Context(), r, 1000)
					if err == nil && !ok {
						err = fmt.Errorf("QueueRun refused")
					}
					return err
				}); err != nil {
					t.Error(err)
					return
				}
				if i%2 == 1 {
					continue
				}
				// Every other run is canceled at once, unless a claim
				// took it first.
				canceled := r
				canceled.Status, canceled.StatusCode, canceled.FinishedAt = app.StatusCanceled, app.StatusCodeCanceled, base.Add(time.Hour)
				if err := s.InTx(t.Context(), func(tx app.Tx) error {
					_, _, err := tx.FinishRun(t.Context(), canceled, r.Cost, outbox.Event{ID: uuid.NewString(), Subject: "atrium.actions.test", Payload: []byte("{}"), CreatedAt: base})
					return err
				}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range each {
				claim(t, s, base.Add(time.Minute))
			}
		})
	}
	wg.Wait()
	var runs []app.Run
	all, err := s.ListRuns(t.Context(), a, app.RunFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Status == app.StatusQueued {
			runs = append(runs, r)
		}
	}
	if n := queuedCount(t, s, a); n != len(runs) {
		t.Fatalf("QueuedRuns = %d after concurrent submissions, cancels and claims; %d runs are queued", n, len(runs))
	}
	if n, err := s.QueuedTotal(t.Context()); err != nil || n != int64(len(runs)) {
		t.Fatalf("QueuedTotal = %d, %v; %d runs are queued", n, err, len(runs))
	}
	if len(all) != submitters*each {
		t.Fatalf("the agency has %d runs, want %d", len(all), submitters*each)
	}
}

// testQueueRunLimit: QueueRun stores and reserves a queued run while the
// agency has fewer than the limit queued; at the limit it answers the
// count, and the caller's rollback leaves neither the run nor its cost.
func testQueueRunLimit(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 100, Data: 100})
	errFull := errors.New("full")
	queue := func(r app.Run) (app.Balance, int, bool) {
		var (
			b      app.Balance
			queued int
			ok     bool
		)
		err := s.InTx(t.Context(), func(tx app.Tx) error {
			var err error
			b, queued, ok, err = tx.QueueRun(t.Context(), r, 2)
			if err == nil && !ok {
				return errFull // as the use case does
			}
			return err
		})
		if err != nil && !errors.Is(err, errFull) {
			t.Fatal(err)
		}
		return b, queued, ok
	}
	for i, want := range []app.Balance{{AI: 98, Data: 99}, {AI: 96, Data: 98}} {
		if b, queued, ok := queue(queuedRun(a, base)); !ok || queued != i || b != want {
			t.Fatalf("QueueRun %d = %+v, %d queued, %v; want %+v with %d queued before", i, b, queued, ok, want, i)
		}
	}
	third := queuedRun(a, base)
	if _, queued, ok := queue(third); ok || queued != 2 {
		t.Fatalf("QueueRun at the limit = %d queued, %v; want refused with 2", queued, ok)
	}
	if _, err := s.Run(t.Context(), third.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("the refused run was stored: %v", err)
	}
	if b := balance(t, s, a); b != (app.Balance{AI: 96, Data: 98}) {
		t.Fatalf("balance after the refusal = %+v, want two runs reserved", b)
	}
	if n := queuedCount(t, s, a); n != 2 {
		t.Fatalf("QueuedRuns = %d, want 2", n)
	}
}

// testSubmitRun: SubmitRun stores and reserves a queued run in one step
// while the agency has room and credits; otherwise, and for a key the
// agency has used, it stores nothing and changes no balance.
func testSubmitRun(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 5, Data: 5})
	event := func() outbox.Event {
		return outbox.Event{ID: uuid.NewString(), Subject: "atrium.actions.queued.generate_blog", Payload: []byte("{}"), CreatedAt: base}
	}
	submit := func(r app.Run, max int) (app.Balance, bool, error) { return s.SubmitRun(t.Context(), r, max, event()) }
	first := queuedRun(a, base)
	first.IdempotencyKey, first.RequestHash = "key-1", "hash-1"
	if b, ok, err := submit(first, 2); err != nil || !ok || b != (app.Balance{AI: 3, Data: 4}) {
		t.Fatalf("SubmitRun = %+v, %v, %v; want stored with 3 AI and 4 data left", b, ok, err)
	}
	if got, err := s.Run(t.Context(), first.ID); err != nil || got.Status != app.StatusQueued || !got.Async || got.IdempotencyKey != "key-1" ||
		!jsonEqual(t, got.Input, first.Input) {
		t.Fatalf("submitted run reads %+v, %v", got, err)
	}
	again := queuedRun(a, base)
	again.IdempotencyKey, again.RequestHash = "key-1", "hash-1"
	if _, _, err := submit(again, 2); !errors.Is(err, app.ErrDuplicate) {
		t.Fatalf("SubmitRun with a used key: %v, want ErrDuplicate", err)
	}
	if _, ok, err := submit(queuedRun(a, base), 1); err != nil || ok {
		t.Fatalf("SubmitRun at the limit = %v, %v; want refused", ok, err)
	}
	if _, ok, err := submit(queuedRun(a, base), 2); err != nil || !ok {
		t.Fatalf("second SubmitRun = %v, %v", ok, err)
	}
	short := queuedRun(a, base) // 1 AI left, the run costs 2
	if _, ok, err := submit(short, 5); err != nil || ok {
		t.Fatalf("SubmitRun short of credits = %v, %v; want refused", ok, err)
	}
	if _, err := s.Run(t.Context(), short.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("the refused run was stored: %v", err)
	}
	if b := balance(t, s, a); b != (app.Balance{AI: 1, Data: 3}) {
		t.Fatalf("balance = %+v, want two runs reserved and nothing else", b)
	}
	if n := queuedCount(t, s, a); n != 2 {
		t.Fatalf("QueuedRuns = %d, want 2", n)
	}
}
