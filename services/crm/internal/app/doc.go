// Package app is the CRM service's domain and use cases: agencies, their
// members and clients, API keys, and the prospect reports and deals of the
// agency CRM list interface.
//
// It owns the ports it needs (Store, SiteDirectory) and knows nothing of
// gRPC, SQL or NATS. Every error it returns to a caller is an apperr.Error
// whose message says what was wrong and what is allowed.
package app
