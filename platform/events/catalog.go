package events

import (
	"fmt"
	"time"
)

// The catalog: every webhook type, then every event, with its payload.
// docs/events.md and docs/webhooks.md describe them for readers; a test
// holds the served schemas to these types.

// Webhook types, in the order GET /api/v1/event-types lists them.
var (
	hookItemCreated     = hook[ItemData]("item.created", Site, "An item was created in one of the site's collections.")
	hookItemUpdated     = hook[ItemData]("item.updated", Site, "An item was changed (every PATCH, and every scheduled publish or unpublish applied).")
	hookItemPublished   = hook[ItemData]("item.published", Site, "An item became published, by a PATCH or at its publish_at (after its item.updated).")
	hookItemUnpublished = hook[ItemData]("item.unpublished", Site, "An item stopped being published, by a PATCH or at its unpublish_at (after its item.updated).")
	hookItemDeleted     = hook[ItemData]("item.deleted", Site, "An item was deleted.")
	hookAssetCreated    = hook[AssetData]("asset.created", Site, "A file was uploaded to the site's assets.")
	hookAssetDeleted    = hook[AssetData]("asset.deleted", Site, "An asset was deleted; its file is no longer served.")
	hookProspectCreated = hook[RecordData]("prospect.created", Agency, "A prospect was added to the agency's pipeline.")
	hookProspectUpdated = hook[RecordData]("prospect.updated", Agency, "A prospect was changed.")
	hookDealCreated     = hook[RecordData]("deal.created", Agency, "A deal was added.")
	hookDealUpdated     = hook[RecordData]("deal.updated", Agency, "A deal was changed.")
	hookClientLinked    = hook[LinkData]("client.linked", Agency, "A client was linked to the agency.")
	hookClientUnlinked  = hook[LinkData]("client.unlinked", Agency, "A client was unlinked from the agency.")
	hookRunSucceeded    = hook[RunData]("action_run.succeeded", Agency, "An action run of the agency finished with status success.")
	hookRunFailed       = hook[RunData]("action_run.failed", Agency, "An action run of the agency finished with status error (nothing was charged).")
	hookRunCanceled     = hook[RunData]("action_run.canceled", Agency, "An action run of the agency was canceled before it finished (nothing was charged).")
	hookCreditsChanged  = hook[CreditsChangedData]("credits.changed", Agency, "The agency's credit balance was changed by an administrator.")
	hookScheduleSkipped = hook[ScheduleData]("schedule.run_skipped", Agency, "A schedule's slot was not run: its run would pass the schedule's max_credits_per_month, the balance could not cover it, or its previous run was still going (reason says which).")
	hookSchedulePaused  = hook[ScheduleData]("schedule.paused", Agency, "A schedule paused itself after pause_after_failures consecutive failed or skipped slots; POST /api/v1/schedules/{id}/resume starts it again.")
	hookDatasetChanged  = hook[DatasetData]("dataset.changed", Agency, "Rows of a linked client's dataset were written.")
	hookReportReady     = hook[ReportData]("report.ready", Agency, "A client report (generate_report) is ready: its HTML page and PDF are stored at the URLs given (after its action_run.succeeded).")
	// WebhookTest is sent by POST /api/v1/webhooks/{id}/test; no stream
	// event becomes one.
	WebhookTest         = hook[WebhookTestData]("webhook.test", Any, "Sent by POST /api/v1/webhooks/{id}/test to that endpoint only.")
	hookWebhookDisabled = hook[WebhookDisabledData]("webhook.disabled", Any, "An endpoint of the tenant was disabled after failing continuously or answering 410; sent to the tenant's other endpoints.")
)

