// Package grpc is the data service's gRPC transport. It registers nothing
// yet besides the health service every Atrium server has.
package grpc
