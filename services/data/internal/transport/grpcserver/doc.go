// Package grpcserver is the data service's gRPC transport: protobuf
// conversion, the rendered JSON of the read, and calls into the use cases.
// Who may call what is declared on each RPC in the proto files and enforced
// by the interceptors. (Its name is not grpc so that it neither shadows
// google.golang.org/grpc nor needs an alias.)
package grpcserver
