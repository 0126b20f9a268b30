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

-- Deliveries: one event on its way to one endpoint, with its attempts.
-- They go with their endpoint. An event fanned out twice (consumed twice)
-- is stored once per endpoint (the unique key).
CREATE TABLE deliveries (
    id              uuid PRIMARY KEY,
    endpoint_id     uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    tenant_kind     text NOT NULL,
    tenant_id       uuid NOT NULL,
    event_id        text NOT NULL,
    event_type      text NOT NULL,
    body            bytea NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    -- [{"at", "status_code", "duration_us", "response_body", "error"}]
    attempts        jsonb NOT NULL DEFAULT '[]',
    next_attempt_at timestamptz,
    leased_until    timestamptz,
    created_at      timestamptz NOT NULL,
    -- The W3C trace context of the write that caused the event: each
    -- attempt's span links to it.
    traceparent     text NOT NULL DEFAULT '',
    tracestate      text NOT NULL DEFAULT '',
    UNIQUE (endpoint_id, event_id)
);

-- The deliverer's claim: pending deliveries by when they are due.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
-- An endpoint's delivery log, newest first (ids are UUIDv7).
CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, id DESC);
-- The log's retention: finished deliveries by age.
CREATE INDEX deliveries_finished ON deliveries (created_at) WHERE status <> 'pending';

-- Every delivery is updated twice or more within seconds of its insert
-- (the claim's lease, the attempt's record): vacuum it as soon as a small
-- share is dead, without the cost delay, so that the claim's index scan
-- has few dead entries to step over.
ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0);
