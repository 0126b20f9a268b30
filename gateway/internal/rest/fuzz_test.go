package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// The fuzz targets check what a client could send the gateway: any query
// string, any body, any error a service could return. Their seeds (f.Add and
// testdata/fuzz) run as ordinary tests; `make fuzz` runs them for real.

// FuzzQueryParser: any query string is either accepted, with every value of
// its field's type, or refused with a message naming a query parameter.
func FuzzQueryParser(f *testing.F) {
	for _, s := range []string{
		"limit=50&offset=0", "limit=99999999999", "offset=-99999999999", "limit=abc", "limit=1&limit=2",
		"stage=won", "agency_id=%ff", "limit=%2B5", "colour=red", "limit=", "offset=0x10", "limit=1e3",
		"limit=-0", "offset=+0", "a=b=c", "%zz=1", ";", "limit=5;offset=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		values, err := url.ParseQuery(raw)
		if err != nil {
			return // the HTTP server refuses these before the parser
		}
		for _, msg := range []proto.Message{&crmv1.ListProspectsRequest{}, &crmv1.ListKeysRequest{}, &crmv1.ListDealsRequest{}} {
			err := QueryParser{}.Parse(msg, values, utilities.NewDoubleArray(nil))
			if err == nil {
				continue
			}
			m := err.Error()
			if !utf8.ValidString(m) || !strings.Contains(m, "query parameter") {
				t.Fatalf("Parse(%q) error %q does not name the query parameter in valid UTF-8", raw, m)
			}
			if strings.Contains(m, "strconv.") || strings.Contains(m, "proto:") {
				t.Fatalf("Parse(%q) error %q leaks a library message", raw, m)
			}
		}
	})
}

// FuzzBodyDecoding: any body either decodes or gets a message that starts
// by saying what is wrong with the request body, in valid UTF-8, without a
// library's prefix.
func FuzzBodyDecoding(f *testing.F) {
	for _, s := range []string{
		`{"name":"k","scopes":["read"],"agency_id":"a"}`, `{"name":"\ud800"}`, `{"name":"\ud83d\ude00"}`,
		`{"expires_at":"tomorrow"}`, `{"expires_at":"2030-01-01T00:00:00Z"}`, `{"scopes":"read"}`, `{"name":1}`,
		`{"name":"k"`, `[1,2]`, `null`, `{"health_score":"NaN"}`, `{"health_score":1e999}`, `{"name":"a","name":"b"}`,
		"{\"name\":\"\xff\"}", `{"unknown":true}`, ` `, `{"pipeline_stage":null}`,
		`{"name":"k"} trailing`, `{"name":"k"}{}`, "{}\n\n{}", `{"name":"k"}  `, `{} 1`, `{}]`,
	} {
		f.Add([]byte(s))
	}
	m := Marshaler()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, msg := range []proto.Message{&crmv1.CreateKeyRequest{}, &crmv1.CreateProspectRequest{}, &crmv1.UpdateProspectRequest{}} {
			err := m.NewDecoder(strings.NewReader(string(body))).Decode(msg)
			if err == nil || err.Error() == "EOF" {
				continue
			}
			msg := err.Error()
			if !utf8.ValidString(msg) {
				t.Fatalf("body %q: error message is not valid UTF-8: %q", body, msg)
			}
			if !strings.HasPrefix(msg, "request body") && !strings.HasPrefix(msg, "invalid request body") {
				t.Fatalf("body %q: error %q does not say it is about the request body", body, msg)
			}
			if libraryPrefix.MatchString(msg) || strings.Contains(msg, "unexpected EOF") {
				t.Fatalf("body %q: error %q shows a library's wording", body, msg)
			}
		}
	})
}

// FuzzWriteError: whatever a service returns, the client gets a 4xx or 5xx
// with a JSON {"error"} body, and fault text never reaches it.
func FuzzWriteError(f *testing.F) {
	f.Add(uint32(codes.InvalidArgument), "limit must be between 1 and 200")
	f.Add(uint32(codes.Internal), "pgx: dial tcp 10.1.2.3:5432: password authentication failed")
	f.Add(uint32(codes.Unavailable), "connection refused 10.0.0.1")
	f.Add(uint32(codes.Aborted), "retry")
	f.Add(uint32(99), "\xff\xfe")
	f.Add(uint32(codes.OK), "")
	logger := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, code uint32, text string) {
		c := codes.Code(code % 20)
		err := status.Error(c, text)
		if c == codes.OK {
			err = status.Error(codes.Unknown, text) // status.Error(OK) is nil; no service returns it as an error
		}
		rec := httptest.NewRecorder()
		WriteError(context.Background(), logger, rec, httptest.NewRequest("GET", "/api/v1/prospects", nil), err)
		if rec.Code < 400 || rec.Code > 599 {
			t.Fatalf("code %s answered %d", c, rec.Code)
		}
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body) != 1 {
			t.Fatalf("code %s: body %q is not {\"error\": ...}", c, rec.Body)
		}
		msg, ok := body["error"].(string)
		if !ok || msg == "" {
			t.Fatalf("code %s: error is %v, want a message", c, body["error"])
		}
		if rec.Code >= 500 && c != codes.Aborted && len(text) >= 12 && strings.Contains(msg, text) {
			t.Fatalf("code %s: fault text %q reached the client: %q", c, text, msg)
		}
	})
}

// FuzzCompositeEnd: for any body whose first value is valid JSON, the end
// compositeEnd finds by its brackets is where encoding/json's decoder
// stops after that value (trailingData's slower way).
func FuzzCompositeEnd(f *testing.F) {
	for _, s := range []string{
		`{"a":"}"}`, `{"a":"\"}"} x`, `[1,{"b":[2]}]]`, " \n{\"a\":\"\\\\\"}{}", `{"a":"\u007d"}`, `"x"`, `1 2`, `{}`, `[]`, `{"a":[}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		dec := json.NewDecoder(bytes.NewReader(body))
		if dec.Decode(new(json.RawMessage)) != nil {
			return // not a valid first value: the unmarshaler would have refused it
		}
		want := int(dec.InputOffset())
		if got, ok := compositeEnd(body); ok && got != want {
			t.Fatalf("body %q: compositeEnd = %d, the decoder stopped at %d", body, got, want)
		}
	})
}
