// Package grpcserver is the CRM service's gRPC transport: it checks the
// caller's principal, converts between protobuf messages and domain types,
// and calls the use cases. Errors pass through unchanged; the server's
// interceptor (platform/apperr) turns them into status codes. (Its name is
// not grpc so that it neither shadows google.golang.org/grpc nor needs an
// alias.)
package grpcserver
