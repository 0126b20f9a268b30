-- Preview links: a capability to read one item without a key. Only the
-- token's SHA-256 is stored (token_hash, hex), looked up by its unique
-- index; a link goes with its item (ON DELETE CASCADE). Every read
-- compares expires_at; the scheduler deletes expired links now and then
-- (preview_links_by_expiry).

CREATE TABLE preview_links (
	id uuid PRIMARY KEY,
	site_id uuid NOT NULL REFERENCES sites (id),
	collection_id uuid NOT NULL REFERENCES collections (id),
	item_id uuid NOT NULL REFERENCES items (id) ON DELETE CASCADE,
	token_hash text NOT NULL UNIQUE,
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);

CREATE INDEX preview_links_by_collection ON preview_links (collection_id, created_at DESC, id DESC);
CREATE INDEX preview_links_by_item ON preview_links (item_id);
CREATE INDEX preview_links_by_expiry ON preview_links (expires_at);

-- Scheduled publishing: an item's pending changes. The scheduler claims
-- due items with FOR UPDATE SKIP LOCKED through these partial indexes,
-- which hold only the items with a pending change.

ALTER TABLE items ADD COLUMN publish_at timestamptz, ADD COLUMN unpublish_at timestamptz;

CREATE INDEX items_publish_due ON items (publish_at) WHERE publish_at IS NOT NULL;
CREATE INDEX items_unpublish_due ON items (unpublish_at) WHERE unpublish_at IS NOT NULL;
