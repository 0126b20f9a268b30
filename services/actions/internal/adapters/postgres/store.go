// Package postgres is the actions store on PostgreSQL through pgx. It owns
// the actions schema: credits, runs, the outbox, and the SEO cache's answers
// (seo_cache, shared by every replica); transactions and the outbox are
// platform/pgdb's. A reservation is one conditional UPDATE of
// the agency's balance row, so concurrent runs queue on that row and the
// balance cannot go below zero.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/seocache"
)

// Store is the PostgreSQL actions store.
type Store struct{ db *pgdb.DB }

// New returns a store on db, whose pool's search path must be the actions
// schema.
func New(db *pgdb.DB) *Store { return &Store{db: db} }

var (
	_ app.Store      = (*Store)(nil)
	_ seocache.Store = (*Store)(nil)
)

// querier is what reads need: the pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func balance(ctx context.Context, q querier, agencyID string) (app.Balance, error) {
	var b app.Balance
	err := q.QueryRow(ctx, `SELECT ai, data FROM credits WHERE agency_id = $1`, agencyID).Scan(&b.AI, &b.Data)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Balance{}, nil
	}
	return b, pgdb.Err(err, "read balance")
}

// Balance implements app.Store.
func (s *Store) Balance(ctx context.Context, agencyID string) (app.Balance, error) {
	return balance(ctx, s.db.Pool(), agencyID)
}

const runColumns = `id, agency_id, client_id, action, status, status_code, cost_ai, cost_data, data, writes, applied,
	coalesce(idempotency_key, ''), coalesce(request_hash, ''), started_at, finished_at, lease_until, provider_cost_nanousd, cached,
	request, async, attempts, created_at, coalesce(schedule_id::text, '')`

func scanRun(row pgx.Row) (app.Run, error) {
	var (
		r                   app.Run
		data, writes, input []byte
		finished            *time.Time
	)
	err := row.Scan(&r.ID, &r.AgencyID, &r.ClientID, &r.Action, &r.Status, &r.StatusCode, &r.Cost.AI, &r.Cost.Data,
		&data, &writes, &r.Applied, &r.IdempotencyKey, &r.RequestHash, &r.StartedAt, &finished, &r.LeaseUntil, &r.ProviderCost, &r.Cached,
		&input, &r.Async, &r.Attempts, &r.CreatedAt, &r.ScheduleID)
	if err != nil {
		return app.Run{}, err
	}
	if len(input) > 0 {
		if err := json.Unmarshal(input, &r.Input); err != nil {
			return app.Run{}, fmt.Errorf("run %s request: %w", r.ID, err)
		}
	}
	r.CreatedAt = r.CreatedAt.UTC()
	if len(data) > 0 {
		if err := json.Unmarshal(data, &r.Data); err != nil {
			return app.Run{}, fmt.Errorf("run %s data: %w", r.ID, err)
		}
	}
	if len(writes) > 0 {
		if err := json.Unmarshal(writes, &r.Writes); err != nil {
			return app.Run{}, fmt.Errorf("run %s writes: %w", r.ID, err)
		}
	}
	r.StartedAt, r.LeaseUntil = r.StartedAt.UTC(), r.LeaseUntil.UTC()
	if finished != nil {
		r.FinishedAt = finished.UTC()
	}
	return r, nil
}

func runs(ctx context.Context, q querier, what, sql string, args ...any) ([]app.Run, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, pgdb.Err(err, what)
	}
	out, err := pgdb.Collect(rows, 0, scanRun)
	return out, pgdb.Err(err, what)
}

// Run implements app.Store.
func (s *Store) Run(ctx context.Context, id string) (app.Run, error) {
	r, err := scanRun(s.db.Pool().QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, id))
	return r, pgdb.Err(err, "read run")
}

// UnappliedRuns implements app.Store.
func (s *Store) UnappliedRuns(ctx context.Context, before time.Time, limit int) ([]app.Run, error) {
	return runs(ctx, s.db.Pool(), "unapplied runs", `SELECT `+runColumns+` FROM runs
		WHERE status NOT IN ('pending', 'queued') AND NOT applied AND finished_at < $1 ORDER BY finished_at, id LIMIT $2`, before, limit)
}

