package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// slowRun starts a synchronous run with key that waits in the text
// generator until the returned release is called, and returns once it is
// there; done receives its answer.
func (e *env) slowRun(t *testing.T, keyword, key string) (release func(), done <-chan app.Outcome) {
	t.Helper()
	e.text.release = make(chan struct{})
	calls := e.text.calls.Load()
	out := make(chan app.Outcome, 1)
	go func() {
		o, err := e.actions.Run(context.Background(), e.agency, e.blog(keyword), key)
		if err != nil {
			t.Error(err)
		}
		out <- o
	}()
	for e.text.calls.Load() == calls {
		time.Sleep(time.Millisecond) // why sleep: polls the text generator's call count until the run is inside it
	}
	return func() { close(e.text.release) }, out
}

// A synchronous retry of a run still in flight is 409 with when to retry:
// the end of the run's lease, which its process renews while it runs.
// Once the lease is over without renewal (its process died) recovery
// ends the run, and the retry gets that answer; the owner's late outcome
// changes nothing.
func TestStillRunningSaysWhenToRetry(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 10, 0)
		release, done := e.slowRun(t, "spelt", "key-1")
		retry := func() (time.Duration, error) {
			t.Helper()
			_, err := e.actions.Run(t.Context(), e.agency, e.blog("spelt"), "key-1")
			d, ok := app.RetryAfter(err)
			if !ok {
				return 0, err
			}
			wantKind(t, err, apperr.KindConflict, `"key-1"`, "still running", fmt.Sprintf("retry in %d seconds", int(d/time.Second)))
			return d, err
		}
		if d, err := retry(); d != app.DefaultLease {
			t.Fatalf("retry at once: Retry-After %s (%v), want the lease, %s", d, err, app.DefaultLease)
		}
		e.advance(6 * time.Second)
		if d, _ := retry(); d != 9*time.Second {
			t.Fatalf("retry 6 s later: Retry-After %s, want 9s, when the lease ends", d)
		}
		// The live owner renews: the lease runs again from now, and
		// recovery past the first lease leaves the run alone.
		if lost, err := e.actions.RenewLeases(t.Context()); err != nil || len(lost) != 0 {
			t.Fatalf("renewal: lost %v, %v", lost, err)
		}
		if d, _ := retry(); d != app.DefaultLease {
			t.Fatalf("retry after a renewal: Retry-After %s, want %s", d, app.DefaultLease)
		}
		e.advance(12 * time.Second) // 18 s after the start
		if n, _, err := e.actions.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("recovery took back %d renewed runs (%v)", n, err)
		}
		// Past the lease: at least a second, never 0 or negative.
		e.advance(3*time.Second + 500*time.Millisecond)
		if d, _ := retry(); d != time.Second {
			t.Fatalf("retry once the lease is over: Retry-After %s, want 1s", d)
		}
		// The owner stops renewing (its process died): recovery ends it,
		// and the retry replays that answer.
		if n, _, err := e.actions.Recover(t.Context()); err != nil || n != 1 {
			t.Fatalf("recovery of the unrenewed run: %d, %v", n, err)
		}
		out, err := e.actions.Run(t.Context(), e.agency, e.blog("spelt"), "key-1")
		if err != nil || !out.Replayed || out.Run.Status != app.StatusError || !strings.Contains(fmt.Sprint(out.Run.Data["error"]), "interrupted") || out.Balance.AI != 10 {
			t.Fatalf("retry after the take-back = %+v, %v; want the interrupted run replayed, nothing charged", out, err)
		}
		// The owner, late, renews nothing and records nothing.
		if lost, err := e.actions.RenewLeases(t.Context()); err != nil || len(lost) != 1 || lost[0] != out.Run.ID {
			t.Fatalf("the late owner's renewal: lost %v, %v; want the run taken back", lost, err)
		}
		release()
		late := <-done
		if late.Run.Status != app.StatusError || late.Balance.AI != 10 || e.records.count("blogs") != 0 {
			t.Fatalf("late owner answered %+v (balance %+v), %d blogs; want the recorded interruption, nothing charged or written", late.Run, late.Balance, e.records.count("blogs"))
		}
	})
}

// A queued run's key answers a synchronous request 409 with a Retry-After
// of its own: it has no lease yet.
func TestStillQueuedSaysWhenToRetry(t *testing.T) {
	e := newEnv(t, app.Config{})
	e.grant(t, 10, 0)
	sub, err := e.actions.Submit(t.Context(), e.agency, e.blog("rye"), "key-q")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.actions.Run(t.Context(), e.agency, e.blog("rye"), "key-q")
	wantKind(t, err, apperr.KindConflict, "still queued", "retry in 5 seconds", "/api/v1/runs/"+sub.Run.ID)
	if d, ok := app.RetryAfter(err); !ok || d != 5*time.Second {
		t.Fatalf("Retry-After of a queued run's key = %s, %v; want 5s", d, ok)
	}
}

