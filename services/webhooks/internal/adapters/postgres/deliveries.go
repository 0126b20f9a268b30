package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/webhooks/internal/app"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

const deliveryCols = `id, endpoint_id, tenant_kind, tenant_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at`

// attempt is an attempt as the attempts column holds it.
type attempt struct {
	At           time.Time `json:"at"`
	StatusCode   int       `json:"status_code"`
	DurationUS   int64     `json:"duration_us"`
	ResponseBody string    `json:"response_body"`
	Error        string    `json:"error"`
}

func scanDelivery(row pgx.Row) (app.Delivery, error) {
	var (
		d        app.Delivery
		kind     string
		status   string
		attempts []attempt
		next     *time.Time
	)
	if err := row.Scan(&d.ID, &d.EndpointID, &kind, &d.Tenant.ID, &d.EventID, &d.EventType, &d.Body, &status, &attempts, &next, &d.CreatedAt); err != nil {
		return app.Delivery{}, err
	}
	d.Tenant.Kind, d.Status = eventtypes.Owner(kind), app.DeliveryStatus(status)
	for _, a := range attempts {
		d.Attempts = append(d.Attempts, app.Attempt{At: a.At, StatusCode: a.StatusCode, Duration: time.Duration(a.DurationUS) * time.Microsecond,
			ResponseBody: a.ResponseBody, Error: a.Error})
	}
	if next != nil {
		d.NextAttemptAt = *next
	}
	return d, nil
}

// AddDeliveries implements app.DeliveryStore: one statement for all, which
// skips the deliveries already there and those whose endpoint is gone.
func (s *Store) AddDeliveries(ctx context.Context, ds []app.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, d := range ds {
		b.Queue(`INSERT INTO deliveries (id, endpoint_id, tenant_kind, tenant_id, event_id, event_type, body, status, next_attempt_at, created_at)
			SELECT $1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9 WHERE EXISTS (SELECT 1 FROM endpoints WHERE id = $2)
			ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
			d.ID, d.EndpointID, string(d.Tenant.Kind), d.Tenant.ID, d.EventID, d.EventType, d.Body, d.NextAttemptAt, d.CreatedAt)
	}
	// One round trip, one implicit transaction: all or none.
	err := s.db.Pool().SendBatch(ctx, b).Close()
	return pgdb.Err(err, "add deliveries")
}

// Claim implements app.DeliveryStore. The candidates are numbered per
// endpoint after those it already has leased, and only those within the
// bound are taken; the UPDATE re-checks the lease, so that of two
// deliverers claiming at once only one gets a delivery (the other finds
// the lease set once the first commits, and skips the row). Two claims at
// once can exceed the per-endpoint bound by their overlap, which only
// loosens it for a moment.
func (s *Store) Claim(ctx context.Context, now time.Time, limit, perEndpoint int, lease time.Duration) ([]app.Delivery, error) {
	if perEndpoint <= 0 {
		perEndpoint = math.MaxInt32 // no bound
	}
	rows, err := s.db.Pool().Query(ctx, `WITH leased AS (
			SELECT endpoint_id, count(*) AS n FROM deliveries
			WHERE status = 'pending' AND leased_until > $1 GROUP BY endpoint_id),
		due AS (
			SELECT d.id, d.next_attempt_at,
				row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) + coalesce(l.n, 0) AS place
			FROM deliveries d LEFT JOIN leased l USING (endpoint_id)
			WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.leased_until IS NULL OR d.leased_until <= $1)),
		chosen AS (
			SELECT id FROM due WHERE place <= $4 ORDER BY next_attempt_at, id LIMIT $3)
		UPDATE deliveries SET leased_until = $2
		WHERE id IN (SELECT id FROM chosen) AND status = 'pending' AND (leased_until IS NULL OR leased_until <= $1)
		RETURNING `+deliveryCols, now, now.Add(lease), limit, perEndpoint)
	if err != nil {
		return nil, pgdb.Err(err, "claim deliveries")
	}
	ds, err := pgdb.Collect(rows, limit, scanDelivery)
	if err != nil {
		return nil, pgdb.Err(err, "claim deliveries")
	}
	// RETURNING does not keep the subquery's order.
	sortDue(ds)
	return ds, nil
}

// RecordAttempt implements app.DeliveryStore.
func (s *Store) RecordAttempt(ctx context.Context, id string, a app.Attempt, status app.DeliveryStatus, next time.Time) error {
	b, err := json.Marshal([]attempt{{At: a.At, StatusCode: a.StatusCode, DurationUS: a.Duration.Microseconds(), ResponseBody: a.ResponseBody, Error: a.Error}})
	if err != nil {
		return err
	}
	var nextAt *time.Time
	if status == app.Pending {
		nextAt = &next
	}
	tag, err := s.db.Pool().Exec(ctx, `UPDATE deliveries SET attempts = attempts || $2::jsonb, status = $3, next_attempt_at = $4, leased_until = NULL
		WHERE id = $1`, id, b, string(status), nextAt)
	if err != nil {
		return pgdb.Err(err, "record attempt of delivery "+id)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	return nil
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

func sortDue(ds []app.Delivery) {
	slices.SortFunc(ds, func(a, b app.Delivery) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