// MarkApplied implements app.Store.
func (s *Store) MarkApplied(ctx context.Context, ids []string) error {
	// Planned with the ids (QueryExecModeExec): a plan cached while the
	// table was small would scan it whole once it is not.
	_, err := s.db.Pool().Exec(ctx, `UPDATE runs SET applied = true WHERE id = ANY($1)`, pgx.QueryExecModeExec, ids)
	return pgdb.Err(err, "mark runs applied")
}

// RenewLeases implements app.Store in one statement, by primary key. A
// recovery holding a run (ExpiredRuns' FOR UPDATE) makes the renewal wait
// for its commit, after which the run is no longer pending and is not
// renewed; a renewal committed first moves the lease, and recovery's
// lock, taken on the updated row, finds it no longer expired.
func (s *Store) RenewLeases(ctx context.Context, leases []app.Lease, until time.Time) ([]string, error) {
	ids, attempts := make([]string, len(leases)), make([]int32, len(leases))
	for i, l := range leases {
		ids[i], attempts[i] = l.RunID, int32(l.Attempt) //nolint:gosec // G115: a run's claims, two at most
	}
	rows, err := s.db.Pool().Query(ctx, `UPDATE runs SET lease_until = $3
		FROM unnest($1::uuid[], $2::int[]) AS l(id, attempts)
		WHERE runs.id = l.id AND runs.attempts = l.attempts AND runs.status = 'pending' RETURNING runs.id::text`, ids, attempts, until)
	if err != nil {
		return nil, pgdb.Err(err, "renew run leases")
	}
	renewed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return renewed, pgdb.Err(err, "renew run leases")
}

