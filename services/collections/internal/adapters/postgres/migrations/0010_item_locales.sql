-- The values of an item's localized fields in its site's other locales
-- (docs/collections.md#locales): {"de": {"title": "..."}}. data stays the
-- default locale's values, so every existing item is as it was.
ALTER TABLE items ADD COLUMN locales jsonb NOT NULL DEFAULT '{}';
