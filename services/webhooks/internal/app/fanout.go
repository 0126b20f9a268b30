package app

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/propagation"

	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
	"github.com/atrium-hq/atrium/services/webhooks/internal/translate"
)

// Links answers which agencies a client is linked to: the CRM's links,
// for events that concern a client (a dataset's change).
type Links interface {
	AgenciesOf(ctx context.Context, clientID string) ([]string, error)
}

// Fanout turns each event of Atrium's streams into a pending delivery per
// subscribed endpoint of the tenants it concerns. It runs for every event
// the service consumes; an event consumed twice adds nothing the second
// time (AddDeliveries is once per endpoint and event).
type Fanout struct {
	Store Store
	Links Links
	Now   func() time.Time
	// Added, if set, is called after deliveries were added (the local
	// deliverer's Wake).
	Added func()
}

// Handle fans out one stream event and returns how many deliveries it
// added (or would have, if it was seen before). The span context in ctx
// (the consumer continues the write's trace from the message's headers)
// is kept on each delivery, for its attempts' spans to link to.
func (f *Fanout) Handle(ctx context.Context, id, subject string, payload []byte, at time.Time) (int, error) {
	ev, ok, err := translate.Translate(id, subject, payload, at)
	if err != nil || !ok {
		return 0, err
	}
	tenants := []Tenant{{Kind: ev.Audience.Kind, ID: ev.Audience.ID}}
	if ev.Audience.Kind == translate.Client {
		agencies, err := f.Links.AgenciesOf(ctx, ev.Audience.ID)
		if err != nil {
			return 0, fmt.Errorf("event %s: the agencies of client %s: %w", id, ev.Audience.ID, err)
		}
		tenants = tenants[:0]
		for _, a := range agencies {
			tenants = append(tenants, Tenant{Kind: eventtypes.Agency, ID: a})
		}
	}
	body, err := ev.Body()
	if err != nil {
		return 0, err
	}
	now := stamp(time.Now())
	if f.Now != nil {
		now = stamp(f.Now())
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	var ds []Delivery
	for _, t := range tenants {
		eps, err := f.Store.Subscribers(ctx, t, ev.Type)
		if err != nil {
			return 0, err
		}
		for _, e := range eps {
			ds = append(ds, Delivery{ID: uuid.Must(uuid.NewV7()).String(), EndpointID: e.ID, Tenant: t, EventID: ev.ID, EventType: ev.Type,
				Body: body, Status: Pending, NextAttemptAt: now, CreatedAt: now, TraceParent: carrier["traceparent"], TraceState: carrier["tracestate"]})
		}
	}
	if len(ds) == 0 {
		return 0, nil
	}
	if err := f.Store.AddDeliveries(ctx, ds); err != nil {
		return 0, err
	}
	if f.Added != nil {
		f.Added()
	}
	return len(ds), nil
}
