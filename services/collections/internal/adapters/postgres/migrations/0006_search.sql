-- Full-text search (q on the item list). Each collection names the text
-- search configuration its items are searched with. The index is per
-- collection, like the sort indexes: a partial GIN index over the
-- collection's text and rich_text fields in its language, built and
-- replaced by the store when the collection's definition changes (an
-- expression index needs the configuration as a constant, and collections
-- differ in theirs).

ALTER TABLE collections ADD COLUMN search_language text NOT NULL DEFAULT 'simple';

-- The origins whose pages may call the public API with the site's keys
-- (CORS), set through the admin API; none by default.
ALTER TABLE sites ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}';
