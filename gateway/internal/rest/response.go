package rest

import (
	"context"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"
)

// ETagMetadata is the response header metadata in which a service gives
// the entity tag of the object it returns; the gateway sends it as ETag.
const ETagMetadata = "etag"

// IfMatchMetadata is the request metadata carrying the client's If-Match
// header, the one client header that reaches a service.
const IfMatchMetadata = "if-match"

// IncomingHeader lets only If-Match through as gRPC metadata: the
// principal the gateway signs is the only identity a service sees.
func IncomingHeader(key string) (string, bool) {
	if strings.EqualFold(key, "If-Match") {
		return IfMatchMetadata, true
	}
	return "", false
}

// ResponseHeaders sets the ETag a service gave and answers 201 Created for
// every RPC named Create*: a new object exists at the server. Other
// successes stay 200.
func ResponseHeaders(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		if tags := md.HeaderMD.Get(ETagMetadata); len(tags) == 1 {
			w.Header().Set("ETag", tags[0])
		}
	}
	method, ok := runtime.RPCMethod(ctx)
	if !ok {
		return nil
	}
	if i := strings.LastIndexByte(method, '/'); i >= 0 && strings.HasPrefix(method[i+1:], "Create") {
		w.WriteHeader(http.StatusCreated)
	}
	return nil
}
