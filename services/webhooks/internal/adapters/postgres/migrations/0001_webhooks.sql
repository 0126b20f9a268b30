-- The endpoints tenants register. A tenant is a site or an agency
-- (tenant_kind); every read is scoped by both columns.
CREATE TABLE endpoints (
    id              uuid PRIMARY KEY,
    tenant_kind     text NOT NULL CHECK (tenant_kind IN ('site', 'agency')),
    tenant_id       uuid NOT NULL,
    url             text NOT NULL,
    events          text[] NOT NULL,
    description     text NOT NULL DEFAULT '',
    enabled         boolean NOT NULL,
    -- whsec_ secrets: deliveries must be signed with them, so they are kept
    -- as they are: the database and its backups hold them.
    secret          text NOT NULL,
    previous_secret text NOT NULL DEFAULT '',
    previous_until  timestamptz,
    disabled_reason text NOT NULL DEFAULT '',
    failing_since   timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX endpoints_by_tenant ON endpoints (tenant_kind, tenant_id, created_at DESC, id DESC);