// Webhook data types: thin, the ids and the fields a receiver routes on;
// the current state is read through the API.
type (
	// ItemData is the data of the item.* webhook types.
	ItemData struct {
		ID          string `json:"id" format:"uuid"`
		SiteID      string `json:"site_id" format:"uuid"`
		Collection  string `json:"collection" desc:"the collection's slug"`
		IsPublished bool   `json:"is_published"`
		Version     int64  `json:"version" minimum:"1" desc:"the item's write count, its ETag without quotes: drop an event older than what you have"`
		Locale      string `json:"locale,omitempty" desc:"the locale whose values the write changed, when not the site's default"`
	}
	// AssetData is the data of the asset.* webhook types.
	AssetData struct {
		ID          string `json:"id" format:"uuid"`
		SiteID      string `json:"site_id" format:"uuid"`
		ContentType string `json:"content_type" desc:"the type the file's content was found to be (image/png, application/pdf, ...)"`
		Size        int64  `json:"size" minimum:"1" desc:"bytes"`
	}
	// RecordData is the data of the prospect.* and deal.* webhook types.
	RecordData struct {
		ID       string `json:"id" format:"uuid"`
		AgencyID string `json:"agency_id" format:"uuid"`
	}
	// LinkData is the data of the client.* webhook types.
	LinkData struct {
		AgencyID string `json:"agency_id" format:"uuid"`
		ClientID string `json:"client_id" format:"uuid"`
	}
	// RunData is the data of the action_run.* webhook types.
	RunData struct {
		RunID        string  `json:"run_id" format:"uuid"`
		Action       string  `json:"action"`
		ClientID     string  `json:"client_id" format:"uuid"`
		AgencyID     string  `json:"agency_id" format:"uuid"`
		State        string  `json:"state" enum:"success,error,canceled" desc:"the run's state, as GET /api/v1/runs/{run_id} shows it"`
		Status       string  `json:"status" enum:"success,error,canceled"`
		StatusCode   int     `json:"status_code"`
		CreditsSpent Credits `json:"credits_spent"`
	}
	// CreditsChangedData is the data of credits.changed.
	CreditsChangedData struct {
		AgencyID string       `json:"agency_id" format:"uuid"`
		Added    CreditsDelta `json:"added"`
		Balance  Credits      `json:"balance"`
	}
	// ScheduleData is the data of the schedule.* webhook types.
	ScheduleData struct {
		ScheduleID string    `json:"schedule_id" format:"uuid"`
		AgencyID   string    `json:"agency_id" format:"uuid"`
		ClientID   string    `json:"client_id" format:"uuid"`
		Action     string    `json:"action"`
		Slot       time.Time `json:"slot" desc:"the time the slot was due"`
		Reason     string    `json:"reason" desc:"why the slot was skipped, or why the schedule paused"`
		Failures   int       `json:"failures" minimum:"0" desc:"the schedule's consecutive failed or skipped slots"`
	}
	// DatasetData is the data of dataset.changed.
	DatasetData struct {
		ClientID string `json:"client_id" format:"uuid"`
		Resource string `json:"resource" desc:"the dataset, as GET /api/v1/data names it"`
		Count    int    `json:"count" minimum:"1"`
	}
	// WebhookTestData is the data of webhook.test.
	WebhookTestData struct {
		WebhookID string `json:"webhook_id" format:"uuid"`
	}
	// WebhookDisabledData is the data of webhook.disabled.
	WebhookDisabledData struct {
		WebhookID  string    `json:"webhook_id" format:"uuid"`
		URL        string    `json:"url" format:"uri"`
		Reason     string    `json:"reason"`
		DisabledAt time.Time `json:"disabled_at"`
	}
)

// Credits are an amount of each kind of credit.
type Credits struct {
	AI   int64 `json:"ai" minimum:"0"`
	Data int64 `json:"data" minimum:"0"`
}

// CreditsDelta is a change of each kind of credit: negative for a removal.
type CreditsDelta struct {
	AI   int64 `json:"ai"`
	Data int64 `json:"data"`
}

