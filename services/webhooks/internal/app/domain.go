package app

import (
	"time"

	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
	"github.com/atrium-hq/atrium/services/webhooks/internal/signing"
)

// Tenant owns endpoints: a site (its key manages the site's endpoints) or
// an agency. Kind is eventtypes.Site or eventtypes.Agency; a site and an
// agency never share endpoints even if their ids were equal.
type Tenant struct {
	Kind eventtypes.Owner
	ID   string
}

// Endpoint is a URL a tenant registered to receive its events.
type Endpoint struct {
	ID          string
	Tenant      Tenant
	URL         string
	Events      []string // subscription patterns (eventtypes.Matches)
	Description string
	Enabled     bool
	// Secret signs every delivery. During a rotation Previous signs too,
	// until PreviousUntil.
	Secret        signing.Secret
	Previous      signing.Secret
	PreviousUntil time.Time
	// DisabledReason says why Atrium disabled the endpoint ("" when it is
	// enabled or its owner disabled it).
	DisabledReason string
	// FailingSince is when its current run of failed attempts began; zero
	// while its last attempt succeeded.
	FailingSince time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Subscribes reports whether the endpoint's patterns match the event type.
func (e Endpoint) Subscribes(eventType string) bool {
	for _, p := range e.Events {
		if eventtypes.Matches(p, eventType) {
			return true
		}
	}
	return false
}

// Secrets are the secrets a delivery at `at` is signed with: the current
// one, and the previous one while it is still valid.
func (e Endpoint) Secrets(at time.Time) []signing.Secret {
	if !e.Previous.IsZero() && at.Before(e.PreviousUntil) {
		return []signing.Secret{e.Secret, e.Previous}
	}
	return []signing.Secret{e.Secret}
}

// stamp is t as the stores keep times: UTC, to the microsecond
// (PostgreSQL's precision), so that what a write answers is what a read
// gives back.
func stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
