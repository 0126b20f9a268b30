package pgdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/store"
)

// Option changes how Open sets a pool up.
type Option func(*pgxpool.Config)

// WithTracerProvider makes the pool's query spans with tp instead of
// OpenTelemetry's global provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *pgxpool.Config) { c.ConnConfig.Tracer = NewTracer(tp) }
}

// Open connects a pool whose sessions use schema as their search path and
// checks that the server answers. Its queries are traced (see Tracer), by
// the global tracer provider unless an option says otherwise.
func Open(ctx context.Context, databaseURL, schema string, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	cfg.ConnConfig.Tracer = NewTracer(otel.GetTracerProvider())
	for _, o := range opts {
		o(cfg)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "atrium-" + schema
	}
	// A request whose caller went away cancels its query. pgx's default
	// answer is to break the connection, so a burst of client timeouts
	// would empty the pool and every following request would pay to open
	// a connection again. Instead the query is left to finish (it usually
	// does within milliseconds), then cancelled on the server, and the
	// connection is only given up if even that does not end it.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, CancelRequestDelay: 100 * time.Millisecond, DeadlineDelay: 5 * time.Second}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database %s@%s:%d/%s: %w", cfg.ConnConfig.User, cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	return pool, nil
}

// DefaultMaxAttempts is how many times InTx runs a transaction that keeps
// failing with a serialization failure or a deadlock.
const DefaultMaxAttempts = 5

// DB is a service's pool with the commit hook of its outbox relay.
type DB struct {
	pool        *pgxpool.Pool
	onCommit    func()
	maxAttempts int
	// backoff is the pause before attempt n (n >= 2); tests shorten it.
	backoff func(n int) time.Duration
	// group gathers concurrent ExecEvents calls (groupcommit.go).
	group groupCommit
}

// NewDB returns the core on pool, whose search path must be the service's
// schema (see Open). onCommit, if not nil, runs after every committed
// transaction that enqueued events.
func NewDB(pool *pgxpool.Pool, onCommit func()) *DB {
	return &DB{pool: pool, onCommit: onCommit, maxAttempts: DefaultMaxAttempts, backoff: jitteredBackoff}
}

// Pool is the connection pool, for reads outside transactions.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Outbox is the schema's outbox table, for the relay.
func (db *DB) Outbox() outbox.Source { return outbox.NewPostgres(db.pool) }

// jitteredBackoff waits about 2, 4, 8, 16 ms before attempts 2 to 5, with
// full jitter so that the transactions that collided do not collide again.
func jitteredBackoff(n int) time.Duration {
	ceiling := time.Millisecond << min(n-1, 8)
	return time.Duration(rand.Int64N(int64(ceiling))) + time.Millisecond/2 //nolint:gosec // G404: jitter, not a secret
}

// InTx runs fn in a transaction, committing if it returns nil and rolling
// back otherwise (also on panic). A transaction that fails with a
// serialization failure or a deadlock (SQLSTATE 40001, 40P01), in fn or at
// commit, is run again from the start, so fn must not keep state from one
// run to the next except what it rebuilds. When every attempt fails that
// way the error is apperr.Aborted, which callers see as a retryable 503.
func (db *DB) InTx(ctx context.Context, fn func(*Tx) error) error {
	return db.retry(ctx, func() (int, error) {
		var t *Tx
		err := pgx.BeginFunc(ctx, db.pool, func(ptx pgx.Tx) error {
			t = &Tx{tx: ptx}
			return fn(t)
		})
		if t == nil {
			return 0, err
		}
		return t.events, err
	})
}

// retry runs a transaction (which returns the events it enqueued) until it
// commits, fails otherwise than by colliding, or collides maxAttempts
// times; see InTx.
func (db *DB) retry(ctx context.Context, run func() (events int, err error)) error {
	var err error
	for attempt := 1; attempt <= db.maxAttempts; attempt++ {
		if attempt > 1 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(db.backoff(attempt)):
			}
		}
		var events int
		events, err = run()
		if err == nil {
			if events > 0 && db.onCommit != nil {
				db.onCommit()
			}
			return nil
		}
		if !retryable(err) {
			return final(err)
		}
	}
	return apperr.Aborted(err, "the write collided with concurrent writes %d times and was not applied; retry it", db.maxAttempts)
}

// final is the error a transaction that will not be run again ends with:
// an unreachable database becomes apperr.Unavailable.
func final(err error) error {
	if IsUnavailable(err) && apperr.KindOf(err) == 0 {
		return unavailable(err)
	}
	return err
}

// ExecEvents runs one statement that writes rows and enqueues the events
// announcing them (a data-modifying WITH query ending in
// outbox.InsertSelect) as a transaction of its own: one round trip where
// InTx takes a BEGIN, the statements and a COMMIT. It retries and
// translates errors as InTx does, returns the number of events the
// statement enqueued (the rows of its last INSERT), and wakes the relay
// when there were any.
//
// Concurrent calls share their commits (groupcommit.go): a call that
// arrives while others are being sent goes with the next batch, whose
// statements commit together; each caller still gets its own statement's
// answer, as if it had gone alone.
func (db *DB) ExecEvents(ctx context.Context, sql string, args ...any) (int64, error) {
	return db.execGrouped(ctx, sql, args, nil, "")
}

