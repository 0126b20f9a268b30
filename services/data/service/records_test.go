package service

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
)

var secret = []byte("data-service-test-secret-0123456789abcdef")

// startRecords runs the data service on the memory store and returns a
// records client and the signer of principals. The CRM address answers
// nothing: writing records does not ask the CRM.
func startRecords(t *testing.T) (datav1.DataRecordsServiceClient, *principal.Signer, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	crm := l.Addr().String()
	l.Close()
	natsURL := natstest.URL(t)
	svc, err := New(t.Context(), Config{
		Config: runner.Config{GRPCAddr: "127.0.0.1:0", Backing: runner.Backing{NATSURL: natsURL}, InternalSecret: secret,
			Logger: slog.New(slog.DiscardHandler)},
		CRMAddr: crm,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	})
	conn, err := rpc.Dial(svc.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	signer, err := principal.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	return datav1.NewDataRecordsServiceClient(conn), signer, natsURL
}

func wantCode(t *testing.T, err error, code codes.Code, words ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("error = %v, want %s", err, code)
	}
	for _, w := range words {
		if !strings.Contains(status.Convert(err).Message(), w) {
			t.Fatalf("message %q does not mention %q", status.Convert(err).Message(), w)
		}
	}
}

func structOf(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordsOverGRPC is the actions service's use of the data service:
// only an internal caller may write; a blog is written, read back, moved
// from draft to published by a second write, each write announced on NATS;
// bad rows, taken ids and absent records answer the codes the actions
// service acts on.
func TestRecordsOverGRPC(t *testing.T) {
	records, signer, natsURL := startRecords(t)
	ctx := t.Context()
	internal := signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindService, Subject: "actions"})
	client, other := uuid.NewString(), uuid.NewString()

	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	events, err := nc.SubscribeSync("atrium.data.rows.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	post := uuid.NewString()
	blog := func(status string, published bool) *datav1.WriteRecordsRequest {
		return &datav1.WriteRecordsRequest{ClientId: client, Writes: []*datav1.RecordWrite{{
			Resource: "blogs", Mode: datav1.WriteMode_WRITE_MODE_UPSERT,
			Rows: []*structpb.Struct{structOf(t, map[string]any{"id": post, "post_title": "Sourdough at home", "keyword": "sourdough",
				"content": "<p>Flour, water, salt.</p>", "word_count": 1200, "status": status, "published": published})},
		}, {
			Resource: "action_runs", Mode: datav1.WriteMode_WRITE_MODE_UPSERT,
			Rows: []*structpb.Struct{structOf(t, map[string]any{"action": "generate_blog", "status": "success", "status_code": 200,
				"record_id": post, "record_resource": "blogs", "data": map[string]any{"tone": "warm", "sections": []any{"intro", "method"}}})},
		}}}
	}

	// Who may call: only a service acting for no tenant.
	for name, p := range map[string]principal.Principal{
		"admin":      {Kind: principal.KindAdmin, Subject: "admin"},
		"tenant key": {Kind: principal.KindKey, Subject: "k", AgencyID: uuid.NewString(), Scopes: []principal.Scope{principal.ScopeRead, principal.ScopeWrite}},
	} {
		_, err := records.WriteRecords(signer.OutgoingContext(ctx, p), blog("draft", false))
		wantCode(t, err, codes.PermissionDenied, "internal")
		_, err = records.GetRecord(signer.OutgoingContext(ctx, p), &datav1.GetRecordRequest{ClientId: client, Resource: "blogs", Id: post})
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("%s GetRecord: %v, want PermissionDenied", name, err)
		}
	}

	res, err := records.WriteRecords(internal, blog("draft", false))
	if err != nil || res.Inserted != 2 || res.Updated != 0 {
		t.Fatalf("first write = %v, %v; want 2 inserted", res, err)
	}
	got, err := records.GetRecord(internal, &datav1.GetRecordRequest{ClientId: client, Resource: "blogs", Id: strings.ToUpper(post)})
	if err != nil {
		t.Fatal(err)
	}
	row := got.Row.AsMap()
	if row["id"] != post || row["post_title"] != "Sourdough at home" || row["content"] != "<p>Flour, water, salt.</p>" ||
		row["word_count"] != 1200.0 || row["status"] != "draft" || row["title"] != nil {
		t.Fatalf("GetRecord = %v", row)
	}
	if _, ok := row["featured_image_url"]; !ok {
		t.Fatalf("GetRecord = %v: every field of the resource is present", row)
	}

	res, err = records.WriteRecords(internal, blog("published", true))
	if err != nil || res.Inserted != 1 || res.Updated != 1 {
		t.Fatalf("second write = %v, %v; want the blog updated and a second run inserted", res, err)
	}
	got, err = records.GetRecord(internal, &datav1.GetRecordRequest{ClientId: client, Resource: "blogs", Id: post})
	if err != nil || got.Row.AsMap()["status"] != "published" || got.Row.AsMap()["created_at"] != row["created_at"] {
		t.Fatalf("after the update %v (%v); want published with the first created_at", got.GetRow().AsMap(), err)
	}

	// The events of the two writes, in commit order.
	want := []string{"inserted blogs 1", "inserted action_runs 1", "updated blogs 1", "inserted action_runs 1"}
	var seen []string
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < len(want) {
		msg, err := events.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("events %v, want %v: %v", seen, want, err)
		}
		var e struct {
			ClientID string `json:"client_id"`
			Resource string `json:"resource"`
			Count    int    `json:"count"`
		}
		if err := json.Unmarshal(msg.Data, &e); err != nil {
			t.Fatal(err)
		}
		if e.ClientID == client {
			seen = append(seen, strings.TrimPrefix(msg.Subject, "atrium.data.rows.")+" "+e.Resource+" "+strconv.Itoa(e.Count))
		}
	}
	if strings.Join(seen, ", ") != strings.Join(want, ", ") {
		t.Fatalf("events %v, want %v", seen, want)
	}

	// What the actions service must handle.
	bad := blog("draft", false)
	bad.Writes[0].Rows[0].Fields["word_count"] = structpb.NewStringValue("many")
	_, err = records.WriteRecords(internal, bad)
	wantCode(t, err, codes.InvalidArgument, "writes[0].rows[0].word_count must be an integer")
	_, err = records.WriteRecords(internal, &datav1.WriteRecordsRequest{ClientId: client, Writes: []*datav1.RecordWrite{{
		Resource: "clients", Mode: datav1.WriteMode_WRITE_MODE_UPSERT, Rows: []*structpb.Struct{structOf(t, map[string]any{"name": "x"})}}}})
	wantCode(t, err, codes.InvalidArgument, "writes[0].resource", "keywords", "action_runs, blog_images")
	_, err = records.WriteRecords(internal, &datav1.WriteRecordsRequest{ClientId: client, Writes: []*datav1.RecordWrite{{
		Resource: "blogs", Rows: []*structpb.Struct{structOf(t, map[string]any{"post_title": "x"})}}}})
	wantCode(t, err, codes.InvalidArgument, "writes[0].mode must be upsert or update")
	_, err = records.WriteRecords(internal, &datav1.WriteRecordsRequest{ClientId: "client-1", Writes: bad.Writes})
	wantCode(t, err, codes.InvalidArgument, "client_id must be a UUID")
	stolen := blog("draft", false)
	stolen.ClientId = other
	_, err = records.WriteRecords(internal, stolen)
	wantCode(t, err, codes.AlreadyExists, "is taken")
	_, err = records.GetRecord(internal, &datav1.GetRecordRequest{ClientId: other, Resource: "blogs", Id: post})
	wantCode(t, err, codes.NotFound)
	_, err = records.GetRecord(internal, &datav1.GetRecordRequest{ClientId: client, Resource: "blogs", Id: "post-1"})
	wantCode(t, err, codes.InvalidArgument, "id must be a UUID")
}
