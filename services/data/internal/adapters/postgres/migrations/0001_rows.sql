-- Dataset rows. Every resource shares one table: the row object as the API
-- returns it (data), and typed columns for the spec's order and filter
-- fields, so that each (client, resource, filter, order) read is served by
-- an index. Text columns compare in byte order (COLLATE "C"), the memory
-- store's order.

CREATE TABLE rows (
	id uuid PRIMARY KEY,
	client_id uuid NOT NULL,
	resource text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	fetched_at timestamptz,
	tracked_at timestamptz,
	scored_at timestamptz,
	external_pages double precision,
	linking_domains double precision,
	appearances double precision,
	status text COLLATE "C",
	source_type text COLLATE "C",
	source_id text COLLATE "C",
	category_id text COLLATE "C",
	published boolean,
	lead_grade text COLLATE "C",
	quality_grade text COLLATE "C",
	sentiment text COLLATE "C",
	data jsonb NOT NULL
);

-- One index per order field: the page and the count of a client's dataset.
CREATE INDEX rows_by_created ON rows (client_id, resource, created_at, id);
CREATE INDEX rows_by_updated ON rows (client_id, resource, updated_at, id);
CREATE INDEX rows_by_id ON rows (client_id, resource, id);
CREATE INDEX rows_by_fetched ON rows (client_id, resource, fetched_at, id);
CREATE INDEX rows_by_tracked ON rows (client_id, resource, tracked_at, id);
CREATE INDEX rows_by_scored ON rows (client_id, resource, scored_at, id);
CREATE INDEX rows_by_external_pages ON rows (client_id, resource, external_pages, id);
CREATE INDEX rows_by_linking_domains ON rows (client_id, resource, linking_domains, id);
CREATE INDEX rows_by_appearances ON rows (client_id, resource, appearances, id);
-- Filters, with the default order and with the orders the spec suggests
-- beside them (keywords: status by tracked_at).
CREATE INDEX rows_status_by_created ON rows (client_id, resource, status, created_at, id);
CREATE INDEX rows_status_by_tracked ON rows (client_id, resource, status, tracked_at, id);
CREATE INDEX rows_source_type_by_created ON rows (client_id, resource, source_type, created_at, id);
CREATE INDEX rows_source_id_by_created ON rows (client_id, resource, source_id, created_at, id);
CREATE INDEX rows_category_by_created ON rows (client_id, resource, category_id, created_at, id);
CREATE INDEX rows_published_by_created ON rows (client_id, resource, published, created_at, id);
CREATE INDEX rows_lead_grade_by_created ON rows (client_id, resource, lead_grade, created_at, id);
CREATE INDEX rows_quality_grade_by_created ON rows (client_id, resource, quality_grade, created_at, id);
CREATE INDEX rows_sentiment_by_created ON rows (client_id, resource, sentiment, created_at, id);
