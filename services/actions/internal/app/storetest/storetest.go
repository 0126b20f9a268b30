// Package storetest is the contract every actions store adapter must meet.
// Each adapter's test is one call to RunAll; a behaviour the memory store
// and the PostgreSQL store disagree on fails here rather than in
// production. Transactions, events and the outbox are platform/txtest's
// contract; this suite checks credits, runs and the SEO cache's answers
// (seocache.go).
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/seocache"
)

// Store is what the suite needs of an adapter: the actions store, which
// also keeps the SEO cache's answers.
type Store interface {
	app.Store
	seocache.Store
	app.BrandingStore
	app.ShareStore
}

// RunAll runs the contract against fresh stores made by newStore.
func RunAll(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, Store)
	}{
		{"CreditsAddAndRemove", testCreditsAddAndRemove},
		{"ConcurrentReservationsNeverOverdraw", testConcurrentReservations},
		{"RunLifecycle", testRunLifecycle},
		{"FinishRefundsOnceAndAnswersTheBalance", testFinishRefunds},
		{"FinishRefusesWhatItCannotKeep", testFinishRefusesWhatItCannotKeep},
		{"StartRunReservesOrAnswersShort", testStartRun},
		{"IdempotencyKeys", testIdempotencyKeys},
		{"ExpiredRuns", testExpiredRuns},
		{"ExpiredRunsAreClaimedOnce", testExpiredClaimedOnce},
		{"LeaseRenewalExtends", testLeaseRenewalExtends},
		{"ExpiredLeaseIsTakenAndTheOwnerRefused", testExpiredLeaseIsTakenAndTheOwnerRefused},
		{"RenewedLeaseIsNotTaken", testRenewedLeaseIsNotTaken},
		{"RenewalAndTakeBackSerialise", testRenewalAndTakeBackSerialise},
		{"RenewalMatchesTheAttempt", testRenewalMatchesTheAttempt},
		{"UnappliedRuns", testUnappliedRuns},
		{"RollbackUndoesEverything", testRollback},
		{"QueueClaimsFairlyAndOnce", testQueueClaims},
		{"QueueCancelAndRequeue", testQueueCancelAndRequeue},
		{"QueueRoundRobin", testQueueRoundRobin},
		{"QueueDepthUnderConcurrency", testQueueDepthUnderConcurrency},
		{"QueueRunStopsAtTheLimit", testQueueRunLimit},
		{"SubmitRunInOneStep", testSubmitRun},
		{"ListRuns", testListRuns},
		{"SchedulesRoundTripAndList", testSchedulesRoundTrip},
		{"SchedulesClaimOnceAndLapse", testSchedulesClaim},
		{"SchedulesConcurrentClaimsTakeEachOnce", testSchedulesConcurrentClaims},
		{"ScheduleSpentAndRunsBySchedule", testScheduleSpent},
		{"SEOCacheAnswersUntilItExpires", testSEOCacheExpiry},
		{"SEOCacheReplacesAndKeepsAnyBytes", testSEOCacheReplaces},
		{"SEOCacheConcurrentWriters", testSEOCacheConcurrentWriters},
		{"BrandingByAgency", testBrandingByAgency},
		{"SharesByAgency", testSharesByAgency},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

var base = time.Date(2026, 11, 1, 9, 30, 0, 123456000, time.UTC)

func id() string { return uuid.Must(uuid.NewV7()).String() }

func mustTx(t *testing.T, s Store, fn func(app.Tx) error) {
	t.Helper()
	if err := s.InTx(t.Context(), fn); err != nil {
		t.Fatalf("InTx: %v", err)
	}
}

func add(t *testing.T, s Store, agency string, d app.Balance) (app.Balance, bool) {
	t.Helper()
	var (
		b  app.Balance
		ok bool
	)
	mustTx(t, s, func(tx app.Tx) error {
		var err error
		b, ok, err = tx.AddCredits(t.Context(), agency, d)
		return err
	})
	return b, ok
}

func balance(t *testing.T, s Store, agency string) app.Balance {
	t.Helper()
	b, err := s.Balance(t.Context(), agency)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testCreditsAddAndRemove(t *testing.T, s Store) {
	a := id()
	if b := balance(t, s, a); b != (app.Balance{}) {
		t.Fatalf("balance of an agency never granted = %+v, want zero", b)
	}
	if b, ok := add(t, s, a, app.Balance{AI: -1}); ok || b != (app.Balance{}) {
		t.Fatalf("removing from nothing = %+v, %v; want refused with a zero balance", b, ok)
	}
	if b, ok := add(t, s, a, app.Balance{AI: 10, Data: 5}); !ok || b != (app.Balance{AI: 10, Data: 5}) {
		t.Fatalf("first grant = %+v, %v", b, ok)
	}
	if b, ok := add(t, s, a, app.Balance{AI: 3}); !ok || b != (app.Balance{AI: 13, Data: 5}) {
		t.Fatalf("second grant = %+v, %v", b, ok)
	}
	// Either kind short refuses the whole change.
	if b, ok := add(t, s, a, app.Balance{AI: -1, Data: -6}); ok || b != (app.Balance{AI: 13, Data: 5}) {
		t.Fatalf("overdraw of data = %+v, %v; want refused, balance unchanged", b, ok)
	}
	if b, ok := add(t, s, a, app.Balance{AI: -13, Data: -5}); !ok || b != (app.Balance{}) {
		t.Fatalf("spending everything = %+v, %v", b, ok)
	}
	if b := balance(t, s, id()); b != (app.Balance{}) {
		t.Fatalf("another agency's balance = %+v, want zero", b)
	}
}

// testConcurrentReservations takes 3 AI credits 40 times at once from a
// balance of 60: exactly 20 succeed and the balance ends at zero.
func testConcurrentReservations(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 60, Data: 1})
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			err := s.InTx(context.Background(), func(tx app.Tx) error {
				_, got, err := tx.AddCredits(context.Background(), a, app.Balance{AI: -3})
				if got {
					ok.Add(1)
				}
				return err
			})
			if err != nil {
				t.Errorf("reservation: %v", err)
			}
		})
	}
	wg.Wait()
	if n := ok.Load(); n != 20 {
		t.Fatalf("%d reservations of 3 succeeded against a balance of 60, want 20", n)
	}
	if b := balance(t, s, a); b != (app.Balance{AI: 0, Data: 1}) {
		t.Fatalf("balance after = %+v, want 0 AI, 1 data", b)
	}
}

