package outbox

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the outbox table's migrations, applied in every service
// schema before the service's own (see pgdb.ServiceMigrations).
var Migrations = func() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	return sub
}()

// Insert adds e to the outbox table of tx's schema within tx. The table is
// defined once, in migrations/0001_outbox.sql.
func Insert(ctx context.Context, tx pgx.Tx, e Event) error {
	_, err := tx.Exec(ctx, insertSQL, e.ID, e.Subject, e.Payload, e.CreatedAt, e.TraceParent, e.TraceState)
	return err
}

const insertSQL = `INSERT INTO outbox (id, subject, payload, created_at, traceparent, tracestate) VALUES ($1, $2, $3, $4, $5, $6)`

// InsertSelect is an INSERT of one event into the outbox table, made once
// for each row of from (a table, or the name of a WITH query), with the
// event's columns as the parameters $first to $first+5 (InsertArgs): for
// one statement that writes rows and the event announcing them, the event
// only if the rows were written.
func InsertSelect(from string, first int) string {
	return fmt.Sprintf(`INSERT INTO outbox (id, subject, payload, created_at, traceparent, tracestate)
		SELECT $%d::uuid, $%d::text, $%d::bytea, $%d::timestamptz, $%d::text, $%d::text FROM %s`,
		first, first+1, first+2, first+3, first+4, first+5, from)
}

// InsertArgs are the parameters of InsertSelect for e, which carries the
// trace context of ctx (WithTrace).
func InsertArgs(ctx context.Context, e Event) []any {
	e = WithTrace(ctx, e)
	return []any{e.ID, e.Subject, e.Payload, e.CreatedAt, e.TraceParent, e.TraceState}
}

// InsertSelectEach is InsertSelect for several events, enqueued in the
// order given (the relay publishes by the outbox's sequence): the events'
// columns are six arrays, the parameters $first to $first+5
// (InsertArgsEach). An item created already published announces itself
// twice, item.created then item.published, in the statement that writes it.
func InsertSelectEach(from string, first int) string {
	return fmt.Sprintf(`INSERT INTO outbox (id, subject, payload, created_at, traceparent, tracestate)
		SELECT e.id, e.subject, e.payload, e.created_at, e.traceparent, e.tracestate
		FROM %s, unnest($%d::uuid[], $%d::text[], $%d::bytea[], $%d::timestamptz[], $%d::text[], $%d::text[])
			WITH ORDINALITY AS e(id, subject, payload, created_at, traceparent, tracestate, n)
		ORDER BY e.n`,
		from, first, first+1, first+2, first+3, first+4, first+5)
}

// InsertArgsEach are the parameters of InsertSelectEach for events, each
// carrying the trace context of ctx (WithTrace).
func InsertArgsEach(ctx context.Context, events []Event) []any {
	ids, subjects, payloads := make([]string, len(events)), make([]string, len(events)), make([][]byte, len(events))
	created, parents, states := make([]time.Time, len(events)), make([]string, len(events)), make([]string, len(events))
	for i, e := range events {
		e = WithTrace(ctx, e)
		ids[i], subjects[i], payloads[i], created[i], parents[i], states[i] = e.ID, e.Subject, e.Payload, e.CreatedAt, e.TraceParent, e.TraceState
	}
	return []any{ids, subjects, payloads, created, parents, states}
}

// QueueInsert queues the insert of e into b, for a transaction that sends
// its statements in one batch. The statements of a batch all run, so an
// event whose id is already waiting is left as it is rather than failing
// the batch: the transaction, which knows whether its other statements
// did what it meant, commits or rolls back the lot.
func QueueInsert(b *pgx.Batch, e Event) {
	b.Queue(insertSQL+` ON CONFLICT (id) DO NOTHING`, e.ID, e.Subject, e.Payload, e.CreatedAt, e.TraceParent, e.TraceState)
}

// Postgres is the outbox table of a service schema (the pool's search path).
type Postgres struct{ pool *pgxpool.Pool }

// NewPostgres returns the outbox of pool's schema.
func NewPostgres(pool *pgxpool.Pool) *Postgres { return &Postgres{pool: pool} }

// Backlog implements Source. Rows being published right now (locked by a
// claim) still count: they are not acknowledged yet.
func (p *Postgres) Backlog(ctx context.Context) (Backlog, error) {
	var (
		b      Backlog
		oldest *time.Time
	)
	if err := p.pool.QueryRow(ctx, `SELECT count(*), min(created_at) FROM outbox`).Scan(&b.Events, &oldest); err != nil {
		return Backlog{}, err
	}
	if oldest != nil {
		b.Oldest = *oldest
	}
	return b, nil
}

// Claim implements Source. Rows are locked with SKIP LOCKED, so several
// replicas can relay at once without publishing the same event twice.
//
// The claim takes two round trips: the oldest events are deleted and
// returned in one (with the BEGIN), and the deletion is committed once
// they are published; when publishing stops part way, the deletion is
// rolled back and only the published events are deleted. The commit does
// not wait for its WAL to reach the disk (synchronous_commit off for this
// transaction only): a crash right after it can only bring back events
// already published, which the stream's duplicate window drops by their
// id, as it would after a crash between publishing and deleting. The
// writes that enqueue events commit durably as before.
func (p *Postgres) Claim(ctx context.Context, max int, publish func(context.Context, []Event) int) error {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection left inside the transaction by an error is closed by
	// the pool, not reused.
	defer conn.Release()
	rollback := func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK") }
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = off")
	b.Queue(`DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED)
		RETURNING seq, id, subject, payload, created_at, traceparent, tracestate`, max)
	var (
		seqs   []int64
		events []Event
	)
	err = func() error {
		br := conn.SendBatch(ctx, b)
		defer br.Close()
		for range 2 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				seq int64
				e   Event
			)
			if err := rows.Scan(&seq, &e.ID, &e.Subject, &e.Payload, &e.CreatedAt, &e.TraceParent, &e.TraceState); err != nil {
				return err
			}
			seqs = append(seqs, seq)
			events = append(events, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return br.Close()
	}()
	if err != nil {
		rollback()
		return err
	}
	// Oldest first: RETURNING does not keep the subquery's order.
	order := make([]int, len(events))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(seqs[a], seqs[b]) })
	sortedSeqs, sorted := make([]int64, len(order)), make([]Event, len(order))
	for i, j := range order {
		sortedSeqs[i], sorted[i] = seqs[j], events[j]
	}
	n := 0
	if len(sorted) > 0 {
		n = publish(ctx, sorted)
	}
	if n == len(sorted) {
		_, err := conn.Exec(ctx, "COMMIT")
		return err
	}
	rollback()
	if n == 0 {
		return nil
	}
	_, err = conn.Exec(ctx, `DELETE FROM outbox WHERE seq = ANY($1)`, sortedSeqs[:n])
	return err
}
