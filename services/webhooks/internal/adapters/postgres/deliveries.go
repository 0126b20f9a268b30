package postgres

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

const deliveryCols = `id, endpoint_id, tenant_kind, tenant_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at,
	traceparent, tracestate`

// attempt is an attempt as the attempts column holds it.
type attempt struct {
	At           time.Time `json:"at"`
	StatusCode   int       `json:"status_code"`
	DurationUS   int64     `json:"duration_us"`
	ResponseBody string    `json:"response_body"`
	Error        string    `json:"error"`
}

func scanDelivery(row pgx.Row) (app.Delivery, error) {
	var d app.Delivery
	err := scanDeliveryInto(row, &d, nil)
	return d, err
}

// scanDeliveryInto scans deliveryCols into d; more, if set, adds the
// destinations of the columns that follow them.
func scanDeliveryInto(row pgx.Row, d *app.Delivery, more func([]any) []any) error {
	var (
		kind     string
		status   string
		attempts []attempt
		next     *time.Time
	)
	dest := []any{&d.ID, &d.EndpointID, &kind, &d.Tenant.ID, &d.EventID, &d.EventType, &d.Body, &status, &attempts, &next, &d.CreatedAt,
		&d.TraceParent, &d.TraceState}
	if more != nil {
		dest = more(dest)
	}
	if err := row.Scan(dest...); err != nil {
		return err
	}
	d.Tenant.Kind, d.Status = eventtypes.Owner(kind), app.DeliveryStatus(status)
	for _, a := range attempts {
		d.Attempts = append(d.Attempts, app.Attempt{At: a.At, StatusCode: a.StatusCode, Duration: time.Duration(a.DurationUS) * time.Microsecond,
			ResponseBody: a.ResponseBody, Error: a.Error})
	}
	if next != nil {
		d.NextAttemptAt = *next
	}
	return nil
}

