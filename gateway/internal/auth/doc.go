// Package auth authenticates callers at the gateway: API keys on the public
// listener, resolved through the CRM service and cached briefly; session
// cookies of signed-in people, resolved and cached the same way, with the
// membership and site a request acts for (Atrium-Agency, Atrium-Site) and
// the CSRF token; and the admin token on the admin listener. What it
// produces is a principal.Principal, which the gateway signs into every
// upstream call.
package auth
