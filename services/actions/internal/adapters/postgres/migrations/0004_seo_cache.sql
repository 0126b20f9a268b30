-- The SEO cache: answers a paid SEO data provider gave, kept until
-- expires_at so that an identical question is not paid for again, by any
-- replica (services/actions/internal/app/seocache). key is the SHA-256 of
-- the provider, the method and the normalised inputs; value the answer as
-- JSON, kept as bytes (a business name with a NUL is an answer too).
CREATE TABLE seo_cache (
	key text PRIMARY KEY,
	value bytea NOT NULL,
	stored_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);
-- The purge of expired answers, a few at every write.
CREATE INDEX seo_cache_by_expiry ON seo_cache (expires_at);
-- A backlink profile is tens of kB of JSON: lz4, for CPU.
ALTER TABLE seo_cache ALTER COLUMN value SET COMPRESSION lz4;
