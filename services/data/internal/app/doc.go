// Package app will hold the data service's domain: the 31 per-client
// datasets of the data read interface (GET /api/v1/data), their rows, and
// the rules for paging, ordering and filtering them. The service runs today
// with its gRPC server, health check, schema and outbox in place; the read
// interface itself lands with the data issue.
package app
