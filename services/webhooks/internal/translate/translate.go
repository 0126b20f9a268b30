package translate

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/atrium-hq/atrium/platform/events"
)

// Audience is whose endpoints receive an event: a site or an agency, or a
// client for a dataset's change (every agency the client is linked to).
type Audience = events.Tenant

// Client addresses the agencies a client is linked to.
const Client = events.Client

// Event is a webhook event, ready to be delivered.
type Event struct {
	// ID is the source event's id, the webhook-id of every delivery.
	ID       string
	Type     string
	At       time.Time
	Audience Audience
	// Data is the event's data, by its type's schema. It is kept as the
	// JSON object the typed data marshals to: the body then has its keys
	// in the order it always had (sorted), and the event stream hands it
	// to structpb as is.
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
// payload that is not its definition's (a field missing or of another
// type) is an error: the publisher and the definition disagree, which a
// test must catch.
func Translate(id, subject string, payload []byte, at time.Time) (Event, bool, error) {
	w, ok, err := events.ToWebhook(subject, payload)
	if err != nil {
		return Event{}, false, fmt.Errorf("%w (event %s)", err, id)
	}
	if !ok {
		return Event{}, false, nil
	}
	ev, err := Of(id, at, w)
	return ev, err == nil, err
}

// Of is the webhook event w with its envelope: the id of every delivery
// of it and its time.
func Of(id string, at time.Time, w events.Webhook) (Event, error) {
	b, err := json.Marshal(w.Data)
	if err != nil {
		return Event{}, fmt.Errorf("event %s: %s data: %w", id, w.Type, err)
	}
	var data map[string]any
	if err := json.Unmarshal(b, &data); err != nil {
		return Event{}, fmt.Errorf("event %s: %s data is not a JSON object: %w", id, w.Type, err)
	}
	return Event{ID: id, Type: w.Type, At: at, Audience: w.To, Data: data}, nil
}
