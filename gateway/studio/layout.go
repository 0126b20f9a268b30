package studio

import (
	"bytes"
	"html"
	"html/template"
	"strings"
)

// The layout every page shares (its head, the top bar with the agency
// switcher and sign-out, the sections, the crumbs, the flash and the
// problem, the footer), written in Go. As a template around each page's
// blocks it was a third of the items list's time (docs/performance.md,
// bench studio): every value of the top bar and the navigation went
// through html/template's escapers called by reflection. A page's own
// markup stays a template: its "head" and "main" blocks are executed
// here, each in the HTML text context the layout put them in.
// layout_test.go holds this markup to the template it replaced
// (testdata/layout-template.html) for every kind of page.

// layoutHead is the document's start, up to the page's own head entries.
var layoutHead = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0,"refreshOnHistoryMiss":true,"selfRequestsOnly":true,"responseHandling":[{"code":"204","swap":false},{"code":"[2345]..","swap":true,"error":false}]}'>
`

// layoutLinks are the head's style sheets and scripts, the same on every
// page (built once: the static files' hashes are fixed in the binary).
var layoutLinks = `<link rel="icon" href="` + esc(staticPath("favicon.svg")) + `" type="image/svg+xml">
<link rel="stylesheet" href="` + esc(staticPath("studio.css")) + `">
<link rel="stylesheet" href="` + esc(staticPath("chart.css")) + `">
<link rel="stylesheet" href="` + esc(staticPath("diff.css")) + `">
<script src="` + esc(staticPath("htmx-2.0.11.min.js")) + `" defer></script>
<script src="` + esc(staticPath("htmx-ext-sse-2.2.4.min.js")) + `" defer></script>
<script src="` + esc(staticPath("studio.js")) + `" defer></script>
`

// pageData is what a page's blocks read: .V the layout's view, .D the
// page's own data.
type pageData struct {
	V View
	D any
}

// drawPage writes page t (its "head" and "main" blocks) inside the layout.
func drawPage(b *bytes.Buffer, t *template.Template, view View, d any) error {
	data := pageData{view, d}
	b.WriteString(layoutHead)
	b.WriteString("<title>")
	if view.Title != "" {
		b.WriteString(esc(view.Title))
		b.WriteString(" · ")
	}
	b.WriteString("Atrium Studio</title>\n")
	b.WriteString(layoutLinks)
	if head := t.Lookup("head"); head != nil {
		if err := head.Execute(b, data); err != nil {
			return err
		}
	}
	b.WriteString("\n</head>\n<body>\n<a class=\"skip\" href=\"#main\">Skip to the content</a>\n<header class=\"top\">\n  <a class=\"brand\" href=\"/studio/\">Atrium Studio</a>\n")
	writeTopBar(b, view)
	b.WriteString("</header>\n")
	if nav := view.Nav(); len(nav) > 0 {
		b.WriteString("<nav class=\"sections\" aria-label=\"Sections\">\n  <ul>")
		writeLinkItems(b, nav)
		b.WriteString("</ul>\n</nav>\n")
	}
	b.WriteString("<main id=\"main\" tabindex=\"-1\">\n")
	if len(view.Crumbs) > 0 {
		b.WriteString("  <nav aria-label=\"Breadcrumb\" class=\"crumbs\"><ol>")
		for _, c := range view.Crumbs {
			b.WriteString(`<li><a href="`)
			b.WriteString(escURL(c.Href))
			b.WriteString(`">`)
			b.WriteString(esc(c.Label))
			b.WriteString("</a></li>")
		}
		b.WriteString("</ol></nav>\n")
	}
	if view.Flash != "" {
		b.WriteString(`  <p class="flash" role="status">`)
		b.WriteString(esc(view.Flash))
		b.WriteString("</p>\n")
	}
	if p := view.Problem; p != nil {
		b.WriteString("  <h1>")
		b.WriteString(esc(p.What))
		b.WriteString("</h1>\n  <p class=\"problem-do\">")
		b.WriteString(esc(p.Do))
		b.WriteString("</p>\n  <p><a href=\"/studio/\">Go to the start page</a></p>\n")
	} else if main := t.Lookup("main"); main != nil {
		if err := main.Execute(b, data); err != nil {
			return err
		}
	}
	b.WriteString("\n</main>\n<footer class=\"foot\"><p>Atrium ")
	b.WriteString(esc(view.Version))
	b.WriteString("</p></footer>\n</body>\n</html>\n")
	return nil
}

// writeTopBar writes the top bar's right side: who is signed in, the
// agency and its switcher, and sign-out.
func writeTopBar(b *bytes.Buffer, view View) {
	if view.Operator() {
		b.WriteString("  <span class=\"agency\">Operator</span>\n")
		if csrf := view.CSRF(); csrf != "" {
			b.WriteString(`  <form class="signout" method="post" action="/studio/sign-out"><input type="hidden" name="csrf_token" value="`)
			b.WriteString(esc(csrf))
			b.WriteString("\"><button type=\"submit\" class=\"link\">Sign out</button></form>\n")
		}
	}
	if !view.SignedIn() {
		return
	}
	if name := view.AgencyName(); name != "" {
		b.WriteString(`  <span class="agency" id="agency-name">`)
		b.WriteString(esc(name))
		b.WriteString("</span>\n")
	}
	if agencies := view.Agencies(); len(agencies) > 1 {
		b.WriteString("  <details class=\"switcher\">\n    <summary>Switch agency</summary>\n    <ul>")
		writeLinkItems(b, agencies)
		b.WriteString("</ul>\n  </details>\n")
	}
	b.WriteString("  <form class=\"signout\" method=\"post\" action=\"/studio/sign-out\">\n    <input type=\"hidden\" name=\"csrf_token\" value=\"")
	b.WriteString(esc(view.CSRF()))
	b.WriteString("\">\n    <span class=\"person\">")
	b.WriteString(esc(view.Person()))
	if role := view.Role(); role != "" {
		b.WriteString(` <span class="role">(`)
		b.WriteString(esc(role))
		b.WriteString(")</span>")
	}
	b.WriteString("</span>\n    <button type=\"submit\" class=\"link\">Sign out</button>\n  </form>\n")
}

// writeLinkItems writes links as list items, the current one marked.
func writeLinkItems(b *bytes.Buffer, links []Link) {
	for _, l := range links {
		b.WriteString(`<li><a href="`)
		b.WriteString(escURL(l.Href))
		b.WriteByte('"')
		if l.Current {
			b.WriteString(` aria-current="page"`)
		}
		b.WriteByte('>')
		b.WriteString(esc(l.Label))
		b.WriteString("</a></li>")
	}
}

// escURL is a link of the layout's for an href: the console's own paths
// (visit.path escapes each part) and its absolute links. Anything else
// (a scheme such as javascript:) is refused as html/template refuses it.
func escURL(u string) string {
	lower := strings.ToLower(u)
	if strings.HasPrefix(u, "/") || strings.HasPrefix(u, "#") || strings.HasPrefix(u, "?") ||
		strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://") {
		return html.EscapeString(u)
	}
	return "#ZgotmplZ"
}