func newRun(agency string) app.Run {
	return app.Run{ID: id(), AgencyID: agency, ClientID: id(), Action: "generate_blog", Status: app.StatusPending,
		Cost: action.Cost{AI: 2, Data: 1}, CreatedAt: base, StartedAt: base, LeaseUntil: base.Add(time.Minute)}
}

func insert(t *testing.T, s Store, runs ...app.Run) {
	t.Helper()
	mustTx(t, s, func(tx app.Tx) error {
		for _, r := range runs {
			if err := tx.InsertRun(t.Context(), r); err != nil {
				return err
			}
		}
		return nil
	})
}

// reserved is a pending run of agency with its cost taken from the
// balance, as a run's start leaves it.
func reserved(t *testing.T, s Store, agency string) app.Run {
	t.Helper()
	r := newRun(agency)
	mustTx(t, s, func(tx app.Tx) error {
		if err := tx.InsertRun(t.Context(), r); err != nil {
			return err
		}
		_, _, err := tx.AddCredits(t.Context(), agency, app.Balance{AI: -r.Cost.AI, Data: -r.Cost.Data})
		return err
	})
	return r
}

func finish(t *testing.T, s Store, r app.Run) bool {
	t.Helper()
	var ok bool
	mustTx(t, s, func(tx app.Tx) error {
		var err error
		ok, _, err = tx.FinishRun(t.Context(), r, action.Cost{}, outbox.Event{ID: uuid.NewString(), Subject: "atrium.actions.test", Payload: []byte("{}"), CreatedAt: base})
		return err
	})
	return ok
}

