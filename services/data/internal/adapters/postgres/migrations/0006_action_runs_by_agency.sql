-- Runs of actions are an agency's, not the client's: a client linked to two
-- agencies is a client of two tenants, and each may read only its own runs
-- (their credits, inputs and errors). The rows of such a resource
-- (app.Resource.ByAgency) keep their agency in a column of their own, never
-- NULL for them ('' for a row that names none, which no read returns), and
-- are read by (client, agency) with the indexes below.
ALTER TABLE rows ADD COLUMN agency_id text COLLATE "C";
UPDATE rows SET agency_id = coalesce(data ->> 'agency_id', '') WHERE resource = 'action_runs';

-- Their counters count per agency: the total's value is '<agency>', a
-- filter value's '<agency>/<value>'. Recount the runs stored so far.
DELETE FROM row_counts WHERE resource = 'action_runs';
INSERT INTO row_counts (client_id, resource, field, value, shard, count)
SELECT client_id, resource, '', agency_id, 0, count(*) FROM rows
WHERE resource = 'action_runs' GROUP BY client_id, resource, agency_id;
INSERT INTO row_counts (client_id, resource, field, value, shard, count)
SELECT client_id, resource, 'status', agency_id || '/' || status, 0, count(*) FROM rows
WHERE resource = 'action_runs' AND status IS NOT NULL GROUP BY client_id, resource, agency_id, status;

-- Indexes: the catalog's that the migrations before this one do not
-- leave (see 0001). Generated from the catalog by
-- TestMigrationIndexesMatchCatalog (UPDATE_DOCS=1 rewrites).
-- indexes:
DROP INDEX rows_action_runs_by_created_at;
DROP INDEX rows_action_runs_by_id;
DROP INDEX rows_action_runs_by_updated_at;
DROP INDEX rows_action_runs_status_by_created_at;
CREATE INDEX rows_action_runs_by_created_at ON rows (client_id, agency_id, created_at, id) WHERE resource = 'action_runs';
CREATE INDEX rows_action_runs_by_updated_at ON rows (client_id, agency_id, updated_at, id) WHERE resource = 'action_runs';
CREATE INDEX rows_action_runs_by_id ON rows (client_id, agency_id, id) WHERE resource = 'action_runs';
CREATE INDEX rows_action_runs_status_by_created_at ON rows (client_id, agency_id, status, created_at, id) WHERE resource = 'action_runs';
