package pgdb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Group commit. Each ExecEvents call is a transaction of its own, and a
// transaction costs the database a commit (a WAL record and a flush that
// the caller waits for) and both sides a round trip, whatever its size.
// Under concurrent writes most of a one-row insert is that fixed cost. So
// the calls that arrive while earlier ones are on their way to the
// database wait for them and then go together, as one pipeline of their
// statements in one implicit transaction: one round trip, one commit.
//
// Nothing waits on a timer: a call that finds no batch in flight goes at
// once, alone, exactly as before; batches form only when calls outpace the
// database, and grow with the load. Durability is unchanged: a caller is
// answered after the commit that holds its statement is flushed.
//
// A batch is all or nothing (the implicit transaction), so when a
// statement fails, or the transaction collides with another, its
// neighbours are not made to fail with it: each statement is run again on
// its own, as a single call would have been, and gets its own answer. Only
// an error that leaves the outcome unknown (the connection broke after the
// statements were sent) is everyone's, as it would have been for each.

// maxBatch bounds a batch: past a few dozen statements the fixed cost is
// already shared and a larger batch only delays its first caller.
const maxBatch = 64

// maxInFlight is how many batches may be on their way at once. One would
// batch the most, but a statement that waits on a lock would then hold up
// every write of the service behind it; a few let the others go on.
const maxInFlight = 2

// pendingExec is one ExecEvents call waiting for its batch.
type pendingExec struct {
	ctx  context.Context
	sql  string
	args []any
	// scan reads a QueryEvents statement's row; nil for ExecEvents.
	scan func(pgx.Row) error
	// lockKey orders the statements of a batch (QueryEvents).
	lockKey string
	// done is closed once n and err are set.
	done chan struct{}
	n    int64
	err  error
}

// groupCommit queues the calls of one DB.
type groupCommit struct {
	mu       sync.Mutex
	queue    []*pendingExec
	inFlight int
	// gate, if not nil, runs before each batch is taken from the queue, and
	// sizes is told the size of every batch sent: tests hold batches back
	// and see what formed.
	gate  func()
	sizes func(int)
}

// execGrouped runs sql with args in the next batch and returns the rows it
// affected.
func (db *DB) execGrouped(ctx context.Context, sql string, args []any, scan func(pgx.Row) error, lockKey string) (int64, error) {
	p := &pendingExec{ctx: ctx, sql: sql, args: args, scan: scan, lockKey: lockKey, done: make(chan struct{})}
	g := &db.group
	g.mu.Lock()
	g.queue = append(g.queue, p)
	if g.inFlight < maxInFlight {
		g.inFlight++
		go db.sendBatches()
	}
	g.mu.Unlock()
	select {
	case <-p.done:
		return p.n, p.err
	case <-ctx.Done():
		// Like a caller that gives up on a single statement: the write may
		// still commit; the caller is told it does not know.
		return 0, ctx.Err()
	}
}

// sendBatches sends the queued calls, a batch at a time, until none are
// left.
func (db *DB) sendBatches() {
	g := &db.group
	for {
		if g.gate != nil {
			g.gate()
		}
		g.mu.Lock()
		n := min(len(g.queue), maxBatch)
		if n == 0 {
			g.inFlight--
			g.mu.Unlock()
			return
		}
		batch := make([]*pendingExec, n)
		copy(batch, g.queue)
		g.queue = append(g.queue[:0], g.queue[n:]...)
		g.mu.Unlock()
		db.sendBatch(batch)
	}
}

// sendBatch runs the calls of batch that still wait, together, and answers
// each.
func (db *DB) sendBatch(batch []*pendingExec) {
	live := batch[:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.err = err
			close(p.done)
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	if db.group.sizes != nil {
		db.group.sizes(len(live))
	}
	if len(live) == 1 {
		p := live[0]
		p.n, p.err = db.execAlone(p.ctx, p.sql, p.args, p.scan)
		close(p.done)
		return
	}
	// Statements that lock the same rows go in the order of their keys in
	// every batch (see QueryEvents); those without a key keep their order.
	slices.SortStableFunc(live, func(a, b *pendingExec) int { return strings.Compare(a.lockKey, b.lockKey) })
	ctx, cancel := batchContext(live)
	counts, err := db.execTogether(ctx, live)
	cancel()
	if err == nil {
		for i, p := range live {
			p.n = counts[i]
			close(p.done)
		}
		return
	}
	if !rolledBack(err) {
		err = final(err)
		for _, p := range live {
			p.err = err
			close(p.done)
		}
		return
	}
	// The transaction was rolled back as a whole: each call on its own.
	var wg sync.WaitGroup
	for _, p := range live {
		wg.Go(func() {
			p.n, p.err = db.execAlone(p.ctx, p.sql, p.args, p.scan)
			close(p.done)
		})
	}
	wg.Wait()
}

// execTogether sends the statements of batch in one pipeline, which
// PostgreSQL runs as one implicit transaction, and returns the rows each
// affected.
func (db *DB) execTogether(ctx context.Context, batch []*pendingExec) ([]int64, error) {
	b := &pgx.Batch{}
	for _, p := range batch {
		b.Queue(p.sql, p.args...)
	}
	br := db.pool.SendBatch(ctx, b)
	counts := make([]int64, len(batch))
	events := 0
	var err error
	for i, p := range batch {
		if p.scan != nil {
			if counts[i], err = scanned(p.scan(br.QueryRow())); err != nil {
				break
			}
			events += int(counts[i])
			continue
		}
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err != nil {
			break
		}
		counts[i] = tag.RowsAffected()
		events += int(counts[i])
	}
	// Close reads up to the end of the pipeline, where the commit's own
	// error, if any, arrives.
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if events > 0 && db.onCommit != nil {
		db.onCommit()
	}
	return counts, nil
}

// batchContext is the context a batch runs in: none of its callers' own,
// since one caller giving up must not fail the others, but the latest of
// their deadlines (none if one has none), and the first one's values (its
// trace).
func batchContext(batch []*pendingExec) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var latest time.Time
	for _, p := range batch {
		d, ok := p.ctx.Deadline()
		if !ok {
			return ctx, func() {}
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(ctx, latest)
}

// rolledBack reports an error after which the batch is known to have
// changed nothing: the database refused a statement or the commit, or
// the pipeline was never sent.
func rolledBack(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) || pgconn.SafeToRetry(err)
}
