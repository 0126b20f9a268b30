-- The admin API lists agencies and clients newest first (GET
-- /admin/v1/agencies, GET /admin/v1/clients): one index each, in that order.
CREATE INDEX agencies_recent_idx ON agencies (created_at DESC, id DESC);
CREATE INDEX clients_recent_idx ON clients (created_at DESC, id DESC);
