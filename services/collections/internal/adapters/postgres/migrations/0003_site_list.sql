-- The admin API lists sites newest first (GET /admin/v1/sites).
CREATE INDEX sites_recent_idx ON sites (created_at DESC, id DESC);
