package outbox

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Insert adds e to the outbox table of tx's schema within tx. The table is
// created by each service's migrations:
//
//	CREATE TABLE outbox (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
//		id uuid NOT NULL UNIQUE, subject text NOT NULL, payload bytea NOT NULL,
//		created_at timestamptz NOT NULL)
func Insert(ctx context.Context, tx pgx.Tx, e Event) error {
	_, err := tx.Exec(ctx, `INSERT INTO outbox (id, subject, payload, created_at) VALUES ($1, $2, $3, $4)`,
		e.ID, e.Subject, e.Payload, e.CreatedAt)
	return err
}

// Postgres is the outbox table of a service schema (the pool's search path).
type Postgres struct{ pool *pgxpool.Pool }

// NewPostgres returns the outbox of pool's schema.
func NewPostgres(pool *pgxpool.Pool) *Postgres { return &Postgres{pool: pool} }

// Claim implements Source. Rows are locked with SKIP LOCKED, so several
// replicas can relay at once without publishing the same event twice.
func (p *Postgres) Claim(ctx context.Context, max int, publish func(context.Context, []Event) int) error {
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT seq, id, subject, payload, created_at FROM outbox
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
			if err := rows.Scan(&seq, &e.ID, &e.Subject, &e.Payload, &e.CreatedAt); err != nil {
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
