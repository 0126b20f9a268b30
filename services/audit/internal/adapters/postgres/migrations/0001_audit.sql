-- The audit trail: one row per write, kept once (the id is the id of the
-- message that carried it, which a redelivery repeats), never updated;
-- deleted only past the retention. Ids are text: the outbox's are UUIDs,
-- but a message without one is named by its stream sequence.
CREATE TABLE audit_events (
    id             text PRIMARY KEY,
    at             timestamptz NOT NULL,
    service        text NOT NULL,
    action         text NOT NULL,
    method         text NOT NULL DEFAULT '',
    resource_type  text NOT NULL,
    resource_id    text NOT NULL,
    fields         text[] NOT NULL DEFAULT '{}',
    agency_id      text NOT NULL DEFAULT '',
    site_id        text NOT NULL DEFAULT '',
    actor_kind     text NOT NULL,
    actor_id       text NOT NULL DEFAULT '',
    member_id      text NOT NULL DEFAULT '',
    session_id     text NOT NULL DEFAULT '',
    client_address text NOT NULL DEFAULT '',
    user_agent     text NOT NULL DEFAULT '',
    trace_id       text NOT NULL DEFAULT ''
);

-- The trail's order (newest first) for an operator's read and the
-- retention's delete of the oldest; then per agency and per site, the
-- scopes of tenants' reads; and per object, the question "who changed
-- this".
CREATE INDEX audit_events_by_time ON audit_events (at DESC, id DESC);
CREATE INDEX audit_events_by_agency ON audit_events (agency_id, at DESC, id DESC) WHERE agency_id <> '';
CREATE INDEX audit_events_by_site ON audit_events (site_id, at DESC, id DESC) WHERE site_id <> '';
CREATE INDEX audit_events_by_resource ON audit_events (resource_id, at DESC, id DESC);
CREATE INDEX audit_events_by_actor ON audit_events (actor_id, at DESC, id DESC);