// The production defaults are the documented ones (docs/actions.md,
// docs/configuration.md): a 15 s lease renewed every 5 s.
func TestLeaseDefaults(t *testing.T) {
	if app.DefaultLease != 15*time.Second || app.DefaultLeaseRenewal != 5*time.Second {
		t.Fatalf("lease %s renewed every %s; the docs say 15 s and 5 s", app.DefaultLease, app.DefaultLeaseRenewal)
	}
}

// unavailableStore fails the outcome's write (FinishRun) as PostgreSQL's
// restart does, fails times; with committed, the write commits first and
// only its answer is lost.
type unavailableStore struct {
	app.Store
	fails     atomic.Int32
	committed bool
}

var errConnClosed = errors.New("conn closed")

func (s *unavailableStore) InTx(ctx context.Context, fn func(app.Tx) error) error {
	finished := false
	err := s.Store.InTx(ctx, func(tx app.Tx) error { return fn(&unavailableTx{Tx: tx, s: s, finished: &finished}) })
	if err == nil && finished && s.committed && s.fails.Add(-1) >= 0 {
		return pgdb.Err(errConnClosed, "commit")
	}
	return err
}

type unavailableTx struct {
	app.Tx
	s        *unavailableStore
	finished *bool
}

func (t *unavailableTx) FinishRun(ctx context.Context, r app.Run, refund action.Cost, ev outbox.Event) (bool, app.Balance, error) {
	*t.finished = true
	if !t.s.committed && t.s.fails.Add(-1) >= 0 {
		return false, app.Balance{}, pgdb.Err(errConnClosed, "finish run")
	}
	return t.Tx.FinishRun(ctx, r, refund, ev)
}

// A run whose outcome could not be written because the database was
// unavailable is answered 503 at once, and released as soon as the
// database answers again (three failed writes later, a few hundred
// milliseconds, where its lease would have held it 15 s and recovery
// called it interrupted): an error that says the database was
// unavailable, its credits back, its completion event and its
// action_runs row written, its key answering that outcome.
func TestOutcomeIsWrittenOnceTheDatabaseAnswers(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 10, 0)
		st := &unavailableStore{Store: e.store}
		st.fails.Store(3)
		e.on(st)
		_, err := e.actions.Run(t.Context(), e.agency, e.blog("rye"), "key-db")
		wantKind(t, err, apperr.KindUnavailable, "generate_blog finished, but the database was unavailable", "same Idempotency-Key")
		run := e.onlyRun(t)
		run, err = e.actions.WaitRun(t.Context(), e.agency, run.ID, 10*time.Second)
		if err != nil || !run.Finished() {
			t.Fatalf("run 10 s after the database answered again: %+v, %v; want it released", run, err)
		}
		for app.KeptOutcomes(e.actions) > 0 {
			time.Sleep(time.Millisecond) // why sleep: the kept outcome's writer lets the run go just after the run ends
		}
		if st.fails.Load() > 0 {
			t.Fatalf("the run finished with %d failures to come", st.fails.Load())
		}
		if run.Status != app.StatusError || run.StatusCode != 503 || !strings.Contains(fmt.Sprint(run.Data["error"]), "the database was unavailable when the run finished") ||
			!strings.Contains(fmt.Sprint(run.Data["error"]), "nothing was charged") {
			t.Fatalf("released run = %+v; want error 503 saying the database was unavailable and nothing was charged", run)
		}
		if b := e.balance(t); b.AI != 10 {
			t.Fatalf("balance = %+v, want the 2 credits back", b)
		}
		if evs := e.events(); len(evs) != 1 || evs[0].RunID != run.ID || evs[0].Status != "error" {
			t.Fatalf("completion events = %+v, want the run's error", evs)
		}
		if n := e.records.count("blogs"); n != 0 {
			t.Fatalf("%d blogs written for a run recorded as an error", n)
		}
		// The key answers the recorded outcome, charging nothing.
		out, err := e.actions.Run(t.Context(), e.agency, e.blog("rye"), "key-db")
		if err != nil || !out.Replayed || out.Run.ID != run.ID || out.Run.StatusCode != 503 || out.Balance.AI != 10 {
			t.Fatalf("retry with the key = %+v, %v; want the recorded error replayed", out, err)
		}
		// Recovery has nothing to end; the run's row is written (now or
		// by recovery's next pass).
		e.advance(time.Minute)
		if n, _, err := e.actions.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("recovery ended %d runs (%v); want none left pending", n, err)
		}
		if got := e.records.states()[run.ID]; got != "error" {
			t.Fatalf("action_runs row = %q, want error", got)
		}
	})
}