// jsonEqual compares values as JSON documents.
func jsonEqual(t *testing.T, got, want any) bool {
	t.Helper()
	var g, w any
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	_ = json.Unmarshal(gb, &g)
	_ = json.Unmarshal(wb, &w)
	return reflect.DeepEqual(g, w)
}

func testRunLifecycle(t *testing.T, s Store) {
	r := newRun(id())
	insert(t, s, r)
	got, err := s.Run(t.Context(), r.ID)
	if err != nil || got.Status != app.StatusPending || got.Cost != r.Cost || !got.StartedAt.Equal(base) || !got.LeaseUntil.Equal(r.LeaseUntil) || got.Action != r.Action {
		t.Fatalf("pending run read back = %+v, %v", got, err)
	}
	if got.ProviderCost != 0 || got.Cached {
		t.Fatalf("a pending run has a provider cost or is cached: %+v", got)
	}
	r.Status, r.StatusCode, r.FinishedAt = app.StatusSuccess, 200, base.Add(3*time.Second)
	// 25 Maps requests at $0.002 and a keyword task at $0.0103, exactly.
	r.ProviderCost, r.Cached = 25*provider.Dollars(0.002)+provider.Dollars(0.0103), false
	r.Data = map[string]any{"id": "x", "post_title": "Sourdough <b>&</b> you", "nested": map[string]any{"n": 1.5, "list": []any{"a", true}}}
	r.Writes = []action.RecordWrite{{Resource: "blogs", Mode: action.Upsert, Rows: []map[string]any{{"id": "x", "post_title": "t"}}}, {Resource: "seo_tasks", Mode: action.Update, Rows: []map[string]any{{"id": "y"}}}}
	if !finish(t, s, r) {
		t.Fatal("finishing a pending run was refused")
	}
	got, err = s.Run(t.Context(), r.ID)
	if err != nil || got.Status != app.StatusSuccess || got.StatusCode != 200 || !got.FinishedAt.Equal(r.FinishedAt) || got.Applied {
		t.Fatalf("finished run read back = %+v, %v", got, err)
	}
	if got.ProviderCost != r.ProviderCost || got.ProviderCost.Float() != 0.0603 || got.Cached {
		t.Fatalf("provider cost read back %s (cached %v), want %s", got.ProviderCost, got.Cached, r.ProviderCost)
	}
	cached := newRun(id())
	insert(t, s, cached)
	cached.Status, cached.StatusCode, cached.FinishedAt, cached.Cached = app.StatusSuccess, 200, base.Add(time.Second), true
	if !finish(t, s, cached) {
		t.Fatal("finishing a pending run was refused")
	}
	if got, err := s.Run(t.Context(), cached.ID); err != nil || !got.Cached || got.ProviderCost != 0 {
		t.Fatalf("cached run read back = %+v, %v", got, err)
	}
	if !jsonEqual(t, got.Data, r.Data) || !jsonEqual(t, got.Writes, r.Writes) {
		t.Fatalf("data/writes read back = %v / %v\nwant %v / %v", got.Data, got.Writes, r.Data, r.Writes)
	}
	r.Status = app.StatusError
	if finish(t, s, r) {
		t.Fatal("a finished run was finished again")
	}
	if got, _ := s.Run(t.Context(), r.ID); got.Status != app.StatusSuccess {
		t.Fatalf("second finish changed the run: %+v", got)
	}
	if _, err := s.Run(t.Context(), id()); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("unknown run: %v, want ErrNotFound", err)
	}
}