// The collections service's events (stream ATRIUM_COLLECTIONS).
var (
	SiteCreated       = define[SiteEvent]("atrium.collections.site.created", nil)
	SiteUpdated       = define[SiteEvent]("atrium.collections.site.updated", nil)
	CollectionCreated = define[CollectionEvent]("atrium.collections.collection.created", nil)
	CollectionUpdated = define[CollectionEvent]("atrium.collections.collection.updated", nil)
	ItemCreated       = itemEvent("created", hookItemCreated)
	// ItemUpdated is every PATCH and every scheduled change applied.
	ItemUpdated = itemEvent("updated", hookItemUpdated)
	// ItemPublished and ItemUnpublished follow ItemUpdated when a change
	// moved is_published.
	ItemPublished   = itemEvent("published", hookItemPublished)
	ItemUnpublished = itemEvent("unpublished", hookItemUnpublished)
	ItemDeleted     = itemEvent("deleted", hookItemDeleted)
	AssetCreated    = assetEvent("created", hookAssetCreated)
	// AssetUpdated is a PATCH of alt or filename: no webhook type.
	AssetUpdated = assetEvent("updated", nil)
	AssetDeleted = assetEvent("deleted", hookAssetDeleted)
)

// SiteEvent is the payload of a site's events. It carries the site's
// owner after the change, so that a process that caches owners (the
// gateway, the CRM) replaces its entry on site.updated.
type SiteEvent struct {
	ID string `json:"id" format:"uuid"`
	// AgencyID is the owning agency; absent for an unowned site.
	AgencyID string `json:"agency_id,omitempty" format:"uuid"`
	// ClientID is the agency's client the site is for; absent for none.
	ClientID string    `json:"client_id,omitempty" format:"uuid"`
	At       time.Time `json:"at"`
}

// CollectionEvent is the payload of a collection definition's events.
type CollectionEvent struct {
	ID     string    `json:"id" format:"uuid"`
	SiteID string    `json:"site_id" format:"uuid"`
	Slug   string    `json:"slug"`
	At     time.Time `json:"at"`
}

// ItemEvent is the payload of the item events,
// atrium.collections.{site_id}.{collection}.item.<change>.
type ItemEvent struct {
	ID          string `json:"id" format:"uuid"`
	SiteID      string `json:"site_id" format:"uuid"`
	Collection  string `json:"collection" desc:"the collection's slug"`
	IsPublished bool   `json:"is_published"`
	// Version is the item's write count, its ETag without quotes.
	Version      int64     `json:"version" minimum:"1"`
	At           time.Time `json:"at"`
	CollectionID string    `json:"collection_id" format:"uuid"`
	// Locale is the locale a write changed the values of, when it named
	// one other than the site's default (docs/collections.md#locales).
	Locale string `json:"locale,omitempty" desc:"the locale whose values the write changed, when not the site's default"`
}

func itemEvent(change string, h *Hook[ItemData]) *Def[ItemEvent] {
	return define("atrium.collections.{site_id}.{collection}.item."+change, func(p ItemEvent) (Webhook, error) {
		return h.To(Tenant{Site, p.SiteID}, ItemData{p.ID, p.SiteID, p.Collection, p.IsPublished, p.Version, p.Locale}), nil
	})
}

