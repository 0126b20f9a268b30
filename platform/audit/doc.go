// Package audit records who changed what: every write through any
// interface adds one audit event to its service's outbox, in the
// transaction of the change, so that a change is never kept without its
// record nor recorded without being kept. The audit service consumes the
// events from their stream (events.AuditStream), keeps them and answers
// the audit trail's reads (docs/people.md).
//
// An event names the actor (from the principal the call carries), the
// RPC, the resource and the names of the fields that changed — never
// their values, so that no secret, password or token can reach the trail
// — and where the request came from (client address and user agent, as
// the gateway forwards them) with its trace id.
package audit
