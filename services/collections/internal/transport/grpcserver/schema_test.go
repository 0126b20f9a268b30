package grpcserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
	"github.com/atrium-hq/atrium/services/collections/internal/transport/grpcserver"
)

const (
	agencyA = "0190b7a8-3c1e-7d2f-9a4b-00000000000a"
	agencyB = "0190b7a8-3c1e-7d2f-9a4b-00000000000b"
)

// agencies is the CRM as the site use cases see it: agencies A and B
// exist, with no clients.
type agencies struct{}

func (agencies) AgencyExists(_ context.Context, id string) (bool, error) {
	return id == agencyA || id == agencyB, nil
}

func (agencies) ClientLinked(context.Context, string, string) (bool, error) { return false, nil }

// schemaWorld is the collections service's gRPC port over a memory store,
// with the rules every call is judged by (the principal interceptor), and
// the sites of two agencies.
type schemaWorld struct {
	db     *memdb.DB
	schema collectionsv1.SchemaServiceClient
	signer *principal.Signer
	// bakery and atelier are agency A's sites, other agency B's, loose
	// nobody's.
	bakery, atelier, other, loose string
}

func newSchemaWorld(t *testing.T) *schemaWorld {
	t.Helper()
	db := memdb.New(nil)
	st := memory.New(db)
	clock := app.Clock(time.Now)
	sites := app.NewSites(app.SiteStoreOf(st), agencies{}, clock)
	signer, err := principal.NewSigner([]byte("schema-test-secret-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	grpcserver.NewServer(sites, app.NewContent(app.ContentStoreOf(st), clock), nil).Register(srv)
	go func() { _ = srv.Serve() }()
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	conn, err := rpc.Dial(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	w := &schemaWorld{db: db, schema: collectionsv1.NewSchemaServiceClient(conn), signer: signer}
	operator := principal.NewContext(t.Context(), principal.Principal{Kind: principal.KindAdmin, Subject: "admin"})
	for _, s := range []struct {
		id           *string
		name, agency string
	}{{&w.bakery, "Bakery", agencyA}, {&w.other, "Other agency's", agencyB}, {&w.loose, "Loose", ""}, {&w.atelier, "Atelier", agencyA}} {
		site, err := sites.Create(operator, app.NewSite{Name: s.name, AgencyID: s.agency})
		if err != nil {
			t.Fatal(err)
		}
		*s.id = site.ID
	}
	drain(t, db) // the sites' own events
	return w
}

func (w *schemaWorld) as(t *testing.T, p principal.Principal) context.Context {
	return w.signer.OutgoingContext(t.Context(), p)
}

// member is a person of agency with role, acting for site ("" for none),
// as the gateway signs them after checking the site is the agency's.
func member(agency string, role principal.Role, site string) principal.Principal {
	return principal.Principal{Kind: principal.KindUser, Subject: "user-" + string(role), AgencyID: agency, SiteID: site,
		Role: role, MemberID: "member-" + string(role), SessionID: "session-1"}
}

func siteKey(site string, scopes ...principal.Scope) principal.Principal {
	return principal.Principal{Kind: principal.KindKey, Subject: "key-1", SiteID: site, Scopes: scopes}
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

// drain empties the outbox and returns its events.
func drain(t *testing.T, db *memdb.DB) []outbox.Event {
	t.Helper()
	var out []outbox.Event
	err := db.Outbox().Claim(t.Context(), 1000, func(_ context.Context, es []outbox.Event) int {
		out = append(out, es...)
		return len(es)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestListAgencySites: the sites of the caller's agency, by name, and
// never another agency's or an unowned one; every role that reads the
// content lists them, as does the agency's key; a key bound to a site
// only, or a client member, is refused.
func TestListAgencySites(t *testing.T) {
	w := newSchemaWorld(t)
	list := func(p principal.Principal) ([]string, error) {
		t.Helper()
		got, err := w.schema.ListAgencySites(w.as(t, p), &collectionsv1.ListAgencySitesRequest{})
		var ids []string
		for _, s := range got.GetSites() {
			if s.GetAgencyId().GetValue() != p.AgencyID {
				t.Fatalf("site %s of agency %s listed for agency %s", s.Id, s.GetAgencyId().GetValue(), p.AgencyID)
			}
			ids = append(ids, s.Id)
		}
		return ids, err
	}
	agencyKey := principal.Principal{Kind: principal.KindKey, Subject: "key-a", AgencyID: agencyA, Scopes: []principal.Scope{principal.ScopeRead}}
	for _, p := range []principal.Principal{agencyKey, member(agencyA, principal.RoleOwner, ""), member(agencyA, principal.RoleManager, ""),
		member(agencyA, principal.RoleEditor, ""), member(agencyA, principal.RoleViewer, "")} {
		got, err := list(p)
		if err != nil {
			t.Fatalf("%s %s: %v", p.Kind, p.Role, err)
		}
		if want := []string{w.atelier, w.bakery}; !slices.Equal(got, want) {
			t.Fatalf("%s %s lists %v, want agency A's two sites by name %v", p.Kind, p.Role, got, want)
		}
	}
	if got, err := list(member(agencyB, principal.RoleOwner, "")); err != nil || !slices.Equal(got, []string{w.other}) {
		t.Fatalf("agency B lists %v (%v), want only its own site", got, err)
	}
	_, err := list(siteKey(w.bakery, principal.ScopeRead))
	wantCode(t, err, codes.PermissionDenied, "not bound to an agency")
	client := member(agencyA, principal.RoleClient, "")
	client.ClientID = "0190b7a8-3c1e-7d2f-9a4b-0000000000c1"
	_, err = list(client)
	wantCode(t, err, codes.PermissionDenied, "client role")
}

// TestSchemaOfTheCallersSite: an owner acting for a site of their agency
// defines its collections with the admin API's rules, events and audit
// records; the collections of another agency's site are invisible to
// them; members whose role does not grant the schema are refused by the
// judge, reads included.
func TestSchemaOfTheCallersSite(t *testing.T) {
	w := newSchemaWorld(t)
	owner := member(agencyA, principal.RoleOwner, w.bakery)
	ctx := w.as(t, owner)

	created, err := w.schema.CreateSchemaCollection(ctx, &collectionsv1.CreateSchemaCollectionRequest{
		Name: "Posts", Slug: "posts", Fields: []*collectionsv1.FieldDefinition{{Key: "title", Type: "text", Required: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := created.Collection; c.Slug != "posts" || c.IsSystem || c.GetSearchLanguage() != app.DefaultSearchLanguage || len(c.Fields) != 1 {
		t.Fatalf("created %v; want posts, not system, with its search language and its one field", c)
	}
	evs := drain(t, w.db)
	if len(evs) != 2 || evs[0].Subject != "atrium.collections.collection.created" {
		t.Fatalf("events of a create = %v; want collection.created and its audit record", subjects(evs))
	}
	wantAudit(t, evs[1], "collection.created", owner)

	// The admin API's rules: a taken slug, a bad slug, a required added field.
	_, err = w.schema.CreateSchemaCollection(ctx, &collectionsv1.CreateSchemaCollectionRequest{Name: "Again", Slug: "posts"})
	wantCode(t, err, codes.AlreadyExists, "posts")
	_, err = w.schema.CreateSchemaCollection(ctx, &collectionsv1.CreateSchemaCollectionRequest{Name: "Bad", Slug: "Not A Slug"})
	wantCode(t, err, codes.InvalidArgument, "slug")
	_, err = w.schema.UpdateSchemaCollection(ctx, &collectionsv1.UpdateSchemaCollectionRequest{Slug: "posts",
		AddFields: []*collectionsv1.FieldDefinition{{Key: "body", Type: "text", Required: true}}})
	wantCode(t, err, codes.InvalidArgument, "cannot be required")
	if evs := drain(t, w.db); len(evs) != 0 {
		t.Fatalf("refused writes left events %v", subjects(evs))
	}

	name, lang := "Articles", "english"
	updated, err := w.schema.UpdateSchemaCollection(ctx, &collectionsv1.UpdateSchemaCollectionRequest{Slug: "posts", Name: &name, SearchLanguage: &lang,
		AddFields: []*collectionsv1.FieldDefinition{{Key: "body", Type: "text"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := updated.Collection; c.Name != "Articles" || c.GetSearchLanguage() != "english" || len(c.Fields) != 2 {
		t.Fatalf("updated %v; want Articles, english, two fields", c)
	}
	evs = drain(t, w.db)
	if len(evs) != 2 || evs[0].Subject != "atrium.collections.collection.updated" {
		t.Fatalf("events of an update = %v; want collection.updated and its audit record", subjects(evs))
	}
	wantAudit(t, evs[1], "collection.updated", owner)

	listed, err := w.schema.ListSchemaCollections(ctx, &collectionsv1.ListSchemaCollectionsRequest{})
	if err != nil || len(listed.Collections) != 1 || listed.Collections[0].Name != "Articles" || listed.Collections[0].GetSearchLanguage() != "english" {
		t.Fatalf("the site's schema = %v (%v); want Articles with its search language", listed, err)
	}

	// Agency B's owner, acting for their own site, sees none of it and
	// reaches none of it by slug.
	otherOwner := w.as(t, member(agencyB, principal.RoleOwner, w.other))
	if listed, err := w.schema.ListSchemaCollections(otherOwner, &collectionsv1.ListSchemaCollectionsRequest{}); err != nil || len(listed.Collections) != 0 {
		t.Fatalf("agency B's site lists %v (%v); want nothing", listed, err)
	}
	_, err = w.schema.UpdateSchemaCollection(otherOwner, &collectionsv1.UpdateSchemaCollectionRequest{Slug: "posts", Name: &name})
	wantCode(t, err, codes.NotFound, "posts")
	// The same slug on B's site is B's own collection, not a conflict.
	if _, err := w.schema.CreateSchemaCollection(otherOwner, &collectionsv1.CreateSchemaCollectionRequest{Name: "B's posts", Slug: "posts"}); err != nil {
		t.Fatalf("agency B's posts: %v", err)
	}
	drain(t, w.db)

	// The judge: no role but the owner holds the schema, not even to read
	// it; a site's write key does (a key holds its scopes on every
	// resource people share), a read key only reads, a published_only key
	// nothing.
	for _, role := range []principal.Role{principal.RoleManager, principal.RoleEditor, principal.RoleViewer} {
		ctx := w.as(t, member(agencyA, role, w.bakery))
		_, err := w.schema.CreateSchemaCollection(ctx, &collectionsv1.CreateSchemaCollectionRequest{Name: "Pages", Slug: "pages"})
		wantCode(t, err, codes.PermissionDenied, string(role)+" role", "the roles that may: owner")
		_, err = w.schema.UpdateSchemaCollection(ctx, &collectionsv1.UpdateSchemaCollectionRequest{Slug: "posts", Name: &name})
		wantCode(t, err, codes.PermissionDenied, string(role)+" role")
		_, err = w.schema.ListSchemaCollections(ctx, &collectionsv1.ListSchemaCollectionsRequest{})
		wantCode(t, err, codes.PermissionDenied, string(role)+" role")
	}
	_, err = w.schema.CreateSchemaCollection(w.as(t, siteKey(w.bakery, principal.ScopeRead)), &collectionsv1.CreateSchemaCollectionRequest{Name: "Pages", Slug: "pages"})
	wantCode(t, err, codes.PermissionDenied, "write scope")
	published := siteKey(w.bakery, principal.ScopeRead)
	published.PublishedOnly = true
	_, err = w.schema.ListSchemaCollections(w.as(t, published), &collectionsv1.ListSchemaCollectionsRequest{})
	wantCode(t, err, codes.PermissionDenied, "published_only")
	if evs := drain(t, w.db); len(evs) != 0 {
		t.Fatalf("refused callers left events %v", subjects(evs))
	}
	if _, err := w.schema.CreateSchemaCollection(w.as(t, siteKey(w.loose, principal.ScopeRead, principal.ScopeWrite)),
		&collectionsv1.CreateSchemaCollectionRequest{Name: "Pages", Slug: "pages"}); err != nil {
		t.Fatalf("an unowned site's write key: %v", err)
	}
	// An owner acting for no site is told to name one.
	_, err = w.schema.ListSchemaCollections(w.as(t, member(agencyA, principal.RoleOwner, "")), &collectionsv1.ListSchemaCollectionsRequest{})
	wantCode(t, err, codes.PermissionDenied, "Atrium-Site")
}

func subjects(evs []outbox.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Subject
	}
	return out
}

// wantAudit checks that e is the audit record of action by p on p's site.
func wantAudit(t *testing.T, e outbox.Event, action string, p principal.Principal) {
	t.Helper()
	var rec events.AuditEvent
	if err := json.Unmarshal(e.Payload, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Service != "collections" || rec.Action != action || rec.SiteID != p.SiteID || rec.AgencyID != p.AgencyID ||
		rec.ActorKind != string(p.Kind) || rec.ActorID != p.Subject || rec.MemberID != p.MemberID || rec.SessionID != p.SessionID {
		t.Fatalf("audit record %+v; want %s by %s %s (member %s) on site %s of agency %s", rec, action, p.Kind, p.Subject, p.MemberID, p.SiteID, p.AgencyID)
	}
	if !strings.HasPrefix(rec.Method, "/atrium.collections.v1.SchemaService/") {
		t.Fatalf("audit record's method %q; want the SchemaService RPC", rec.Method)
	}
}
