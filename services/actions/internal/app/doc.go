// Package app will hold the actions service's domain: the actions of the
// action interface (POST /api/v1/data), their credits, and the completion
// events they publish through the outbox. The service runs today with its
// gRPC server, health check, schema and outbox in place; the actions
// themselves land with the actions issue.
package app