// AssetEvent is the payload of the asset events,
// atrium.collections.{site_id}.asset.<change>.
type AssetEvent struct {
	ID          string    `json:"id" format:"uuid"`
	SiteID      string    `json:"site_id" format:"uuid"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	At          time.Time `json:"at"`
}

func assetEvent(change string, h *Hook[AssetData]) *Def[AssetEvent] {
	var webhook func(AssetEvent) (Webhook, error)
	if h != nil {
		webhook = func(p AssetEvent) (Webhook, error) {
			return h.To(Tenant{Site, p.SiteID}, AssetData{p.ID, p.SiteID, p.ContentType, p.Size}), nil
		}
	}
	return define("atrium.collections.{site_id}.asset."+change, webhook)
}

// The CRM service's events (stream ATRIUM_CRM).
var (
	AgencyCreated = define[RecordEvent]("atrium.crm.agency.created", nil)
	MemberCreated = define[RecordEvent]("atrium.crm.member.created", nil)
	ClientCreated = define[ClientEvent]("atrium.crm.client.created", nil)
	// ClientUpdated is a change of a client's status or auto_deploy.
	ClientUpdated  = define[ClientEvent]("atrium.crm.client.updated", nil)
	ClientLinked   = linkEvent("linked", hookClientLinked)
	ClientUnlinked = linkEvent("unlinked", hookClientUnlinked)
	KeyCreated     = define[KeyEvent]("atrium.crm.key.created", nil)
	KeyRevoked     = define[KeyEvent]("atrium.crm.key.revoked", nil)
	// MemberUpdated is a change of a member's role, sites or client (or
	// their removal, Removed set): every gateway forgets the sessions of
	// its user, so that the next request is judged by the new role.
	MemberUpdated = define[MemberEvent]("atrium.crm.member.updated", nil)
	// SessionsEnded is sessions that stopped working before their expiry
	// (sign-out, a member removed or signed out by an owner, a password
	// reset): every gateway forgets them at once.
	SessionsEnded   = define[SessionsEvent]("atrium.crm.session.ended", nil)
	ProspectCreated = recordEvent("atrium.crm.prospect.created", hookProspectCreated)
	ProspectUpdated = recordEvent("atrium.crm.prospect.updated", hookProspectUpdated)
	DealCreated     = recordEvent("atrium.crm.deal.created", hookDealCreated)
	DealUpdated     = recordEvent("atrium.crm.deal.updated", hookDealUpdated)
)

// RecordEvent is the payload of an agency's records' events (the agency
// itself, a member, a prospect, a deal): the record's id and its agency.
type RecordEvent struct {
	ID       string    `json:"id" format:"uuid"`
	AgencyID string    `json:"agency_id" format:"uuid"`
	At       time.Time `json:"at"`
}

func recordEvent(subject string, h *Hook[RecordData]) *Def[RecordEvent] {
	return define(subject, func(p RecordEvent) (Webhook, error) {
		return h.To(Tenant{Agency, p.AgencyID}, RecordData{p.ID, p.AgencyID}), nil
	})
}

// ClientEvent is the payload of a client's events.
type ClientEvent struct {
	ID string    `json:"id" format:"uuid"`
	At time.Time `json:"at"`
}

// LinkEvent is the payload of the client linked and unlinked events.
type LinkEvent struct {
	AgencyID string    `json:"agency_id" format:"uuid"`
	ClientID string    `json:"client_id" format:"uuid"`
	At       time.Time `json:"at"`
}

func linkEvent(change string, h *Hook[LinkData]) *Def[LinkEvent] {
	return define("atrium.crm.client."+change, func(p LinkEvent) (Webhook, error) {
		return h.To(Tenant{Agency, p.AgencyID}, LinkData{p.AgencyID, p.ClientID}), nil
	})
}

// KeyEvent is the payload of the API key events: the CRM publishes them,
// the gateway evicts a revoked key from its cache. It never carries a
// secret or a digest.
type KeyEvent struct {
	KeyID     string     `json:"key_id" format:"uuid"`
	SiteID    string     `json:"site_id,omitempty" format:"uuid"`
	AgencyID  string     `json:"agency_id,omitempty" format:"uuid"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	At        time.Time  `json:"at"`
}

// MemberEvent is the payload of atrium.crm.member.updated.
type MemberEvent struct {
	ID       string `json:"id" format:"uuid"`
	AgencyID string `json:"agency_id" format:"uuid"`
	// UserID is the member's sign-in, when they accepted an invitation.
	UserID string `json:"user_id,omitempty" format:"uuid"`
	// Removed is set when the member was deleted.
	Removed bool      `json:"removed,omitempty"`
	At      time.Time `json:"at"`
}

// SessionsEvent is the payload of atrium.crm.session.ended: the ids of the
// sessions ended, and the user they were of.
type SessionsEvent struct {
	UserID     string    `json:"user_id" format:"uuid"`
	SessionIDs []string  `json:"session_ids"`
	At         time.Time `json:"at"`
}

