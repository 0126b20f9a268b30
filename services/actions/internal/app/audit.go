package app

import (
	"context"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
)

// auditService is the service the audit trail names for these writes.
const auditService = "actions"

// runChange is the audit trail's record of a run's start (queued, for an
// asynchronous one): the run is the resource, the request body's field
// names are its fields (never their values).
func runChange(run Run, action string, fields []string) audit.Change {
	return audit.Change{Action: action, ResourceType: "run", ResourceID: run.ID, Fields: fields, AgencyID: run.AgencyID}
}

// requestFields are the names of a request body's fields, sorted.
func requestFields(body map[string]any) []string {
	fields := make([]string, 0, len(body))
	for k := range body {
		fields = append(fields, k)
	}
	slices.Sort(fields)
	return fields
}

// auditEvent is the outbox event of change c, for a write that sends its
// events with its statement (SubmitRun) rather than through a Tx.
func auditEvent(ctx context.Context, c audit.Change, at time.Time) (outbox.Event, error) {
	return outbox.Of(events.AuditRecorded, audit.Of(ctx, auditService, c, at), at)
}
