package translate

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

// Audience is whose endpoints receive an event.
type Audience struct {
	// Kind is eventtypes.Site or eventtypes.Agency, or Client for a
	// dataset's change (every agency the client is linked to).
	Kind eventtypes.Owner
	ID   string
}

// Client addresses the agencies a client is linked to.
const Client eventtypes.Owner = "client"

// Event is a webhook event, ready to be delivered.
type Event struct {
	// ID is the source event's id, the webhook-id of every delivery.
	ID       string
	Type     string
	At       time.Time
	Audience Audience
	// Data is the event's data, by its type's schema.
	Data map[string]any
}

// Body is the delivery body Standard Webhooks prescribes: {"type",
// "timestamp", "data"}.
func (e Event) Body() ([]byte, error) {
	return json.Marshal(struct {
		Type      string         `json:"type"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}{e.Type, e.At.UTC().Format(time.RFC3339Nano), e.Data})
}

// Translate returns the webhook event announcing the stream event (id,
// subject, payload), and false for an event no webhook type announces. A
// payload that does not have the fields its subject promises is an error:
// the stream and this package disagree, which a test must catch.
func Translate(id, subject string, payload []byte, at time.Time) (Event, bool, error) {
	var p map[string]any
	if err := json.Unmarshal(payload, &p); err != nil {
		return Event{}, false, fmt.Errorf("event %s on %s: payload is not a JSON object: %w", id, subject, err)
	}
	ev := Event{ID: id, At: at}
	pick := func(fields ...string) (map[string]any, error) {
		out := make(map[string]any, len(fields))
		for _, f := range fields {
			v, ok := p[f]
			if !ok {
				return nil, fmt.Errorf("event %s on %s: payload has no %q", id, subject, f)
			}
			out[f] = v
		}
		return out, nil
	}
	str := func(f string) string { s, _ := p[f].(string); return s }
	var err error
	switch {
	case strings.HasPrefix(subject, "atrium.collections.") && strings.Contains(subject, ".item."):
		// atrium.collections.<site_id>.<slug>.item.<change>
		change := subject[strings.LastIndex(subject, ".item.")+len(".item."):]
		ev.Type = "item." + change
		ev.Data, err = pick("id", "site_id", "collection", "is_published", "version")
		ev.Audience = Audience{eventtypes.Site, str("site_id")}
	case isAssetEvent(subject, "created"), isAssetEvent(subject, "deleted"):
		// atrium.collections.<site_id>.asset.<change>
		ev.Type = "asset." + subject[strings.LastIndexByte(subject, '.')+1:]
		ev.Data, err = pick("id", "site_id", "content_type", "size")
		ev.Audience = Audience{eventtypes.Site, str("site_id")}
	case subject == "atrium.crm.prospect.created", subject == "atrium.crm.prospect.updated",
		subject == "atrium.crm.deal.created", subject == "atrium.crm.deal.updated":
		ev.Type = strings.TrimPrefix(subject, "atrium.crm.")
		ev.Data, err = pick("id", "agency_id")
		ev.Audience = Audience{eventtypes.Agency, str("agency_id")}
	case subject == "atrium.crm.client.linked", subject == "atrium.crm.client.unlinked":
		ev.Type = strings.TrimPrefix(subject, "atrium.crm.")
		ev.Data, err = pick("agency_id", "client_id")
		ev.Audience = Audience{eventtypes.Agency, str("agency_id")}
	case strings.HasPrefix(subject, "atrium.actions.completed."):
		switch str("status") {
		case "success":
			ev.Type = "action_run.succeeded"
		case "canceled":
			ev.Type = "action_run.canceled"
		default:
			ev.Type = "action_run.failed"
		}
		if _, ok := p["state"]; !ok {
			// Published before runs had a state: a finished run's is its
			// status.
			p["state"] = str("status")
		}
		ev.Data, err = pick("run_id", "action", "client_id", "agency_id", "state", "status", "status_code", "credits_spent")
		ev.Audience = Audience{eventtypes.Agency, str("agency_id")}
	case subject == "atrium.actions.credits.changed":
		ev.Type = "credits.changed"
		ev.Data, err = pick("agency_id", "added", "balance")
		ev.Audience = Audience{eventtypes.Agency, str("agency_id")}
	case subject == "atrium.webhooks.webhook.disabled":
		ev.Type = "webhook.disabled"
		ev.Data, err = pick("webhook_id", "url", "reason", "disabled_at")
		ev.Audience = Audience{eventtypes.Owner(str("owner")), str("tenant_id")}
		if ev.Audience.Kind != eventtypes.Site && ev.Audience.Kind != eventtypes.Agency {
			return Event{}, false, fmt.Errorf("event %s on %s: owner %q is neither site nor agency", id, subject, ev.Audience.Kind)
		}
	case subject == "atrium.data.rows.inserted", subject == "atrium.data.rows.updated":
		ev.Type = "dataset.changed"
		ev.Data, err = pick("client_id", "resource", "count")
		ev.Audience = Audience{Client, str("client_id")}
	default:
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, err
	}
	if _, known := eventtypes.Lookup(ev.Type); !known {
		return Event{}, false, fmt.Errorf("event %s on %s: %s is not an event type", id, subject, ev.Type)
	}
	if ev.Audience.ID == "" {
		return Event{}, false, fmt.Errorf("event %s on %s: no tenant to address it to", id, subject)
	}
	return ev, true, nil
}

// isAssetEvent reports whether subject is atrium.collections.<site_id>.asset.<change>:
// five tokens, where an item's subject has six (a collection's slug, which
// may be "asset", then item).
func isAssetEvent(subject, change string) bool {
	parts := strings.Split(subject, ".")
	return len(parts) == 5 && parts[0] == "atrium" && parts[1] == "collections" && parts[3] == "asset" && parts[4] == change
}
