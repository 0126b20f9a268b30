// Package translate turns an event of Atrium's streams (a NATS subject and
// its JSON payload, as docs/events.md lists them) into the webhook event
// that announces it: its type, the tenant whose endpoints receive it, and
// its thin data (the fields of the type's schema in eventtypes, nothing
// more: a completion event's article stays in the run).
//
// Events that no webhook type announces (a key created, a site created)
// translate to nothing. A dataset's change concerns a client, which may be
// linked to several agencies: it is addressed to the client, and the
// deliverer asks the CRM which agencies receive it.
package translate
