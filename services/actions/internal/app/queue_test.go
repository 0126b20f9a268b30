package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
)

// claimAsADeadWorker claims the next queued run as a worker whose process
// then dies would: nothing else happens to it.
func claimAsADeadWorker(t *testing.T, e *env) app.Run {
	t.Helper()
	var run app.Run
	if err := e.store.InTx(t.Context(), func(tx app.Tx) error {
		now := *e.now.Load()
		r, ok, err := tx.ClaimRun(t.Context(), now, now.Add(2*time.Second))
		if !ok && err == nil {
			t.Fatal("nothing to claim")
		}
		run = r
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return run
}

// A queued run whose worker died is queued again once, its credits still
// reserved; if the second worker dies too, recovery ends it as an error and
// releases them.
func TestRecoveryRequeuesAnAbandonedAsyncRunOnce(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{ActionTimeout: time.Second, Lease: 2 * time.Second})
		e.grant(t, 10, 0)
		out, err := e.actions.Submit(t.Context(), e.agency, e.blog("rye"), "")
		if err != nil || out.Run.Status != app.StatusQueued || out.Balance.AI != 8 {
			t.Fatalf("Submit = %+v, %v", out, err)
		}
		claimAsADeadWorker(t, e)
		e.advance(3 * time.Second)
		if n, _, err := e.actions.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("recovery of a first abandoned attempt ended %d runs (%v); want it queued again", n, err)
		}
		if r, _ := e.store.Run(t.Context(), out.Run.ID); r.Status != app.StatusQueued || r.Attempts != 1 {
			t.Fatalf("run after the first recovery = %s attempt %d, want queued", r.Status, r.Attempts)
		}
		if b := e.balance(t); b.AI != 8 {
			t.Fatalf("balance while queued again = %+v, want the reservation kept", b)
		}
		claimAsADeadWorker(t, e)
		e.advance(3 * time.Second)
		if n, _, err := e.actions.Recover(t.Context()); err != nil || n != 1 {
			t.Fatalf("recovery of a second abandoned attempt ended %d runs (%v); want 1", n, err)
		}
		if r, _ := e.store.Run(t.Context(), out.Run.ID); r.Status != app.StatusError || r.StatusCode != 500 {
			t.Fatalf("run after the second recovery = %s %d", r.Status, r.StatusCode)
		}
		if b := e.balance(t); b.AI != 10 {
			t.Fatalf("balance after = %+v, want the reservation released", b)
		}
	})
}

// The workers run queued runs; a waiting caller learns the outcome as soon
// as it is recorded; a cancel of a finished run is a conflict; another
// agency's run is not found.
func TestWorkersRunTheQueue(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{Workers: 2, AgencyMaxQueued: 2})
		e.grant(t, 10, 0)
		e.text.release = make(chan struct{})
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { e.actions.Work(ctx) })
		defer func() { stop(); wg.Wait() }()
		ids := e.submitBlogs(t, "rye", "spelt")
		close(e.text.release)
		for _, id := range ids {
			r, err := e.actions.WaitRun(t.Context(), e.agency, id, time.Minute)
			if err != nil || r.Status != app.StatusSuccess {
				t.Fatalf("WaitRun = %+v, %v", r, err)
			}
			if _, _, err := e.actions.CancelRun(t.Context(), e.agency, id); apperr.KindOf(err) != apperr.KindConflict {
				t.Fatalf("cancel of a finished run: %v, want a conflict", err)
			}
		}
		if b := e.balance(t); b.AI != 6 {
			t.Fatalf("balance = %+v, want 6 AI (two runs)", b)
		}
		if _, err := e.actions.GetRun(t.Context(), "00000000-0000-4000-8000-000000000000", ids[0]); apperr.KindOf(err) != apperr.KindNotFound {
			t.Fatalf("another agency's run: %v, want not found", err)
		}
		// A member with the client role reads their client's runs, and
		// another client's run is not found.
		r, _ := e.actions.GetRun(t.Context(), e.agency, ids[0])
		own := principal.NewContext(t.Context(), principal.Principal{Kind: principal.KindUser, AgencyID: e.agency, Role: principal.RoleClient, ClientID: r.ClientID})
		if _, err := e.actions.GetRun(own, e.agency, ids[0]); err != nil {
			t.Fatalf("a client member's own run: %v", err)
		}
		other := principal.NewContext(t.Context(), principal.Principal{Kind: principal.KindUser, AgencyID: e.agency, Role: principal.RoleClient, ClientID: "00000000-0000-4000-8000-00000000c11e"})
		if _, err := e.actions.GetRun(other, e.agency, ids[0]); apperr.KindOf(err) != apperr.KindNotFound {
			t.Fatalf("another client's run read by a client member: %v, want not found", err)
		}
	})
}

// The action_runs dataset follows an asynchronous run's state: queued
// while it waits, running once a worker has it, then its end; a late
// write of an earlier state does not undo a later one.
func TestActionRunsRowsFollowTheRunsState(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{Workers: 1})
		e.tick.Store(int64(time.Millisecond))
		e.grant(t, 10, 0)
		e.text.release = make(chan struct{})
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { e.actions.Background(ctx, time.Hour) })
		wg.Go(func() { e.actions.Work(ctx) })
		defer func() { stop(); wg.Wait() }()
		for !app.RecordWritersRunning(e.actions) {
			time.Sleep(time.Millisecond) // why sleep: Background has no signal that its writers started, and a state row is skipped before
		}
		ids := e.submitBlogs(t, "rye", "spelt")
		// The one worker holds the first run at the text provider; the
		// second waits.
		waitStates(t, e, map[string]string{ids[0]: "running", ids[1]: "queued"})
		close(e.text.release)
		for _, id := range ids {
			if r, err := e.actions.WaitRun(t.Context(), e.agency, id, time.Minute); err != nil || r.Status != app.StatusSuccess {
				t.Fatalf("WaitRun = %+v, %v", r, err)
			}
		}
		waitStates(t, e, map[string]string{ids[0]: "success", ids[1]: "success"})
		row, err := e.records.GetRecord(t.Context(), e.client.ID, "action_runs", ids[1])
		if err != nil || row["started_at"] == nil || row["finished_at"] == nil || row["status_code"] != 200.0 || row["credits_ai"] != 2.0 {
			t.Fatalf("final row = %v, %v", row, err)
		}
	})
}

// waitStates polls the action_runs rows until they show want (the record
// writers write them in the background).
func waitStates(t *testing.T, e *env, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := e.records.states()
		match := true
		for id, st := range want {
			match = match && got[id] == st
		}
		if match {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("action_runs states = %v, want %v", got, want)
		}
		time.Sleep(5 * time.Millisecond) // why sleep: polls the fake data service, which the batch writers write to in the background
	}
}

// submitBlogs submits a generate_blog run per keyword and returns their
// ids.
func (e *env) submitBlogs(t *testing.T, keywords ...string) []string {
	t.Helper()
	var ids []string
	for _, kw := range keywords {
		out, err := e.actions.Submit(t.Context(), e.agency, e.blog(kw), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.Run.ID)
	}
	return ids
}
