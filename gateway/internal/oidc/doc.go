// Package oidc is the gateway as an OpenID Connect relying party: single
// sign-on with the authorization code flow and PKCE (RFC 7636), the state
// and nonce kept in the browser that started the flow. It answers who the
// provider says signed in, with a verified email; matching that email to a
// member of an agency and opening a session is the CRM's (the gateway asks
// it, as for a password sign-in).
package oidc
