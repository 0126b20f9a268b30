package app

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

// auditService is the service the audit trail names for these writes.
const auditService = "webhooks"

// change is the audit trail's record of a write to t's object: a site's
// endpoint names the site, an agency's the agency (the caller may be bound
// to both).
func change(t Tenant, action, resourceType, id string, fields ...string) audit.Change {
	c := audit.Change{Action: action, ResourceType: resourceType, ResourceID: id, Fields: fields}
	if t.Kind == eventtypes.Site {
		c.SiteID = t.ID
	} else {
		c.AgencyID = t.ID
	}
	return c
}

// recordAfter records a change the delivery store has just made in one
// statement of its own, which holds no outbox: a retry, a recovery, a
// test delivery. It is the one write of the service recorded in a
// transaction of its own, right after the change.
func recordAfter(ctx context.Context, s EndpointStore, c audit.Change, at time.Time) error {
	return s.InTx(ctx, func(tx EndpointTx) error { return audit.Record(ctx, tx, auditService, c, at) })
}

// changedFields names the fields of a PATCH that were given.
func changedFields(c EndpointChange) []string {
	var out []string
	if c.URL != nil {
		out = append(out, "url")
	}
	if c.Events != nil {
		out = append(out, "events")
	}
	if c.Description != nil {
		out = append(out, "description")
	}
	if c.Enabled != nil {
		out = append(out, "enabled")
	}
	return out
}
