// Package memdb is the transactional core of every in-memory store adapter:
// one lock, an undo log per transaction, and an outbox that receives a
// transaction's events only when it commits.
//
// A service's memory adapter keeps its own maps and indexes and does all its
// writes inside DB.InTx, recording how to undo each change (Put, Delete and
// Tx.OnRollback do that). It holds the read lock for reads. Nothing else is
// needed for the adapter to meet the same transaction contract as the
// PostgreSQL adapter (platform/txtest).
package memdb

import (
	"context"
	"sync"

	"github.com/atrium-hq/atrium/platform/outbox"
)

// DB is the lock, outbox and commit hook of one memory store.
type DB struct {
	mu       sync.RWMutex
	outbox   outbox.Memory
	onCommit func()
}

// New returns an empty core. onCommit, if not nil, runs after every
// committed transaction that enqueued events, outside the lock (the outbox
// relay's wake-up).
func New(onCommit func()) *DB { return &DB{onCommit: onCommit} }

// RLock takes the read lock for a read outside a transaction.
func (db *DB) RLock() { db.mu.RLock() }

// RUnlock releases the read lock.
func (db *DB) RUnlock() { db.mu.RUnlock() }

// Outbox is the store's event outbox, for the relay.
func (db *DB) Outbox() outbox.Source { return &db.outbox }

// InTx runs fn holding the write lock. If fn returns an error or panics,
// every change it recorded is undone in reverse order and its events are
// dropped; otherwise its events join the outbox, in commit order.
func (db *DB) InTx(ctx context.Context, fn func(*Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	committed, err := db.run(fn)
	if err != nil {
		return err
	}
	if committed && db.onCommit != nil {
		db.onCommit()
	}
	return nil
}

func (db *DB) run(fn func(*Tx) error) (bool, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	t := &Tx{}
	ok := false
	defer func() {
		if !ok {
			for i := len(t.undo) - 1; i >= 0; i-- {
				t.undo[i]()
			}
		}
	}()
	if err := fn(t); err != nil {
		return false, err
	}
	ok = true
	// Appending under the store lock keeps the outbox in commit order.
	db.outbox.Append(t.events...)
	return len(t.events) > 0, nil
}

// Tx is one transaction: the undo log and the events it enqueued.
type Tx struct {
	undo   []func()
	events []outbox.Event
}

// OnRollback records how to undo a change; it runs if the transaction fails.
func (t *Tx) OnRollback(undo func()) { t.undo = append(t.undo, undo) }

// Enqueue adds an event, published after the transaction commits as part
// of ctx's trace.
func (t *Tx) Enqueue(ctx context.Context, e outbox.Event) error {
	t.events = append(t.events, outbox.WithTrace(ctx, e))
	return nil
}

// Put stores v under k in m, recording how to restore the previous state.
func Put[K comparable, V any](t *Tx, m map[K]V, k K, v V) {
	old, existed := m[k]
	m[k] = v
	t.OnRollback(func() {
		if existed {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

// Delete removes k from m, recording how to restore it. It reports whether
// k was there.
func Delete[K comparable, V any](t *Tx, m map[K]V, k K) bool {
	old, existed := m[k]
	if !existed {
		return false
	}
	delete(m, k)
	t.OnRollback(func() { m[k] = old })
	return true
}
