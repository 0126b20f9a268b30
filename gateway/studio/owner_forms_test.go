package studio

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
)

// The invitation form sends the sites only for an editor and the client
// only for a client member, whatever else the form held.
func TestMemberFormCreateRequest(t *testing.T) {
	f := readMemberForm(url.Values{"email": {" ed@example.com "}, "name": {"Ed"}, "role": {"editor"},
		"site_ids": {"s1", "", "s2", "s1"}, "client_id": {"c1"}})
	req := f.createRequest()
	if req.GetEmail() != "ed@example.com" || req.GetRole() != "editor" || !slices.Equal(req.GetSiteIds(), []string{"s1", "s2"}) || req.GetClientId() != "" {
		t.Fatalf("editor: %v", req)
	}
	f.Role = "client"
	if req := f.createRequest(); len(req.GetSiteIds()) != 0 || req.GetClientId() != "c1" {
		t.Fatalf("client: %v", req)
	}
	f.Role = "viewer"
	if req := f.createRequest(); len(req.GetSiteIds()) != 0 || req.GetClientId() != "" {
		t.Fatalf("viewer: %v", req)
	}
}

// An editor with no site ticked edits every site: the update clears the
// list rather than leaving the old one.
func TestMemberFormUpdateRequest(t *testing.T) {
	req := readMemberForm(url.Values{"role": {"editor"}}).updateRequest("m1")
	if req.GetMemberId() != "m1" || req.GetRole() != "editor" || !req.GetClearSiteIds() || req.Name != nil || req.ClientId != nil {
		t.Fatalf("editor of every site: %v", req)
	}
	req = readMemberForm(url.Values{"role": {"editor"}, "site_ids": {"s1"}, "name": {"Ed"}}).updateRequest("m1")
	if req.GetClearSiteIds() || !slices.Equal(req.GetSiteIds(), []string{"s1"}) || req.GetName() != "Ed" {
		t.Fatalf("editor of one site: %v", req)
	}
	req = readMemberForm(url.Values{"role": {"viewer"}, "site_ids": {"s1"}, "client_id": {"c1"}}).updateRequest("m1")
	if len(req.GetSiteIds()) != 0 || req.GetClearSiteIds() || req.ClientId != nil || req.GetRole() != "viewer" {
		t.Fatalf("viewer: %v", req)
	}
	// "no role" is sent as an empty role, which takes the role away.
	req = readMemberForm(url.Values{"role": {""}}).updateRequest("m1")
	if req.Role == nil || req.GetRole() != "" {
		t.Fatalf("no role: %v", req)
	}
}

// A key expires at the end of the chosen day; a date that is not one is
// a clear error.
func TestKeyFormRequest(t *testing.T) {
	k := readKeyForm(url.Values{"name": {"Web"}, "scopes": {"read"}, "site_id": {"s1"}, "published_only": {"true"}, "expires": {"2027-12-31"}})
	req, err := k.request()
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2027, 12, 31, 23, 59, 59, 0, time.UTC); !req.GetExpiresAt().AsTime().Equal(want) || !req.GetPublishedOnly() ||
		req.GetSiteId() != "s1" || !slices.Equal(req.GetScopes(), []string{"read"}) {
		t.Fatalf("request = %v", req)
	}
	if req, _ := readKeyForm(url.Values{"name": {"Web"}}).request(); req.GetExpiresAt() != nil {
		t.Fatalf("no date gave an expiry: %v", req)
	}
	_, err = readKeyForm(url.Values{"expires": {"31/12/2027"}}).request()
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "2027-12-31") || !strings.Contains(err.Error(), "31/12/2027") {
		t.Fatalf("a bad date: %v", err)
	}
}

// The audit filter's dates include both days; the next page's link keeps
// the filter.
func TestAuditFilter(t *testing.T) {
	f := readAuditFilter(url.Values{"actor": {"u1"}, "since": {"2026-11-01"}, "until": {"2026-11-02"}, "cursor": {"c"}})
	req, err := f.request(50)
	if err != nil {
		t.Fatal(err)
	}
	if req.GetSince() != "2026-11-01T00:00:00Z" || req.GetUntil() != "2026-11-03T00:00:00Z" || req.GetActor() != "u1" || req.GetCursor() != "c" || req.GetLimit() != 50 {
		t.Fatalf("request = %v", req)
	}
	if q := f.Query(); q.Get("cursor") != "" || q.Get("actor") != "u1" || q.Has("resource_type") {
		t.Fatalf("query = %v", q)
	}
	if _, err := readAuditFilter(url.Values{"until": {"tomorrow"}}).request(50); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a bad date: %v", err)
	}
}

