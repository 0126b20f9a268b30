package app

import (
	"context"
	"sync"
)

// maxRecordBatch bounds one write of attempts.
const maxRecordBatch = 256

// recorder writes the attempts that end at about the same time together,
// in one statement and one commit, instead of one each: at a thousand
// attempts a second that is the difference between a thousand commits and
// a few dozen. Nothing waits on a timer: a flusher writes what is pending
// and keeps writing while more arrives meanwhile, then stops.
//
// The deliverer's scheduled attempts do not wait for their record (later):
// the worker goes on to the next delivery while the record is written, and
// the delivery stays leased until it is, so that no claim takes it again
// meanwhile. A record that cannot be written leaves the delivery leased
// until its lease ends, and it is attempted again (the same webhook-id):
// never lost, possibly sent twice, as at-least-once allows. Explicit
// attempts (a test, a retry asked for) wait for theirs (now), since their
// caller reads the delivery back.
type recorder struct {
	mu       sync.Mutex
	pending  []recordCall
	flushing bool
	idle     *sync.Cond // signalled when a flusher stops
}

type recordCall struct {
	rec  AttemptRecord
	done chan error // nil when nobody waits
	// failed, when nobody waits, is told if the write failed.
	failed func(error)
}

// now writes r with whatever else is being recorded and returns once it
// is written.
func (b *recorder) now(ctx context.Context, s DeliveryStore, r AttemptRecord) error {
	done := make(chan error, 1)
	b.add(ctx, s, recordCall{rec: r, done: done})
	return <-done
}

// later writes r with whatever else is being recorded, without waiting;
// failed, if set, is told if the write fails.
func (b *recorder) later(ctx context.Context, s DeliveryStore, r AttemptRecord, failed func(error)) {
	b.add(ctx, s, recordCall{rec: r, failed: failed})
}

func (b *recorder) add(ctx context.Context, s DeliveryStore, c recordCall) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = append(b.pending, c)
	if !b.flushing {
		b.flushing = true
		// A canceled caller must not abandon the records of others.
		go b.flush(context.WithoutCancel(ctx), s)
	}
}

// flush writes what is pending until nothing is.
func (b *recorder) flush(ctx context.Context, s DeliveryStore) {
	for {
		b.mu.Lock()
		n := min(len(b.pending), maxRecordBatch)
		if n == 0 {
			b.flushing = false
			if b.idle != nil {
				b.idle.Broadcast()
			}
			b.mu.Unlock()
			return
		}
		batch := b.pending[:n:n]
		b.pending = b.pending[n:]
		b.mu.Unlock()
		rs := make([]AttemptRecord, len(batch))
		for i, c := range batch {
			rs[i] = c.rec
		}
		err := s.RecordAttempts(ctx, rs)
		told := false
		for _, c := range batch {
			switch {
			case c.done != nil:
				c.done <- err
			case err != nil && c.failed != nil && !told:
				c.failed(err) // once for the batch
				told = true
			}
		}
	}
}

// wait returns once every record added before it is written (or failed).
func (b *recorder) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.idle == nil {
		b.idle = sync.NewCond(&b.mu)
	}
	for b.flushing {
		b.idle.Wait()
	}
}