// testFinishRefusesWhatItCannotKeep: an outcome holding a value
// PostgreSQL's jsonb cannot hold (U+0000 in a string or a key, a number
// that is not finite) is refused with ErrUnstorable as a whole: the run
// stays pending, its cost reserved, until an outcome that can be kept
// finishes it.
func testFinishRefusesWhatItCannotKeep(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 10, Data: 4})
	r := reserved(t, s, a)
	row := func(v any) []action.RecordWrite {
		return []action.RecordWrite{{Resource: "llm_reports", Mode: action.Upsert, Rows: []map[string]any{{"id": "x", "answer": v}}}}
	}
	for name, bad := range map[string]struct {
		data   map[string]any
		writes []action.RecordWrite
	}{
		"U+0000 in the data":      {data: map[string]any{"answer": "Rye & Co\x00 is the best"}},
		"U+0000 in a key":         {data: map[string]any{"an\x00swer": "Rye & Co"}},
		"U+0000 deep in the data": {data: map[string]any{"competitors": []any{map[string]any{"name": "Crust\x00"}}}},
		"U+0000 in a written row": {data: map[string]any{"id": "x"}, writes: row("Rye\x00")},
		"a NaN in the data":       {data: map[string]any{"score": math.NaN()}},
		"an infinity in the row":  {data: map[string]any{"id": "x"}, writes: row(math.Inf(1))},
	} {
		out := r
		out.Status, out.StatusCode, out.FinishedAt, out.Data, out.Writes = app.StatusSuccess, 200, base.Add(time.Second), bad.data, bad.writes
		err := s.InTx(t.Context(), func(tx app.Tx) error {
			_, _, err := tx.FinishRun(t.Context(), out, action.Cost{}, outbox.Event{ID: uuid.NewString(), Subject: "atrium.actions.test", Payload: []byte("{}"), CreatedAt: base})
			return err
		})
		if !errors.Is(err, app.ErrUnstorable) {
			t.Errorf("%s: FinishRun error %v, want ErrUnstorable", name, err)
		}
		if got, err := s.Run(t.Context(), r.ID); err != nil || got.Status != app.StatusPending {
			t.Fatalf("%s: the run after a refused finish = %+v, %v; want it pending", name, got, err)
		}
		if b := balance(t, s, a); b != (app.Balance{AI: 8, Data: 3}) {
			t.Fatalf("%s: balance after a refused finish = %+v, want the cost still reserved", name, b)
		}
	}
	r.Status, r.StatusCode, r.FinishedAt = app.StatusError, 500, base.Add(time.Second)
	r.Data = map[string]any{"error": "the outcome could not be stored"}
	if !finish(t, s, r) {
		t.Fatal("an outcome that can be kept did not finish the run a refused one left pending")
	}
}

// testStartRun: a run starts with its cost taken, or is refused with the
// balance as it is; a run that costs nothing starts without a balance.
func testStartRun(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 3, Data: 1})
	start := func(r app.Run) (app.Balance, bool) {
		var (
			b  app.Balance
			ok bool
		)
		errShort := errors.New("short")
		err := s.InTx(t.Context(), func(tx app.Tx) error {
			var err error
			if b, ok, err = tx.StartRun(t.Context(), r); err == nil && !ok {
				return errShort // as the use case does: nothing of it stays
			}
			return err
		})
		if err != nil && !errors.Is(err, errShort) {
			t.Fatal(err)
		}
		return b, ok
	}
	r1 := newRun(a) // costs 2 AI, 1 data
	if b, ok := start(r1); !ok || b != (app.Balance{AI: 1, Data: 0}) {
		t.Fatalf("first start = %+v, %v; want 1 AI and 0 data left", b, ok)
	}
	r2 := newRun(a)
	if b, ok := start(r2); ok || b != (app.Balance{AI: 1, Data: 0}) {
		t.Fatalf("start short of credits = %+v, %v; want refused with the balance as it is", b, ok)
	}
	if _, err := s.Run(t.Context(), r2.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("the refused run was stored: %v", err)
	}
	if got, err := s.Run(t.Context(), r1.ID); err != nil || got.Status != app.StatusPending {
		t.Fatalf("the started run = %+v, %v", got, err)
	}
	free := newRun(id())
	free.Cost = action.Cost{}
	if _, ok := start(free); !ok {
		t.Fatal("a run that costs nothing was refused for an agency without a balance")
	}
}

