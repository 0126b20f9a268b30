package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Asynchronous runs (Prefer: respond-async). A submission is admitted as a
// synchronous request is, then recorded as a queued run with its cost
// reserved (reserve.go); the caller gets its id at once. Workers, Workers
// of them in each process, claim queued runs from the store, fairly across
// agencies (Tx.ClaimRun), and run them as a synchronous run is run, under
// the same action timeout, ending them through the same finish (outcome.go).
// The queue is the runs table: on PostgreSQL it survives restarts and is
// shared by every replica; on memory it lives and dies with the process.

// queueState is the workers' state in this process.
type queueState struct {
	// wake tells an idle worker a run was queued here.
	wake chan struct{}
	mu   sync.Mutex
	// running cancels the work of the runs this process executes, by id,
	// with errRunEnded (canceled, or ended elsewhere) or errStopping.
	running map[string]context.CancelCauseFunc
	// finished is closed, and replaced, whenever a run ends here: the
	// requests waiting on a run read it again.
	finished chan struct{}
	// stopping is set at shutdown: runs whose work is cut go back to the
	// queue instead of failing.
	stopping atomic.Bool
}

func newQueueState(workers int) queueState {
	return queueState{wake: make(chan struct{}, workers), running: map[string]context.CancelCauseFunc{}, finished: make(chan struct{})}
}

// ended wakes the requests waiting on runs.
func (q *queueState) ended() {
	q.mu.Lock()
	close(q.finished)
	q.finished = make(chan struct{})
	q.mu.Unlock()
}

func (q *queueState) endedSignal() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.finished
}

// Submit queues a run of the action body asks for: the same checks as Run
// answer at once, reserving nothing when they fail (and a full queue
// answers QueueFull); otherwise the run is recorded as queued with its
// cost reserved and returned. A repeated Idempotency-Key returns the
// earlier run, queued, running or finished.
func (a *Actions) Submit(ctx context.Context, agencyID string, body map[string]any, idempotencyKey string) (Outcome, error) {
	req, client, err := a.admit(ctx, agencyID, body, idempotencyKey)
	if err != nil {
		return Outcome{}, err
	}
	run := a.newRun(agencyID, client, req.Action, body, idempotencyKey)
	run.Status, run.Async, run.Input = StatusQueued, true, body
	replay, bal, err := a.reserve(ctx, run, req.Action, requestFields(body))
	if err != nil {
		return Outcome{Balance: bal}, err
	}
	if replay != nil {
		return Outcome{Run: *replay, Balance: bal, Replayed: true}, nil
	}
	a.noteState(run, run.CreatedAt)
	select {
	case a.queue.wake <- struct{}{}:
	default: // every worker has a wake-up waiting already
	}
	return Outcome{Run: run, Balance: bal}, nil
}

// Work runs the workers until ctx ends. Then the runs they are executing
// are cut and put back in the queue (on PostgreSQL another replica, or
// this one restarted, runs them again; their cost stays reserved).
func (a *Actions) Work(ctx context.Context) {
	var workers sync.WaitGroup
	for range a.cfg.Workers {
		workers.Go(func() { a.worker(ctx) })
	}
	<-ctx.Done()
	a.queue.stopping.Store(true)
	a.queue.mu.Lock()
	for _, cancel := range a.queue.running {
		cancel(errStopping)
	}
	a.queue.mu.Unlock()
	workers.Wait()
}

func (a *Actions) worker(ctx context.Context) {
	// Runs queued here wake a worker at once; the poll finds those another
	// replica queued, less often, since every idle worker polls.
	poll := time.NewTicker(4 * a.cfg.QueuePoll)
	defer poll.Stop()
	for ctx.Err() == nil {
		run, ok, err := a.claim(ctx)
		if err != nil && ctx.Err() == nil {
			a.logger.WarnContext(ctx, "claiming a queued action run failed; retrying", "error", apperr.Cause(err))
		}
		if ok {
			a.runQueued(ctx, run)
			continue
		}
		select {
		case <-ctx.Done():
		case <-a.queue.wake:
		case <-poll.C:
		}
	}
}

