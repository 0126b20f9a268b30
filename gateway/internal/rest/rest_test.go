package rest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/apperr"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

func TestBodyErrorsNameTheField(t *testing.T) {
	body := []byte(`{"name":"k","expires_at":"tomorrow"}`)
	// protojson writes a space or U+00A0 after "proto:", chosen per binary.
	for _, sep := range []string{" ", "\u00a0"} {
		err := bodyError(errors.New("proto:"+sep+`(line 1:26): invalid google.protobuf.Timestamp value "tomorrow"`), body)
		if !strings.Contains(err.Error(), `expires_at must be an RFC 3339 timestamp`) || strings.Contains(err.Error(), "proto:") {
			t.Errorf("separator %q: %v", sep, err)
		}
		err = bodyError(errors.New("proto:"+sep+"syntax error (line 1:9): unexpected token"), nil)
		if err.Error() != "request body is not valid JSON at line 1, column 9: unexpected token" {
			t.Errorf("separator %q: %v", sep, err)
		}
		err = bodyError(errors.New("proto:"+sep+`(line 1:2): unknown field "nmae"`), nil)
		if err.Error() != `invalid request body at line 1, column 2: unknown field "nmae"` {
			t.Errorf("separator %q: %v", sep, err)
		}
	}
	if err := bodyError(&http.MaxBytesError{Limit: 10}, nil); err.Error() != "request body too large: the limit is 10 bytes" {
		t.Errorf("too large: %v", err)
	}
}

// TestBodyErrorsNameRealProblems decodes bodies the way the gateway does and
// checks the message names the problem, never a library's prefix.
func TestBodyErrorsNameRealProblems(t *testing.T) {
	m := Marshaler()
	for body, want := range map[string]string{
		`{"name":"\ud800"}`:            `line 1, column 10: \ud800 is half of a UTF-16 surrogate pair`,
		`{"name":"ok \udc00"}`:         `\udc00 is half of a UTF-16 surrogate pair`,
		"{\n \"name\": \"\\ud83d x\"}": `line 2, column 11: \ud83d is half`,
		`{"name":"\\ud800"}`:           "", // an escaped backslash: valid
		`{"name":"\ud83d\ude00"}`:      "", // a whole pair: valid
		`{"name": "x"`:                 "request body is not valid JSON",
		`{"name":"\x01"}`:              "request body is not valid JSON",
		`{"name":"k"} trailing`:        "request body must be one JSON object with nothing after it; found more data at line 1, column 14 (byte 14)",
		"{\"name\":\"k\"}\n{}":         "found more data at line 2, column 1 (byte 14)",
		`{"name":"k"} ]`:               "found more data at line 1, column 14",
		"{\"name\":\"k\"}\r\n\t ":      "", // whitespace after the object is not data
	} {
		err := m.NewDecoder(strings.NewReader(body)).Decode(&crmv1.CreateAgencyRequest{})
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", body, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", body, err, want)
		case err != nil && (strings.Contains(err.Error(), "proto:") || strings.Contains(err.Error(), "json:")):
			t.Errorf("%s: %q shows a library prefix", body, err)
		}
	}
}

func TestQueryParser(t *testing.T) {
	none := utilities.NewDoubleArray(nil)
	parse := func(q string) (*crmv1.ListKeysRequest, error) {
		v, err := url.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		req := &crmv1.ListKeysRequest{}
		return req, QueryParser{}.Parse(req, v, none)
	}
	req, err := parse("limit=5&offset=10&agency_id=a")
	if err != nil || req.GetLimit() != 5 || req.GetOffset() != 10 || req.AgencyId != "a" {
		t.Fatalf("valid query: %v %v", req, err)
	}
	for q, want := range map[string]string{
		"limt=5":          `unknown query parameter "limt"; allowed: agency_id, site_id, limit, offset`,
		"agencyId=a":      `unknown query parameter "agencyId"`,
		"limit=x":         `query parameter limit must be an integer; got "x"`,
		"limit=1&limit=2": `query parameter limit is given 2 times; give it once`,
		"limit=1.5":       `query parameter limit must be an integer; got "1.5"`,
		"site_id=%ff":     `query parameter site_id is not valid UTF-8`,
	} {
		if _, err := parse(q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", q, err, want)
		}
	}
	// Integers beyond 32 bits become the nearest 32-bit value, for the
	// route's own range or cap rule to judge.
	for q, want := range map[string]int32{"limit=99999999999": 2147483647, "offset=3000000000": 2147483647,
		"limit=-99999999999999999999999": -2147483648, "limit=%2B7": 7} {
		req, err := parse(q)
		if err != nil || req.GetLimit()+req.GetOffset() != want {
			t.Errorf("%s: %v, %v; want %d", q, req, err, want)
		}
	}
	// Path parameters are not query parameters.
	v, _ := url.ParseQuery("key_id=x")
	err = QueryParser{}.Parse(&crmv1.RevokeKeyRequest{}, v, utilities.NewDoubleArray([][]string{{"key_id"}}))
	if err == nil || !strings.Contains(err.Error(), "takes no query parameters") {
		t.Errorf("path parameter as query: %v", err)
	}
}

