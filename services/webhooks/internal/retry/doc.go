// Package retry is when a webhook delivery is tried again, and what an
// attempt's answer means for it: the Standard Webhooks schedule (or the
// one --webhook-retry-schedule sets) with jitter, Retry-After honoured on
// 429 and 503, success only on a 2xx, a redirect a failure (redirects are
// not followed), and 410 Gone the receiver's way of saying "stop".
package retry
