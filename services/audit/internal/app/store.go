package app

import (
	"context"
	"time"
)

// Store keeps the audit trail. It is append-only: events are added and,
// past the retention, deleted; never changed.
type Store interface {
	// Add keeps e unless an event with its id is kept already (the stream
	// delivered it again, or two replicas took it), and reports whether
	// it added it.
	Add(ctx context.Context, e Event) (bool, error)
	// Events returns at most f.Limit events selected by f, newest first
	// (at, then id, descending), after f.After when set.
	Events(ctx context.Context, f Filter) ([]Event, error)
	// DeleteBefore deletes at most limit of the events older than cutoff,
	// the oldest first, and returns how many it deleted.
	DeleteBefore(ctx context.Context, cutoff time.Time, limit int) (int, error)
}
