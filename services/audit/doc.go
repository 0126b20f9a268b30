// Package audit is the audit service: it keeps the audit trail every
// service writes (platform/audit puts one event in the outbox of each
// write's transaction, for the ATRIUM_AUDIT stream), consuming the stream
// with a durable JetStream consumer, and serves it to agencies' owners
// (GET /api/v1/audit-events) and operators (GET /admin/v1/audit-events).
// The trail is append-only; a retention loop removes events older than
// --audit-retention. See docs/audit.md.
package audit
