package app

import (
	"context"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/catalog"
)

// RecordWriter writes the records actions create into the data service's
// datasets (over its gRPC API: never its tables).
type RecordWriter interface {
	// WriteRecords applies the writes to the client's datasets in one
	// transaction. Applying the same writes twice gives the same rows.
	WriteRecords(ctx context.Context, clientID string, writes []action.RecordWrite) error
	// GetRecord returns one row; ErrNotFound if the client's dataset has
	// no row with that id.
	GetRecord(ctx context.Context, clientID, resource, id string) (map[string]any, error)
	// ListRecords returns up to max of the client's rows of resource,
	// oldest first, and whether there were more (a report reads them).
	ListRecords(ctx context.Context, clientID, resource string, max int) ([]map[string]any, bool, error)
}

// The records of finished runs go to the data service in batches: the runs
// of one client that finish while a write is under way share the next
// WriteRecords call, so one transaction, one set of counter updates and one
// event per dataset there serve them all. It is group commit for records:
// at low load every batch has one run and nothing waits; under load the
// batches grow with the queue.

// applyJob is one run's records waiting for a batch.
type applyJob struct {
	run  Run
	done chan error
	// state says the job is a row of the action_runs dataset showing a
	// state the run has just entered (queued, running): nobody waits for
	// it, and nothing marks it written.
	state bool
}

// Batching sizes.
const (
	applyWorkers  = 2
	maxApplyBatch = 32
	// applyWait bounds how long a request waits for its batch before it
	// answers and leaves the write to recovery.
	applyWait = 10 * time.Second
)

// batching is the state of the batch writers: on while Background runs.
type batching struct {
	mu   sync.RWMutex
	on   bool
	jobs chan *applyJob
	// states holds the action_runs rows of runs that were queued or
	// started, for the state writer (noteState).
	states chan *applyJob
}

// submit queues a run's records if the batch writers run; false if they
// do not, and the caller writes them itself.
func (a *Actions) submit(job *applyJob) bool {
	a.batch.mu.RLock()
	defer a.batch.mu.RUnlock()
	if !a.batch.on {
		return false
	}
	a.batch.jobs <- job
	return true
}

// noteState writes the action_runs row of an asynchronous run that has
// just entered a state (queued, running), at at, in a batch with the
// others, without waiting. It is best effort: should the batch writers be
// backed up (their queue more than half full) or the write fail, the row
// shows the run's earlier state until the next is written, and the final
// one always is (apply, and recovery after it). A late write of an earlier
// state changes nothing: the data service keeps the row with the latest
// updated_at.
func (a *Actions) noteState(run Run, at time.Time) {
	act, ok := catalog.Lookup(run.Action)
	if !ok {
		act = &action.Action{Name: run.Action}
	}
	run.Writes = []action.RecordWrite{stateRow(run, act, at)}
	a.batch.mu.RLock()
	defer a.batch.mu.RUnlock()
	if !a.batch.on {
		a.metrics.stateSkipped.Add(context.Background(), 1)
		return
	}
	select {
	case a.batch.states <- &applyJob{run: run, state: true}:
	default:
		a.metrics.stateSkipped.Add(context.Background(), 1)
	}
}

// State rows are written by one writer that gathers them for up to
// stateWindow (or maxStateBatch rows) before each write: a flood of
// submissions then costs the data service one transaction per client per
// window, not one per few runs. Measured (bench-actions --async): written
// by the batch writers as finished runs are, the queued rows took a flood
// from 1,170 to 687 accepted submissions per second.
const (
	stateWindow   = 100 * time.Millisecond
	maxStateBatch = 500
)

// stateWriter writes the gathered state rows until stop is closed, then
// the rest.
func (a *Actions) stateWriter(ctx context.Context, stop <-chan struct{}) {
	for {
		var first *applyJob
		select {
		case first = <-a.batch.states:
		case <-stop:
			select {
			case first = <-a.batch.states:
			default:
				return
			}
		}
		jobs := []*applyJob{first}
		window := time.NewTimer(stateWindow)
	gather:
		for len(jobs) < maxStateBatch {
			select {
			case j := <-a.batch.states:
				jobs = append(jobs, j)
			case <-window.C:
				break gather
			case <-stop:
				break gather
			}
		}
		window.Stop()
		a.applyBatch(ctx, jobs)
	}
}

// apply writes a finished run's records, in a batch when the batch writers
// run; if the data service cannot take them now, recovery writes them
// later. The mark that they are written is batched too (flushMarks): should
// the process stop before the mark, recovery writes the same rows again,
// which changes nothing.
func (a *Actions) apply(ctx context.Context, run Run) {
	job := &applyJob{run: run, done: make(chan error, 1)}
	if !a.submit(job) {
		a.applyBatch(ctx, []*applyJob{job})
	}
	select {
	case err := <-job.done:
		if err != nil {
			a.logger.WarnContext(ctx, "writing an action's records failed; recovery retries", "run", run.ID, "action", run.Action, "error", apperr.Cause(err))
		}
	case <-time.After(applyWait):
		a.logger.WarnContext(ctx, "writing an action's records is taking long; recovery writes them if this does not", "run", run.ID, "action", run.Action)
	}
}

