package outbox

import (
	"context"
	"embed"
	"io/fs"
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
func (p *Postgres) Claim(ctx context.Context, max int, publish func(context.Context, []Event) int) error {
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT seq, id, subject, payload, created_at, traceparent, tracestate FROM outbox
			ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`, max)
		if err != nil {
			return err
		}
		var (
			seqs   []int64
			events []Event
		)
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
		if len(events) == 0 {
			return nil
		}
		n := publish(ctx, events)
		if n == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `DELETE FROM outbox WHERE seq = ANY($1)`, seqs[:n])
		return err
	})
}
