-- Assets: a site's files. The bytes are on the object store under a key
-- derived from name (the URL's unguessable capability); these rows are
-- what the API lists. Scoped by site like collections; the list is newest
-- first, ties by id.

CREATE TABLE assets (
	id uuid PRIMARY KEY,
	site_id uuid NOT NULL REFERENCES sites (id),
	name text NOT NULL UNIQUE,
	filename text NOT NULL,
	content_type text NOT NULL,
	size bigint NOT NULL,
	width integer,
	height integer,
	alt text NOT NULL,
	sha256 text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);

CREATE INDEX assets_by_created ON assets (site_id, created_at DESC, id DESC);
