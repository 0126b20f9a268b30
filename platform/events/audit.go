package events

import "time"

// AuditEvent is one write, as the audit trail records it (platform/audit
// builds it from the call's principal and metadata).
type AuditEvent struct {
	// Service is the service that made the change: collections, crm, …
	Service string `json:"service"`
	// Action is what happened: item.updated, key.revoked, …
	Action       string `json:"action"`
	ResourceType string `json:"resource_type"`
	ResourceID   string `json:"resource_id"`
	// Fields are the names of the fields the write set, never their values.
	Fields   []string `json:"fields,omitempty"`
	AgencyID string   `json:"agency_id,omitempty"`
	SiteID   string   `json:"site_id,omitempty"`
	// ActorKind is the principal's kind (key, user, admin, service,
	// anonymous) and ActorID its subject (key id, user id, "admin", the
	// service's name).
	ActorKind string `json:"actor_kind"`
	ActorID   string `json:"actor_id,omitempty"`
	MemberID  string `json:"member_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Method is the RPC that made the change.
	Method        string    `json:"method,omitempty"`
	ClientAddress string    `json:"client_address,omitempty"`
	UserAgent     string    `json:"user_agent,omitempty"`
	TraceID       string    `json:"trace_id,omitempty"`
	At            time.Time `json:"at"`
}

// AuditRecorded is every audit event, whichever service wrote it (stream
// ATRIUM_AUDIT).
var AuditRecorded = define[AuditEvent]("atrium.audit.{service}.recorded", nil)