// QueryEvents is ExecEvents for a statement whose last INSERT, of at most
// one event, returns a row (RETURNING): scan reads it, and ok is false
// when there was none (and so no event). scan may run more than once (a
// batch that collided is run again): it must only set what it reads.
//
// lockKey names the row the statement locks first and holds to the end of
// its batch (an agency's balance, say): a batch runs its statements in the
// order of their keys, so two batches in flight lock such rows in the same
// order and cannot deadlock on them.
func (db *DB) QueryEvents(ctx context.Context, lockKey string, scan func(pgx.Row) error, sql string, args ...any) (ok bool, err error) {
	n, err := db.execGrouped(ctx, sql, args, scan, lockKey)
	return n == 1, err
}

// execAlone runs one ExecEvents or QueryEvents statement as its own
// transaction.
func (db *DB) execAlone(ctx context.Context, sql string, args []any, scan func(pgx.Row) error) (int64, error) {
	var events int64
	err := db.retry(ctx, func() (int, error) {
		if scan != nil {
			n, err := scanned(scan(db.pool.QueryRow(ctx, sql, args...)))
			events = n
			return int(n), err
		}
		tag, err := db.pool.Exec(ctx, sql, args...)
		events = tag.RowsAffected()
		return int(events), err
	})
	return events, err
}

// scanned is the events a QueryEvents statement enqueued, from its scan's
// error: one if it returned its row, none if no row.
func scanned(err error) (int64, error) {
	switch {
	case err == nil:
		return 1, nil
	case errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	}
	return 0, err
}

// Tx is a transaction. It offers the query methods of pgx.Tx, not Commit or
// Rollback: InTx ends the transaction.
type Tx struct {
	tx     pgx.Tx
	events int
}

// Exec runs a statement.
func (t *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.tx.Exec(ctx, sql, args...)
}

// Query runs a query.
func (t *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return t.tx.Query(ctx, sql, args...)
}

// QueryRow runs a query that returns at most one row.
func (t *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return t.tx.QueryRow(ctx, sql, args...)
}

// SendBatch sends several queries in one round trip.
func (t *Tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return t.tx.SendBatch(ctx, b)
}

// CopyFrom bulk-inserts rows.
func (t *Tx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return t.tx.CopyFrom(ctx, table, columns, src)
}

// Enqueue adds e to the schema's outbox within the transaction; the relay
// publishes it after commit, as part of ctx's trace.
func (t *Tx) Enqueue(ctx context.Context, e outbox.Event) error {
	if err := outbox.Insert(ctx, t.tx, outbox.WithTrace(ctx, e)); err != nil {
		return Err(err, "enqueue event")
	}
	t.events++
	return nil
}

// EnqueueIn queues the insert of event e (with the trace context of ctx)
// into b, for an adapter that sends a transaction's statements in one
// round trip; the event is enqueued once b is sent in this transaction.
func (t *Tx) EnqueueIn(ctx context.Context, b *pgx.Batch, e outbox.Event) {
	outbox.QueueInsert(b, outbox.WithTrace(ctx, e))
	t.events++
}

// Querier is what an adapter's reads need: the pool or a Tx.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Err translates a driver error into the store port's vocabulary, wrapped
// with what was being done: no rows and foreign key violations become
// store.ErrNotFound, unique violations store.ErrDuplicate, an unreachable
// database apperr.Unavailable. Serialization failures and deadlocks pass
// through unchanged so that InTx can retry them.
func Err(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	case IsUnavailable(err):
		return unavailable(fmt.Errorf("%s: %w", what, err))
	}
	if c, ok := UniqueViolation(err); ok {
		return fmt.Errorf("%s (%s): %w", what, c, store.ErrDuplicate)
	}
	if c, ok := ForeignKeyViolation(err); ok {
		return fmt.Errorf("%s references a missing row (%s): %w", what, c, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func unavailable(cause error) error {
	return apperr.Unavailable(cause, "the database is unreachable right now; retry with exponential backoff")
}

// retryable reports a serialization failure or deadlock, which succeeds
// when the transaction is run again.
func retryable(err error) bool {
	code, ok := sqlState(err)
	return ok && (code == "40001" || code == "40P01")
}

// IsUnavailable reports an error that says the database cannot be reached
// or is going away, as opposed to one the statement caused: connection
// refused or reset, a server shutting down or starting up, too many
// connections.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if code, ok := sqlState(err); ok {
		return strings.HasPrefix(code, "08") || // connection exception
			strings.HasPrefix(code, "57P") || // admin, crash or immediate shutdown; cannot connect now
			strings.HasPrefix(code, "53") // insufficient resources (too many connections, out of memory)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "closed pool")
}

// UniqueViolation returns the name of the unique constraint err violates.
func UniqueViolation(err error) (constraint string, ok bool) {
	return violation(err, "23505")
}

// ForeignKeyViolation returns the name of the foreign key err violates.
func ForeignKeyViolation(err error) (constraint string, ok bool) {
	return violation(err, "23503")
}

func violation(err error, code string) (string, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == code {
		return pgErr.ConstraintName, true
	}
	return "", false
}

func sqlState(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code, true
	}
	return "", false
}

// Collect scans every row with scan into a slice of the given capacity (a
// page's limit), so that a page of rows is one allocation rather than a
// series of doublings. It closes rows.
func Collect[T any](rows pgx.Rows, capacity int, scan func(pgx.Row) (T, error)) ([]T, error) {
	defer rows.Close()
	out := make([]T, 0, capacity)
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
