-- Schedules (docs/schedules.md): an action run for a client at the slots
-- of a timing. A run a schedule started names it (schedule_id): GET
-- /api/v1/runs?schedule_id= and the month's spend of a schedule read it.
ALTER TABLE runs ADD COLUMN schedule_id uuid;
CREATE INDEX runs_by_schedule ON runs (schedule_id, created_at) WHERE schedule_id IS NOT NULL;

-- timing is the caller's cron or every/at/weekday/monthday, time zone,
-- starts_at and ends_at; slots the latest slots' outcomes, newest first.
-- claimed_until is when a scheduler's claim lapses.
CREATE TABLE schedules (
	id uuid PRIMARY KEY,
	agency_id uuid NOT NULL,
	client_id uuid NOT NULL,
	action text NOT NULL,
	params jsonb NOT NULL,
	timing jsonb NOT NULL,
	max_ai bigint,
	max_data bigint,
	pause_after integer NOT NULL,
	description text NOT NULL,
	state text NOT NULL CHECK (state IN ('active', 'paused', 'ended')),
	next_run_at timestamptz,
	failures integer NOT NULL,
	last_run_id uuid,
	slots jsonb NOT NULL,
	claimed_until timestamptz,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
-- GET /api/v1/schedules: an agency's schedules, oldest first (UUIDv7).
CREATE INDEX schedules_by_agency ON schedules (agency_id, id);
-- The scheduler's claim: the active schedules by their next slot.
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE state = 'active';
