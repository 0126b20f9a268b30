-- Collections and their items. An item's field values are one JSONB
-- object; the list order (newest first, ties by id) and the lookup by id
-- are served by indexes scoped to the collection, which is scoped to a site.

CREATE TABLE collections (
	id uuid PRIMARY KEY,
	site_id uuid NOT NULL REFERENCES sites (id),
	slug text NOT NULL,
	name text NOT NULL,
	is_system boolean NOT NULL,
	fields jsonb NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	UNIQUE (site_id, slug)
);

CREATE TABLE items (
	id uuid PRIMARY KEY,
	collection_id uuid NOT NULL REFERENCES collections (id),
	data jsonb NOT NULL,
	is_published boolean NOT NULL,
	version bigint NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);

-- The default list, and the same with is_published.
CREATE INDEX items_by_created ON items (collection_id, created_at DESC, id DESC);
CREATE INDEX items_published_by_created ON items (collection_id, is_published, created_at DESC, id DESC);
CREATE INDEX items_by_updated ON items (collection_id, updated_at DESC, id DESC);
-- Exact-match filters on a field (data @> '{"field": value}').
CREATE INDEX items_data ON items USING gin (data jsonb_path_ops);
