package studio

import (
	"bytes"
	"context"
	"html/template"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/gateway/internal/auth"
	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// ownerGate is the fake gate with a person who is their agency's owner:
// the judge lets them open every section.
type ownerGate struct{ fakeGate }

func (ownerGate) Principal(_ context.Context, sess *auth.Session, agency, site, _ string) (principal.Principal, error) {
	return principal.Principal{Kind: principal.KindUser, Subject: sess.UserID, AgencyID: agency, SiteID: site, Role: principal.RoleOwner,
		Scopes: []principal.Scope{principal.ScopeRead, principal.ScopeWrite}}, nil
}

// TestLayoutMatchesTheTemplate: the layout written in Go is the markup the
// layout template drew (testdata/layout-template.html, the template it
// replaces, with html/template's escaping) around a page's blocks: signed
// out, an operator's page, a person of one agency and of three (the
// switcher), with crumbs, a flash, a problem, hostile names, and a page
// without a head block. The same elements, attributes and text, whitespace
// aside.
func TestLayoutMatchesTheTemplate(t *testing.T) {
	src, err := templateFiles.ReadFile("templates/pages/editor/items.html")
	if err != nil {
		t.Fatal(err)
	}
	old := template.Must(template.Must(template.New("layout-template.html").Funcs(funcs).ParseFiles("testdata/layout-template.html")).
		ParseFS(templateFiles, "templates/partials/*.html"))
	old = template.Must(old.Parse(string(src)))
	hostile := `"><script>alert('x')</script>&amp;`
	plain := template.Must(template.New("plain").Parse(`{{define "main"}}<p>{{.D}}</p>{{end}}`))
	oldPlain := template.Must(template.Must(template.New("layout-template.html").Funcs(funcs).ParseFiles("testdata/layout-template.html")).
		ParseFS(templateFiles, "templates/partials/*.html"))
	oldPlain = template.Must(oldPlain.Parse(`{{define "main"}}<p>{{.D}}</p>{{end}}`))
	s := newTestStudio(t, ownerGate{})
	member := func(id, name, role string) *crmv1.Membership {
		return &crmv1.Membership{AgencyId: id, AgencyName: name, Role: role}
	}
	one := &auth.Session{UserID: "u1", Name: hostile, Email: "ana@example.com", Memberships: []*crmv1.Membership{member("ag 1", hostile, "owner")}}
	three := &auth.Session{UserID: "u2", Email: "bo@example.com", Memberships: []*crmv1.Membership{
		member("ag1", "Bakery & Co", "owner"), member("ag2", "", "editor"), member("ag3", "Fleur", "client")}}
	d := itemsData{Site: "s1", Page: 2, Q: hostile, Rows: []itemRow{{ID: "i1", Title: hostile, State: "draft", Href: "/studio/a/ag1/x"}},
		Orders: []choice{{Value: "created_at", Label: "Created", Selected: true}}, Prev: "/studio/a/ag1/?page=1", CanCreate: true, TitleLabel: "Title"}
	d.Collection = &collectionsv1.Collection{Slug: "posts", Name: hostile}
	cases := []struct {
		name     string
		path     string
		sess     *auth.Session
		m        *crmv1.Membership
		operator bool
		view     View
	}{
		{name: "signed out", path: "/studio/sign-in", view: View{Title: "Sign in"}},
		{name: "operator", path: "/studio/operator/", operator: true, view: View{Title: "Agencies", Flash: hostile}},
		{name: "one agency", path: "/studio/a/ag%201/sites/s1/collections/posts/", sess: one, m: one.Memberships[0],
			view: View{Title: hostile, Crumbs: []Link{{Label: hostile, Href: "/studio/a/ag%201/"}, {Label: "Bad", Href: "javascript:alert(1)"}}, Flash: "Saved."}},
		{name: "three agencies", path: "/studio/a/ag1/runs", sess: three, m: three.Memberships[0], view: View{Title: "Runs"}},
		{name: "a client member", path: "/studio/a/ag3/results", sess: three, m: three.Memberships[2], view: View{}},
		{name: "a problem", path: "/studio/a/ag1/nope", sess: three, m: three.Memberships[0],
			view: View{Title: "Not found", Problem: &Problem{Status: 404, What: hostile, Do: "Go " + hostile}}},
	}
	for _, c := range cases {
		for _, page := range []string{"items", "plain"} {
			v := &visit{s: s, r: httptest.NewRequest("GET", c.path, nil), sess: c.sess, m: c.m, operator: c.operator, opCSRF: "op-token"}
			view := c.view
			view.v, view.Version = v, "v1.2.3 "+hostile
			var data any = d
			newT, oldT := s.pages.byName["editor/items"], old
			if page == "plain" {
				data, newT, oldT = hostile, plain, oldPlain
			}
			var got, want bytes.Buffer
			if err := drawPage(&got, newT, view, data); err != nil {
				t.Fatalf("%s, %s: %v", c.name, page, err)
			}
			if err := oldT.ExecuteTemplate(&want, "layout-template.html", pageData{view, data}); err != nil {
				t.Fatalf("%s, %s: the old layout: %v", c.name, page, err)
			}
			if g, w := normalized(t, got.String()), normalized(t, want.String()); g != w {
				t.Errorf("%s, %s: the layout differs from the template's\n got: %s\nwant: %s", c.name, page, g, w)
			}
			if strings.Contains(got.String(), "<script>alert") {
				t.Fatalf("%s: a value was written unescaped", c.name)
			}
		}
	}
}
