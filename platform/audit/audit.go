package audit

import (
	"context"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
)

// Change is what a write did, as the use case that made it knows it.
type Change struct {
	// Action is what happened: "item.updated", "key.revoked", …
	Action string
	// ResourceType and ResourceID name the object changed ("item" and its
	// id).
	ResourceType, ResourceID string
	// Fields are the names of the fields the write set, never their
	// values.
	Fields []string
	// AgencyID and SiteID are the tenant the object belongs to, when the
	// caller is not bound to it (an operator's write through the admin
	// API); the principal's are used otherwise.
	AgencyID, SiteID string
}

// Forwarded headers: grpc-gateway puts the caller's address in
// x-forwarded-for and its User-Agent in grpcgateway-user-agent.
const (
	mdForwardedFor = "x-forwarded-for"
	mdUserAgent    = "grpcgateway-user-agent"
	mdAgentDirect  = "user-agent"
)

// maxUserAgent bounds what a client's header puts in the trail.
const maxUserAgent = 256

// Of returns the audit event of change c made by the caller of ctx at at,
// for service.
func Of(ctx context.Context, service string, c Change, at time.Time) events.AuditEvent {
	p, _ := principal.FromContext(ctx)
	e := events.AuditEvent{
		Service: service, Action: c.Action,
		ResourceType: c.ResourceType, ResourceID: c.ResourceID,
		Fields:   sortedNames(c.Fields),
		AgencyID: first(c.AgencyID, p.AgencyID), SiteID: first(c.SiteID, p.SiteID),
		ActorKind: string(p.Kind), ActorID: p.Subject,
		MemberID: p.MemberID, SessionID: p.SessionID,
		At: at.UTC(),
	}
	if e.ActorKind == "" {
		e.ActorKind = string(principal.KindAnonymous)
	}
	if m, ok := grpc.Method(ctx); ok {
		e.Method = m
	}
	e.ClientAddress, e.UserAgent = Origin(ctx)
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		e.TraceID = sc.TraceID().String()
	}
	return e
}

// Origin is where the call of ctx came from, as the gateway forwards it:
// the client's address (the first of x-forwarded-for; later ones are
// proxies) and its user agent, bounded. Sessions record the same.
func Origin(ctx context.Context) (clientAddress, userAgent string) {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return "", ""
	}
	if v := md.Get(mdForwardedFor); len(v) > 0 {
		clientAddress = strings.TrimSpace(strings.Split(v[0], ",")[0])
	}
	ua := md.Get(mdUserAgent)
	if len(ua) == 0 {
		ua = md.Get(mdAgentDirect)
	}
	if len(ua) > 0 {
		userAgent = truncate(ua[0], maxUserAgent)
	}
	return clientAddress, userAgent
}

// Record adds the audit event of change c to tx, the outbox of the
// transaction that makes the change.
func Record(ctx context.Context, tx outbox.Enqueuer, service string, c Change, at time.Time) error {
	return outbox.Add(ctx, tx, events.AuditRecorded, Of(ctx, service, c, at), at)
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func sortedNames(fields []string) []string {
	if len(fields) == 0 {
		return nil
	}
	out := slices.Clone(fields)
	slices.Sort(out)
	return slices.Compact(out)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
