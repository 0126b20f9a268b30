-- The collections service's schema. Sites are the tenants of the
-- collections interface; their collections and items arrive in later
-- migrations. The outbox table is the platform's (platform/outbox/migrations).

CREATE TABLE sites (
	id uuid PRIMARY KEY,
	name text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
