package app

import (
	"context"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/webhooks/internal/translate"
)

// Test sends a webhook.test event to t's endpoint id at once (POST
// /api/v1/webhooks/{id}/test) and returns its delivery after that first
// attempt: the caller sees at once whether its receiver verifies and
// answers. A failed test is retried on the schedule like any delivery.
func (d *Deliverer) Test(ctx context.Context, t Tenant, id string) (Delivery, error) {
	id, err := value.PathID("webhook", id)
	if err != nil {
		return Delivery{}, err
	}
	ep, err := d.Store.Endpoint(ctx, t, id)
	if err != nil {
		return Delivery{}, notFound(err, id)
	}
	now := d.now()
	ev, err := translate.Of("evt_test_"+uuid.NewString(), now,
		events.WebhookTest.To(events.Tenant{Kind: events.Any, ID: ep.ID}, events.WebhookTestData{WebhookID: ep.ID}))
	if err != nil {
		return Delivery{}, err
	}
	body, err := ev.Body()
	if err != nil {
		return Delivery{}, err
	}
	// Due only after a lease's time, so that no deliverer claims it while
	// this call makes its first attempt.
	del := Delivery{ID: uuid.Must(uuid.NewV7()).String(), EndpointID: ep.ID, Tenant: t, EventID: ev.ID, EventType: ev.Type,
		Body: body, Status: Pending, NextAttemptAt: now.Add(d.lease()), CreatedAt: now}
	if err := d.Store.AddDeliveries(ctx, []Delivery{del}); err != nil {
		return Delivery{}, err
	}
	if err := recordAfter(ctx, d.Store, change(t, "webhook.tested", "webhook", ep.ID), now); err != nil {
		return Delivery{}, err
	}
	if err := d.attempt(ctx, Due{Delivery: del, Endpoint: ep}, true); err != nil {
		return Delivery{}, err
	}
	out, err := d.Store.Delivery(ctx, t, ep.ID, del.ID)
	return out, notFound(err, id)
}