func TestRoutesAllowed(t *testing.T) {
	var r Routes
	r.Add("POST", "/admin/v1/agencies/{agency_id}/deals")
	r.Add("PATCH", "/admin/v1/agencies/{agency_id}/deals/{deal_id}")
	r.Add("GET", "/api/v1/deals")
	r.Add("DELETE", "/admin/v1/keys/{key_id}")
	r.Add("POST", "/admin/v1/keys")
	r.Add("GET", "/admin/v1/keys")
	for path, want := range map[string]string{
		"/admin/v1/agencies/abc/deals":     "POST",
		"/admin/v1/agencies/abc/deals/d1":  "PATCH",
		"/admin/v1/keys":                   "GET,POST",
		"/admin/v1/keys/k1":                "DELETE",
		"/api/v1/deals":                    "GET",
		"/admin/v1/agencies//deals":        "",
		"/admin/v1/agencies/abc/deals/x/y": "",
	} {
		if got := strings.Join(r.Allowed(path), ","); got != want {
			t.Errorf("Allowed(%s) = %q, want %q", path, got, want)
		}
	}
}

func TestHTTPStatusMapping(t *testing.T) {
	for code, want := range map[codes.Code]int{
		codes.InvalidArgument: 400, codes.Unauthenticated: 401, codes.PermissionDenied: 403, codes.NotFound: 404,
		codes.AlreadyExists: 409, codes.Unavailable: 503, codes.DeadlineExceeded: 504, codes.Internal: 500,
		codes.Unknown: 500, codes.DataLoss: 500, codes.Aborted: 503, codes.FailedPrecondition: 412,
	} {
		if got := HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%s) = %d, want %d", code, got, want)
		}
	}
}

// TestReasonsRefineTheStatus: a reason a service gives chooses the HTTP
// status its code alone would not (402, 413, 422), and the message is the
// service's.
func TestReasonsRefineTheStatus(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		err  error
		want int
	}{
		{apperr.ToStatus(apperr.TooLarge("the file is larger than the limit of 26214400 bytes")).Err(), http.StatusRequestEntityTooLarge},
		{apperr.ToStatus(apperr.Unprocessable("the key was used with another body")).Err(), http.StatusUnprocessableEntity},
		{apperr.ToStatus(apperr.InsufficientCredits("the balance is 0")).Err(), http.StatusPaymentRequired},
		{apperr.ToStatus(apperr.Invalid("plain")).Err(), http.StatusBadRequest},
	} {
		rec := httptest.NewRecorder()
		WriteError(context.Background(), logger, rec, httptest.NewRequest("POST", "/api/public/v1/assets", nil), tc.err)
		var body Body
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("body %q: %v", rec.Body, err)
		}
		if rec.Code != tc.want || body.Error != status.Convert(tc.err).Message() {
			t.Errorf("%v: %d %q; want %d with the service's message", tc.err, rec.Code, body.Error, tc.want)
		}
	}
}

// Retryable failures say so twice: a 503 with Retry-After, and a message a
// person can act on. Nothing internal leaks through the Unavailable text.
func TestRetryableErrorsCarryRetryAfter(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	shutting, cancel := context.WithCancelCause(context.Background())
	cancel(ErrShuttingDown)
	for name, tc := range map[string]struct {
		ctx  context.Context
		err  error
		want string
	}{
		"aborted transaction":  {context.Background(), status.Error(codes.Aborted, "the write collided with concurrent writes 5 times; retry the request"), "collided"},
		"backing service down": {context.Background(), status.Error(codes.Unavailable, "dial tcp 10.0.0.7:5432: connection refused"), "temporarily unavailable"},
		"shutdown ran out":     {shutting, context.Canceled, "shutting down"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(tc.ctx, logger, rec, httptest.NewRequest("GET", "/api/v1/prospects", nil), tc.err)
			var body Body
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || !strings.Contains(body.Error, tc.want) {
				t.Fatalf("got %d Retry-After=%q %q, want 503 with Retry-After and a message containing %q",
					rec.Code, rec.Header().Get("Retry-After"), body.Error, tc.want)
			}
			if strings.Contains(body.Error, "10.0.0.7") {
				t.Fatalf("message leaks an address: %q", body.Error)
			}
		})
	}
}

func TestProtocolErrorsBecomeJSON(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		_, _ = w.Write([]byte("handler output is untouched"))
	}), MaxHeaderBytes: 1 << 10}
	go func() { _ = srv.Serve(JSONProtocolErrors(l)) }()
	defer srv.Close()
	send := func(raw string) *http.Response {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_, _ = c.Write([]byte(raw))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for raw, code := range map[string]int{
		"GET /x/%zz HTTP/1.1\r\nHost: a\r\n\r\n":                                     400,
		"GET / HTTP/1.1\r\nHost: a\r\nNo colon here\r\n\r\n":                         400,
		"GET / HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("a", 8<<10) + "\r\n\r\n": 431,
	} {
		resp := send(raw)
		var body Body
		err := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != code || body.Error == "" ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%.30q: %d %q %v", raw, resp.StatusCode, body.Error, err)
		}
	}
	resp := send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	if b.String() != "handler output is untouched" {
		t.Errorf("a handler's response was rewritten: %q", b.String())
	}
}
