// Package grpcserver is the webhooks service's gRPC transport: it takes
// the caller's tenants from the verified principal (a key's site, its
// agency, or both), converts between protobuf messages and domain types,
// and calls the use cases. Errors pass through unchanged; the server's
// interceptor (platform/apperr) turns them into status codes.
package grpcserver
