-- The CRM service's schema: agencies and their members, clients and the links
-- that give agencies access to them, API keys, prospects and deals. The
-- outbox table is the platform's (platform/outbox/migrations).

CREATE TABLE agencies (
	id uuid PRIMARY KEY,
	name text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);

CREATE TABLE members (
	id uuid PRIMARY KEY,
	agency_id uuid NOT NULL REFERENCES agencies (id),
	name text NOT NULL,
	email text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	CONSTRAINT members_agency_email_key UNIQUE (agency_id, email),
	-- Target of deals' composite foreign key: a deal's owner must belong to
	-- the deal's agency.
	CONSTRAINT members_id_agency_key UNIQUE (id, agency_id)
);

CREATE TABLE clients (
	id uuid PRIMARY KEY,
	name text NOT NULL,
	domain text NOT NULL,
	status text NOT NULL CHECK (status IN ('active', 'paused', 'archived')),
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);

CREATE TABLE agency_clients (
	agency_id uuid NOT NULL REFERENCES agencies (id),
	client_id uuid NOT NULL REFERENCES clients (id),
	created_at timestamptz NOT NULL,
	PRIMARY KEY (agency_id, client_id)
);
CREATE INDEX agency_clients_client_idx ON agency_clients (client_id);

CREATE TABLE api_keys (
	id uuid PRIMARY KEY,
	name text NOT NULL,
	prefix text NOT NULL,
	secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
	scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
	-- Sites belong to the collections service, so this is checked by the
	-- application, not by a foreign key.
	site_id uuid,
	agency_id uuid REFERENCES agencies (id),
	expires_at timestamptz,
	revoked_at timestamptz,
	created_at timestamptz NOT NULL,
	CONSTRAINT api_keys_secret_sha256_key UNIQUE (secret_sha256),
	CONSTRAINT api_keys_bound CHECK (site_id IS NOT NULL OR agency_id IS NOT NULL)
);
CREATE INDEX api_keys_recent_idx ON api_keys (created_at DESC, id DESC);
CREATE INDEX api_keys_agency_idx ON api_keys (agency_id, created_at DESC, id DESC) WHERE agency_id IS NOT NULL;
CREATE INDEX api_keys_site_idx ON api_keys (site_id, created_at DESC, id DESC) WHERE site_id IS NOT NULL;

CREATE TABLE prospects (
	id uuid PRIMARY KEY,
	agency_id uuid NOT NULL REFERENCES agencies (id),
	business_name text NOT NULL,
	website_url text NOT NULL,
	domain text NOT NULL,
	industry text NOT NULL,
	health_score double precision NOT NULL CHECK (health_score BETWEEN 0 AND 100),
	lead_score double precision NOT NULL CHECK (lead_score BETWEEN 0 AND 100),
	pipeline_stage text NOT NULL CHECK (pipeline_stage IN ('new', 'contacted', 'qualified', 'proposal_sent', 'negotiation', 'won', 'lost')),
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
-- Serves the list: one agency, most recently updated first, id as tie-break.
CREATE INDEX prospects_agency_recent_idx ON prospects (agency_id, updated_at DESC, id DESC);

CREATE TABLE deals (
	id uuid PRIMARY KEY,
	agency_id uuid NOT NULL,
	owner_member_id uuid NOT NULL,
	title text NOT NULL,
	stage text NOT NULL CHECK (stage IN ('lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost')),
	value double precision NOT NULL CHECK (value >= 0),
	currency char(3) NOT NULL,
	expected_close_date date NOT NULL,
	closed_at timestamptz,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	CONSTRAINT deals_owner_fkey FOREIGN KEY (owner_member_id, agency_id) REFERENCES members (id, agency_id),
	CONSTRAINT deals_closed CHECK ((stage IN ('won', 'lost')) = (closed_at IS NOT NULL))
);
CREATE INDEX deals_agency_recent_idx ON deals (agency_id, updated_at DESC, id DESC);