// claim takes the next queued run, with its started event.
func (a *Actions) claim(ctx context.Context) (run Run, ok bool, err error) {
	err = a.store.InTx(ctx, func(tx Tx) error {
		now := a.clock.Now()
		run, ok, err = tx.ClaimRun(ctx, now, now.Add(a.cfg.Lease))
		if err != nil || !ok {
			return err
		}
		return enqueueStage(ctx, tx, events.RunStarted, run, now)
	})
	return run, ok, err
}

// runQueued executes a claimed run and records its outcome. Its work is
// canceled when the run is canceled (here, or on another replica: the run
// is read again every QueuePoll) and when the process stops, in which case
// the run goes back to the queue.
func (a *Actions) runQueued(ctx context.Context, run Run) {
	a.metrics.busy.Add(ctx, 1)
	defer a.metrics.busy.Add(context.WithoutCancel(ctx), -1)
	// This process renews the run's lease until its outcome is recorded
	// (finish lets it go) or the run leaves it (below).
	a.hold(run)
	a.noteState(run, run.StartedAt)
	work, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	a.queue.mu.Lock()
	a.queue.running[run.ID] = cancel
	a.queue.mu.Unlock()
	if a.queue.stopping.Load() {
		cancel(errStopping) // claimed as the workers were told to stop
	}
	defer func() {
		a.queue.mu.Lock()
		delete(a.queue.running, run.ID)
		a.queue.mu.Unlock()
	}()
	watched := make(chan struct{})
	defer close(watched)
	go a.watch(work, run, cancel, watched)

	act, ok := catalog.Lookup(run.Action)
	var (
		res    action.Result
		runErr error
	)
	req, err := catalog.ParseRequest(run.Input, a.guard)
	var client action.Client
	if err == nil && ok {
		client, err = a.linkedClient(work, run.AgencyID, run.ClientID)
	}
	switch {
	case !ok:
		act = &action.Action{Name: run.Action}
		runErr = &provider.Error{StatusCode: 400, Provider: "Atrium", Message: fmt.Sprintf("the action %s no longer exists in this version of Atrium", run.Action)}
	case err != nil:
		// The request was valid when it was queued; what changed since
		// (the client was unlinked, a rule) is the run's error.
		runErr = &provider.Error{StatusCode: statusOf(err), Provider: "Atrium", Message: checkMessage(err), Err: err}
	default:
		meter := new(provider.Meter)
		res, runErr = a.execute(provider.WithMeter(work, meter), req, client, run)
		run.ProviderCost, run.Cached = usage(meter.Usage())
	}
	if errors.Is(context.Cause(work), errRunEnded) {
		// Canceled (or ended by recovery) while it ran: that outcome is
		// recorded already, and this one would change nothing.
		a.letGo(run.ID)
		return
	}
	if runErr != nil && errors.Is(context.Cause(work), errStopping) {
		// Cut by the shutdown: nothing was recorded, so the run goes back
		// to the queue with its reservation.
		a.letGo(run.ID)
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer rcancel()
		if _, err := a.requeue(rctx, run); err != nil {
			a.logger.WarnContext(rctx, "putting a cut run back in the queue failed; recovery does it once its lease ends", "run", run.ID, "error", apperr.Cause(err))
		}
		return
	}
	if _, err := a.finish(context.WithoutCancel(ctx), run, act, res, runErr); err != nil && !errors.Is(err, context.Canceled) &&
		apperr.KindOf(err) != apperr.KindUnavailable { // kept and written once the database answers (outcomeretry.go)
		a.logger.WarnContext(ctx, "recording a queued run's outcome failed; recovery ends it once its lease ends", "run", run.ID, "error", apperr.Cause(err))
	}
}

// watch cancels a run's work once the run is no longer this attempt's
// (it was canceled, or recovered and claimed elsewhere) until done is
// closed.
func (a *Actions) watch(ctx context.Context, run Run, cancel context.CancelCauseFunc, done <-chan struct{}) {
	t := time.NewTicker(max(a.cfg.QueuePoll, time.Second))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if r, err := a.store.Run(ctx, run.ID); err == nil && (r.Status != StatusPending || r.Attempts != run.Attempts) {
				cancel(errRunEnded)
				return
			}
		}
	}
}

