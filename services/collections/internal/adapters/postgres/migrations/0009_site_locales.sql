-- A site's locales (docs/collections.md#locales): the default locale,
-- whose values an item's data holds, and every locale the site's content
-- may be written in, the default first. Existing sites are in en alone,
-- which is how they read and write today.
ALTER TABLE sites ADD COLUMN default_locale text NOT NULL DEFAULT 'en',
	ADD COLUMN locales text[] NOT NULL DEFAULT '{en}';
