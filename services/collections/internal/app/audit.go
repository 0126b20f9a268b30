package app

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
)

// The audit trail: every write of this service adds its record (who, what,
// the names of the fields written, never their values) to the outbox of
// the write's own transaction (platform/audit).

// auditService names this service in the trail.
const auditService = "collections"

// auditOf is the audit event of change ch to an object of siteID (and
// agencyID, for a site), made by the caller of ctx at at. A caller bound to
// no site (an operator, the scheduler) has the object's tenant named.
func auditOf(ctx context.Context, ch audit.Change, siteID, agencyID string, at time.Time) (outbox.Event, error) {
	if p, _ := principal.FromContext(ctx); p.SiteID == "" {
		ch.SiteID = siteID
		if p.AgencyID == "" {
			ch.AgencyID = agencyID
		}
	}
	return outbox.Of(events.AuditRecorded, audit.Of(ctx, auditService, ch, at), at)
}

// record adds the audit event of ch to tx (see auditOf).
func record(ctx context.Context, tx outbox.Enqueuer, ch audit.Change, siteID, agencyID string, at time.Time) error {
	e, err := auditOf(ctx, ch, siteID, agencyID, at)
	if err != nil {
		return err
	}
	return tx.Enqueue(ctx, e)
}

// recordItem adds the audit record of an item write to tx.
func recordItem(ctx context.Context, tx outbox.Enqueuer, c Collection, action, id string, fields []string, at time.Time) error {
	return record(ctx, tx, audit.Change{Action: action, ResourceType: "item", ResourceID: id, Fields: fields}, c.SiteID, "", at)
}
