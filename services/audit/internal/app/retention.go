package app

import (
	"context"
	"log/slog"
	"time"
)

// DefaultRetention is how long the trail keeps an event (--audit-retention):
// 400 days, a year and a month of grace to read last year's.
const DefaultRetention = 400 * 24 * time.Hour

// DefaultPruneInterval is how often the retention looks for events past
// it; an event is kept at most this much longer than the retention.
const DefaultPruneInterval = time.Hour

// pruneBatch bounds one delete, so that a first pass over a large backlog
// holds no lock for long.
const pruneBatch = 1000

// Retention deletes the events older than Keep. Every replica runs it:
// a delete of what is past the cutoff is the same whoever runs it, and
// twice is once.
type Retention struct {
	Store Store
	// Keep is how long an event is kept; 0 keeps every event.
	Keep time.Duration
	// Interval is how often it looks; zero is DefaultPruneInterval.
	Interval time.Duration
	Now      func() time.Time
	Logger   *slog.Logger
}

// Run prunes at once, then every Interval, until ctx ends.
func (r *Retention) Run(ctx context.Context) error {
	if r.Keep <= 0 {
		return nil
	}
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultPruneInterval
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := r.Prune(ctx); err != nil && ctx.Err() == nil && r.Logger != nil {
			r.Logger.WarnContext(ctx, "audit: pruning the trail failed; trying again at the next interval", "error", err)
		}
		t.Reset(interval)
	}
}

// Prune deletes every event older than Keep now, in batches, and returns
// how many.
func (r *Retention) Prune(ctx context.Context) (int, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	cutoff := now().UTC().Add(-r.Keep)
	total := 0
	for {
		n, err := r.Store.DeleteBefore(ctx, cutoff, pruneBatch)
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}
