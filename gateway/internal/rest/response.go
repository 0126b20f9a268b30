package rest

import (
	"context"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// ETagMetadata is the response header metadata in which a service gives
// the entity tag of the object it returns; the gateway sends it as ETag.
const ETagMetadata = "etag"

// IfMatchMetadata is the request metadata carrying the client's If-Match
// header (the collections items' precondition).
const IfMatchMetadata = "if-match"

// IdempotencyKeyMetadata is the request metadata carrying the client's
// Idempotency-Key header (the action interface).
const IdempotencyKeyMetadata = "idempotency-key"

// PreferMetadata is the request metadata carrying the client's Prefer
// header (RFC 7240: respond-async and wait on the action interface).
const PreferMetadata = "prefer"

// StatusMetadata is the response header metadata in which a service asks
// for another success status than 200 (202 for an accepted asynchronous
// run); it is not sent as a header.
const StatusMetadata = "x-http-code"

// forwarded are the only client headers that become gRPC metadata, with
// what a client may send in them: the principal the gateway signs is the
// only identity a service sees.
var forwarded = []struct {
	header, metadata string
	// like says what the header's value looks like, for the 400.
	like string
	// list is set for a header that may be sent several times: RFC 7240
	// makes several Prefer headers one list, and the service reads every
	// value in order (platform/prefer). The others are one value each.
	list bool
}{
	{"If-Match", IfMatchMetadata, `an ETag such as "3", or *`, false},
	{"Idempotency-Key", IdempotencyKeyMetadata, "such as a UUID", false},
	{"Prefer", PreferMetadata, "such as respond-async, wait=10", true},
}

// IncomingHeader is grpc-gateway's header matcher: it maps the forwarded
// headers to their metadata and drops every other header.
func IncomingHeader(key string) (string, bool) {
	for _, f := range forwarded {
		if strings.EqualFold(key, f.header) {
			return f.metadata, true
		}
	}
	return "", false
}

// CheckForwardedHeaders refuses a forwarded header that would not reach the
// service as sent. grpc-gateway silently drops a header value that is not
// valid gRPC metadata (anything outside printable ASCII), and a service
// reads an empty or second value as no header at all; either way the
// request would run without the precondition or the idempotency the client
// asked for (and an action retried with a dropped key would run and be
// charged again). So each forwarded header, when present, must be sent once
// (Prefer, a list, may come several times), non-empty, in printable ASCII
// (0x20 to 0x7E). The service applies its own rule for the value on top
// (docs/actions.md, docs/collections.md).
func CheckForwardedHeaders(h http.Header) error {
	for _, f := range forwarded {
		vs := h.Values(f.header)
		if len(vs) > 1 && !f.list {
			return status.Errorf(codes.InvalidArgument, "the %s header was sent %d times; send it once", f.header, len(vs))
		}
		for _, v := range vs {
			if v == "" {
				return status.Errorf(codes.InvalidArgument, "the %s header is empty; send a value (%s) or leave the header out", f.header, f.like)
			}
			for i := 0; i < len(v); i++ {
				if c := v[i]; c < 0x20 || c > 0x7e {
					return status.Errorf(codes.InvalidArgument,
						"the %s header must be printable ASCII characters only (%s); byte %d is 0x%02x", f.header, f.like, i+1, c)
				}
			}
		}
	}
	return nil
}

// headerMetadata maps the response header metadata services set to the HTTP
// headers the gateway sends, on successes and errors alike. No other
// metadata reaches the client.
var headerMetadata = map[string]string{ //nolint:gosec // G101: header names that mention credits, not credentials
	ETagMetadata:                    "ETag",
	"atrium-ai-credits-remaining":   "Atrium-AI-Credits-Remaining",
	"atrium-data-credits-remaining": "Atrium-Data-Credits-Remaining",
	"idempotent-replayed":           "Idempotent-Replayed",
	"cache-control":                 "Cache-Control",
	"location":                      "Location",
	"retry-after":                   "Retry-After",
	"preference-applied":            "Preference-Applied",
}

// canonicalHeaders is headerMetadata with each header's canonical form,
// the key http.Header.Set would store it under (Atrium-Ai-Credits-Remaining),
// made once rather than on every response.
var canonicalHeaders = func() map[string]string {
	m := make(map[string]string, len(headerMetadata))
	for key, header := range headerMetadata {
		m[key] = textproto.CanonicalMIMEHeaderKey(header)
	}
	return m
}()

// responseMetadataHeaders writes the headers of headerMetadata the service
// set. Each is stored as http.Header.Set stores it, with the metadata's
// own one-value slice (the metadata is the call's and not used again).
func responseMetadataHeaders(ctx context.Context, w http.ResponseWriter) {
	md, ok := runtime.ServerMetadataFromContext(ctx)
	if !ok || len(md.HeaderMD) == 0 {
		return
	}
	h := w.Header()
	for key, header := range canonicalHeaders {
		if v := md.HeaderMD[key]; len(v) == 1 {
			h[header] = v[:1:1]
		}
	}
}

// ResponseHeaders sets the headers a service gave (the ETag, credit
// balances, an accepted run's Location) and answers the success status a
// service asked for (StatusMetadata: 202 for an accepted run), else 201
// Created for every RPC named Create*: a new object exists at the server.
// Other successes stay 200.
func ResponseHeaders(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
	responseMetadataHeaders(ctx, w)
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		if v := md.HeaderMD.Get(StatusMetadata); len(v) == 1 {
			if code, err := strconv.Atoi(v[0]); err == nil && code >= 200 && code < 300 {
				w.WriteHeader(code)
				return nil
			}
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
