package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// What a client sends that the gateway must refuse rather than pass on
// changed: a header that would be dropped on its way to the service, a body
// with data after its JSON object, the admin token on the public API.

// writeKey is the one key writeKeys knows: read and write, bound to an agency.
const writeKey = "atr_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"

// writeKeys is a CRM double that knows writeKey.
type writeKeys struct {
	crmv1.UnimplementedAPIKeyServiceServer
}

func (writeKeys) VerifyAPIKey(_ context.Context, req *crmv1.VerifyAPIKeyRequest) (*crmv1.VerifyAPIKeyResponse, error) {
	if d := sha256.Sum256([]byte(writeKey)); string(req.SecretSha256) == string(d[:]) {
		return &crmv1.VerifyAPIKeyResponse{Key: &crmv1.APIKey{
			Id: "key-w", Scopes: []string{"read", "write"}, AgencyId: wrapperspb.String("agency-w"), CreatedAt: timestamppb.Now(),
		}}, nil
	}
	return nil, status.Error(codes.NotFound, "unknown API key")
}

// recordingActions is an actions service double that records every
// RunAction it receives: its params and its Idempotency-Key metadata.
type recordingActions struct {
	actionsv1.UnimplementedActionsServiceServer
	mu   sync.Mutex
	runs []recordedRun
}

type recordedRun struct {
	params map[string]any
	keys   []string
}

func (f *recordingActions) RunAction(ctx context.Context, req *actionsv1.RunActionRequest) (*actionsv1.RunActionResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.runs = append(f.runs, recordedRun{params: req.GetParams().AsMap(), keys: md.Get("idempotency-key")})
	f.mu.Unlock()
	return &actionsv1.RunActionResponse{Action: "generate_blog", Status: "success", StatusCode: 200}, nil
}

func (f *recordingActions) recorded() []recordedRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedRun(nil), f.runs...)
}

// startInputStack runs a gateway in front of a CRM double that knows
// writeKey and an actions double that records what reaches it.
func startInputStack(t *testing.T) (*running, *recordingActions) {
	t.Helper()
	signer, _ := principal.NewSigner(secret)
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	actions := &recordingActions{}
	crmv1.RegisterAPIKeyServiceServer(srv, writeKeys{})
	actionsv1.RegisterActionsServiceServer(srv, actions)
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	other := closedAddr(t)
	return startGatewayTo(t, map[string]string{"crm": srv.Addr(), "actions": srv.Addr(), "collections": other, "data": other, "webhooks": other, "audit": other}, nil), actions
}

// sendRaw makes a request with a bearer token, a raw body and headers given
// as name, value pairs (a name given twice sends the header twice).
func sendRaw(t *testing.T, method, url, token, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %s", method, url, b)
	}
	return resp.StatusCode, out
}

const runBody = `{"action":"generate_blog","client_id":"c","keyword":"sourdough"}`