// The causes a run's work is cut with.
var (
	errRunEnded = errors.New("the run was canceled or ended elsewhere")
	errStopping = errors.New("the process is stopping")
)

func (a *Actions) requeue(ctx context.Context, run Run) (ok bool, err error) {
	err = a.store.InTx(ctx, func(tx Tx) error {
		ok, err = tx.RequeueRun(ctx, run.ID, run.Attempts)
		return err
	})
	if ok {
		run.Status = StatusQueued
		a.noteState(run, a.clock.Now())
		select {
		case a.queue.wake <- struct{}{}:
		default:
		}
	}
	return ok, err
}

// checkMessage is what a caller is told of a check that failed: an
// apperr's message is written for it; anything else is not.
func checkMessage(err error) string {
	if apperr.KindOf(err) != 0 {
		return err.Error()
	}
	return "a check of the request failed inside Atrium"
}

// statusOf is the HTTP-style status of an error a check gave.
func statusOf(err error) int {
	switch apperr.KindOf(err) {
	case apperr.KindNotFound:
		return 404
	case apperr.KindPermissionDenied:
		return 403
	case apperr.KindInvalid:
		return 400
	case apperr.KindUnavailable:
		return 503
	}
	return 500
}

// State is a run's state as the API shows it: queued, running, success,
// error or canceled.
func State(r Run) string {
	if r.Status == StatusPending {
		return "running"
	}
	return r.Status
}

// GetRun returns one of the agency's runs; another agency's is not found,
// nor, for a caller limited to one client (a member with the client role,
// whose client principal.ClientID gives), another client's.
func (a *Actions) GetRun(ctx context.Context, agencyID, id string) (Run, error) {
	id, err := value.PathID("run", id)
	if err != nil {
		return Run{}, err
	}
	r, err := a.store.Run(ctx, id)
	client := principal.ClientID(ctx)
	if errors.Is(err, ErrNotFound) || (err == nil && (r.AgencyID != agencyID || (client != "" && r.ClientID != client))) {
		return Run{}, value.NotFound("run", id)
	}
	return r, err
}

// WaitRun returns the agency's run once it has finished, or as it is
// when d has passed (or ctx ends first).
func (a *Actions) WaitRun(ctx context.Context, agencyID, id string, d time.Duration) (Run, error) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	poll := time.NewTicker(a.cfg.QueuePoll)
	defer poll.Stop()
	for {
		ended := a.queue.endedSignal()
		r, err := a.GetRun(ctx, agencyID, id)
		if err != nil || r.Finished() {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, nil
		case <-deadline.C:
			return r, nil
		case <-ended:
		case <-poll.C:
		}
	}
}

// CancelRun cancels one of the agency's asynchronous runs (a synchronous
// one is a conflict). A queued run becomes
// canceled and its reservation is released. A running run becomes
// canceled in the same way, at once, and its work is told to stop (its
// provider calls are canceled): whatever it produces afterwards is
// discarded, since its outcome can only be recorded while it is running.
// A finished run is a conflict: it stays as it ended.
func (a *Actions) CancelRun(ctx context.Context, agencyID, id string) (Run, Balance, error) {
	// A worker may claim the run between the read and the cancel (the
	// cancel matches the attempt it read, as FinishRun does): read again.
	for range 3 {
		run, err := a.GetRun(ctx, agencyID, id)
		if err != nil {
			return Run{}, Balance{}, err
		}
		if run.Finished() {
			return run, Balance{}, finishedAlready(run)
		}
		if !run.Async {
			return run, Balance{}, apperr.Conflict("run %s is synchronous: it is answered to the request that made it, which cancels nothing by going away; only runs submitted with Prefer: respond-async can be canceled", run.ID)
		}
		canceled, bal, ok, err := a.cancel(ctx, run)
		if err != nil || ok {
			return canceled, bal, err
		}
	}
	return Run{}, Balance{}, apperr.Aborted(nil, "run %s changed while it was being canceled; retry", id)
}

