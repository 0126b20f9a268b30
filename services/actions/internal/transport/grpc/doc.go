// Package grpc is the actions service's gRPC transport. It registers nothing
// yet besides the health service every Atrium server has.
package grpc
