// Package eventtypes is the catalog of the events a webhook can subscribe
// to, as the webhooks service uses it: each type's name, the kind of
// tenant whose endpoints receive it, its description and the JSON Schema
// of its data. The types are declared in platform/events, with the events
// that become them, and their schemas are generated there from Go types.
// The endpoint API validates subscriptions against this catalog, the
// deliverer matches events with it, and GET /api/v1/event-types lists it,
// so that what is documented, accepted and delivered cannot drift apart
// (as the actions catalog does for actions).
package eventtypes