// The data service's events (stream ATRIUM_DATA).
var (
	// RowsInserted is rows loaded into a client's dataset.
	RowsInserted = rowsEvent("inserted")
	// RowsUpdated is rows of a client's dataset replaced by a write of
	// the actions service (a row rewritten unchanged is not counted).
	RowsUpdated = rowsEvent("updated")
)

// RowsEvent is the payload of the rows events: how many rows of a
// client's dataset a transaction inserted or replaced.
type RowsEvent struct {
	ClientID string    `json:"client_id" format:"uuid"`
	Resource string    `json:"resource"`
	Count    int       `json:"count"`
	At       time.Time `json:"at"`
}

func rowsEvent(change string) *Def[RowsEvent] {
	return define("atrium.data.rows."+change, func(p RowsEvent) (Webhook, error) {
		return hookDatasetChanged.To(Tenant{Client, p.ClientID}, DatasetData{p.ClientID, p.Resource, p.Count}), nil
	})
}

// The actions service's events (stream ATRIUM_ACTIONS).
var (
	// RunQueued is an asynchronous run accepted with its credits reserved.
	RunQueued = define[RunStageEvent]("atrium.actions.queued.{action}", nil)
	// RunStarted is a worker beginning an asynchronous run (again if it is
	// queued again after its worker stopped).
	RunStarted = define[RunStageEvent]("atrium.actions.started.{action}", nil)
	// RunCompleted is every finished run, synchronous or not: success,
	// error or canceled. Its id is the run's.
	RunCompleted = define("atrium.actions.completed.{action}", func(p RunCompletedEvent) (Webhook, error) {
		h := hookRunFailed
		switch p.Status {
		case "success":
			h = hookRunSucceeded
		case "canceled":
			h = hookRunCanceled
		}
		state := p.State
		if state == "" {
			state = p.Status // published before runs had a state: a finished run's is its status
		}
		return h.To(Tenant{Agency, p.AgencyID}, RunData{p.RunID, p.Action, p.ClientID, p.AgencyID, state, p.Status, p.StatusCode, p.CreditsSpent}), nil
	})
	// ReportReady is a generate_report run that succeeded, in the
	// transaction of its completion: the report's files are stored.
	ReportReady = define("atrium.actions.report.ready", func(p ReportReadyEvent) (Webhook, error) {
		return hookReportReady.To(Tenant{Agency, p.AgencyID}, ReportData(p)), nil
	})
	// CreditsChanged is an administrator's grant or removal.
	CreditsChanged = define("atrium.actions.credits.changed", func(p CreditsChangedEvent) (Webhook, error) {
		return hookCreditsChanged.To(Tenant{Agency, p.AgencyID}, CreditsChangedData{p.AgencyID, p.Added, p.Balance}), nil
	})
)

// The schedules' events (the actions service's stream too).
var (
	// ScheduleRunSkipped is a slot a schedule did not run (credits, its
	// cap, or an overlap).
	ScheduleRunSkipped = define("atrium.actions.schedule.run_skipped", func(p ScheduleEvent) (Webhook, error) {
		return hookScheduleSkipped.To(Tenant{Agency, p.AgencyID}, p.data()), nil
	})
	// SchedulePaused is a schedule pausing itself after too many failed
	// or skipped slots in a row.
	SchedulePaused = define("atrium.actions.schedule.paused", func(p ScheduleEvent) (Webhook, error) {
		return hookSchedulePaused.To(Tenant{Agency, p.AgencyID}, p.data()), nil
	})
)

// ScheduleEvent is the payload of the schedule events.
type ScheduleEvent struct {
	ScheduleID string    `json:"schedule_id" format:"uuid"`
	AgencyID   string    `json:"agency_id" format:"uuid"`
	ClientID   string    `json:"client_id" format:"uuid"`
	Action     string    `json:"action"`
	Slot       time.Time `json:"slot"`
	Reason     string    `json:"reason"`
	Failures   int       `json:"failures"`
	At         time.Time `json:"at"`
}

func (p ScheduleEvent) data() ScheduleData {
	return ScheduleData{p.ScheduleID, p.AgencyID, p.ClientID, p.Action, p.Slot, p.Reason, p.Failures}
}

