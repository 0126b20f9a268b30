-- Report share links (generate_report's share_url, /r/{token}): a client
-- opens the report without a key until the link expires or is revoked.
-- Only the token's SHA-256 is kept, so the table names no working link.
CREATE TABLE report_shares (
	id uuid PRIMARY KEY,
	agency_id uuid NOT NULL,
	client_id uuid NOT NULL,
	run_id uuid NOT NULL,
	token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
	html_name text NOT NULL,
	pdf_name text NOT NULL,
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL,
	revoked_at timestamptz
);
-- The agency's list, newest first (ids are UUIDv7, time-ordered).
CREATE INDEX report_shares_agency ON report_shares (agency_id, id DESC);
