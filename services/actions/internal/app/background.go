package app

import (
	"context"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// Background runs what the use cases need beside the requests until ctx
// ends: the batch writers of records, the flush of their marks, and
// recovery every interval. (The renewal of leases, KeepLeases, runs apart:
// it must outlast the requests a shutdown drains.) Then it writes what is queued and flushes the
// last marks.
func (a *Actions) Background(ctx context.Context, interval time.Duration) {
	stop := make(chan struct{})
	var writers sync.WaitGroup
	a.batch.mu.Lock()
	a.batch.on = true
	a.batch.mu.Unlock()
	for range applyWorkers {
		writers.Go(func() { a.batchWriter(context.WithoutCancel(ctx), stop) })
	}
	writers.Go(func() { a.stateWriter(context.WithoutCancel(ctx), stop) })
	a.RunRecovery(ctx, interval)
	a.batch.mu.Lock()
	a.batch.on = false
	a.batch.mu.Unlock()
	close(stop)
	writers.Wait()
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.flushMarks(fctx); err != nil {
		a.logger.WarnContext(fctx, "marking written records failed at shutdown; recovery writes them again", "error", apperr.Cause(err))
	}
}

// markInterval is how often the marks of written records are flushed.
const markInterval = 20 * time.Millisecond

// RunRecovery calls Recover every interval, and flushes the marks of
// written records every markInterval, until ctx ends; then it flushes the
// last marks.
func (a *Actions) RunRecovery(ctx context.Context, interval time.Duration) {
	recoveries := time.NewTicker(interval)
	defer recoveries.Stop()
	marks := time.NewTicker(markInterval)
	defer marks.Stop()
	for {
		if _, _, err := a.Recover(ctx); err != nil && ctx.Err() == nil {
			a.logger.WarnContext(ctx, "action recovery failed; retrying", "error", apperr.Cause(err), "retry_in", interval)
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := a.flushMarks(fctx); err != nil {
					a.logger.WarnContext(fctx, "marking written records failed at shutdown; recovery writes them again", "error", apperr.Cause(err))
				}
				return
			case <-marks.C:
				if err := a.flushMarks(ctx); err != nil && ctx.Err() == nil {
					a.logger.WarnContext(ctx, "marking written records failed; recovery writes them again", "error", apperr.Cause(err))
				}
			case <-recoveries.C:
				break wait
			}
		}
	}
}
