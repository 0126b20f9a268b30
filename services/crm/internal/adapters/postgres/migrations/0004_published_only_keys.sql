-- Keys safe to embed in a web page: a published_only key reads only
-- published items of its site's collections and cannot write.

ALTER TABLE api_keys ADD COLUMN published_only boolean NOT NULL DEFAULT false;