// ListRuns implements app.Store: runs_by_agency, newest first.
func (s *Store) ListRuns(ctx context.Context, agencyID string, f app.RunFilter) ([]app.Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs WHERE agency_id = $1`
	args := []any{agencyID}
	add := func(cond string, v any) {
		args = append(args, v)
		q += fmt.Sprintf(" AND %s $%d", cond, len(args))
	}
	if f.ClientID != "" {
		add("client_id =", f.ClientID)
	}
	if f.Action != "" {
		add("action =", f.Action)
	}
	if f.Status != "" {
		add("status =", f.Status)
	}
	if f.Before != "" {
		add("id <", f.Before)
	}
	if f.ScheduleID != "" {
		add("schedule_id =", f.ScheduleID)
	}
	args = append(args, f.Limit)
	q += fmt.Sprintf(" ORDER BY id DESC LIMIT $%d", len(args))
	return runs(ctx, s.db.Pool(), "list runs", q, args...)
}

// submitRun is SubmitRun's statement: the reservation (when the agency's
// count of queued runs leaves room), the run if it was reserved, and the
// event if the run was stored, returning the balance after.
var submitRun = `WITH reserve AS (
		UPDATE credits SET ai = ai - $5, data = data - $6, updated_at = now()
		WHERE agency_id = $2 AND ai >= $5 AND data >= $6
			AND coalesce((SELECT queued FROM queue_depth WHERE agency_id = $2), 0) < $13
		RETURNING ai, data),
	run AS (
		INSERT INTO runs (id, agency_id, client_id, action, status, status_code, cost_ai, cost_data,
			idempotency_key, request_hash, started_at, lease_until, created_at, async, request, schedule_id)
		SELECT $1::uuid, $2::uuid, $3::uuid, $4::text, 'queued', 0, $5::bigint, $6::bigint, $7::text, $8::text,
			$9::timestamptz, $10::timestamptz, $11::timestamptz, true, $12::jsonb, $14::uuid FROM reserve
		RETURNING id)
	` + outbox.InsertSelectEach("run", 15) + ` RETURNING (SELECT ai FROM reserve), (SELECT data FROM reserve)`

// SubmitRun implements app.Store in one statement, sent through
// pgdb.QueryEvents: concurrent submissions share a commit (one agency's
// reservations then follow each other within one transaction instead of
// queuing on its balance row across round trips), ordered by agency so
// that two batches in flight lock balances in the same order. Its commit
// waits for its flush, unlike StartRun's: a group's flush is shared.
// Measured (bench-actions --async, 32 clients): 1,013 submissions per
// second with BEGIN, one pipelined round trip and COMMIT; 2,135 so.
func (s *Store) SubmitRun(ctx context.Context, r app.Run, maxQueued int, events ...outbox.Event) (app.Balance, bool, error) {
	var input []byte
	if r.Input != nil {
		input, _ = json.Marshal(r.Input) // a request body, decoded from JSON
	}
	args := []any{r.ID, r.AgencyID, r.ClientID, r.Action, r.Cost.AI, r.Cost.Data, nullIfEmpty(r.IdempotencyKey), nullIfEmpty(r.RequestHash),
		r.StartedAt, r.LeaseUntil, r.CreatedAt, input, maxQueued, nullIfEmpty(r.ScheduleID)}
	var b app.Balance
	ok, err := s.db.QueryEvents(ctx, r.AgencyID, func(row pgx.Row) error { return row.Scan(&b.AI, &b.Data) }, submitRun,
		append(args, outbox.InsertArgsEach(ctx, events)...)...)
	if err != nil {
		return app.Balance{}, false, pgdb.Err(err, "submit run")
	}
	return b, ok, nil
}

// QueuedTotal implements app.Store: the sum of the agencies' counts that
// the triggers keep, not a scan of the queue.
func (s *Store) QueuedTotal(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.Pool().QueryRow(ctx, `SELECT coalesce(sum(queued), 0)::bigint FROM queue_depth`).Scan(&n)
	return n, pgdb.Err(err, "count queued runs")
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *pgdb.Tx) error { return fn(tx{t}) })
}

type tx struct{ *pgdb.Tx }

func (t tx) Balance(ctx context.Context, agencyID string) (app.Balance, error) {
	return balance(ctx, t, agencyID)
}

// AddCredits takes the common path, an agency with a balance and enough
// in it, in one statement; only a first grant or a refusal reads more.
func (t tx) AddCredits(ctx context.Context, agencyID string, d app.Balance) (app.Balance, bool, error) {
	var b app.Balance
	err := t.QueryRow(ctx, `UPDATE credits SET ai = ai + $2, data = data + $3, updated_at = now()
		WHERE agency_id = $1 AND ai + $2 >= 0 AND data + $3 >= 0 RETURNING ai, data`, agencyID, d.AI, d.Data).Scan(&b.AI, &b.Data)
	if err == nil {
		return b, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return app.Balance{}, false, pgdb.Err(err, "change balance")
	}
	if b, err = balance(ctx, t, agencyID); err != nil {
		return app.Balance{}, false, err
	}
	if b.AI+d.AI < 0 || b.Data+d.Data < 0 {
		return b, false, nil
	}
	// No balance yet: the first grant creates it (a concurrent first grant
	// is added to).
	err = t.QueryRow(ctx, `INSERT INTO credits AS c (agency_id, ai, data, updated_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (agency_id) DO UPDATE SET ai = c.ai + EXCLUDED.ai, data = c.data + EXCLUDED.data, updated_at = now()
		RETURNING ai, data`, agencyID, d.AI, d.Data).Scan(&b.AI, &b.Data)
	return b, err == nil, pgdb.Err(err, "create balance")
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

const insertRun = `INSERT INTO runs (id, agency_id, client_id, action, status, status_code, cost_ai, cost_data,
	idempotency_key, request_hash, started_at, lease_until, created_at, async, request, schedule_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`

func insertRunArgs(r app.Run) []any {
	var input []byte
	if r.Input != nil {
		input, _ = json.Marshal(r.Input) // a request body, decoded from JSON
	}
	return []any{r.ID, r.AgencyID, r.ClientID, r.Action, r.Status, r.StatusCode, r.Cost.AI, r.Cost.Data,
		nullIfEmpty(r.IdempotencyKey), nullIfEmpty(r.RequestHash), r.StartedAt, r.LeaseUntil, r.CreatedAt, r.Async, input, nullIfEmpty(r.ScheduleID)}
}

func (t tx) InsertRun(ctx context.Context, r app.Run) error {
	_, err := t.Exec(ctx, insertRun, insertRunArgs(r)...)
	return pgdb.Err(err, "insert run")
}

// StartRun inserts the run and takes its cost in one round trip, the
// balance row last (every run of the agency queues on it).
//
// The transaction that starts a run commits without waiting for its WAL to
// reach disk (synchronous_commit off for it alone): it holds the agency's
// balance row from the reservation to the commit (measured: 0.6 ms per
// reservation at 32 concurrent actions, most of it the commit's flush).
// Nothing a caller sees depends on this commit alone: the outcome's
// transaction, which commits synchronously, comes after it in the same WAL,
// so once the outcome is durable so is the reservation; a crash of
// PostgreSQL between the two loses the pending run and its reservation
// together, and the request fails with nothing charged.
func (t tx) StartRun(ctx context.Context, r app.Run) (app.Balance, bool, error) {
	return t.startRun(ctx, r, nil, nil)
}

// QueueRun is StartRun with the agency's count of queued runs (which the
// triggers of migration 0006 keep) read in the same round trip: a
// submission is one round trip between its BEGIN and its COMMIT. When the
// queue is full the run has been inserted and reserved all the same, and
// the caller's rollback undoes it, as for a run short of credits.
func (t tx) QueueRun(ctx context.Context, r app.Run, maxQueued int, events ...outbox.Event) (app.Balance, int, bool, error) {
	var queued int64
	b, ok, err := t.startRun(ctx, r, func(batch *pgx.Batch) {
		batch.Queue(`SELECT coalesce((SELECT queued FROM queue_depth WHERE agency_id = $1), 0)`, r.AgencyID).
			QueryRow(func(row pgx.Row) error { return row.Scan(&queued) })
	}, events)
	switch {
	case err != nil:
		return app.Balance{}, 0, false, err
	case queued >= int64(maxQueued):
		return app.Balance{}, int(queued), false, nil
	}
	return b, int(queued), ok, nil
}

// startRun is StartRun, with the statements first adds before the run's.
func (t tx) startRun(ctx context.Context, r app.Run, first func(*pgx.Batch), events []outbox.Event) (app.Balance, bool, error) {
	var (
		b        app.Balance
		reserved bool
	)
	batch := &pgx.Batch{}
	batch.Queue(`SET LOCAL synchronous_commit TO off`)
	if first != nil {
		first(batch)
	}
	batch.Queue(insertRun, insertRunArgs(r)...)
	batch.Queue(`UPDATE credits SET ai = ai - $2, data = data - $3, updated_at = now()
		WHERE agency_id = $1 AND ai >= $2 AND data >= $3 RETURNING ai, data`, r.AgencyID, r.Cost.AI, r.Cost.Data).
		QueryRow(func(row pgx.Row) error {
			err := row.Scan(&b.AI, &b.Data)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			reserved = err == nil
			return err
		})
	// A run short of credits is rolled back with its events.
	for _, e := range events {
		t.EnqueueIn(ctx, batch, e)
	}
	if err := t.SendBatch(ctx, batch).Close(); err != nil {
		return app.Balance{}, false, pgdb.Err(err, "start run")
	}
	if reserved {
		return b, true, nil
	}
	// Short of credits, or no balance yet (enough for a run that costs
	// nothing).
	b, err := balance(ctx, t, r.AgencyID)
	return b, err == nil && r.Cost.AI == 0 && r.Cost.Data == 0, err
}

// FinishRun records the outcome, the refund and the event in one round
// trip: one statement for the run and the balance (the refund applies only
// if the run was still pending), and the event's insert beside it.
func (t tx) FinishRun(ctx context.Context, r app.Run, refund action.Cost, event outbox.Event) (bool, app.Balance, error) {
	data, err := json.Marshal(r.Data)
	if err != nil {
		return false, app.Balance{}, fmt.Errorf("run %s data: %w: %w", r.ID, app.ErrUnstorable, err)
	}
	writes, err := json.Marshal(r.Writes)
	if err != nil {
		return false, app.Balance{}, fmt.Errorf("run %s writes: %w: %w", r.ID, app.ErrUnstorable, err)
	}
	var (
		finished int
		b        app.Balance
	)
	batch := &pgx.Batch{}
	// The main query sees the balance as it was before the CTEs' updates:
	// the refunded one comes from the refund's RETURNING.
	batch.Queue(`WITH run AS (
			UPDATE runs SET status = $2, status_code = $3, data = $4, writes = $5, finished_at = $6, applied = false,
				provider_cost_nanousd = $10, cached = $11
			WHERE id = $1 AND status IN ('queued', 'pending') AND attempts = $12 RETURNING agency_id),
		refund AS (
			UPDATE credits SET ai = ai + $7, data = data + $8, updated_at = now()
			WHERE agency_id = (SELECT agency_id FROM run) AND ($7 <> 0 OR $8 <> 0) RETURNING ai, data)
		SELECT (SELECT count(*) FROM run)::int,
			coalesce((SELECT ai FROM refund), (SELECT ai FROM credits WHERE agency_id = $9), 0),
			coalesce((SELECT data FROM refund), (SELECT data FROM credits WHERE agency_id = $9), 0)`,
		r.ID, r.Status, r.StatusCode, data, writes, r.FinishedAt, refund.AI, refund.Data, r.AgencyID, int64(r.ProviderCost), r.Cached, r.Attempts).
		QueryRow(func(row pgx.Row) error { return row.Scan(&finished, &b.AI, &b.Data) })
	t.EnqueueIn(ctx, batch, event)
	if err := t.SendBatch(ctx, batch).Close(); err != nil {
		if dataException(err) {
			return false, app.Balance{}, fmt.Errorf("finish run %s: %w: %w", r.ID, app.ErrUnstorable, err)
		}
		return false, app.Balance{}, pgdb.Err(err, "finish run")
	}
	return finished == 1, b, nil
}

// QueuedRuns reads the agency's count, which triggers on runs keep
// (migration 0006): one index probe, however long the queue.
func (t tx) QueuedRuns(ctx context.Context, agencyID string, upTo int) (int, error) {
	var n int64
	err := t.QueryRow(ctx, `SELECT coalesce((SELECT queued FROM queue_depth WHERE agency_id = $1), 0)`, agencyID).Scan(&n)
	return int(min(n, int64(upTo))), pgdb.Err(err, "count queued runs")
}

// claimRun picks the next queued run fairly and makes it pending, in one
// statement. agencies is a loose index scan over runs_queued_by_agency: the
// agencies with a queue, one index probe each, however long their queues.
// Of each, the oldest queued run is locked (one another claim holds is
// skipped for the next); of those, the run of the agency with the fewest
// running runs wins, then that of the agency served longest ago
// (queue_turns, which the claim updates), then the oldest. An agency with
// thousands queued thus holds back another's single run by one worker
// turn at most.
const claimRun = `WITH RECURSIVE agencies AS (
		(SELECT agency_id FROM runs WHERE status = 'queued' ORDER BY agency_id LIMIT 1)
		UNION ALL
		SELECT (SELECT r.agency_id FROM runs r WHERE r.status = 'queued' AND r.agency_id > a.agency_id ORDER BY r.agency_id LIMIT 1)
		FROM agencies a WHERE a.agency_id IS NOT NULL),
	pick AS (
		SELECT h.id AS pick_id FROM agencies a LEFT JOIN queue_turns qt ON qt.agency_id = a.agency_id CROSS JOIN LATERAL (
			SELECT id, created_at FROM runs q WHERE q.status = 'queued' AND q.agency_id = a.agency_id
			ORDER BY q.created_at, q.id LIMIT 1 FOR UPDATE SKIP LOCKED) h
		WHERE a.agency_id IS NOT NULL
		ORDER BY (SELECT count(*) FROM runs p WHERE p.status = 'pending' AND p.agency_id = a.agency_id),
			qt.served_at NULLS FIRST, h.created_at, h.id
		LIMIT 1),
	claimed AS (
		UPDATE runs SET status = 'pending', started_at = $1, lease_until = $2, attempts = attempts + 1
		FROM pick WHERE runs.id = pick.pick_id RETURNING ` + runColumns + `),
	turn AS (
		INSERT INTO queue_turns (agency_id, served_at) SELECT agency_id, $1 FROM claimed
		ON CONFLICT (agency_id) DO UPDATE SET served_at = EXCLUDED.served_at)
	SELECT * FROM claimed`

func (t tx) ClaimRun(ctx context.Context, now, lease time.Time) (app.Run, bool, error) {
	r, err := scanRun(t.QueryRow(ctx, claimRun, now, lease))
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Run{}, false, nil
	}
	return r, err == nil, pgdb.Err(err, "claim a queued run")
}

func (t tx) RequeueRun(ctx context.Context, id string, attempt int) (bool, error) {
	tag, err := t.Exec(ctx, `UPDATE runs SET status = 'queued' WHERE id = $1 AND status = 'pending' AND attempts = $2`, id, attempt)
	return tag.RowsAffected() == 1, pgdb.Err(err, "queue a run again")
}

func (t tx) RunByKey(ctx context.Context, agencyID, key string) (app.Run, error) {
	r, err := scanRun(t.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE agency_id = $1 AND idempotency_key = $2`, agencyID, key))
	return r, pgdb.Err(err, "read run by idempotency key")
}

