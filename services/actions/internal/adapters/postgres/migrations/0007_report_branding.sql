-- Each agency's report branding (generate_report): the name its reports
-- are signed with, its logo asset and its two colours. One row per agency,
-- replaced whole by PUT /api/v1/branding.
CREATE TABLE report_branding (
	agency_id uuid PRIMARY KEY,
	name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
	logo_asset_id uuid,
	primary_colour text NOT NULL CHECK (primary_colour ~ '^#[0-9a-f]{6}$'),
	accent_colour text NOT NULL CHECK (accent_colour ~ '^#[0-9a-f]{6}$')
);
