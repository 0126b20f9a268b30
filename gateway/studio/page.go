package studio

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/principal"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	auditv1 "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

//go:embed templates
var templateFiles embed.FS

// csp is the Content-Security-Policy of every answer: the Studio's own
// scripts, styles and images only (and images from any https origin, which
// content links to); no inline script or style, no framing, forms posted
// only to the Studio.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; " +
	"font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// securityHeaders are set on every answer of the Studio.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// pages are the parsed templates: each page is the layout, the partials and
// the page's own file, parsed together once.
type pages struct {
	byName map[string]*template.Template
}

// loadPages parses templates/partials/*.html with each file under
// templates/pages; a page is named by its path under pages without .html
// ("home", "editor/items"). The layout around a page's "head" and "main"
// blocks is drawn in Go (layout.go).
func loadPages() (*pages, error) {
	base, err := template.New("base").Funcs(funcs).ParseFS(templateFiles, "templates/partials/*.html")
	if err != nil {
		return nil, fmt.Errorf("studio: templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	err = fs.WalkDir(templateFiles, "templates/pages", func(file string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(file, ".html") {
			return err
		}
		t, err := base.Clone()
		if err != nil {
			return err
		}
		if _, err := t.ParseFS(templateFiles, file); err != nil {
			return fmt.Errorf("studio: template %s: %w", file, err)
		}
		p.byName[strings.TrimSuffix(strings.TrimPrefix(file, "templates/pages/"), ".html")] = t
		return nil
	})
	return p, err
}

// View is what every page's template reads: .V is the layout's (who is
// signed in, for which agency, the navigation), .D the page's own data.
type View struct {
	v *visit
	// Title is the page's title, after which the layout adds " · Atrium
	// Studio".
	Title string
	// Crumbs are the links above the title, from the agency down.
	Crumbs []Link
	// Flash is a confirmation of what the last form did; Problem what went
	// wrong, with what to do about it.
	Flash   string
	Problem *Problem
	Version string
}

// Link is a link of the navigation or of the crumbs.
type Link struct {
	Label, Href string
	Current     bool
}

// Problem is an error as a page shows it: what happened, and what to do.
type Problem struct {
	Status int
	What   string
	Do     string
}

// SignedIn reports whether a person is signed in.
func (x View) SignedIn() bool { return x.v != nil && x.v.sess != nil }

// Person is the signed-in person's name, or their email when they gave no
// name.
func (x View) Person() string {
	if !x.SignedIn() {
		return ""
	}
	if x.v.sess.Name != "" {
		return x.v.sess.Name
	}
	return x.v.sess.Email
}

// Email is the signed-in person's email.
func (x View) Email() string {
	if !x.SignedIn() {
		return ""
	}
	return x.v.sess.Email
}

// Operator reports whether the page is the operator's console's.
func (x View) Operator() bool { return x.v != nil && x.v.operator }

// CSRF is the token every form that changes something carries.
func (x View) CSRF() string {
	if x.Operator() {
		return x.v.opCSRF
	}
	if !x.SignedIn() {
		return ""
	}
	return x.v.sess.CSRFToken()
}

// AgencyID and AgencyName are the agency the page acts for ("" outside).
func (x View) AgencyID() string {
	if x.v == nil {
		return ""
	}
	return x.v.agency()
}

func (x View) AgencyName() string {
	if x.v == nil || x.v.m == nil {
		return ""
	}
	if n := x.v.m.GetAgencyName(); n != "" {
		return n
	}
	return x.v.m.GetAgencyId()
}

// Role is the person's role in the page's agency.
func (x View) Role() string {
	if x.v == nil || x.v.m == nil {
		return ""
	}
	return x.v.m.GetRole()
}

// Agencies are the person's agencies, for the switcher; the current one
// marked.
func (x View) Agencies() []Link {
	if !x.SignedIn() {
		return nil
	}
	var out []Link
	for _, m := range x.v.sess.Memberships {
		name := m.GetAgencyName()
		if name == "" {
			name = m.GetAgencyId()
		}
		out = append(out, Link{Label: name + " (" + m.GetRole() + ")", Href: Prefix + "a/" + url.PathEscape(m.GetAgencyId()) + "/",
			Current: m.GetAgencyId() == x.AgencyID()})
	}
	return out
}

// Nav is the navigation of the page's agency: the sections the person may
// open, each shown when the judge lets them call the RPC the section's
// page starts with.
func (x View) Nav() []Link {
	if x.v == nil || x.v.m == nil {
		return nil
	}
	here := x.v.r.URL.Path
	var out []Link
	for _, s := range sections {
		if s.rpc != "" && !x.v.may(s.rpc) {
			continue
		}
		if s.clientOnly && x.v.role() != principal.RoleClient {
			continue
		}
		href := x.v.path(s.path)
		out = append(out, Link{Label: s.label, Href: href,
			Current: (s.path == "" && here == href) || (s.path != "" && strings.HasPrefix(here, href))})
	}
	return out
}

// May reports whether the person may call the RPC fullMethod on this page
// (the judge's answer): templates show a control only when it would work.
func (x View) May(fullMethod string) bool { return x.v != nil && x.v.m != nil && x.v.may(fullMethod) }

// Path is a path of the page's agency (visit.path).
func (x View) Path(parts ...string) string { return x.v.path(parts...) }