func (t tx) ForgetKey(ctx context.Context, runID string) error {
	_, err := t.Exec(ctx, `UPDATE runs SET idempotency_key = NULL, request_hash = NULL WHERE id = $1`, runID)
	return pgdb.Err(err, "forget idempotency key")
}

func (t tx) ExpiredRuns(ctx context.Context, now time.Time, limit int) ([]app.Run, error) {
	return runs(ctx, t, "expired runs", `SELECT `+runColumns+` FROM runs
		WHERE status = 'pending' AND lease_until < $1 ORDER BY lease_until, id LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
}

// dataException reports PostgreSQL refusing a value it was given (SQLSTATE
// class 22): jsonb refuses \u0000 with 22P05, and no retry changes that.
func dataException(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22")
}

// purgeAtOnce is how many expired SEO answers a write removes.
const purgeAtOnce = 16

// CachedAnswer implements seocache.Store: one indexed read by key.
func (s *Store) CachedAnswer(ctx context.Context, key string, now time.Time) (seocache.Answer, bool, error) {
	var a seocache.Answer
	err := s.db.Pool().QueryRow(ctx, `SELECT value, stored_at, expires_at FROM seo_cache WHERE key = $1 AND expires_at > $2`, key, now).
		Scan(&a.Value, &a.StoredAt, &a.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return seocache.Answer{}, false, nil
	}
	if err != nil {
		return seocache.Answer{}, false, pgdb.Err(err, "read the SEO cache")
	}
	a.StoredAt, a.ExpiresAt = a.StoredAt.UTC(), a.ExpiresAt.UTC()
	return a, true, nil
}

// CacheAnswer implements seocache.Store in one round trip: the answer
// upserted, and up to purgeAtOnce expired ones deleted (rows another
// writer is deleting are skipped, so concurrent writers never wait on
// each other's purge).
func (s *Store) CacheAnswer(ctx context.Context, key string, a seocache.Answer) error {
	batch := &pgx.Batch{}
	batch.Queue(`INSERT INTO seo_cache (key, value, stored_at, expires_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at`,
		key, a.Value, a.StoredAt, a.ExpiresAt)
	batch.Queue(`DELETE FROM seo_cache WHERE key IN (
		SELECT key FROM seo_cache WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, a.StoredAt, purgeAtOnce)
	return pgdb.Err(s.db.Pool().SendBatch(ctx, batch).Close(), "write the SEO cache")
}

// Branding implements app.BrandingStore.
func (s *Store) Branding(ctx context.Context, agencyID string) (action.Branding, bool, error) {
	var b action.Branding
	var logo *string
	err := s.db.Pool().QueryRow(ctx, `SELECT name, logo_asset_id::text, primary_colour, accent_colour FROM report_branding WHERE agency_id = $1`, agencyID).
		Scan(&b.Name, &logo, &b.Primary, &b.Accent)
	if errors.Is(err, pgx.ErrNoRows) {
		return action.Branding{}, false, nil
	}
	if err != nil {
		return action.Branding{}, false, pgdb.Err(err, "read the agency's branding")
	}
	if logo != nil {
		b.LogoAssetID = *logo
	}
	return b, true, nil
}

// PutBranding implements app.BrandingStore.
func (s *Store) PutBranding(ctx context.Context, agencyID string, b action.Branding, events ...outbox.Event) error {
	var logo *string
	if b.LogoAssetID != "" {
		logo = &b.LogoAssetID
	}
	return s.withEvents(ctx, events, "write the agency's branding", func(q pgdb.Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO report_branding (agency_id, name, logo_asset_id, primary_colour, accent_colour) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (agency_id) DO UPDATE SET name = EXCLUDED.name, logo_asset_id = EXCLUDED.logo_asset_id,
			primary_colour = EXCLUDED.primary_colour, accent_colour = EXCLUDED.accent_colour`,
			agencyID, b.Name, logo, b.Primary, b.Accent)
		return err
	})
}

// withEvents runs write and enqueues events in one transaction (write
// alone, on the pool, when there are none); what names the write in its
// error.
func (s *Store) withEvents(ctx context.Context, events []outbox.Event, what string, write func(q pgdb.Querier) error) error {
	if len(events) == 0 {
		return pgdb.Err(write(s.db.Pool()), what)
	}
	return s.db.InTx(ctx, func(t *pgdb.Tx) error {
		if err := write(t); err != nil {
			return pgdb.Err(err, what)
		}
		for _, e := range events {
			if err := t.Enqueue(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

var _ app.ShareStore = (*Store)(nil)

const shareColumns = `id::text, agency_id::text, client_id::text, run_id::text, token_hash, html_name, pdf_name, created_at, expires_at, revoked_at`

func scanShare(row pgx.Row) (action.Share, error) {
	var sh action.Share
	var revoked *time.Time
	err := row.Scan(&sh.ID, &sh.AgencyID, &sh.ClientID, &sh.RunID, &sh.TokenHash, &sh.HTMLName, &sh.PDFName, &sh.CreatedAt, &sh.ExpiresAt, &revoked)
	if revoked != nil {
		sh.RevokedAt = *revoked
	}
	return sh, err
}

// CreateShare implements app.ShareStore.
func (s *Store) CreateShare(ctx context.Context, sh action.Share, events ...outbox.Event) error {
	return s.withEvents(ctx, events, "store the report's share link", func(q pgdb.Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO report_shares (id, agency_id, client_id, run_id, token_hash, html_name, pdf_name, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			sh.ID, sh.AgencyID, sh.ClientID, sh.RunID, sh.TokenHash, sh.HTMLName, sh.PDFName, sh.CreatedAt, sh.ExpiresAt)
		return err
	})
}

// ListShares implements app.ShareStore.
func (s *Store) ListShares(ctx context.Context, agencyID string, f app.ShareFilter) ([]action.Share, error) {
	rows, err := s.db.Pool().Query(ctx, `SELECT `+shareColumns+` FROM report_shares
		WHERE agency_id = $1 AND ($2 = '' OR client_id::text = $2) AND ($3 = '' OR run_id::text = $3) AND ($4 = '' OR id < $4::uuid)
		ORDER BY id DESC LIMIT $5`, agencyID, f.ClientID, f.RunID, f.Before, f.Limit)
	if err != nil {
		return nil, pgdb.Err(err, "list the report share links")
	}
	defer rows.Close()
	var out []action.Share
	for rows.Next() {
		sh, err := scanShare(rows)
		if err != nil {
			return nil, pgdb.Err(err, "read a report share link")
		}
		out = append(out, sh)
	}
	return out, pgdb.Err(rows.Err(), "list the report share links")
}

// RevokeShare implements app.ShareStore.
func (s *Store) RevokeShare(ctx context.Context, agencyID, id string, at time.Time, events ...outbox.Event) (action.Share, error) {
	var sh action.Share
	err := s.withEvents(ctx, events, "revoke the report share link", func(q pgdb.Querier) error {
		var err error
		sh, err = scanShare(q.QueryRow(ctx, `UPDATE report_shares SET revoked_at = COALESCE(revoked_at, $3)
		WHERE agency_id = $1 AND id = $2 RETURNING `+shareColumns, agencyID, id, at))
		return err
	})
	if errors.Is(err, app.ErrNotFound) {
		return action.Share{}, apperr.NotFound("no report share %s", id)
	}
	return sh, err
}

// ShareByToken implements app.ShareStore.
func (s *Store) ShareByToken(ctx context.Context, hash []byte) (action.Share, bool, error) {
	sh, err := scanShare(s.db.Pool().QueryRow(ctx, `SELECT `+shareColumns+` FROM report_shares WHERE token_hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return action.Share{}, false, nil
	}
	if err != nil {
		return action.Share{}, false, pgdb.Err(err, "read the report share link")
	}
	return sh, true, nil
}