// A write whose commit succeeded but whose answer was lost: the retry
// finds the run finished and leaves it as recorded, charged once.
func TestOutcomeCommittedThoughItsAnswerWasLost(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 10, 0)
		st := &unavailableStore{Store: e.store, committed: true}
		st.fails.Store(1)
		e.on(st)
		_, err := e.actions.Run(t.Context(), e.agency, e.blog("rye"), "")
		wantKind(t, err, apperr.KindUnavailable, "database was unavailable")
		run := e.onlyRun(t)
		if run.Status != app.StatusSuccess {
			t.Fatalf("run = %+v, want the committed success", run)
		}
		if b := e.balance(t); b.AI != 8 {
			t.Fatalf("balance = %+v, want charged once", b)
		}
		// The kept outcome's write finds the run finished and changes
		// nothing.
		for app.KeptOutcomes(e.actions) > 0 {
			time.Sleep(time.Millisecond) // why sleep: the kept outcome's writer has no signal when it ends on a run already finished
		}
		if got, _ := e.store.Run(t.Context(), run.ID); got.Status != app.StatusSuccess {
			t.Fatalf("run after the kept outcome's write = %+v, want the committed success", got)
		}
		if b := e.balance(t); b.AI != 8 {
			t.Fatalf("balance = %+v, want charged once", b)
		}
		if evs := e.events(); len(evs) != 1 || evs[0].Status != "success" {
			t.Fatalf("events = %+v, want the success's alone", evs)
		}
	})
}

// onlyRun is the agency's one run.
func (e *env) onlyRun(t *testing.T) app.Run {
	t.Helper()
	page, err := e.actions.ListRuns(t.Context(), e.agency, "", "", "", "", nil, "")
	if err != nil || len(page.Runs) != 1 {
		t.Fatalf("runs = %+v, %v; want one", page.Runs, err)
	}
	return page.Runs[0]
}

// KeepLeases, the loop every process runs, renews a live run's lease
// every LeaseRenewal, so recovery leaves it alone however long it runs;
// once the loop stops (its process died) recovery takes the run back a
// lease later. In a synctest bubble: the memory store and the doubles do
// no I/O, and the clock is the bubble's.
func TestKeepLeasesKeepsALiveRunAndOnlyIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := &directory{links: map[string]action.Client{}}
		agency, client := uuid.NewString(), action.Client{ID: uuid.NewString(), Name: "Bakery"}
		dir.links[agency+"|"+client.ID] = client
		gen := &text{release: make(chan struct{})}
		st := memory.New(memdb.New(nil))
		a := app.NewActions(st, dir, &records{rows: map[string]map[string]map[string]any{}}, &action.Providers{Text: gen},
			app.Clock(time.Now), app.Config{ActionTimeout: 10 * time.Minute, Lease: 15 * time.Second, LeaseRenewal: 5 * time.Second},
			slog.New(slog.DiscardHandler))
		if _, err := a.AddCredits(t.Context(), agency, 10, 0); err != nil {
			t.Fatal(err)
		}
		leasing, stopLeasing := context.WithCancel(t.Context())
		go a.KeepLeases(leasing)
		done := make(chan app.Outcome, 1)
		go func() {
			out, _ := a.Run(context.Background(), agency, map[string]any{"action": "generate_blog", "client_id": client.ID, "keyword": "rye"}, "")
			done <- out
		}()
		synctest.Wait()             // the run waits in the text generator
		time.Sleep(2 * time.Minute) // why sleep: fake time in a synctest bubble, eight leases long
		if n, _, err := a.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("recovery took back %d runs of a live process after 2 min (%v)", n, err)
		}
		// The process dies: nothing renews the lease any more.
		stopLeasing()
		synctest.Wait()
		time.Sleep(10 * time.Second) // why sleep: fake time in a synctest bubble, within the last lease
		if n, _, err := a.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("recovery took back %d runs within their lease (%v)", n, err)
		}
		time.Sleep(6 * time.Second) // why sleep: fake time in a synctest bubble, past the last lease
		if n, _, err := a.Recover(t.Context()); err != nil || n != 1 {
			t.Fatalf("recovery past the unrenewed lease: %d runs, %v; want the run taken back", n, err)
		}
		close(gen.release)
		if out := <-done; out.Run.Status != app.StatusError || out.Balance.AI != 10 {
			t.Fatalf("the late owner answered %+v (balance %+v); want the recorded interruption, nothing charged", out.Run, out.Balance)
		}
	})
}