// AddDeliveries implements app.DeliveryStore: one statement for all, which
// skips the deliveries already there and those whose endpoint is gone, and
// makes those of an endpoint held back due when its hold ends (greatest
// ignores a NULL held_until).
func (s *Store) AddDeliveries(ctx context.Context, ds []app.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, d := range ds {
		b.Queue(`INSERT INTO deliveries (id, endpoint_id, tenant_kind, tenant_id, event_id, event_type, body, status, next_attempt_at, created_at,
				traceparent, tracestate)
			SELECT $1, $2, $3, $4, $5, $6, $7, 'pending', greatest($8::timestamptz, e.held_until), $9, $10, $11 FROM endpoints e WHERE e.id = $2
			ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
			d.ID, d.EndpointID, string(d.Tenant.Kind), d.Tenant.ID, d.EventID, d.EventType, d.Body, d.NextAttemptAt, d.CreatedAt,
			d.TraceParent, d.TraceState)
	}
	// One round trip, one implicit transaction: all or none.
	err := s.db.Pool().SendBatch(ctx, b).Close()
	return pgdb.Err(err, "add deliveries")
}

// Claim implements app.DeliveryStore, in one statement that reads the
// due index in order and stops: the oldest due candidates (a few times
// limit) of the endpoints the bound does not exclude are locked with SKIP
// LOCKED, so that concurrent claims take disjoint rows, numbered per
// endpoint, and those within each endpoint's allowance are leased, each
// with its endpoint. The endpoints held back now (a range of their own
// index, evaluated once) are left out like the full ones. Nothing in it
// counts across the table: a queue table
// updated a thousand times a second holds many dead index entries until
// it is vacuumed, which a plain index scan learns to skip and a count
// would visit again each time.
func (s *Store) Claim(ctx context.Context, now time.Time, limit int, bound app.Bound, lease time.Duration) ([]app.Due, error) {
	full := bound.Full()
	if full == nil {
		full = []string{}
	}
	// The allowance of each endpoint that holds some but not all it may.
	var partial []string
	var allows []int32
	for e := range bound.Held {
		if n := bound.Allows(e); n > 0 && bound.PerEndpoint > 0 {
			partial, allows = append(partial, e), append(allows, int32(min(n, math.MaxInt32))) //nolint:gosec // bounded
		}
	}
	per := bound.PerEndpoint
	if per <= 0 {
		per = math.MaxInt32
	}
	var ds []app.Due
	err := s.unsynced(ctx, func(rows pgx.Rows) error {
		var err error
		ds, err = pgdb.Collect(rows, limit, scanDue)
		return err
	}, `WITH candidates AS (
			SELECT id, endpoint_id, next_attempt_at FROM deliveries
			WHERE status = 'pending' AND next_attempt_at <= $1 AND (leased_until IS NULL OR leased_until <= $1)
				AND endpoint_id <> ALL($4::uuid[])
				AND endpoint_id <> ALL(ARRAY(SELECT id FROM endpoints WHERE held_until > $1))
			ORDER BY next_attempt_at, id LIMIT $5
			FOR UPDATE SKIP LOCKED),
		chosen AS (
			SELECT id FROM (
				SELECT c.id, c.next_attempt_at,
					row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.id) AS place,
					coalesce(a.allows, $8) AS allows
				FROM candidates c LEFT JOIN unnest($6::uuid[], $7::int[]) AS a(endpoint_id, allows) USING (endpoint_id)) numbered
			WHERE place <= allows ORDER BY next_attempt_at, id LIMIT $3)
		UPDATE deliveries d SET leased_until = $2 FROM endpoints e
		WHERE d.id IN (SELECT id FROM chosen) AND e.id = d.endpoint_id
		RETURNING `+prefixed("d", deliveryCols)+`, `+prefixed("e", endpointCols),
		now, now.Add(lease), limit, full, 4*limit+16, partial, allows, per)
	if err != nil {
		return nil, pgdb.Err(err, "claim deliveries")
	}
	// RETURNING does not keep the subquery's order.
	slices.SortFunc(ds, func(a, b app.Due) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return ds, nil
}

// scanDue scans a delivery's columns followed by its endpoint's.
func scanDue(row pgx.Row) (app.Due, error) {
	var (
		d  app.Due
		es endpointScan
	)
	err := scanDeliveryInto(row, &d.Delivery, func(dest []any) []any { return append(dest, es.dest()...) })
	if err != nil {
		return app.Due{}, err
	}
	d.Endpoint, err = es.finish()
	return d, err
}

// prefixed qualifies each of a list of columns with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// RecordAttempts implements app.DeliveryStore: one statement for the
// batch, its own transaction.
func (s *Store) RecordAttempts(ctx context.Context, rs []app.AttemptRecord) error {
	if len(rs) == 0 {
		return nil
	}
	ids, statuses := make([]string, len(rs)), make([]string, len(rs))
	attempts, nexts := make([][]byte, len(rs)), make([]*time.Time, len(rs))
	for i, r := range rs {
		a := r.Attempt
		b, err := json.Marshal([]attempt{{At: a.At, StatusCode: a.StatusCode, DurationUS: a.Duration.Microseconds(), ResponseBody: a.ResponseBody, Error: a.Error}})
		if err != nil {
			return err
		}
		ids[i], statuses[i], attempts[i] = r.ID, string(r.Status), b
		if r.Status == app.Pending {
			nexts[i] = &r.Next
		}
	}
	err := s.unsynced(ctx, nil, `UPDATE deliveries d SET attempts = d.attempts || r.attempt, status = r.status,
			next_attempt_at = r.next, leased_until = NULL
		FROM unnest($1::uuid[], $2::jsonb[], $3::text[], $4::timestamptz[]) AS r(id, attempt, status, next)
		WHERE d.id = r.id`, ids, attempts, statuses, nexts)
	return pgdb.Err(err, "record attempts")
}

// unsynced runs one statement in a transaction of its own whose commit
// does not wait for its WAL to reach the disk (synchronous_commit off for
// it alone), in one round trip; read, if set, reads the rows it returns.
// It is for the deliverer's own bookkeeping, where a write lost in a
// crash of PostgreSQL (the last fraction of a second of them) costs a
// delivery sent again, never one lost: a claim's lease (the delivery is
// claimable again) and an attempt's record (the delivery is attempted
// again, with the same webhook-id, which receivers deduplicate on). The
// fan-out's writes, which the consumer acknowledges events after, commit
// durably.
func (s *Store) unsynced(ctx context.Context, read func(pgx.Rows) error, sql string, args ...any) error {
	conn, err := s.db.Pool().Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection left inside the transaction by an error is closed by
	// the pool, not reused.
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = off")
	b.Queue(sql, args...)
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	err = func() error {
		for range 2 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if read == nil {
			_, err := br.Exec()
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		return read(rows)
	}()
	if err == nil {
		_, err = br.Exec() // COMMIT
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
	return err
}

// Delivery implements app.DeliveryStore.
func (s *Store) Delivery(ctx context.Context, t app.Tenant, endpointID, id string) (app.Delivery, error) {
	d, err := scanDelivery(s.db.Pool().QueryRow(ctx, `SELECT `+deliveryCols+` FROM deliveries
		WHERE id = $1 AND endpoint_id = $2 AND tenant_kind = $3 AND tenant_id = $4`, id, endpointID, string(t.Kind), t.ID))
	return d, pgdb.Err(err, "delivery "+id)
}

// Deliveries implements app.DeliveryStore: newest first by id, the cursor
// the last id of a page.
func (s *Store) Deliveries(ctx context.Context, t app.Tenant, endpointID string, f app.DeliveryFilter) (app.DeliveryPage, error) {
	var after *string
	if f.After != "" {
		after = &f.After
	}
	var status *string
	if f.Status != "" {
		st := string(f.Status)
		status = &st
	}
	rows, err := s.db.Pool().Query(ctx, `SELECT `+deliveryCols+` FROM deliveries
		WHERE endpoint_id = $1 AND tenant_kind = $2 AND tenant_id = $3
			AND ($4::uuid IS NULL OR id < $4) AND ($5::text IS NULL OR status = $5)
		ORDER BY id DESC LIMIT $6`, endpointID, string(t.Kind), t.ID, after, status, f.Limit+1)
	if err != nil {
		return app.DeliveryPage{}, pgdb.Err(err, "list deliveries")
	}
	ds, err := pgdb.Collect(rows, f.Limit+1, scanDelivery)
	if err != nil {
		return app.DeliveryPage{}, pgdb.Err(err, "list deliveries")
	}
	var page app.DeliveryPage
	if len(ds) > f.Limit {
		ds = ds[:f.Limit]
		page.Next = ds[len(ds)-1].ID
	}
	page.Deliveries = ds
	return page, nil
}

// Resend implements app.DeliveryStore.
func (s *Store) Resend(ctx context.Context, t app.Tenant, endpointID, id string, now time.Time) (app.Delivery, error) {
	d, err := scanDelivery(s.db.Pool().QueryRow(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = $5, leased_until = NULL
		WHERE id = $1 AND endpoint_id = $2 AND tenant_kind = $3 AND tenant_id = $4 RETURNING `+deliveryCols,
		id, endpointID, string(t.Kind), t.ID, now))
	return d, pgdb.Err(err, "resend delivery "+id)
}