func TestForwardedHeadersThatCannotReachTheServiceAreRefused(t *testing.T) {
	r, actions := startInputStack(t)
	url := "http://" + r.gw.HTTPAddr() + "/api/v1/data"
	for _, tc := range []struct {
		name    string
		headers []string
		words   []string
	}{
		{"non-ASCII key", []string{"Idempotency-Key", "r\xc3\xa9sum\xc3\xa9-1"},
			[]string{"Idempotency-Key header must be printable ASCII", "byte 2 is 0xc3"}},
		{"control character in key", []string{"Idempotency-Key", "a\tb"},
			[]string{"Idempotency-Key header must be printable ASCII", "byte 2 is 0x09"}},
		{"empty key", []string{"Idempotency-Key", ""},
			[]string{"Idempotency-Key header is empty", "leave the header out"}},
		{"key sent twice", []string{"Idempotency-Key", "k-1", "Idempotency-Key", "k-2"},
			[]string{"Idempotency-Key header was sent 2 times; send it once"}},
		{"non-ASCII If-Match", []string{"If-Match", "\"\xe2\x80\x9c3\""},
			[]string{"If-Match header must be printable ASCII", `an ETag such as "3", or *`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := sendRaw(t, "POST", url, writeKey, runBody, tc.headers...)
			msg, _ := body["error"].(string)
			if code != http.StatusBadRequest {
				t.Fatalf("status = %d (%v), want 400", code, body)
			}
			for _, w := range tc.words {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
	if runs := actions.recorded(); len(runs) != 0 {
		t.Fatalf("the actions service ran %d actions for refused requests: %+v", len(runs), runs)
	}

	// A key the gateway can carry reaches the service as sent.
	if code, body := sendRaw(t, "POST", url, writeKey, runBody, "Idempotency-Key", "resume-1 with spaces"); code != http.StatusOK {
		t.Fatalf("ASCII key: %d %v", code, body)
	}
	runs := actions.recorded()
	if len(runs) != 1 || len(runs[0].keys) != 1 || runs[0].keys[0] != "resume-1 with spaces" {
		t.Fatalf("the service received %+v, want one run with the key as sent", runs)
	}
}

func TestBodyWithDataAfterItsObjectIsRefused(t *testing.T) {
	r, actions := startInputStack(t)
	url := "http://" + r.gw.HTTPAddr() + "/api/v1/data"
	for body, at := range map[string]string{
		// runBody is 64 bytes long.
		runBody + " trailing":   "line 1, column 66 (byte 66)",
		runBody + "{}":          "line 1, column 65 (byte 65)",
		runBody + "\n\n  [1]\n": "line 3, column 3 (byte 69)",
		runBody + `"x"`:         "line 1, column 65",
	} {
		code, resp := sendRaw(t, "POST", url, writeKey, body)
		msg, _ := resp["error"].(string)
		if code != http.StatusBadRequest || !strings.Contains(msg, "request body must be one JSON object with nothing after it") || !strings.Contains(msg, at) {
			t.Errorf("body %q: %d %q, want 400 naming the data after the object at %s", body, code, msg, at)
		}
	}
	if runs := actions.recorded(); len(runs) != 0 {
		t.Fatalf("the actions service ran %d actions for refused bodies: %+v", len(runs), runs)
	}
	// Whitespace after the object is not data.
	if code, resp := sendRaw(t, "POST", url, writeKey, runBody+" \r\n\t\n"); code != http.StatusOK {
		t.Fatalf("object followed by whitespace: %d %v, want 200", code, resp)
	}
	if runs := actions.recorded(); len(runs) != 1 || runs[0].params["keyword"] != "sourdough" {
		t.Fatalf("the service received %+v, want the one object", runs)
	}
}

func TestTokenOnTheWrongListenerSaysWhereItBelongs(t *testing.T) {
	r, _ := startInputStack(t)
	// The generated form of an admin token, whether or not it is this
	// gateway's: the public listener judges only the prefix.
	for _, token := range []string{AdminTokenPrefix + "0123456789abcdef0123456789abcdef0123456789abcdef", AdminTokenPrefix + "x"} {
		code, body := sendRaw(t, "GET", "http://"+r.gw.HTTPAddr()+"/api/v1/actions", token, "")
		msg, _ := body["error"].(string)
		if code != http.StatusUnauthorized || !strings.Contains(msg, "this is an admin token") ||
			!strings.Contains(msg, "admin listener") || !strings.Contains(msg, `"atr_"`) {
			t.Errorf("admin token %q on the public API: %d %q, want 401 saying it is the admin token and where it belongs", token, code, msg)
		}
	}
	code, body := sendRaw(t, "GET", "http://"+r.gw.AdminAddr()+"/admin/v1/keys", writeKey, "")
	if msg, _ := body["error"].(string); code != http.StatusUnauthorized || !strings.Contains(msg, "looks like an API key") ||
		!strings.Contains(msg, "public API") {
		t.Errorf("API key on the admin API: %d %q, want 401 saying it is an API key", code, msg)
	}
}
