package outbox

import (
	"context"
	"slices"
	"sync"
)

// Memory is the outbox of an in-memory store. The store appends a
// transaction's events when the transaction commits, never before, so the
// relay cannot publish an event whose writes were rolled back.
type Memory struct {
	// claim serialises claims: one batch at a time is out to be published,
	// so events leave in order and none twice.
	claim sync.Mutex
	// mu guards events. It is never held during a publish: the store
	// appends under its own lock, and a commit must not wait for JetStream
	// (up to its request timeout when NATS has just gone away).
	mu     sync.Mutex
	events []Event
}

// Append adds committed events.
func (m *Memory) Append(events ...Event) {
	m.mu.Lock()
	m.events = append(m.events, events...)
	m.mu.Unlock()
}

// Pending returns a copy of the unpublished events, oldest first.
func (m *Memory) Pending() []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Event(nil), m.events...)
}

// Backlog implements Source.
func (m *Memory) Backlog(context.Context) (Backlog, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.events) == 0 {
		return Backlog{}, nil
	}
	return Backlog{Events: len(m.events), Oldest: m.events[0].CreatedAt}, nil
}

// Claim implements Source. Concurrent claims are serialised; appends go on
// while a claim publishes.
func (m *Memory) Claim(ctx context.Context, max int, publish func(context.Context, []Event) int) error {
	m.claim.Lock()
	defer m.claim.Unlock()
	m.mu.Lock()
	batch := slices.Clone(m.events[:min(max, len(m.events))])
	m.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	n := publish(ctx, batch)
	// Only claims remove events, from the front: the first n are still the
	// batch's, and what was appended meanwhile comes after them.
	m.mu.Lock()
	clear(m.events[:n])
	m.events = m.events[n:]
	m.mu.Unlock()
	return nil
}
