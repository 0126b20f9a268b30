// Package auth authenticates callers at the gateway: API keys on the public
// listener, resolved through the CRM service and cached briefly, and the
// admin token on the admin listener. What it produces is a
// principal.Principal, which the gateway signs into every upstream call.
package auth
