package app

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// Leases. A pending run has a lease (Run.LeaseUntil): while it lasts the
// run is its process's, and once it has ended recovery, on any replica,
// takes the run back (recovery.go). The process executing a run renews
// the leases of all its runs at once every Config.LeaseRenewal, from when
// it reserves or claims the run until its outcome is recorded, so that a
// live run's lease never ends however long the run takes, and a dead
// process's runs are taken back a lease (15 s) after its last renewal
// instead of after the longest a run may take. Renewal and take-back are
// serialised on the run's row: a renewed lease is never taken, and an
// owner whose run was taken back can neither renew it nor record its
// outcome (both match the attempt it runs).

// leaseSet is the runs this process executes: id → attempt.
type leaseSet struct {
	mu   sync.Mutex
	held map[string]int
}

// hold adds run to the runs whose leases this process renews.
func (a *Actions) hold(run Run) {
	a.leases.mu.Lock()
	a.leases.held[run.ID] = run.Attempts
	a.leases.mu.Unlock()
}

// letGo stops renewing run's lease: its outcome is recorded, it went
// back to the queue, or it is no longer this process's.
func (a *Actions) letGo(id string) {
	a.leases.mu.Lock()
	delete(a.leases.held, id)
	a.leases.mu.Unlock()
}

// RenewLeases renews the leases of every run this process executes, to
// now + Config.Lease, in one store call. A run it could not renew is no
// longer this process's (recovery took it back while this process could
// not renew it, or it was canceled): it is let go, and a queued run's work
// is told to stop. It returns the ids of those lost runs.
func (a *Actions) RenewLeases(ctx context.Context) (lost []string, err error) {
	a.leases.mu.Lock()
	leases := make([]Lease, 0, len(a.leases.held))
	for id, attempt := range a.leases.held {
		leases = append(leases, Lease{RunID: id, Attempt: attempt})
	}
	a.leases.mu.Unlock()
	if len(leases) == 0 {
		return nil, nil
	}
	renewed, err := a.store.RenewLeases(ctx, leases, a.clock.Now().Add(a.cfg.Lease))
	if err != nil {
		return nil, err
	}
	a.leases.mu.Lock()
	for _, l := range leases {
		if slices.Contains(renewed, l.RunID) {
			continue
		}
		// Held still by the same attempt: the run was not just let go
		// or claimed again here after the list was taken.
		if at, ok := a.leases.held[l.RunID]; ok && at == l.Attempt {
			delete(a.leases.held, l.RunID)
			lost = append(lost, l.RunID)
		}
	}
	a.leases.mu.Unlock()
	if len(lost) > 0 {
		a.queue.mu.Lock()
		for _, id := range lost {
			if cancel, ok := a.queue.running[id]; ok {
				cancel(errRunEnded)
			}
		}
		a.queue.mu.Unlock()
	}
	return lost, nil
}

// KeepLeases calls RenewLeases every Config.LeaseRenewal until ctx ends.
// It must run as long as this process executes runs: through a
// shutdown's drain of requests too, until the last run has ended.
// After a failed renewal (the database is unavailable) it tries again
// five times as often, so that once the database answers this process
// renews its runs' leases before another replica's recovery, which looks
// every --recovery-interval, takes back those that ended meanwhile.
func (a *Actions) KeepLeases(ctx context.Context) {
	t := time.NewTimer(a.cfg.LeaseRenewal)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next := a.cfg.LeaseRenewal
		lost, err := a.RenewLeases(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			next /= 5
			a.logger.WarnContext(ctx, "renewing the leases of this process's action runs failed; retrying", "error", apperr.Cause(err), "retry_in", next)
		case len(lost) > 0:
			a.logger.WarnContext(ctx, "action runs of this process were taken back before it could renew their leases; their outcomes will not be recorded", "runs", lost)
		}
		t.Reset(next)
	}
}