// section is an area of the console in the navigation.
type section struct {
	label, path string
	// rpc is the RPC the section's first page calls: the section shows
	// when the person may call it.
	rpc string
	// clientOnly: the section is a client member's own view.
	clientOnly bool
}

// sections are the navigation's entries, in order. The areas register
// their pages in their own files; this is only the menu.
var sections = []section{
	{label: "Home", path: ""},
	{label: "Content", path: "sites", rpc: collectionsv1.SchemaService_ListAgencySites_FullMethodName},
	{label: "Clients", path: "clients", rpc: crmv1.AgencyClientsService_ListClients_FullMethodName},
	{label: "Results", path: "results", rpc: datav1.DataService_ReadDataset_FullMethodName, clientOnly: true},
	{label: "Runs", path: "runs", rpc: actionsv1.ActionsService_ListRuns_FullMethodName},
	{label: "Webhooks", path: "webhooks", rpc: webhooksv1.WebhooksService_ListWebhooks_FullMethodName},
	{label: "Members", path: "members", rpc: crmv1.PeopleService_ListMembers_FullMethodName},
	{label: "API keys", path: "keys", rpc: crmv1.PeopleService_ListAgencyKeys_FullMethodName},
	{label: "Credits", path: "credits", rpc: actionsv1.ActionsService_GetCreditBalance_FullMethodName},
	{label: "Audit trail", path: "audit", rpc: auditv1.AuditService_ListAuditEvents_FullMethodName},
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// static is the path of a static file, with its content's hash so
	// that a browser's cached copy is never stale.
	"static": staticPath,
	"when": func(t any) string {
		switch t := t.(type) {
		case time.Time:
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2 Jan 2006 15:04 UTC")
		case string:
			if p, err := time.Parse(time.RFC3339Nano, t); err == nil {
				return p.UTC().Format("2 Jan 2006 15:04 UTC")
			}
			return t
		}
		return fmt.Sprint(t)
	},
	"isoTime":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"pathEscape":  url.PathEscape,
	"queryEscape": url.QueryEscape,
	"join":        path.Join,
	"add":         func(a, b int) int { return a + b },
	"int64":       func(n int32) int64 { return int64(n) },
	"sub":         func(a, b int) int { return a - b },
	"fieldInputs": fieldInputs,
	// part hands a partial the page's View and a part of its data.
	"part": func(v View, d any) struct {
		V View
		D any
	} {
		return struct {
			V View
			D any
		}{v, d}
	},
	"credits": func(n int64) string {
		s := fmt.Sprint(n)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		if neg {
			return "−" + b.String()
		}
		return b.String()
	},
}

// pagePool holds the buffers pages are drawn into: a page is tens of
// kilobytes, grown anew for every request otherwise.
var pagePool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledPage is the largest buffer pagePool keeps.
const maxPooledPage = 1 << 20

// render writes page name with data d and status code.
func (s *Studio) render(v *visit, code int, name string, view View, d any) {
	t := s.pages.byName[name]
	if t == nil {
		s.cfg.Logger.Error("studio: no such page template", "page", name)
		http.Error(v.w, "no such page: "+name, http.StatusInternalServerError)
		return
	}
	view.v, view.Version = v, s.cfg.Version
	if view.Flash == "" {
		view.Flash = v.takeFlash()
	}
	buf := pagePool.Get().(*bytes.Buffer)
	defer func() {
		// A rare huge page is not kept: the pool holds ordinary ones.
		if buf.Cap() <= maxPooledPage {
			buf.Reset()
			pagePool.Put(buf)
		}
	}()
	if err := drawPage(buf, t, view, d); err != nil {
		s.cfg.Logger.Error("studio: rendering a page", "page", name, "error", err)
		http.Error(v.w, "the page could not be drawn; reload it, and tell Atrium's operator if it happens again", http.StatusInternalServerError)
		return
	}
	h := v.w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Pages hold a person's data and the session's CSRF token: no cache
	// keeps them.
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Cookie, HX-Request")
	// The page is whole: its length spares the chunked encoding.
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	v.w.WriteHeader(code)
	_, _ = v.w.Write(buf.Bytes())
}

// flashCookie carries a confirmation from a form's POST to the page its
// 303 leads to: a cookie rather than the address, so that nobody can make
// a link that shows a message of their choosing.
const flashCookie = "atrium_studio_flash"

func (v *visit) setFlash(msg string) {
	if len(msg) > 300 {
		// Cut between letters, not inside one.
		msg = strings.ToValidUTF8(msg[:300], "")
	}
	http.SetCookie(v.w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(msg), Path: Prefix, MaxAge: 60, HttpOnly: true, //nolint:gosec // G124: Secure when the request came over TLS; a confirmation, no secret
		SameSite: http.SameSiteStrictMode, Secure: v.r.TLS != nil})
}

func (v *visit) takeFlash() string {
	c, err := v.r.Cookie(flashCookie)
	if err != nil || c.Value == "" {
		return ""
	}
	http.SetCookie(v.w, &http.Cookie{Name: flashCookie, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true, //nolint:gosec // G124: Secure when the request came over TLS; a confirmation, no secret
		SameSite: http.SameSiteStrictMode, Secure: v.r.TLS != nil})
	msg, err := url.QueryUnescape(c.Value)
	if err != nil {
		return ""
	}
	return msg
}
