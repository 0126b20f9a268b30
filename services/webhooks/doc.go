// Package webhooks is the module of the webhooks service: it delivers every
// event of a tenant to the endpoints the tenant registered, signed as
// Standard Webhooks 1.0 specifies, retried on the standard schedule, logged
// and replayable (issue 14). It is being built; its packages so far:
//
//   - internal/signing: the secrets and the signatures of the wire format.
//   - internal/eventtypes: the event types an endpoint can subscribe to.
//   - internal/retry: the retry schedule and what an attempt's answer means.
//   - internal/translate: the stream events as the webhook events that
//     announce them.
//   - internal/app: the endpoints and their use cases, the fan-out of
//     stream events into deliveries, the deliverer (signed attempts, the
//     schedule, 410 and long failure disabling an endpoint, no redirects,
//     the address guard at every connection, its loop, the webhook.test
//     event, attempt metrics), and the store
//     ports with their contract suite (app/storetest), met by the memory
//     and PostgreSQL adapters.
//   - internal/adapters/jetstream: the durable consumers of the services'
//     streams that feed the fan-out.
//
// Still to come (issue 14): the gRPC service and the gateway's routes, the
// binary, atrium serve and the Helm chart, the webhook.disabled event, the
// backlog metrics and the attempt spans, the end-to-end suite and make
// bench-webhooks.
package webhooks
