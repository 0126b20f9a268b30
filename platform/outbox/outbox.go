// Package outbox delivers a service's events to NATS JetStream without losing
// any: a use case enqueues events in the same transaction as the writes they
// describe, and a relay publishes them after commit, removing each only once
// JetStream has acknowledged it. The event id is the JetStream message id, so
// an event published twice (a crash between the ack and the removal) is
// dropped by the stream's duplicate window; consumers must still tolerate
// redelivery.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// Event is one message to publish.
type Event struct {
	ID        string
	Subject   string
	Payload   []byte
	CreatedAt time.Time
}

// New returns an event with a fresh id and payload marshalled as JSON.
func New(subject string, payload any, at time.Time) (Event, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("marshal %s event: %w", subject, err)
	}
	return Event{ID: uuid.Must(uuid.NewV7()).String(), Subject: subject, Payload: b, CreatedAt: at}, nil
}

// Enqueuer is a transaction that takes events.
type Enqueuer interface {
	Enqueue(ctx context.Context, e Event) error
}

// Enqueue adds an event with payload marshalled as JSON to tx.
func Enqueue(ctx context.Context, tx Enqueuer, subject string, payload any, at time.Time) error {
	e, err := New(subject, payload, at)
	if err != nil {
		return err
	}
	return tx.Enqueue(ctx, e)
}

// Source is a store's outbox as the relay sees it.
type Source interface {
	// Claim passes up to max of the oldest unpublished events to publish,
	// which returns how many of them, from the start, it published. Those
	// are removed; the rest stay for the next claim.
	Claim(ctx context.Context, max int, publish func(context.Context, []Event) int) error
}

// Publisher sends one event and returns once it is durably accepted.
type Publisher interface {
	Publish(ctx context.Context, e Event) error
}

// Relay moves events from a Source to a Publisher.
type Relay struct {
	src      Source
	pub      Publisher
	logger   *slog.Logger
	interval time.Duration
	wake     chan struct{}
}

// NewRelay returns a relay that polls src every interval and whenever Wake is
// called.
func NewRelay(src Source, pub Publisher, interval time.Duration, logger *slog.Logger) *Relay {
	return &Relay{src: src, pub: pub, logger: logger, interval: interval, wake: make(chan struct{}, 1)}
}

// Wake asks the relay to look for events now. It never blocks.
func (r *Relay) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

const batchSize = 100

// Run relays until ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	backoff := r.interval
	for {
		n, err := r.drain(ctx)
		if ctx.Err() != nil {
			return nil
		}
		wait := r.interval
		if err != nil {
			r.logger.WarnContext(ctx, "outbox relay: publish failed; retrying", "error", err, "published", n, "retry_in", backoff)
			wait = backoff
			backoff = min(backoff*2, 30*time.Second)
		} else {
			backoff = r.interval
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.wake:
		case <-time.After(wait):
		}
	}
}

// Drain publishes what is pending once, until ctx ends. Shutdown calls it
// after the last request has finished, so the events of that request leave
// before the process does.
func (r *Relay) Drain(ctx context.Context) {
	if _, err := r.drain(ctx); err != nil && ctx.Err() == nil {
		r.logger.WarnContext(ctx, "outbox relay: final drain failed; events stay in the outbox", "error", err)
	}
}

// drain publishes batches until the outbox is empty or a publish fails.
func (r *Relay) drain(ctx context.Context) (int, error) {
	total := 0
	for {
		var pubErr error
		claimed := 0
		err := r.src.Claim(ctx, batchSize, func(ctx context.Context, events []Event) int {
			claimed = len(events)
			for i, e := range events {
				if err := r.pub.Publish(ctx, e); err != nil {
					pubErr = fmt.Errorf("event %s (%s): %w", e.ID, e.Subject, err)
					return i
				}
			}
			return len(events)
		})
		if err == nil {
			err = pubErr
		}
		if err != nil {
			return total, err
		}
		total += claimed
		if claimed < batchSize {
			return total, nil
		}
	}
}