// batchWriter takes queued jobs, as many as are waiting (up to
// maxApplyBatch), and writes them; it returns once stop is closed and the
// queue is empty.
func (a *Actions) batchWriter(ctx context.Context, stop <-chan struct{}) {
	for {
		var first *applyJob
		select {
		case first = <-a.batch.jobs:
		case <-stop:
			select {
			case first = <-a.batch.jobs:
			default:
				return
			}
		}
		jobs := []*applyJob{first}
	more:
		for len(jobs) < maxApplyBatch {
			select {
			case j := <-a.batch.jobs:
				jobs = append(jobs, j)
			default:
				break more
			}
		}
		a.applyBatch(ctx, jobs)
	}
}

// applyBatch writes the jobs' records, one WriteRecords call per client;
// if a combined call fails, each run is written on its own, so that one
// run's failure is not the others'.
func (a *Actions) applyBatch(ctx context.Context, jobs []*applyJob) {
	byClient := map[string][]*applyJob{}
	var order []string
	for _, j := range jobs {
		if _, ok := byClient[j.run.ClientID]; !ok {
			order = append(order, j.run.ClientID)
		}
		byClient[j.run.ClientID] = append(byClient[j.run.ClientID], j)
	}
	for _, client := range order {
		group := byClient[client]
		err := a.records.WriteRecords(ctx, client, merged(group))
		// A refused batch of finished runs is written again run by run, so
		// that one bad run holds back none of the others; state rows are
		// ours and valid, and what refused them (an outage) refuses them
		// one by one too: the next state is written over them.
		if err != nil && len(group) > 1 && !group[0].state {
			for _, j := range group {
				a.finishJob(ctx, j, a.records.WriteRecords(ctx, client, j.run.Writes))
			}
			continue
		}
		for _, j := range group {
			a.finishJob(ctx, j, err)
		}
	}
}

func (a *Actions) finishJob(ctx context.Context, j *applyJob, err error) {
	if j.state {
		if err != nil {
			a.logger.DebugContext(ctx, "writing a run's state to action_runs failed; its next state is written over it", "run", j.run.ID, "error", apperr.Cause(err))
		}
		return
	}
	if err == nil {
		select {
		case a.applied <- j.run.ID:
		default: // the marks are backed up: mark this one on its own
			if merr := a.store.MarkApplied(ctx, []string{j.run.ID}); merr != nil {
				a.logger.WarnContext(ctx, "marking an action's records written failed; recovery writes them again", "run", j.run.ID, "error", apperr.Cause(merr))
			}
		}
	}
	j.done <- err
}

// merged puts the writes of several runs together: the rows of one dataset
// and mode in one write. Rows of different runs have their own ids; one
// run's action_runs row may come more than once (queued, then running, then
// its end, when the writers are behind), and the data service takes each id
// once per write, so the last in the batch, the run's latest state (the
// jobs are in the order this process queued them), is the one kept.
func merged(jobs []*applyJob) []action.RecordWrite {
	if len(jobs) == 1 {
		return jobs[0].run.Writes
	}
	type key struct {
		resource string
		mode     action.WriteMode
	}
	type place struct{ write, row int }
	var out []action.RecordWrite
	at := map[key]int{}
	rowAt := map[string]place{}
	for _, j := range jobs {
		for _, w := range j.run.Writes {
			k := key{w.Resource, w.Mode}
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, action.RecordWrite{Resource: w.Resource, Mode: w.Mode})
			}
			for _, row := range w.Rows {
				id, _ := row["id"].(string)
				if p, seen := rowAt[id]; seen && id != "" && p.write == i {
					out[i].Rows[p.row] = row
					continue
				}
				rowAt[id] = place{i, len(out[i].Rows)}
				out[i].Rows = append(out[i].Rows, row)
			}
		}
	}
	return out
}

// flushMarks marks the runs whose records were written since the last
// flush, in one write. Marks it could not write go back to the queue for
// the next flush: a tick of the marks as the service stops has a context
// already canceled, and the marks it took would otherwise be lost to the
// flush at shutdown (which has a context of its own), and their records
// written again by the next recovery.
func (a *Actions) flushMarks(ctx context.Context) error {
	var ids []string
	for {
		select {
		case id := <-a.applied:
			ids = append(ids, id)
			continue
		default:
		}
		break
	}
	if len(ids) == 0 {
		return nil
	}
	if err := a.store.MarkApplied(ctx, ids); err != nil {
		for _, id := range ids {
			select {
			case a.applied <- id:
			default: // full: recovery writes its records again, which changes nothing
			}
		}
		return err
	}
	return nil
}
