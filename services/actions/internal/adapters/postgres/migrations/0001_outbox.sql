-- The outbox of events waiting for NATS; the service's tables arrive with
-- its interface.
CREATE TABLE outbox (
	seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id uuid NOT NULL UNIQUE,
	subject text NOT NULL,
	payload bytea NOT NULL,
	created_at timestamptz NOT NULL
);
