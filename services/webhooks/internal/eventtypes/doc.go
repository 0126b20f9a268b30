// Package eventtypes is the catalog of the events a webhook can subscribe
// to, declared once: each type's name, the kind of tenant whose endpoints
// receive it, its description and the JSON Schema of its data. The endpoint
// API validates subscriptions against it, the deliverer matches events with
// it, and GET /api/v1/event-types lists it, so that what is documented,
// accepted and delivered cannot drift apart (as the actions catalog does
// for actions).
package eventtypes