// RunStageEvent is the payload of a queued or started event.
type RunStageEvent struct {
	RunID    string `json:"run_id" format:"uuid"`
	Action   string `json:"action"`
	ClientID string `json:"client_id" format:"uuid"`
	AgencyID string `json:"agency_id" format:"uuid"`
	// State is queued or running.
	State string `json:"state" enum:"queued,running"`
	// CreditsReserved is what the run holds until it ends.
	CreditsReserved Credits   `json:"credits_reserved"`
	At              time.Time `json:"at"`
}

// ReportReadyEvent is the payload of report.ready, and its webhook's data:
// the run, its client and the report's files.
type ReportReadyEvent struct {
	RunID      string `json:"run_id" format:"uuid"`
	ClientID   string `json:"client_id" format:"uuid"`
	AgencyID   string `json:"agency_id" format:"uuid"`
	Title      string `json:"title"`
	PeriodFrom string `json:"period_from" desc:"the period's first day, YYYY-MM-DD"`
	PeriodTo   string `json:"period_to" desc:"the period's last day, YYYY-MM-DD"`
	HTMLURL    string `json:"html_url" format:"uri"`
	PDFURL     string `json:"pdf_url" format:"uri"`
}

// ReportData is the data of the report.ready webhook type.
type ReportData ReportReadyEvent

// RunCompletedEvent is the payload of a completion event.
type RunCompletedEvent struct {
	RunID    string `json:"run_id" format:"uuid"`
	Action   string `json:"action"`
	ClientID string `json:"client_id" format:"uuid"`
	AgencyID string `json:"agency_id" format:"uuid"`
	// State is the run's state as its resource shows it: success, error
	// or canceled (the same as Status, which came first; events published
	// before it lack it).
	State      string `json:"state" event:"optional"`
	Status     string `json:"status" enum:"success,error,canceled"`
	StatusCode int    `json:"status_code"`
	// Data is the action's response data: the record, or {"error"}.
	Data map[string]any `json:"data"`
	// CreditsSpent is zero unless the run succeeded.
	CreditsSpent Credits `json:"credits_spent"`
	// ProviderCost is what the providers charged for the run, in US
	// dollars (spent whether or not the run succeeded); Cached says its
	// data came from the SEO cache.
	ProviderCost float64   `json:"provider_cost"`
	Cached       bool      `json:"cached"`
	StartedAt    time.Time `json:"started_at"`
	FinishedAt   time.Time `json:"finished_at"`
}

// CreditsChangedEvent is the payload of credits.changed.
type CreditsChangedEvent struct {
	AgencyID string       `json:"agency_id" format:"uuid"`
	Added    CreditsDelta `json:"added"`
	Balance  Credits      `json:"balance"`
	At       time.Time    `json:"at"`
}

// The webhooks service's events (stream ATRIUM_WEBHOOKS).
var (
	// WebhookDisabled is Atrium disabling an endpoint (410 Gone, or
	// failing for --webhook-disable-after); the tenant's other endpoints
	// are told.
	WebhookDisabled = define("atrium.webhooks.webhook.disabled", func(p WebhookDisabledEvent) (Webhook, error) {
		if p.Owner != Site && p.Owner != Agency {
			return Webhook{}, fmt.Errorf("owner %q is neither site nor agency", p.Owner)
		}
		return hookWebhookDisabled.To(Tenant{p.Owner, p.TenantID}, WebhookDisabledData{p.WebhookID, p.URL, p.Reason, p.DisabledAt}), nil
	})
)

// WebhookDisabledEvent is the payload of webhook.disabled.
type WebhookDisabledEvent struct {
	WebhookID  string    `json:"webhook_id" format:"uuid"`
	Owner      Owner     `json:"owner" enum:"site,agency"`
	TenantID   string    `json:"tenant_id" format:"uuid"`
	URL        string    `json:"url"`
	Reason     string    `json:"reason"`
	DisabledAt time.Time `json:"disabled_at"`
}
