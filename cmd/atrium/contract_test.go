package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
)

// Every response the end-to-end tests receive from a stack's gateway is
// checked against the OpenAPI document that gateway serves, for its route
// and status, by an independent validator (pb33f's libopenapi-validator):
// the status must be documented for the route, the body must match the
// schema of that status (formats asserted), and every declared required
// header be present. A response that does not validate fails the test
// that started the stack (at its end, with the request, the answer and
// what did not match). Requests to routes the documents do not have (a
// method a route does not allow, an unknown path, the probes) are not
// checked: their answers are the gateway's, not a route's.
//
// The check sits in http.DefaultClient (TestMain), so it sees what the
// tests' call, the Go SDK (given that client) and every other use of the
// default client receive.

// contract is one listener's document, as a validator.
type contract struct {
	mu sync.Mutex // the validator's caches are not safe for concurrent use
	v  validator.Validator
}

var (
	// contracts holds the validators by the document's digest: every
	// stack of this binary serves the same documents.
	contracts sync.Map // [32]byte -> *contract
	// listeners maps a stack's listener (host:port) to its contract and
	// the stack's record of violations.
	listeners sync.Map // string -> *checkedListener
)

type checkedListener struct {
	c *contract
	r *contractRecord
}

// contractRecord is what a stack's responses showed.
type contractRecord struct {
	mu      sync.Mutex
	checked int
	urls    map[string]bool
	// kinds are the mismatches reported, each once.
	kinds      map[string]bool
	violations []string
}

// checkContract makes every response from the stack's two listeners
// checked against the document the listener serves, and reports at the
// end of t what did not match.
func checkContract(t testing.TB, s *stack) {
	t.Helper()
	rec := &contractRecord{urls: map[string]bool{}, kinds: map[string]bool{}}
	for _, base := range []string{s.api, s.admin} {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		c, err := contractOf(base + "/openapi.json")
		if err != nil {
			t.Fatalf("the OpenAPI document of %s: %v", base, err)
		}
		listeners.Store(u.Host, &checkedListener{c: c, r: rec})
		t.Cleanup(func() { listeners.Delete(u.Host) })
	}
	t.Cleanup(func() {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, v := range rec.violations {
			t.Errorf("a response does not match the OpenAPI document:\n%s", v)
		}
		if testing.Verbose() && rec.checked > 0 {
			t.Logf("OpenAPI contract: %d responses checked, from %d URLs", rec.checked, len(rec.urls))
		}
	})
}

func contractOf(docURL string) (*contract, error) {
	resp, err := http.Get(docURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", docURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", docURL, resp.StatusCode)
	}
	key := sha256.Sum256(raw)
	if c, ok := contracts.Load(key); ok {
		return c.(*contract), nil
	}
	closed, err := closeObjects(raw)
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(closed)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
	if len(errs) > 0 {
		return nil, fmt.Errorf("%v", errs)
	}
	c, _ := contracts.LoadOrStore(key, &contract{v: v})
	return c.(*contract), nil
}

// closeObjects returns the document with every object schema that
// declares properties closed to others (additionalProperties: false,
// where it says nothing else). The published document leaves them open,
// so that a field added later does not break a client that validates
// what it receives; the tests hold Atrium to the fields it documents
// today. Free-form objects (a collection item's fields, a JSON value in a
// row, an event's data) declare no properties and stay open.
func closeObjects(raw []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["properties"].(map[string]any); ok {
				if _, set := x["additionalProperties"]; !set {
					x["additionalProperties"] = false
				}
			}
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(doc)
	return json.Marshal(doc)
}

// contractTransport checks the responses of registered listeners.
type contractTransport struct{ base http.RoundTripper }

