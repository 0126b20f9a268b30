-- Exact counts of each client's rows per resource (field = '') and per
-- value of each filter field, kept in the same transaction as the rows, so
-- that pagination.total is one lookup instead of a scan of every matching
-- row. Rows are never deleted or changed, so counts only grow.
CREATE TABLE row_counts (
	client_id uuid NOT NULL,
	resource text NOT NULL,
	field text NOT NULL,
	value text NOT NULL,
	count bigint NOT NULL,
	PRIMARY KEY (client_id, resource, field, value)
);
