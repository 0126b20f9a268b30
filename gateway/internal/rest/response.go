package rest

import (
	"context"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"
)

// CreatedStatus answers 201 Created for every RPC named Create*: a new
// object exists at the server. Other successes stay 200.
func CreatedStatus(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
	method, ok := runtime.RPCMethod(ctx)
	if !ok {
		return nil
	}
	if i := strings.LastIndexByte(method, '/'); i >= 0 && strings.HasPrefix(method[i+1:], "Create") {
		w.WriteHeader(http.StatusCreated)
	}
	return nil
}