func (ct contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := ct.base.RoundTrip(req)
	if err != nil || req.URL.Path == "/openapi.json" {
		return resp, err
	}
	l, ok := listeners.Load(req.URL.Host)
	if !ok {
		return resp, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && resp.Header.Get("Content-Type") != "" {
		// A file or a stream: its body is not read here (a test may read
		// it as it comes); its status and headers are still checked.
		l.(*checkedListener).check(req, resp, nil)
		return resp, nil
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil {
		// The test reading the body sees the same failure.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{rerr}))
		return resp, nil
	}
	l.(*checkedListener).check(req, resp, body)
	return resp, nil
}

// ndjson is the content type of the event stream, eventStream the
// realtime stream's (server-sent events): both documented as such.
const (
	ndjson      = "application/x-ndjson"
	eventStream = "text/event-stream"
)

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func (l *checkedListener) check(req *http.Request, resp *http.Response, body []byte) {
	// The validator reads the body it is given: a copy.
	copied := *resp
	if body != nil {
		copied.Body = io.NopCloser(bytes.NewReader(body))
	} else {
		copied.Body = http.NoBody
		copied.Header = resp.Header.Clone()
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != ndjson && mt != eventStream {
			copied.Header.Del("Content-Type")
		}
	}
	l.c.mu.Lock()
	ok, errs := l.c.v.ValidateHttpResponse(req, &copied)
	l.c.mu.Unlock()
	if ok {
		l.r.note(req, "", "")
		return
	}
	var msgs []string
	for _, e := range errs {
		if e.ValidationType == helpers.PathValidation || isOperationNotFound(e) {
			return // not a documented route: not checked
		}
		if body == nil && copied.Header.Get("Content-Type") != "" && strings.Contains(e.Message, "response object is missing") {
			// An event stream (application/x-ndjson, documented as such, or
			// the validator would say its content type does not exist): its
			// lines are read by the test as they come, never here, and the
			// SDK's Listen parses each strictly (an event, a heartbeat or an
			// error, nothing else); what is checked here is its status and
			// headers.
			continue
		}
		msg := "  " + e.Message
		if e.Reason != "" && e.Reason != e.Message {
			msg += ": " + e.Reason
		}
		for _, s := range e.SchemaValidationErrors {
			msg += fmt.Sprintf("\n    %s (at %s)", s.Reason, s.FieldPath)
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		l.r.note(req, "", "") // only what a stream's check leaves out
		return
	}
	excerpt := string(body)
	if len(excerpt) > 800 {
		excerpt = excerpt[:800] + "…"
	}
	// One report per kind of mismatch: the same on another object (its
	// id in the path and the messages) is the same finding.
	kind := anID.ReplaceAllString(fmt.Sprintf("%s %s %d %s", req.Method, req.URL.Path, resp.StatusCode, msgs), "{id}")
	l.r.note(req, kind, fmt.Sprintf("%s %s → %d\n%s\n  body: %s", req.Method, req.URL.RequestURI(), resp.StatusCode, strings.Join(msgs, "\n"), excerpt))
}

var anID = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\[[0-9]+\]`)

func isOperationNotFound(e *liberrors.ValidationError) bool {
	return e.ValidationSubType == helpers.ValidationMissingOperation
}

func (r *contractRecord) note(req *http.Request, kind, violation string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked++
	r.urls[req.Method+" "+req.URL.Path] = true
	if violation != "" && !r.kinds[kind] {
		r.kinds[kind] = true
		r.violations = append(r.violations, violation)
	}
}

// TestContractCheckerCatchesMismatches: the check itself fails on what it
// is there to catch (a body off its schema, a status the route does not
// document, an answer without its trace id) and passes a conforming one.
func TestContractCheckerCatchesMismatches(t *testing.T) {
	s := startStack(t)
	rec := &contractRecord{urls: map[string]bool{}, kinds: map[string]bool{}}
	c, err := contractOf(s.api + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	l := &checkedListener{c: c, r: rec}
	trace := http.Header{"Content-Type": {"application/json"}, "Atrium-Trace-Id": {"4bf92f3577b34da6a3ce929d0e0e4736"}}
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		body   string
		ok     bool
	}{
		{"conforming", 200, trace, `{"data": []}`, true},
		{"a field of the wrong type", 200, trace, `{"data": "none"}`, false},
		{"a field the document does not have", 200, trace, `{"data": [], "rows": []}`, false},
		{"an undocumented status", http.StatusTeapot, trace, `{"error": "teapot"}`, false},
		{"no trace id", 200, http.Header{"Content-Type": {"application/json"}}, `{"data": []}`, false},
		{"an error body with more than error", 400, trace, `{"error": "bad", "code": 3}`, false},
	} {
		req, _ := http.NewRequest("GET", s.api+"/api/v1/prospects", nil)
		before := len(rec.violations)
		l.check(req, &http.Response{StatusCode: tc.status, Header: tc.header, Body: io.NopCloser(strings.NewReader(tc.body))}, []byte(tc.body))
		if got := len(rec.violations) == before; got != tc.ok {
			t.Errorf("%s: passed = %v, want %v (%v)", tc.name, got, tc.ok, rec.violations[before:])
		}
	}
}
