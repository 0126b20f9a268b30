-- Sites belong to an agency and may name the agency's client
-- (docs/architecture.md#tenancy-model). Both are ids of the CRM's rows,
-- kept without a foreign key (another service's schema); existing sites
-- stay unowned (NULL) until the admin API assigns them.
ALTER TABLE sites ADD COLUMN agency_id uuid, ADD COLUMN client_id uuid,
	ADD CONSTRAINT sites_client_needs_agency CHECK (client_id IS NULL OR agency_id IS NOT NULL);

-- GET /admin/v1/sites?agency_id= lists an agency's sites newest first.
CREATE INDEX sites_agency_recent_idx ON sites (agency_id, created_at DESC, id DESC) WHERE agency_id IS NOT NULL;
