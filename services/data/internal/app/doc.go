// Package app is the data service's domain: the catalog of the per-client
// datasets of the data read interface (GET /api/v1/data), the spec's 31 and
// Atrium's own, the shape and validation of their rows, the rules for
// paging, ordering and filtering them, the live check of a client's link to
// the caller's agency through the CRM, and the writes of the records the
// actions service creates.
package app