// testFinishRefunds: a failed run's cost goes back once, with its
// outcome; finishing it again changes nothing, the balance included.
func testFinishRefunds(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 10, Data: 4})
	r := reserved(t, s, a)
	r.Status, r.StatusCode, r.FinishedAt = app.StatusError, 503, base.Add(time.Second)
	for i, want := range []struct {
		ok  bool
		bal app.Balance
	}{{true, app.Balance{AI: 10, Data: 4}}, {false, app.Balance{}}} {
		var (
			ok  bool
			bal app.Balance
		)
		mustTx(t, s, func(tx app.Tx) error {
			var err error
			ok, bal, err = tx.FinishRun(t.Context(), r, r.Cost, outbox.Event{ID: uuid.NewString(), Subject: "atrium.actions.test", Payload: []byte("{}"), CreatedAt: base})
			return err
		})
		if ok != want.ok || (ok && bal != want.bal) {
			t.Fatalf("finish %d = %v, %+v; want %v, %+v", i+1, ok, bal, want.ok, want.bal)
		}
	}
	if b := balance(t, s, a); b != (app.Balance{AI: 10, Data: 4}) {
		t.Fatalf("balance after a refund and a second finish = %+v, want 10 AI, 4 data", b)
	}
	// A success refunds nothing and answers the balance as it is.
	r2 := newRun(a)
	insert(t, s, r2)
	r2.Status, r2.FinishedAt = app.StatusSuccess, base
	mustTx(t, s, func(tx app.Tx) error {
		ok, bal, err := tx.FinishRun(t.Context(), r2, action.Cost{}, outbox.Event{ID: uuid.NewString(), Subject: "atrium.actions.test", Payload: []byte("{}"), CreatedAt: base})
		if err == nil && (!ok || bal != (app.Balance{AI: 10, Data: 4})) {
			t.Errorf("finishing a success = %v, %+v; want true and the balance unchanged", ok, bal)
		}
		return err
	})
}

func testIdempotencyKeys(t *testing.T, s Store) {
	a, b := id(), id()
	r := newRun(a)
	r.IdempotencyKey, r.RequestHash = "key-1", "hash-1"
	insert(t, s, r)
	twin := newRun(a)
	twin.IdempotencyKey = "key-1"
	err := s.InTx(t.Context(), func(tx app.Tx) error { return tx.InsertRun(t.Context(), twin) })
	if !errors.Is(err, app.ErrDuplicate) {
		t.Fatalf("second run with the agency's key: %v, want ErrDuplicate", err)
	}
	other := newRun(b)
	other.IdempotencyKey = "key-1"
	insert(t, s, other) // another agency's keys are its own
	mustTx(t, s, func(tx app.Tx) error {
		got, err := tx.RunByKey(t.Context(), a, "key-1")
		if err != nil || got.ID != r.ID || got.RequestHash != "hash-1" {
			t.Errorf("RunByKey = %+v, %v; want run %s", got, err, r.ID)
		}
		if _, err := tx.RunByKey(t.Context(), a, "key-2"); !errors.Is(err, app.ErrNotFound) {
			t.Errorf("unknown key: %v, want ErrNotFound", err)
		}
		return tx.ForgetKey(t.Context(), r.ID)
	})
	insert(t, s, twin) // the forgotten key is free again
	mustTx(t, s, func(tx app.Tx) error {
		if got, err := tx.RunByKey(t.Context(), a, "key-1"); err != nil || got.ID != twin.ID {
			t.Errorf("RunByKey after reuse = %+v, %v; want %s", got, err, twin.ID)
		}
		return nil
	})
}

func expired(t *testing.T, s Store, now time.Time) []string {
	t.Helper()
	var ids []string
	mustTx(t, s, func(tx app.Tx) error {
		runs, err := tx.ExpiredRuns(t.Context(), now, 10)
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		return err
	})
	return ids
}

