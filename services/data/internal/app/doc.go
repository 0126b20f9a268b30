// Package app is the data service's domain: the catalog of the 31
// per-client datasets of the data read interface (GET /api/v1/data), the
// shape and validation of their rows, the rules for paging, ordering and
// filtering them, and the live check of a client's link to the caller's
// agency through the CRM.
package app
