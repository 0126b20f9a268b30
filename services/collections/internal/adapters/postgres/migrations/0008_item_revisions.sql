-- Revisions of items: every write of an item (create, update, scheduled
-- change, restore, delete) adds a row in the write's own transaction: the
-- item's whole data and is_published after the write, its version, what
-- the write did (change) and who made it. Rows outlive their item (no
-- foreign key to items): a deleted item's revisions are kept until the
-- retention purge, and it can be restored from them. Items written before
-- this migration have no revisions until their next write.

CREATE TABLE item_revisions (
	item_id uuid NOT NULL,
	version bigint NOT NULL,
	collection_id uuid NOT NULL REFERENCES collections (id),
	data jsonb NOT NULL,
	is_published boolean NOT NULL,
	change text NOT NULL,
	actor_kind text NOT NULL,
	actor_id text NOT NULL,
	actor_member_id text NOT NULL,
	created_at timestamptz NOT NULL,
	-- The primary key serves the list, newest first (version DESC), and
	-- the read of one version.
	PRIMARY KEY (item_id, version)
);

-- The purge finds the deletes older than the retention through this
-- partial index; it holds only deletes.
CREATE INDEX item_revisions_deleted ON item_revisions (created_at) WHERE change = 'deleted';