// cancel ends run as canceled, its cost released, unless it changed since
// it was read (ok false).
func (a *Actions) cancel(ctx context.Context, run Run) (Run, Balance, bool, error) {
	act, known := catalog.Lookup(run.Action)
	if !known {
		act = &action.Action{Name: run.Action}
	}
	run.Status, run.StatusCode, run.FinishedAt = StatusCanceled, StatusCodeCanceled, a.clock.Now()
	run.Data = map[string]any{"error": run.Action + " was canceled before it finished; nothing was charged"}
	run.Writes = []action.RecordWrite{runRow(run, act)}
	event, err := completed(ctx, run)
	if err != nil {
		return Run{}, Balance{}, false, err
	}
	var (
		bal Balance
		ok  bool
	)
	err = a.store.InTx(ctx, func(tx Tx) error {
		var err error
		ok, bal, err = tx.FinishRun(ctx, run, run.Cost, event)
		if err != nil || !ok {
			return err
		}
		return audit.Record(ctx, tx, auditService, audit.Change{Action: "run.canceled", ResourceType: "run", ResourceID: run.ID, AgencyID: run.AgencyID}, run.FinishedAt)
	})
	if err != nil || !ok {
		return Run{}, Balance{}, false, err
	}
	a.queue.mu.Lock()
	if cancel, found := a.queue.running[run.ID]; found {
		cancel(errRunEnded)
	}
	a.queue.mu.Unlock()
	a.queue.ended()
	a.metrics.finished(ctx, run)
	a.apply(ctx, run)
	return run, bal, true, nil
}

// StatusCodeCanceled is a canceled run's status_code: 499, the code
// proxies give a request its client abandoned.
const StatusCodeCanceled = 499

func finishedAlready(r Run) error {
	return apperr.Conflict("run %s has already finished with state %s; only a queued or running run can be canceled", r.ID, State(r))
}

// runStates maps the states ListRuns filters on to run statuses.
var runStates = map[string]string{"queued": StatusQueued, "running": StatusPending, StatusSuccess: StatusSuccess,
	StatusError: StatusError, StatusCanceled: StatusCanceled}

// Run pages: RunPageDefault runs unless the caller asks for up to
// RunPageMax.
const (
	RunPageDefault = 20
	RunPageMax     = 100
)

// RunPage is a page of runs, newest first, with the id of the last when
// more follow.
type RunPage struct {
	Runs []Run
	Next string
}

// ListRuns returns the agency's runs, newest first, filtered by client,
// state and action, limit at a time after the run before (a cursor's
// position).
func (a *Actions) ListRuns(ctx context.Context, agencyID, clientID, state, actionName, scheduleID string, limit *int32, before string) (RunPage, error) {
	f := RunFilter{ClientID: clientID, Action: actionName, Limit: RunPageDefault, Before: before}
	if scheduleID != "" {
		id, err := value.BodyID("schedule_id", scheduleID)
		if err != nil {
			return RunPage{}, err
		}
		f.ScheduleID = id
	}
	if state != "" {
		st, ok := runStates[state]
		if !ok {
			return RunPage{}, apperr.Invalid("state must be one of queued, running, success, error, canceled; got %q", state)
		}
		f.Status = st
	}
	if clientID != "" {
		id, err := value.BodyID("client_id", clientID)
		if err != nil {
			return RunPage{}, err
		}
		f.ClientID = id
	}
	if actionName != "" {
		if _, ok := catalog.Lookup(actionName); !ok {
			return RunPage{}, apperr.Invalid("action %q is not an action; GET /api/v1/actions lists them", actionName)
		}
	}
	if limit != nil {
		if *limit < 1 || *limit > RunPageMax {
			return RunPage{}, apperr.Invalid("limit must be an integer from 1 to %d (default %d); got %d", RunPageMax, RunPageDefault, *limit)
		}
		f.Limit = int(*limit)
	}
	f.Limit++ // one more says whether a next page exists
	runs, err := a.store.ListRuns(ctx, agencyID, f)
	if err != nil {
		return RunPage{}, err
	}
	var page RunPage
	if len(runs) == f.Limit {
		runs = runs[:f.Limit-1]
		page.Next = runs[len(runs)-1].ID
	}
	page.Runs = runs
	return page, nil
}
