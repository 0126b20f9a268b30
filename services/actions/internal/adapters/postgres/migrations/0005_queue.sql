-- Asynchronous runs (Prefer: respond-async): a run may wait in the queue,
-- its cost reserved, until a worker claims it (status queued), and a
-- caller may cancel it (status canceled). request is a queued run's body,
-- which the worker parses again; async says it was submitted so; attempts
-- counts its claims (a run whose worker died is queued again once);
-- created_at is its submission (started_at, when a worker began it).
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs
	ADD CONSTRAINT runs_status_check CHECK (status IN ('queued', 'pending', 'success', 'error', 'canceled')),
	ADD COLUMN request jsonb,
	ADD COLUMN async boolean NOT NULL DEFAULT false,
	ADD COLUMN attempts integer NOT NULL DEFAULT 0,
	ADD COLUMN created_at timestamptz;
UPDATE runs SET created_at = started_at;
ALTER TABLE runs ALTER COLUMN created_at SET NOT NULL;
-- The workers' claim: each agency's oldest queued run (a loose index scan
-- over the agencies with a queue), and each agency's count of running runs.
CREATE INDEX runs_queued_by_agency ON runs (agency_id, created_at, id) WHERE status = 'queued';
CREATE INDEX runs_running_by_agency ON runs (agency_id) WHERE status = 'pending';
-- GET /api/v1/runs: an agency's runs, newest first (ids are UUIDv7).
CREATE INDEX runs_by_agency ON runs (agency_id, id);
-- Each agency's last turn: when a worker last claimed one of its runs.
-- Of agencies with as many runs running, the one served longest ago goes
-- first (round robin), so a flood holds back another agency's run by one
-- worker turn at most.
CREATE TABLE queue_turns (
	agency_id uuid PRIMARY KEY,
	served_at timestamptz NOT NULL
);
