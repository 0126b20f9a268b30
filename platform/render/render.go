// Package render is how a response's JSON is built once. A service that
// serves a public route renders the HTTP response body itself, straight from
// its domain values (or from JSON its store already holds), when the caller
// asks for it; the gateway then writes those bytes to the client without
// decoding or re-encoding them. Internal gRPC callers that do not ask get
// the typed protobuf response as usual.
//
// The contract, shared by every service and the gateway:
//
//   - The caller asks with the gRPC metadata entry x-atrium-render: json.
//     The gateway sends it on every public route.
//   - A response message that can be rendered has a bytes field named
//     rendered_json. When asked, the service puts the complete JSON body in
//     it and leaves the other fields unset; the gateway writes it as is.
//   - The JSON is exactly what the typed message would give through the
//     gateway's protojson options (snake_case names, unset messages as null,
//     zero values present, timestamps as RFC 3339 UTC): the Writer here
//     follows protojson's formats so that both paths agree.
package render

import (
	"context"

	"google.golang.org/grpc/metadata"
)

// MetadataKey is the gRPC metadata key of the request to render.
const MetadataKey = "x-atrium-render"

// JSON is the value of MetadataKey that asks for a rendered JSON body.
const JSON = "json"

// Field is the name of the bytes field that carries the rendered body.
const Field = "rendered_json"

// Requested reports whether the caller of a gRPC handler asked for the
// rendered JSON body.
func Requested(ctx context.Context) bool {
	v := metadata.ValueFromIncomingContext(ctx, MetadataKey)
	return len(v) == 1 && v[0] == JSON
}

// Request returns the metadata pair that asks for rendering, for callers.
func Request() metadata.MD { return metadata.Pairs(MetadataKey, JSON) }
