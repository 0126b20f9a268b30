// Package linkcache remembers, for a few seconds, the CRM's answer that a
// client is linked to an agency, so that a burst of submissions for one
// client asks the CRM once instead of once each (the check was 8.5% of the
// actions service's CPU under the asynchronous submission bench, and a
// round trip to the CRM and its database on every 202).
//
// An unlink must still take effect at once, on every replica: each
// replica subscribes to the CRM's client events (atrium.crm.client.unlinked
// and .updated, plain NATS, no queue group, so that every replica hears
// each one) and forgets the pair or the client on each. What the events
// cannot cover is bounded: an entry lives at most the TTL
// (--client-link-cache-ttl), the cache is emptied and bypassed while the
// NATS connection is down (events missed then would never come), and an
// answer fetched while an event arrived is not kept. Only "linked" is
// remembered; "not linked" and errors are asked again every time, so a new
// link works at once.
package linkcache
