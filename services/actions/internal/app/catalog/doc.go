// Package catalog declares the actions of the action interface, each once
// (catalog.go): name, description, fields, cost, the dataset it writes and
// the handler that does its work. Everything that describes an action
// follows from its declaration: request validation (validate.go:
// ParseRequest checks a request body against the action's fields, each by
// the platform's rule for what it declares, platform/value, and a URL the
// service fetches by the outbound address rule, platform/netguard; then
// CheckKnown asks a provider about a value only it can judge, such as a
// location the SEO data provider has figures for),
// discovery (GET /api/v1/actions lists All) and docs/actions.md.
//
// A new action is a declaration here and a handler in package handlers.
package catalog