func testExpiredRuns(t *testing.T, s Store) {
	a := id()
	old, fresh, done := newRun(a), newRun(a), newRun(a)
	fresh.LeaseUntil = base.Add(time.Hour)
	insert(t, s, old, fresh, done)
	done.Status, done.FinishedAt = app.StatusSuccess, base
	finish(t, s, done)
	now := base.Add(2 * time.Minute)
	if got := expired(t, s, now); !reflect.DeepEqual(got, []string{old.ID}) {
		t.Fatalf("expired runs = %v, want only %s (pending, lease over)", got, old.ID)
	}
}

// testExpiredClaimedOnce: while one recovery holds expired runs, another
// never gets them. PostgreSQL skips the locked rows; the memory store
// makes the second wait for the first.
func testExpiredClaimedOnce(t *testing.T, s Store) {
	a := id()
	var runs []app.Run
	for range 6 {
		runs = append(runs, newRun(a))
	}
	insert(t, s, runs...)
	now := base.Add(2 * time.Minute)
	held, release := make(chan []string, 1), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.InTx(context.Background(), func(tx app.Tx) error {
			rs, err := tx.ExpiredRuns(context.Background(), now, 3)
			var ids []string
			for _, r := range rs {
				ids = append(ids, r.ID)
			}
			held <- ids
			<-release
			return err
		})
	}()
	first := <-held
	if len(first) != 3 {
		t.Fatalf("first claim got %d runs, want 3", len(first))
	}
	second := make(chan []string, 1)
	go func() { second <- expired(t, s, now) }()
	select {
	case got := <-second:
		for _, id := range got {
			if slices.Contains(first, id) {
				t.Errorf("run %s claimed by a second recovery while the first held it", id)
			}
		}
		close(release)
	case <-time.After(300 * time.Millisecond):
		close(release) // the second waits for the first to end
		<-second
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func testUnappliedRuns(t *testing.T, s Store) {
	a := id()
	r1, r2, pending := newRun(a), newRun(a), newRun(a)
	insert(t, s, r1, r2, pending)
	r1.Status, r1.FinishedAt = app.StatusSuccess, base.Add(time.Second)
	r2.Status, r2.FinishedAt = app.StatusError, base.Add(2*time.Second)
	finish(t, s, r1)
	finish(t, s, r2)
	ids := func(before time.Time) []string {
		runs, err := s.UnappliedRuns(t.Context(), before, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(base.Add(time.Minute)); !reflect.DeepEqual(got, []string{r1.ID, r2.ID}) {
		t.Fatalf("unapplied = %v, want %s then %s (oldest first, no pending run)", got, r1.ID, r2.ID)
	}
	if got := ids(base.Add(1500 * time.Millisecond)); !reflect.DeepEqual(got, []string{r1.ID}) {
		t.Fatalf("unapplied before r2 finished = %v, want only %s", got, r1.ID)
	}
	if err := s.MarkApplied(t.Context(), []string{r1.ID}); err != nil {
		t.Fatal(err)
	}
	if got := ids(base.Add(time.Minute)); !reflect.DeepEqual(got, []string{r2.ID}) {
		t.Fatalf("unapplied after marking %s = %v", r1.ID, got)
	}
}

func testRollback(t *testing.T, s Store) {
	a := id()
	add(t, s, a, app.Balance{AI: 5})
	r := newRun(a)
	r.IdempotencyKey = "k"
	boom := errors.New("boom")
	err := s.InTx(t.Context(), func(tx app.Tx) error {
		if err := tx.InsertRun(t.Context(), r); err != nil {
			return err
		}
		if _, _, err := tx.AddCredits(t.Context(), a, app.Balance{AI: -5}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v, want the function's error", err)
	}
	if b := balance(t, s, a); b.AI != 5 {
		t.Fatalf("balance after rollback = %+v, want 5 AI", b)
	}
	if _, err := s.Run(t.Context(), r.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("run after rollback: %v, want ErrNotFound", err)
	}
	insert(t, s, r) // its key was never taken
}
