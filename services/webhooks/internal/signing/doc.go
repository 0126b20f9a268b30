// Package signing is the Standard Webhooks 1.0 wire format's security: the
// endpoint secrets (whsec_ followed by the base64 of 32 random bytes) and
// the webhook-signature header, an HMAC-SHA256 of "{webhook-id}.{webhook-
// timestamp}.{body}" keyed with a secret's decoded bytes, as v1,<base64>.
//
// During a secret's rotation a delivery carries one signature per secret
// still valid, space-separated, so that a receiver verifying with either
// accepts it: the spec's way of rotating without a gap. Receivers verify
// with any Standard Webhooks library; the tests use the reference Go one.
package signing
