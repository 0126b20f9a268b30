package floor

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Scheduler is the floor of bench schedules: the least a replica must do
// to start each due slot once. Every tick it claims the due rows of
// bench_floor.schedules with FOR UPDATE SKIP LOCKED, batch by batch while
// batches come back full, and in the claim's own transaction inserts each
// one's queued run into bench_floor.runs (the shape of actions.runs,
// Idempotency-Key schedule:{id}:{slot} included) and moves its
// next_run_at on. No credits, no previous-run check, no events, no
// second transaction: what it costs is what claiming and inserting cost.
type Scheduler struct {
	pool  *pgxpool.Pool
	tick  time.Duration
	batch int
}

// NewScheduler returns the floor scheduler on pool, looking every tick
// and claiming batch rows at a time.
func NewScheduler(pool *pgxpool.Pool, tick time.Duration, batch int) *Scheduler {
	return &Scheduler{pool: pool, tick: tick, batch: batch}
}

// FloorSchedulesDDL makes the floor's tables beside the actions schema:
// its schedules (the same ids, agencies, clients and parameters as
// Atrium's) and runs of the shape of actions.runs, with its defaults (the
// bench's origin column among them).
const FloorSchedulesDDL = `CREATE SCHEMA bench_floor;
CREATE TABLE bench_floor.schedules AS SELECT id, agency_id, client_id, action, params, next_run_at, claimed_until FROM actions.schedules;
ALTER TABLE bench_floor.schedules ADD PRIMARY KEY (id);
CREATE INDEX schedules_due ON bench_floor.schedules (next_run_at);
CREATE TABLE bench_floor.runs (LIKE actions.runs INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);`

// Run loops until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.tick)
	defer t.Stop()
	for {
		for {
			n, err := s.once(ctx)
			if err != nil && ctx.Err() == nil {
				return err
			}
			if err != nil || n < s.batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (s *Scheduler) once(ctx context.Context) (int, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	now := time.Now().UTC()
	rows, err := tx.Query(ctx, `SELECT id, agency_id, client_id, action, params, next_run_at FROM bench_floor.schedules
		WHERE next_run_at <= $1 AND (claimed_until IS NULL OR claimed_until < $1)
		ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, s.batch)
	if err != nil {
		return 0, err
	}
	type due struct {
		id, agency, client, action string
		params                     json.RawMessage
		slot                       time.Time
	}
	var claimed []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.id, &d.agency, &d.client, &d.action, &d.params, &d.slot); err != nil {
			rows.Close()
			return 0, err
		}
		claimed = append(claimed, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(claimed) == 0 {
		return 0, nil
	}
	var b pgx.Batch
	for _, d := range claimed {
		id, err := uuid.NewV7()
		if err != nil {
			return 0, err
		}
		b.Queue(`INSERT INTO bench_floor.runs (id, agency_id, client_id, action, status, status_code, cost_ai, cost_data,
			idempotency_key, request_hash, started_at, lease_until, created_at, async, request, schedule_id)
			VALUES ($1, $2, $3, $4, 'queued', 0, 2, 0, $5, '', $6, $7, $6, true, $8, $9)`,
			id, d.agency, d.client, d.action, "schedule:"+d.id+":"+strconv.FormatInt(d.slot.Unix(), 10), now, now.Add(15*time.Second), d.params, d.id)
		// A yearly slot: the next one is far off, as Atrium's is.
		b.Queue(`UPDATE bench_floor.schedules SET next_run_at = $2, claimed_until = NULL WHERE id = $1`, d.id, d.slot.AddDate(1, 0, 0))
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return 0, err
	}
	return len(claimed), tx.Commit(ctx)
}
