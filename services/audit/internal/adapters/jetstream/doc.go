// Package jetstream feeds the audit service from the audit trail's stream
// (ATRIUM_AUDIT): one durable consumer, shared by every replica, hands
// each event to a handler (app.Recorder) and acknowledges it only once
// kept, so that an event committed with its change is kept even if the
// audit service, NATS or the database were down for a while. An event
// handled twice (a redelivery, two replicas) is kept once: the store adds
// by the message's id.
package jetstream
