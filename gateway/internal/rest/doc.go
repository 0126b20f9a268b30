// Package rest holds the pieces that make grpc-gateway speak Atrium's JSON
// contract: snake_case JSON with unset messages as null, strict parsing of
// bodies and query parameters with messages that name the problem, one
// error body shape ({"error": "..."}) for every failure including routing
// failures (404, and 405 instead of grpc-gateway's 501), the single mapping
// from gRPC codes to HTTP statuses, and 201 for creations.
package rest