// Credits are summed per key over the window only, the largest first.
func TestTallyCredits(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	run := func(action, client string, daysAgo, ai, data int32) *actionsv1.Run {
		return &actionsv1.Run{Action: action, ClientId: client, CreatedAt: timestamppb.New(now.AddDate(0, 0, -int(daysAgo))),
			Credits: &actionsv1.RunCredits{Spent: &actionsv1.CreditAmount{Ai: ai, Data: data}}}
	}
	runs := []*actionsv1.Run{run("blog", "a", 1, 2, 0), run("audit", "a", 2, 0, 5), run("blog", "b", 3, 2, 0), run("blog", "b", 40, 100, 0),
		{Action: "undated"}}
	got := tallyCredits(runs, now.AddDate(0, 0, -30), func(r *actionsv1.Run) string { return r.GetAction() })
	if len(got) != 2 || got[0] != (creditTally{Label: "audit", Data: 5, Runs: 1}) || got[1] != (creditTally{Label: "blog", AI: 4, Runs: 2}) {
		t.Fatalf("by action = %+v", got)
	}
	labels, values := barsOf(got)
	if !slices.Equal(labels, []string{"audit", "blog"}) || !slices.Equal(values, []float64{5, 4}) {
		t.Fatalf("bars = %v %v", labels, values)
	}
}

// Keyword rows become a series per keyword in time order, the best placed
// first; rows without a keyword, a number or a time are left out.
func TestPositionSeries(t *testing.T) {
	row := func(m map[string]any) *structpb.Struct {
		s, err := structpb.NewStruct(m)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	series := positionSeries([]*structpb.Struct{
		row(map[string]any{"keyword": "rye", "position": 7, "tracked_at": "2026-11-02T00:00:00Z"}),
		row(map[string]any{"keyword": "rye", "position": 12, "tracked_at": "2026-11-01T00:00:00Z"}),
		row(map[string]any{"keyword": "spelt", "position": 3, "created_at": "2026-11-01T00:00:00Z"}),
		row(map[string]any{"keyword": "nothing", "position": nil, "tracked_at": "2026-11-01T00:00:00Z"}),
		row(map[string]any{"position": 1, "tracked_at": "2026-11-01T00:00:00Z"}),
		row(map[string]any{"keyword": "undated", "position": 1}),
	})
	if len(series) != 2 || series[0].Name != "spelt" || series[1].Name != "rye" || len(series[1].Points) != 2 || series[1].Points[1].Y != 7 {
		t.Fatalf("series = %+v", series)
	}
}

// A dataset's table has a column per field, id and times last, and cells
// a reader can take in.
func TestRowsTable(t *testing.T) {
	a, _ := structpb.NewStruct(map[string]any{"id": "1", "url": "https://a.example/", "score": 82.5, "ok": true, "tags": []any{"x"}, "note": nil})
	b, _ := structpb.NewStruct(map[string]any{"id": "2", "created_at": "2026-11-01T00:00:00Z", "summary": strings.Repeat("é", 200)})
	cols, rows := rowsTable([]*structpb.Struct{a, b})
	if want := []string{"note", "ok", "score", "summary", "tags", "url", "created_at", "id"}; !slices.Equal(cols, want) {
		t.Fatalf("columns = %v, want %v", cols, want)
	}
	if got := rows[0]; got[1] != "true" || got[2] != "82.5" || got[4] != `["x"]` || got[0] != "" {
		t.Fatalf("row = %q", got)
	}
	if s := rows[1][3]; len([]rune(s)) != 120 || !strings.HasSuffix(s, "…") {
		t.Fatalf("a long cell = %d runes", len([]rune(s)))
	}
	labels, values := scoreBars([]*structpb.Struct{a, b})
	if !slices.Equal(labels, []string{"https://a.example/"}) || !slices.Equal(values, []float64{82.5}) {
		t.Fatalf("bars = %v %v", labels, values)
	}
}

// Every page of the area parses with the layout and partials.
func TestOwnerTemplates(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"members", "member", "invited", "keys", "key-created", "credits", "audit", "results", "dataset"} {
		if p.byName["owner/"+name] == nil {
			t.Errorf("no template owner/%s", name)
		}
	}
}
