-- People (issue 25): members with a role (who can sign in), users (a
-- person's sign-in, a member of several agencies), invitations, sessions
-- and password resets, and the member who issued an agency's key. Only the
-- SHA-256 of a secret token is kept; passwords are argon2id PHC strings.

CREATE TABLE users (
	id uuid PRIMARY KEY,
	-- Lower case, so that the unique rule is case-insensitive.
	email text NOT NULL CHECK (email = lower(email)),
	name text NOT NULL,
	password_hash text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	CONSTRAINT users_email_key UNIQUE (email)
);

ALTER TABLE members
	ADD COLUMN role text CHECK (role IN ('owner', 'manager', 'editor', 'viewer', 'client')),
	ADD COLUMN site_ids uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(site_ids) <= 100),
	ADD COLUMN client_id uuid REFERENCES clients (id),
	ADD COLUMN user_id uuid REFERENCES users (id),
	ADD CONSTRAINT members_sites_editor CHECK (cardinality(site_ids) = 0 OR role = 'editor'),
	ADD CONSTRAINT members_client_role CHECK ((role = 'client') = (client_id IS NOT NULL)),
	ADD CONSTRAINT members_user_role CHECK (user_id IS NULL OR role IS NOT NULL);
-- A user is one member of an agency at most.
CREATE UNIQUE INDEX members_agency_user_key ON members (agency_id, user_id) WHERE user_id IS NOT NULL;
-- A user's memberships, read on every session's verification.
CREATE INDEX members_user_idx ON members (user_id) WHERE user_id IS NOT NULL;
-- The members list: one agency, by name.
CREATE INDEX members_agency_name_idx ON members (agency_id, name, id);
-- The last-owner check.
CREATE INDEX members_agency_owner_idx ON members (agency_id) WHERE role = 'owner';
-- The check that a member owns no deals before it is removed.
CREATE INDEX deals_owner_idx ON deals (owner_member_id);

CREATE TABLE invitations (
	id uuid PRIMARY KEY,
	agency_id uuid NOT NULL,
	member_id uuid NOT NULL,
	email text NOT NULL,
	token_sha256 bytea NOT NULL CHECK (length(token_sha256) = 32),
	expires_at timestamptz NOT NULL,
	created_at timestamptz NOT NULL,
	CONSTRAINT invitations_token_sha256_key UNIQUE (token_sha256),
	CONSTRAINT invitations_member_fkey FOREIGN KEY (member_id, agency_id) REFERENCES members (id, agency_id) ON DELETE CASCADE
);
CREATE INDEX invitations_member_idx ON invitations (member_id);

CREATE TABLE sessions (
	id uuid PRIMARY KEY,
	user_id uuid NOT NULL REFERENCES users (id),
	secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
	csrf_token text NOT NULL,
	client_address text NOT NULL,
	user_agent text NOT NULL,
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL,
	CONSTRAINT sessions_secret_sha256_key UNIQUE (secret_sha256)
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE password_resets (
	id uuid PRIMARY KEY,
	user_id uuid NOT NULL REFERENCES users (id),
	token_sha256 bytea NOT NULL CHECK (length(token_sha256) = 32),
	expires_at timestamptz NOT NULL,
	created_at timestamptz NOT NULL,
	CONSTRAINT password_resets_token_sha256_key UNIQUE (token_sha256)
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id);

-- The owner who issued an agency's key through the public API: removing
-- the member revokes it. No foreign key: the key outlives the member.
ALTER TABLE api_keys ADD COLUMN created_by_member_id uuid;
CREATE INDEX api_keys_member_idx ON api_keys (created_by_member_id) WHERE created_by_member_id IS NOT NULL AND revoked_at IS NULL;
