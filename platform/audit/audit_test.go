package audit_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
)

type enqueued []outbox.Event

func (q *enqueued) Enqueue(_ context.Context, e outbox.Event) error {
	*q = append(*q, e)
	return nil
}

// TestRecordNamesWhoWhatAndWhere: a person's write is recorded with their
// user, membership and session, the fields' names only, the client's own
// address (not the proxies'), and a bounded user agent, on the audit
// stream's subject for the service.
func TestRecordNamesWhoWhatAndWhere(t *testing.T) {
	p := principal.Principal{Kind: principal.KindUser, Subject: "user-1", AgencyID: "agency-1", SiteID: "site-1",
		Role: principal.RoleEditor, MemberID: "member-1", SessionID: "session-1"}
	ctx := principal.NewContext(context.Background(), p)
	ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(
		"x-forwarded-for", "203.0.113.7, 10.0.0.2",
		"grpcgateway-user-agent", strings.Repeat("Mozilla/5.0 ", 100)))
	at := time.Date(2026, 11, 29, 6, 0, 0, 0, time.FixedZone("x", 3600))
	var q enqueued
	err := audit.Record(ctx, &q, "collections", audit.Change{Action: "item.updated", ResourceType: "item", ResourceID: "item-1",
		Fields: []string{"title", "body", "title"}}, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 1 || q[0].Subject != "atrium.audit.collections.recorded" {
		t.Fatalf("enqueued %+v, want one event on atrium.audit.collections.recorded", q)
	}
	if s, ok := events.StreamOf(q[0].Subject); !ok || s != events.AuditStream {
		t.Fatalf("subject in stream %v, want %v", s, events.AuditStream)
	}
	var e events.AuditEvent
	if err := json.Unmarshal(q[0].Payload, &e); err != nil {
		t.Fatal(err)
	}
	want := events.AuditEvent{Service: "collections", Action: "item.updated", ResourceType: "item", ResourceID: "item-1",
		Fields: []string{"body", "title"}, AgencyID: "agency-1", SiteID: "site-1", ActorKind: "user", ActorID: "user-1",
		MemberID: "member-1", SessionID: "session-1", ClientAddress: "203.0.113.7", At: at.UTC()}
	ua := e.UserAgent
	e.UserAgent = ""
	if !e.At.Equal(want.At) || strings.Join(e.Fields, ",") != "body,title" {
		t.Fatalf("recorded %+v, want %+v", e, want)
	}
	e.At, want.At, e.Fields, want.Fields = time.Time{}, time.Time{}, nil, nil
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("recorded %+v, want %+v", e, want)
	}
	if len(ua) == 0 || len(ua) > 256 {
		t.Fatalf("user agent of %d bytes recorded, want 1 to 256", len(ua))
	}
}

// TestOperatorWriteNamesTheTenant: the admin principal is bound to no
// tenant, so the change says whose object it touched.
func TestOperatorWriteNamesTheTenant(t *testing.T) {
	ctx := principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindAdmin, Subject: "admin"})
	e := audit.Of(ctx, "crm", audit.Change{Action: "member.created", ResourceType: "member", ResourceID: "m", AgencyID: "agency-9"}, time.Now())
	if e.ActorKind != "admin" || e.AgencyID != "agency-9" || e.ClientAddress != "" {
		t.Fatalf("recorded %+v", e)
	}
	if e := audit.Of(context.Background(), "crm", audit.Change{Action: "x"}, time.Now()); e.ActorKind != "anonymous" {
		t.Fatalf("a call without a principal recorded as %q, want anonymous", e.ActorKind)
	}
}
