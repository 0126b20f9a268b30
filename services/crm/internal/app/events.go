package app

import "time"

// Subjects of the events the CRM service publishes (stream ATRIUM_CRM),
// besides the key events of platform/apikey.
// Payloads are JSON; docs/events.md describes them.
const (
	SubjectAgencyCreated   = "atrium.crm.agency.created"
	SubjectMemberCreated   = "atrium.crm.member.created"
	SubjectClientCreated   = "atrium.crm.client.created"
	SubjectClientLinked    = "atrium.crm.client.linked"
	SubjectClientUnlinked  = "atrium.crm.client.unlinked"
	SubjectProspectCreated = "atrium.crm.prospect.created"
	SubjectProspectUpdated = "atrium.crm.prospect.updated"
	SubjectDealCreated     = "atrium.crm.deal.created"
	SubjectDealUpdated     = "atrium.crm.deal.updated"
)

// EventSubjects is the subject filter of the CRM's stream.
const EventSubjects = "atrium.crm.>"

// linkEvent is the payload of client linked and unlinked events.
type linkEvent struct {
	AgencyID string    `json:"agency_id"`
	ClientID string    `json:"client_id"`
	At       time.Time `json:"at"`
}

// Key events (atrium.crm.key.created and .revoked) are platform/apikey's:
// the gateway reads them too.

// entityEvent is the payload of created and updated events: the object's
// id, its tenant and when it changed.
type entityEvent struct {
	ID       string    `json:"id"`
	AgencyID string    `json:"agency_id,omitempty"`
	At       time.Time `json:"at"`
}
