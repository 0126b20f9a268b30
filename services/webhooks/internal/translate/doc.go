// Package translate turns an event of Atrium's streams (a NATS subject and
// its JSON payload) into the webhook event that announces it: its type,
// the tenant whose endpoints receive it, and its thin data. What an event
// becomes is its definition's, in platform/events, which parses the
// payload into its Go type; this package adds the envelope a delivery and
// an event stream carry (the event's id and time, the Standard Webhooks
// body).
//
// Events that no webhook type announces (a key created, a site created)
// translate to nothing, and so do subjects no definition knows (a newer
// publisher's, which must not be retried forever). A dataset's change
// concerns a client, which may be linked to several agencies: it is
// addressed to the client, and the deliverer asks the CRM which agencies
// receive it.
package translate
