-- Credits: each agency's balance of AI and data credits. A run's cost is
-- taken from it when the run starts (reserved) and given back if the run
-- fails; the CHECKs are the last word on "never below zero".
CREATE TABLE credits (
	agency_id uuid PRIMARY KEY,
	ai bigint NOT NULL CHECK (ai >= 0),
	data bigint NOT NULL CHECK (data >= 0),
	updated_at timestamptz NOT NULL
);

-- Runs: every action run, pending until it ends with success or error.
-- writes are the rows the run writes to the data service after it commits;
-- applied says they were written. lease_until is when a pending run counts
-- as abandoned by a process that stopped.
CREATE TABLE runs (
	id uuid PRIMARY KEY,
	agency_id uuid NOT NULL,
	client_id uuid NOT NULL,
	action text NOT NULL,
	status text NOT NULL CHECK (status IN ('pending', 'success', 'error')),
	status_code integer NOT NULL DEFAULT 0,
	cost_ai bigint NOT NULL,
	cost_data bigint NOT NULL,
	data jsonb,
	writes jsonb,
	applied boolean NOT NULL DEFAULT false,
	idempotency_key text,
	request_hash text,
	started_at timestamptz NOT NULL,
	finished_at timestamptz,
	lease_until timestamptz NOT NULL
);

-- An idempotency key names one run per agency.
CREATE UNIQUE INDEX runs_by_idempotency_key ON runs (agency_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Recovery's two questions: which pending runs outlived their lease, and
-- which finished runs still have records to write.
CREATE INDEX runs_pending_by_lease ON runs (lease_until) WHERE status = 'pending';
CREATE INDEX runs_unapplied_by_finish ON runs (finished_at) WHERE status <> 'pending' AND NOT applied;
