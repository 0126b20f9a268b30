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

// IdempotencyKeyMetadata is the request metadata carrying the client's
// Idempotency-Key header (the action interface).
const IdempotencyKeyMetadata = "idempotency-key"

// IncomingHeader lets only If-Match and Idempotency-Key through as gRPC
// metadata: the principal the gateway signs is the only identity a service
// sees.
func IncomingHeader(key string) (string, bool) {
	switch {
	case strings.EqualFold(key, "If-Match"):
		return IfMatchMetadata, true
	case strings.EqualFold(key, "Idempotency-Key"):
		return IdempotencyKeyMetadata, true
	}
	return "", false
}

// headerMetadata maps the response header metadata services set to the HTTP
// headers the gateway sends, on successes and errors alike. No other
// metadata reaches the client.
var headerMetadata = map[string]string{
	ETagMetadata:                    "ETag",
	"atrium-ai-credits-remaining":   "Atrium-AI-Credits-Remaining",
	"atrium-data-credits-remaining": "Atrium-Data-Credits-Remaining",
	"idempotent-replayed":           "Idempotent-Replayed",
	"cache-control":                 "Cache-Control",
}

// responseMetadataHeaders writes the headers of headerMetadata the service
// set.
func responseMetadataHeaders(ctx context.Context, w http.ResponseWriter) {
	md, ok := runtime.ServerMetadataFromContext(ctx)
	if !ok {
		return
	}
	for key, header := range headerMetadata {
		if v := md.HeaderMD.Get(key); len(v) == 1 {
			w.Header().Set(header, v[0])
		}
	}
}

// ResponseHeaders sets the headers a service gave (the ETag, credit
// balances) and answers 201 Created for every RPC named Create*: a new
// object exists at the server. Other successes stay 200.
func ResponseHeaders(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
	responseMetadataHeaders(ctx, w)
	method, ok := runtime.RPCMethod(ctx)
	if !ok {
		return nil
	}
	if i := strings.LastIndexByte(method, '/'); i >= 0 && strings.HasPrefix(method[i+1:], "Create") {
		w.WriteHeader(http.StatusCreated)
	}
	return nil
}