// Recover implements app.DeliveryStore.
func (s *Store) Recover(ctx context.Context, t app.Tenant, endpointID string, since, until, now time.Time) (int, error) {
	tag, err := s.db.Pool().Exec(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = $6, leased_until = NULL
		WHERE endpoint_id = $1 AND tenant_kind = $2 AND tenant_id = $3 AND status = 'failed' AND created_at >= $4 AND created_at < $5`,
		endpointID, string(t.Kind), t.ID, since, until, now)
	if err != nil {
		return 0, pgdb.Err(err, "recover deliveries")
	}
	return int(tag.RowsAffected()), nil
}

// Hold implements app.DeliveryStore, in one statement: the endpoint's
// hold, and its deliveries due before the hold ends pushed to its end. A
// lost hold costs nothing but the deliveries coming due sooner, so it does
// not wait for the disk.
func (s *Store) Hold(ctx context.Context, endpointID string, now, until time.Time) (int, error) {
	var n int
	err := s.unsynced(ctx, func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			n++
		}
		return rows.Err()
	}, `WITH held AS (
			UPDATE endpoints SET held_until = greatest(held_until, $3) WHERE id = $1 RETURNING held_until)
		UPDATE deliveries d SET next_attempt_at = held.held_until FROM held
		WHERE d.endpoint_id = $1 AND d.status = 'pending' AND d.next_attempt_at < held.held_until
			AND (d.leased_until IS NULL OR d.leased_until <= $2)
		RETURNING 1`, endpointID, now, until)
	return n, pgdb.Err(err, "hold webhook "+endpointID)
}

// Release implements app.DeliveryStore, in one statement: the hold under
// way ended, and the deliveries it pushed to its end (due exactly then)
// due now. Like a hold, it does not wait for the disk: lost, the
// deliveries wait for the hold's end as before.
func (s *Store) Release(ctx context.Context, endpointID string, now time.Time) (int, error) {
	var n int
	err := s.unsynced(ctx, func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			n++
		}
		return rows.Err()
	}, `WITH was AS (
			SELECT id, held_until FROM endpoints WHERE id = $1 AND held_until > $2 FOR UPDATE),
		released AS (
			UPDATE endpoints e SET held_until = NULL FROM was WHERE e.id = was.id RETURNING was.held_until)
		UPDATE deliveries d SET next_attempt_at = $2 FROM released
		WHERE d.endpoint_id = $1 AND d.status = 'pending' AND d.next_attempt_at = released.held_until
			AND (d.leased_until IS NULL OR d.leased_until <= $2)
		RETURNING 1`, endpointID, now)
	return n, pgdb.Err(err, "release webhook "+endpointID)
}

// Backlog implements app.DeliveryStore: one scan of the pending index.
func (s *Store) Backlog(ctx context.Context, now time.Time) (app.Backlog, error) {
	var (
		b                 app.Backlog
		oldest, oldestDue *time.Time
	)
	err := s.db.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE next_attempt_at <= $1), min(created_at),
			min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1)
		FROM deliveries WHERE status = 'pending'`, now).Scan(&b.Pending, &b.Due, &oldest, &oldestDue)
	if err != nil {
		return app.Backlog{}, pgdb.Err(err, "webhook backlog")
	}
	if oldest != nil {
		b.OldestPending = *oldest
	}
	if oldestDue != nil {
		b.OldestDue = *oldestDue
	}
	return b, nil
}

// Prune implements app.DeliveryStore, a thousand rows a statement so that
// a large first prune does not hold one long transaction.
func (s *Store) Prune(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		tag, err := s.db.Pool().Exec(ctx, `DELETE FROM deliveries WHERE id IN (
			SELECT id FROM deliveries WHERE status <> 'pending' AND created_at < $1 LIMIT 1000)`, before)
		if err != nil {
			return total, pgdb.Err(err, "prune deliveries")
		}
		total += int(tag.RowsAffected())
		if tag.RowsAffected() < 1000 {
			return total, nil
		}
	}
}
