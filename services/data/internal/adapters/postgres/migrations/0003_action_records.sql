-- The records the actions write (docs/datasets.md): new optional fields of
-- the spec's datasets, two datasets beyond the spec (action_runs,
-- blog_images), and the order and filter fields that come with them
-- (seo_tasks by source_id, seo_reports by fetched_at, geo_articles by
-- category_id and published, domain_metrics by linking_domains), all on
-- columns rows already has.
--
-- Rows can now be replaced (DataRecordsService.WriteRecords): row_counts
-- move with the filter values of a replaced row, so a count can go down as
-- well as up.

-- A blog's title is post_title, as generate_blog returns it.
UPDATE rows SET data = (data - 'title') || jsonb_build_object('post_title', data -> 'title')
WHERE resource = 'blogs' AND data ? 'title';

-- Every field of a resource is present in every row, null when it has no
-- value: rows stored before get the new fields as null (a field a row
-- already has keeps its value).
UPDATE rows SET data = '{"location": null, "cpc": null, "intent": null, "source": null}'::jsonb || data
WHERE resource = 'keywords';
UPDATE rows SET data = '{"url": null, "source_id": null, "check": null}'::jsonb || data
WHERE resource = 'seo_tasks';
UPDATE rows SET data = '{"issues": null, "checks_passed": null, "status_code": null, "fetched_at": null, "title": null}'::jsonb || data
WHERE resource = 'seo_reports';
UPDATE rows SET data = '{"meta_description": null, "keyword": null, "word_count": null, "featured_image_url": null}'::jsonb || data
WHERE resource = 'blogs';
UPDATE rows SET data = '{"keyword": null, "city": null, "state": null, "meta_description": null, "category_id": null, "published": null}'::jsonb || data
WHERE resource = 'geo_articles';
UPDATE rows SET data = '{"depth": null, "pillars": null}'::jsonb || data
WHERE resource = 'topical_maps';
UPDATE rows SET data = '{"cta": null}'::jsonb || data
WHERE resource = 'gbp_posts';
UPDATE rows SET data = '{"source_domain": null, "nofollow": null}'::jsonb || data
WHERE resource = 'backlinks';
UPDATE rows SET data = '{"backlinks": null, "linking_domains": null}'::jsonb || data
WHERE resource = 'domain_metrics';
UPDATE rows SET data = '{"prospect_url": null, "subject": null, "body": null, "sent_at": null, "message_id": null}'::jsonb || data
WHERE resource = 'backlink_outreach';
UPDATE rows SET data = '{"lat": null, "lng": null, "radius_km": null, "points": null, "competitors": null, "source": null}'::jsonb || data
WHERE resource = 'grid_searches';
UPDATE rows SET data = '{"brand_name": null, "mentioned": null, "position": null, "competitors": null, "answer": null}'::jsonb || data
WHERE resource = 'llm_reports';
UPDATE rows SET data = '{"summary": null, "signals": null}'::jsonb || data
WHERE resource = 'call_scores';
UPDATE rows SET data = '{"config": null}'::jsonb || data
WHERE resource = 'integrations';

-- Indexes: the catalog's that the migrations before this one do not
-- create (see 0001). Generated from the catalog by
-- TestMigrationIndexesMatchCatalog (UPDATE_DOCS=1 rewrites).
-- indexes:
CREATE INDEX rows_seo_tasks_source_id_by_created_at ON rows (client_id, source_id, created_at, id) WHERE resource = 'seo_tasks';
CREATE INDEX rows_seo_reports_by_fetched_at ON rows (client_id, fetched_at, id) WHERE resource = 'seo_reports';
CREATE INDEX rows_geo_articles_category_id_by_created_at ON rows (client_id, category_id, created_at, id) WHERE resource = 'geo_articles';
CREATE INDEX rows_geo_articles_published_by_created_at ON rows (client_id, published, created_at, id) WHERE resource = 'geo_articles';
CREATE INDEX rows_domain_metrics_by_linking_domains ON rows (client_id, linking_domains, id) WHERE resource = 'domain_metrics';
CREATE INDEX rows_action_runs_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'action_runs';
CREATE INDEX rows_action_runs_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'action_runs';
CREATE INDEX rows_action_runs_by_id ON rows (client_id, id) WHERE resource = 'action_runs';
CREATE INDEX rows_action_runs_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'action_runs';
CREATE INDEX rows_blog_images_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'blog_images';
CREATE INDEX rows_blog_images_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'blog_images';
CREATE INDEX rows_blog_images_by_id ON rows (client_id, id) WHERE resource = 'blog_images';
