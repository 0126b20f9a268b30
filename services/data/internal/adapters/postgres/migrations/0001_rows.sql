-- Dataset rows. Every resource shares one table: the row object as the API
-- returns it (data), and typed columns for the spec's order and filter
-- fields, so that each (client, resource, filter, order) read is served by
-- an index. Text columns compare in byte order (COLLATE "C"), the memory
-- store's order.

CREATE TABLE rows (
	id uuid PRIMARY KEY,
	client_id uuid NOT NULL,
	resource text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	fetched_at timestamptz,
	tracked_at timestamptz,
	scored_at timestamptz,
	external_pages double precision,
	linking_domains double precision,
	appearances double precision,
	status text COLLATE "C",
	source_type text COLLATE "C",
	source_id text COLLATE "C",
	category_id text COLLATE "C",
	published boolean,
	lead_grade text COLLATE "C",
	quality_grade text COLLATE "C",
	sentiment text COLLATE "C",
	data jsonb NOT NULL
);

-- Indexes: for each resource, one per order field it offers (client,
-- value, id) and one per filter field and order (client, filter value,
-- value, id), each partial on the resource, so that every read is an index
-- range and a write touches only its resource's indexes. Generated from the
-- catalog by TestMigrationIndexesMatchCatalog (UPDATE_DOCS=1 rewrites).
-- indexes:
CREATE INDEX rows_keywords_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'keywords';
CREATE INDEX rows_keywords_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'keywords';
CREATE INDEX rows_keywords_by_id ON rows (client_id, id) WHERE resource = 'keywords';
CREATE INDEX rows_keywords_by_tracked_at ON rows (client_id, tracked_at, id) WHERE resource = 'keywords';
CREATE INDEX rows_keywords_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'keywords';
CREATE INDEX rows_keywords_status_by_tracked_at ON rows (client_id, status, tracked_at, id) WHERE resource = 'keywords';
CREATE INDEX rows_seo_tasks_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'seo_tasks';
CREATE INDEX rows_seo_tasks_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'seo_tasks';
CREATE INDEX rows_seo_tasks_by_id ON rows (client_id, id) WHERE resource = 'seo_tasks';
CREATE INDEX rows_seo_tasks_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'seo_tasks';
CREATE INDEX rows_seo_tasks_category_id_by_created_at ON rows (client_id, category_id, created_at, id) WHERE resource = 'seo_tasks';
CREATE INDEX rows_seo_reports_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'seo_reports';
CREATE INDEX rows_seo_reports_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'seo_reports';
CREATE INDEX rows_seo_reports_by_id ON rows (client_id, id) WHERE resource = 'seo_reports';
CREATE INDEX rows_blogs_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'blogs';
CREATE INDEX rows_blogs_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'blogs';
CREATE INDEX rows_blogs_by_id ON rows (client_id, id) WHERE resource = 'blogs';
CREATE INDEX rows_blogs_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'blogs';
CREATE INDEX rows_blogs_category_id_by_created_at ON rows (client_id, category_id, created_at, id) WHERE resource = 'blogs';
CREATE INDEX rows_blogs_published_by_created_at ON rows (client_id, published, created_at, id) WHERE resource = 'blogs';
CREATE INDEX rows_blog_categories_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'blog_categories';
CREATE INDEX rows_blog_categories_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'blog_categories';
CREATE INDEX rows_blog_categories_by_id ON rows (client_id, id) WHERE resource = 'blog_categories';
CREATE INDEX rows_blog_authors_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'blog_authors';
CREATE INDEX rows_blog_authors_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'blog_authors';
CREATE INDEX rows_blog_authors_by_id ON rows (client_id, id) WHERE resource = 'blog_authors';
CREATE INDEX rows_geo_articles_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'geo_articles';
CREATE INDEX rows_geo_articles_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'geo_articles';
CREATE INDEX rows_geo_articles_by_id ON rows (client_id, id) WHERE resource = 'geo_articles';
CREATE INDEX rows_geo_articles_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'geo_articles';
CREATE INDEX rows_topical_maps_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'topical_maps';
CREATE INDEX rows_topical_maps_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'topical_maps';
CREATE INDEX rows_topical_maps_by_id ON rows (client_id, id) WHERE resource = 'topical_maps';
CREATE INDEX rows_press_releases_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'press_releases';
CREATE INDEX rows_press_releases_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'press_releases';
CREATE INDEX rows_press_releases_by_id ON rows (client_id, id) WHERE resource = 'press_releases';
CREATE INDEX rows_press_releases_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'press_releases';
CREATE INDEX rows_backlinks_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_by_id ON rows (client_id, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_by_external_pages ON rows (client_id, external_pages, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_by_linking_domains ON rows (client_id, linking_domains, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_source_type_by_created_at ON rows (client_id, source_type, created_at, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_source_type_by_external_pages ON rows (client_id, source_type, external_pages, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_source_type_by_linking_domains ON rows (client_id, source_type, linking_domains, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_source_id_by_created_at ON rows (client_id, source_id, created_at, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_source_id_by_external_pages ON rows (client_id, source_id, external_pages, id) WHERE resource = 'backlinks';
CREATE INDEX rows_backlinks_source_id_by_linking_domains ON rows (client_id, source_id, linking_domains, id) WHERE resource = 'backlinks';
CREATE INDEX rows_anchor_texts_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'anchor_texts';
CREATE INDEX rows_anchor_texts_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'anchor_texts';
CREATE INDEX rows_anchor_texts_by_id ON rows (client_id, id) WHERE resource = 'anchor_texts';
CREATE INDEX rows_anchor_texts_source_id_by_created_at ON rows (client_id, source_id, created_at, id) WHERE resource = 'anchor_texts';
CREATE INDEX rows_top_linked_pages_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'top_linked_pages';
CREATE INDEX rows_top_linked_pages_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'top_linked_pages';
CREATE INDEX rows_top_linked_pages_by_id ON rows (client_id, id) WHERE resource = 'top_linked_pages';
CREATE INDEX rows_top_linked_pages_by_external_pages ON rows (client_id, external_pages, id) WHERE resource = 'top_linked_pages';
CREATE INDEX rows_top_linked_pages_by_linking_domains ON rows (client_id, linking_domains, id) WHERE resource = 'top_linked_pages';
CREATE INDEX rows_domain_metrics_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'domain_metrics';
CREATE INDEX rows_domain_metrics_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'domain_metrics';
CREATE INDEX rows_domain_metrics_by_id ON rows (client_id, id) WHERE resource = 'domain_metrics';
CREATE INDEX rows_domain_metrics_by_fetched_at ON rows (client_id, fetched_at, id) WHERE resource = 'domain_metrics';
CREATE INDEX rows_backlink_outreach_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'backlink_outreach';
CREATE INDEX rows_backlink_outreach_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'backlink_outreach';
CREATE INDEX rows_backlink_outreach_by_id ON rows (client_id, id) WHERE resource = 'backlink_outreach';
CREATE INDEX rows_backlink_outreach_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'backlink_outreach';
CREATE INDEX rows_backlink_summaries_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'backlink_summaries';
CREATE INDEX rows_backlink_summaries_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'backlink_summaries';
CREATE INDEX rows_backlink_summaries_by_id ON rows (client_id, id) WHERE resource = 'backlink_summaries';
CREATE INDEX rows_backlink_summaries_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'backlink_summaries';
CREATE INDEX rows_backlink_summaries_source_id_by_created_at ON rows (client_id, source_id, created_at, id) WHERE resource = 'backlink_summaries';
CREATE INDEX rows_citations_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'citations';
CREATE INDEX rows_citations_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'citations';
CREATE INDEX rows_citations_by_id ON rows (client_id, id) WHERE resource = 'citations';
CREATE INDEX rows_citations_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'citations';
CREATE INDEX rows_gbp_profiles_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'gbp_profiles';
CREATE INDEX rows_gbp_profiles_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'gbp_profiles';
CREATE INDEX rows_gbp_profiles_by_id ON rows (client_id, id) WHERE resource = 'gbp_profiles';
CREATE INDEX rows_gbp_profiles_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'gbp_profiles';
CREATE INDEX rows_gbp_posts_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'gbp_posts';
CREATE INDEX rows_gbp_posts_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'gbp_posts';
CREATE INDEX rows_gbp_posts_by_id ON rows (client_id, id) WHERE resource = 'gbp_posts';
CREATE INDEX rows_gbp_posts_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'gbp_posts';
CREATE INDEX rows_reviews_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'reviews';
CREATE INDEX rows_reviews_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'reviews';
CREATE INDEX rows_reviews_by_id ON rows (client_id, id) WHERE resource = 'reviews';
CREATE INDEX rows_reviews_sentiment_by_created_at ON rows (client_id, sentiment, created_at, id) WHERE resource = 'reviews';
CREATE INDEX rows_locations_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'locations';
CREATE INDEX rows_locations_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'locations';
CREATE INDEX rows_locations_by_id ON rows (client_id, id) WHERE resource = 'locations';
CREATE INDEX rows_grid_searches_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'grid_searches';
CREATE INDEX rows_grid_searches_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'grid_searches';
CREATE INDEX rows_grid_searches_by_id ON rows (client_id, id) WHERE resource = 'grid_searches';
CREATE INDEX rows_grid_searches_by_tracked_at ON rows (client_id, tracked_at, id) WHERE resource = 'grid_searches';
CREATE INDEX rows_competitors_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'competitors';
CREATE INDEX rows_competitors_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'competitors';
CREATE INDEX rows_competitors_by_id ON rows (client_id, id) WHERE resource = 'competitors';
CREATE INDEX rows_competitors_by_appearances ON rows (client_id, appearances, id) WHERE resource = 'competitors';
CREATE INDEX rows_llm_reports_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'llm_reports';
CREATE INDEX rows_llm_reports_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'llm_reports';
CREATE INDEX rows_llm_reports_by_id ON rows (client_id, id) WHERE resource = 'llm_reports';
CREATE INDEX rows_llm_reports_by_scored_at ON rows (client_id, scored_at, id) WHERE resource = 'llm_reports';
CREATE INDEX rows_ai_summaries_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'ai_summaries';
CREATE INDEX rows_ai_summaries_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'ai_summaries';
CREATE INDEX rows_ai_summaries_by_id ON rows (client_id, id) WHERE resource = 'ai_summaries';
CREATE INDEX rows_ai_summaries_source_id_by_created_at ON rows (client_id, source_id, created_at, id) WHERE resource = 'ai_summaries';
CREATE INDEX rows_ai_training_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'ai_training';
CREATE INDEX rows_ai_training_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'ai_training';
CREATE INDEX rows_ai_training_by_id ON rows (client_id, id) WHERE resource = 'ai_training';
CREATE INDEX rows_ai_training_source_id_by_created_at ON rows (client_id, source_id, created_at, id) WHERE resource = 'ai_training';
CREATE INDEX rows_call_tracking_calls_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'call_tracking_calls';
CREATE INDEX rows_call_tracking_calls_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'call_tracking_calls';
CREATE INDEX rows_call_tracking_calls_by_id ON rows (client_id, id) WHERE resource = 'call_tracking_calls';
CREATE INDEX rows_call_tracking_calls_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'call_tracking_calls';
CREATE INDEX rows_thirdparty_calls_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'thirdparty_calls';
CREATE INDEX rows_thirdparty_calls_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'thirdparty_calls';
CREATE INDEX rows_thirdparty_calls_by_id ON rows (client_id, id) WHERE resource = 'thirdparty_calls';
CREATE INDEX rows_thirdparty_calls_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'thirdparty_calls';
CREATE INDEX rows_call_scores_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'call_scores';
CREATE INDEX rows_call_scores_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'call_scores';
CREATE INDEX rows_call_scores_by_id ON rows (client_id, id) WHERE resource = 'call_scores';
CREATE INDEX rows_call_scores_lead_grade_by_created_at ON rows (client_id, lead_grade, created_at, id) WHERE resource = 'call_scores';
CREATE INDEX rows_call_scores_quality_grade_by_created_at ON rows (client_id, quality_grade, created_at, id) WHERE resource = 'call_scores';
CREATE INDEX rows_call_transcriptions_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'call_transcriptions';
CREATE INDEX rows_call_transcriptions_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'call_transcriptions';
CREATE INDEX rows_call_transcriptions_by_id ON rows (client_id, id) WHERE resource = 'call_transcriptions';
CREATE INDEX rows_call_transcriptions_lead_grade_by_created_at ON rows (client_id, lead_grade, created_at, id) WHERE resource = 'call_transcriptions';
CREATE INDEX rows_call_transcriptions_quality_grade_by_created_at ON rows (client_id, quality_grade, created_at, id) WHERE resource = 'call_transcriptions';
CREATE INDEX rows_integrations_by_created_at ON rows (client_id, created_at, id) WHERE resource = 'integrations';
CREATE INDEX rows_integrations_by_updated_at ON rows (client_id, updated_at, id) WHERE resource = 'integrations';
CREATE INDEX rows_integrations_by_id ON rows (client_id, id) WHERE resource = 'integrations';
CREATE INDEX rows_integrations_status_by_created_at ON rows (client_id, status, created_at, id) WHERE resource = 'integrations';
