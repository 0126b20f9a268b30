-- The outbox: events a transaction enqueued, waiting for the relay to
-- publish them to NATS JetStream. Every service schema has one; this file is
-- its only definition.
CREATE TABLE IF NOT EXISTS outbox (
	seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id uuid NOT NULL UNIQUE,
	subject text NOT NULL,
	payload bytea NOT NULL,
	created_at timestamptz NOT NULL
);
