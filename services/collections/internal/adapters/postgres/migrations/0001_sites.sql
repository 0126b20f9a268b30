-- The collections service's schema. Sites are the tenants of the
-- collections interface; their collections and items arrive in later
-- migrations.

CREATE TABLE sites (
	id uuid PRIMARY KEY,
	name text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);

CREATE TABLE outbox (
	seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id uuid NOT NULL UNIQUE,
	subject text NOT NULL,
	payload bytea NOT NULL,
	created_at timestamptz NOT NULL
);
