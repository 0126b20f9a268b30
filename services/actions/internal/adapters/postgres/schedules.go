package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/timing"
)

const scheduleColumns = `id, agency_id, client_id, action, params, timing, max_ai, max_data, pause_after, description, state,
	next_run_at, failures, coalesce(last_run_id::text, ''), slots, claimed_until, created_at, updated_at`

func scanSchedule(row pgx.Row) (app.Schedule, error) {
	var (
		s                 app.Schedule
		params, tm, slots []byte
		maxAI, maxData    *int64
		next, claimed     *time.Time
	)
	err := row.Scan(&s.ID, &s.AgencyID, &s.ClientID, &s.Action, &params, &tm, &maxAI, &maxData, &s.PauseAfter, &s.Description, &s.State,
		&next, &s.Failures, &s.LastRunID, &slots, &claimed, &s.CreatedAt, &s.UpdatedAt)
	if err != nil {
		return app.Schedule{}, err
	}
	if err := json.Unmarshal(params, &s.Params); err != nil {
		return app.Schedule{}, fmt.Errorf("schedule %s params: %w", s.ID, err)
	}
	var t timing.Spec
	if err := json.Unmarshal(tm, &t); err != nil {
		return app.Schedule{}, fmt.Errorf("schedule %s timing: %w", s.ID, err)
	}
	s.Timing = t
	if err := json.Unmarshal(slots, &s.Slots); err != nil {
		return app.Schedule{}, fmt.Errorf("schedule %s slots: %w", s.ID, err)
	}
	if len(s.Slots) == 0 {
		s.Slots = nil // as written: none yet
	}
	if maxAI != nil && maxData != nil {
		s.MaxPerMonth = &app.Balance{AI: *maxAI, Data: *maxData}
	}
	if next != nil {
		s.NextRunAt = next.UTC()
	}
	if claimed != nil {
		s.ClaimedUntil = claimed.UTC()
	}
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	for i := range s.Slots {
		s.Slots[i].Slot, s.Slots[i].At = s.Slots[i].Slot.UTC(), s.Slots[i].At.UTC()
	}
	return s, nil
}

func schedules(ctx context.Context, q querier, what, sql string, args ...any) ([]app.Schedule, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, pgdb.Err(err, what)
	}
	out, err := pgdb.Collect(rows, 0, scanSchedule)
	return out, pgdb.Err(err, what)
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// scheduleArgs are a schedule's columns in scheduleColumns' order.
func scheduleArgs(s app.Schedule) ([]any, error) {
	params, err := json.Marshal(s.Params)
	if err != nil {
		return nil, err
	}
	if s.Params == nil {
		params = []byte("{}")
	}
	tm, err := json.Marshal(s.Timing)
	if err != nil {
		return nil, err
	}
	slots, err := json.Marshal(s.Slots)
	if err != nil {
		return nil, err
	}
	if s.Slots == nil {
		slots = []byte("[]")
	}
	var maxAI, maxData any
	if s.MaxPerMonth != nil {
		maxAI, maxData = s.MaxPerMonth.AI, s.MaxPerMonth.Data
	}
	return []any{s.ID, s.AgencyID, s.ClientID, s.Action, params, tm, maxAI, maxData, s.PauseAfter, s.Description, s.State,
		nullTime(s.NextRunAt), s.Failures, nullIfEmpty(s.LastRunID), slots, nullTime(s.ClaimedUntil), s.CreatedAt, s.UpdatedAt}, nil
}

// Schedule implements app.Store.
func (s *Store) Schedule(ctx context.Context, id string) (app.Schedule, error) {
	sc, err := scanSchedule(s.db.Pool().QueryRow(ctx, `SELECT `+scheduleColumns+` FROM schedules WHERE id = $1`, id))
	return sc, pgdb.Err(err, "read schedule")
}

// ListSchedules implements app.Store: schedules_by_agency, oldest first.
func (s *Store) ListSchedules(ctx context.Context, agencyID string, f app.ScheduleFilter) ([]app.Schedule, error) {
	q := `SELECT ` + scheduleColumns + ` FROM schedules WHERE agency_id = $1`
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
	if f.State != "" {
		add("state =", f.State)
	}
	if f.After != "" {
		add("id >", f.After)
	}
	args = append(args, f.Limit)
	q += fmt.Sprintf(" ORDER BY id LIMIT $%d", len(args))
	return schedules(ctx, s.db.Pool(), "list schedules", q, args...)
}

