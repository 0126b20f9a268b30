package app

import (
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/events"
)

// Event is one audit event as the trail keeps it: events.AuditEvent with
// the id of the message that carried it, which makes it unique.
type Event struct {
	ID string
	events.AuditEvent
}

// Position is where a page ended, in the trail's order (newest first: at,
// then id, descending): the next page starts after it.
type Position struct {
	At time.Time
	ID string
}

// Filter selects and pages audit events. Empty strings and zero times
// select everything.
type Filter struct {
	// AgencyID and SiteID are the tenant whose events are read; an
	// agency's read is always scoped by it.
	AgencyID, SiteID string
	// Actor is the actor's id (a user's, a key's, "admin").
	Actor                    string
	ResourceType, ResourceID string
	// Action is an action, or a prefix of actions when it ends in a dot
	// (ActionMatches).
	Action string
	// Since is inclusive, Until exclusive.
	Since, Until time.Time
	// After, when set, is the position the page before ended at.
	After *Position
	// Limit is the most events to return.
	Limit int
}

// Matches reports whether e is selected by f's filters (not its paging):
// the memory store's scan, and the contract's expectation.
func (f Filter) Matches(e Event) bool {
	switch {
	case f.AgencyID != "" && e.AgencyID != f.AgencyID,
		f.SiteID != "" && e.SiteID != f.SiteID,
		f.Actor != "" && e.ActorID != f.Actor,
		f.ResourceType != "" && e.ResourceType != f.ResourceType,
		f.ResourceID != "" && e.ResourceID != f.ResourceID,
		!ActionMatches(f.Action, e.Action),
		!f.Since.IsZero() && e.At.Before(f.Since),
		!f.Until.IsZero() && !e.At.Before(f.Until):
		return false
	}
	return true
}

// ActionMatches reports whether action is selected by filter: every
// action when filter is "", the actions it begins when it ends in a dot
// ("item." selects item.created and item.updated), else that action only.
func ActionMatches(filter, action string) bool {
	if filter == "" {
		return true
	}
	if strings.HasSuffix(filter, ".") {
		return strings.HasPrefix(action, filter)
	}
	return action == filter
}

// Before reports whether e comes after p in the trail's order (newest
// first), that is: it is older, or as old with a smaller id.
func (p Position) Before(e Event) bool {
	return e.At.Before(p.At) || (e.At.Equal(p.At) && e.ID < p.ID)
}

// Precision is the resolution the trail keeps times at: PostgreSQL's
// timestamptz keeps microseconds, and both stores must order and page
// alike.
const Precision = time.Microsecond
