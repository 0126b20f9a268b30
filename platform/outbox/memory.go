package outbox

import (
	"context"
	"sync"
)

// Memory is the outbox of an in-memory store. The store appends a
// transaction's events when the transaction commits, never before, so the
// relay cannot publish an event whose writes were rolled back.
type Memory struct {
	// claim serialises claims; mu guards events, and is never held while
	// publishing, so that a commit (which appends under the store's write
	// lock) never waits for NATS.
	claim  sync.Mutex
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

// Claim implements Source. Concurrent claims are serialised; events
// appended meanwhile wait for the next one.
func (m *Memory) Claim(ctx context.Context, max int, publish func(context.Context, []Event) int) error {
	m.claim.Lock()
	defer m.claim.Unlock()
	m.mu.Lock()
	batch := append([]Event(nil), m.events[:min(max, len(m.events))]...)
	m.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	n := publish(ctx, batch)
	// Only claims remove events, from the front; appends go to the end.
	m.mu.Lock()
	clear(m.events[:n])
	m.events = m.events[n:]
	m.mu.Unlock()
	return nil
}