// ScheduleSpent implements app.Store: runs_by_schedule.
func (s *Store) ScheduleSpent(ctx context.Context, scheduleID string, since time.Time) (app.Balance, error) {
	var b app.Balance
	err := s.db.Pool().QueryRow(ctx, `SELECT coalesce(sum(cost_ai), 0)::bigint, coalesce(sum(cost_data), 0)::bigint FROM runs
		WHERE schedule_id = $1 AND created_at >= $2 AND status IN ('queued', 'pending', 'success')`, scheduleID, since).Scan(&b.AI, &b.Data)
	return b, pgdb.Err(err, "sum a schedule's credits")
}

func (t tx) CountSchedules(ctx context.Context, agencyID string) (int, error) {
	// The agency's first schedule row, locked, serialises the creates of
	// one agency so that two cannot both pass the cap; an agency without
	// one has nothing to race on but its first.
	var n int
	if _, err := t.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1::text, 27))`, agencyID); err != nil {
		return 0, pgdb.Err(err, "lock the agency's schedules")
	}
	err := t.QueryRow(ctx, `SELECT count(*) FROM schedules WHERE agency_id = $1`, agencyID).Scan(&n)
	return n, pgdb.Err(err, "count schedules")
}

func (t tx) InsertSchedule(ctx context.Context, s app.Schedule) error {
	args, err := scheduleArgs(s)
	if err != nil {
		return err
	}
	_, err = t.Exec(ctx, `INSERT INTO schedules (`+scheduleInsertColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`, args...)
	return pgdb.Err(err, "insert schedule")
}

const scheduleInsertColumns = `id, agency_id, client_id, action, params, timing, max_ai, max_data, pause_after, description, state,
	next_run_at, failures, last_run_id, slots, claimed_until, created_at, updated_at`

func (t tx) ScheduleForUpdate(ctx context.Context, id string) (app.Schedule, error) {
	sc, err := scanSchedule(t.QueryRow(ctx, `SELECT `+scheduleColumns+` FROM schedules WHERE id = $1 FOR UPDATE`, id))
	return sc, pgdb.Err(err, "read schedule")
}

func (t tx) PutSchedule(ctx context.Context, s app.Schedule) error {
	args, err := scheduleArgs(s)
	if err != nil {
		return err
	}
	tag, err := t.Exec(ctx, `UPDATE schedules SET params = $5, timing = $6, max_ai = $7, max_data = $8, pause_after = $9, description = $10,
		state = $11, next_run_at = $12, failures = $13, last_run_id = $14, slots = $15, claimed_until = $16, updated_at = $18
		WHERE id = $1 AND agency_id = $2 AND client_id = $3 AND action = $4 AND created_at = $17`, args...)
	if err != nil {
		return pgdb.Err(err, "update schedule")
	}
	if tag.RowsAffected() == 0 {
		return app.ErrNotFound
	}
	return nil
}

func (t tx) DeleteSchedule(ctx context.Context, id string) error {
	tag, err := t.Exec(ctx, `DELETE FROM schedules WHERE id = $1`, id)
	if err != nil {
		return pgdb.Err(err, "delete schedule")
	}
	if tag.RowsAffected() == 0 {
		return app.ErrNotFound
	}
	return nil
}

// ClaimDueSchedules implements app.Tx: schedules_due, the rows another
// claim holds skipped.
func (t tx) ClaimDueSchedules(ctx context.Context, now, until time.Time, limit int) ([]app.Schedule, error) {
	return schedules(ctx, t, "claim due schedules", `WITH due AS (
			SELECT id FROM schedules
			WHERE state = 'active' AND next_run_at <= $1 AND (claimed_until IS NULL OR claimed_until < $1)
			ORDER BY next_run_at LIMIT $3 FOR UPDATE SKIP LOCKED)
		UPDATE schedules SET claimed_until = $2 FROM due WHERE schedules.id = due.id
		RETURNING `+qualified(scheduleColumns), now, until, limit)
}

// qualified names each column of cols with the schedules table (a
// RETURNING beside a FROM).
func qualified(cols string) string {
	return "schedules.id, schedules.agency_id, schedules.client_id, schedules.action, schedules.params, schedules.timing, schedules.max_ai, " +
		"schedules.max_data, schedules.pause_after, schedules.description, schedules.state, schedules.next_run_at, schedules.failures, " +
		"coalesce(schedules.last_run_id::text, ''), schedules.slots, schedules.claimed_until, schedules.created_at, schedules.updated_at"
}
