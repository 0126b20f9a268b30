// Package jetstream feeds the webhooks service from Atrium's event
// streams: a durable consumer on each service's stream (ATRIUM_CRM,
// ATRIUM_COLLECTIONS, ATRIUM_DATA, ATRIUM_ACTIONS) hands every event to a
// handler (app.Fanout) and acknowledges it only once handled, so that an
// event committed is fanned out even if the webhooks service, NATS or the
// database were down for a while. Replicas share each durable consumer,
// so each event is handled by one of them (and at worst twice, which the
// fan-out absorbs).
package jetstream
