package events

import "strings"

// Stream is a JetStream stream and the subjects it holds: one per
// publishing service, created by that service before its first publish.
type Stream struct {
	Name     string
	Subjects string
}

// The streams, one per publishing service.
var (
	CollectionsStream = Stream{"ATRIUM_COLLECTIONS", "atrium.collections.>"}
	CRMStream         = Stream{"ATRIUM_CRM", "atrium.crm.>"}
	DataStream        = Stream{"ATRIUM_DATA", "atrium.data.>"}
	ActionsStream     = Stream{"ATRIUM_ACTIONS", "atrium.actions.>"}
	WebhooksStream    = Stream{"ATRIUM_WEBHOOKS", "atrium.webhooks.>"}
)

// Streams returns every stream.
func Streams() []Stream {
	return []Stream{CollectionsStream, CRMStream, DataStream, ActionsStream, WebhooksStream}
}

// AuditStream holds the audit trail's events, which every service writes
// (platform/audit) and the audit service reads. It is not among Streams:
// no webhook announces an audit event, so the webhooks service does not
// read it.
var AuditStream = Stream{"ATRIUM_AUDIT", "atrium.audit.>"}

// StreamOf returns the stream that holds subject (a concrete subject or a
// pattern).
func StreamOf(subject string) (Stream, bool) {
	for _, s := range append(Streams(), AuditStream) {
		if strings.HasPrefix(subject, strings.TrimSuffix(s.Subjects, ">")) {
			return s, true
		}
	}
	return Stream{}, false
}
