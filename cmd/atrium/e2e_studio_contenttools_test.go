package main

// Atrium Studio's content tools in a real browser: an item's revisions
// (compare, restore), the site's asset library (upload by the form and by
// dropping a file, alt text, delete) and the owner's schema builder.

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/internal/browsertest"
)

// checkTool is checkPage for a tab that has been answered a refusal on
// purpose (a form's 400, a role's 403): the browser logs the error status
// of that page's own load, which is the answer the test asked for, not a
// fault of the page. Any other console error still fails.
func checkTool(t *testing.T, p *browsertest.Page) {
	t.Helper()
	p.AssertAccessible(t)
	var errs []string
	for _, e := range p.ConsoleErrors() {
		if refusedPage.MatchString(e) {
			continue
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		t.Errorf("the page %s logged errors: %s", p.URL(), strings.Join(errs, "; "))
	}
}

// refusedPage is the browser's line for a Studio page (not a static file)
// answered with a status the journeys provoke.
var refusedPage = regexp.MustCompile(`status of (400|403|404|412|413) \([^)]*\) \(https?://[^)]*/studio/a/[^)]*\)$`)

// narrow checks the page's content on a 360 px phone: nothing in <main>
// reaches past the screen (the tables scroll in their own box). The
// layout's header is the layout's to check (a long agency name, as the
// tests' are, does not wrap there).
func narrow(t *testing.T, p *browsertest.Page) {
	t.Helper()
	p.SetViewport(360, 740)
	defer p.SetViewport(1280, 800)
	past := browsertest.Eval[string](p, `[...document.querySelectorAll("main *")].filter(e => e.getBoundingClientRect().right > 362 && !(e.parentElement && e.parentElement.closest(".table-wrap")))
		.slice(0, 5).map(e => e.localName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).join(", ")`)
	if past != "" {
		t.Errorf("the page %s is wider than a 360 px phone: %s", p.URL(), past)
	}
}

// acceptConfirm makes the page's confirm() dialogs answer yes, as a person
// pressing OK would (the harness has no dialog handling).
func acceptConfirm(p *browsertest.Page) {
	browsertest.Eval[bool](p, "window.confirm = () => true; true")
}

// formPost sends a form from the page's own origin with the session's
// CSRF token (read from the sign-out form), as a page's form would, and
// returns the answer's status: a control that is not shown, forced.
func formPost(p *browsertest.Page, path string, fields map[string]string) int {
	js := fmt.Sprintf(`(async () => {
		const body = new URLSearchParams(%s);
		body.set("csrf_token", document.querySelector("form.signout input[name=csrf_token]").value);
		const r = await fetch(%q, {method: "POST", body, redirect: "manual"});
		return r.status;
	})()`, jsonObject(fields), path)
	return browsertest.Eval[int](p, js)
}

func jsonObject(m map[string]string) string {
	var b strings.Builder
	b.WriteString("{")
	i := 0
	for k, v := range m {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%q", k, v)
		i++
	}
	b.WriteString("}")
	return b.String()
}

// member is w.invite with a short email: the test's name makes invite's
// local part longer than the 64 characters an email address may have.
func (w *studioWorld) member(t *testing.T, role string) string {
	t.Helper()
	email := w.email(role)
	r := w.owner.do(t, "POST", "/api/v1/members", map[string]any{"email": email, "role": role, "name": strings.ToUpper(role[:1]) + role[1:] + " Person"})
	wantStatus(t, r, http.StatusCreated)
	w.s.accept(t, invitationToken(t, r), strings.ToUpper(role[:1])+role[1:]+" Person")
	return email
}

// testStudioRevisions: an item saved three times; the owner compares its
// first version with the item now, sees the words removed and added, and
// restores it; a viewer sees the revisions but no restore, and a forced
// restore is refused.
func testStudioRevisions(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	site := "Atrium-Site"
	r := w.owner.do(t, "POST", "/api/public/v1/collections/posts", map[string]any{"data": map[string]any{"title": "Sourdough basics for beginners"}}, site, w.cms.site)
	wantStatus(t, r, http.StatusCreated)
	id := r.json["item"].(map[string]any)["id"].(string)
	for _, title := range []string{"Sourdough basics for bakers", "Rye loaves for bakers"} {
		wantStatus(t, w.owner.do(t, "PATCH", "/api/public/v1/collections/posts/"+id, map[string]any{"data": map[string]any{"title": title}}, site, w.cms.site), http.StatusOK)
	}
	item := "sites/" + w.cms.site + "/collections/posts/items/" + id

	p := w.signIn(t, w.ownerEmail)
	p.Go(w.agencyPath(item + "/revisions"))
	if p.Status() != http.StatusOK {
		t.Fatalf("the revisions page answered %d: %s", p.Status(), p.Text("main"))
	}
	txt := p.Text("main")
	for _, want := range []string{"Version 1", "Version 2", "Version 3", "created", "updated", "current"} {
		if !strings.Contains(txt, want) {
			t.Fatalf("the revisions page lacks %q: %s", want, txt)
		}
	}
	checkTool(t, p)
	p.Click("a[href$='/revisions/1']")
	p.WaitText("h1", "Version 1", 10*time.Second)
	if del, ins := p.Text("table.diff del"), p.Text("table.diff ins"); !strings.Contains(del, "Sourdough") || !strings.Contains(ins, "Rye") {
		t.Fatalf("the difference marks %q removed and %q added; want Sourdough removed and Rye added", del, ins)
	}
	if !strings.Contains(p.Text("main"), "version 3") {
		t.Fatalf("the difference does not say it compares with version 3: %s", p.Text("main"))
	}
	checkTool(t, p)
	screenshot(t, p, "revisions-diff")
	narrow(t, p)
	acceptConfirm(p)
	p.Submit("form[action$='/revisions/1/restore'] button")
	p.WaitText(".flash", "Version 1 restored", 10*time.Second)
	if !strings.HasSuffix(p.URL(), "/items/"+id) {
		t.Fatalf("after the restore the page is %s, want the item's editor", p.URL())
	}
	r = w.owner.do(t, "GET", "/api/public/v1/collections/posts/"+id, nil, site, w.cms.site)
	wantStatus(t, r, http.StatusOK)
	if got := r.json["item"].(map[string]any)["title"]; got != "Sourdough basics for beginners" {
		t.Fatalf("after restoring version 1 the title is %v", got)
	}

	// A stale page: version 1 compared before a save elsewhere is not
	// restored over it.
	p.Go(w.agencyPath(item + "/revisions/2"))
	wantStatus(t, w.owner.do(t, "PATCH", "/api/public/v1/collections/posts/"+id, map[string]any{"data": map[string]any{"title": "Saved elsewhere"}}, site, w.cms.site), http.StatusOK)
	acceptConfirm(p)
	p.Submit("form[action$='/revisions/2/restore'] button")
	p.WaitText("main", "Reload the page", 10*time.Second)
	if p.Status() != http.StatusPreconditionFailed {
		t.Fatalf("restoring over a newer save answered %d: %s", p.Status(), p.Text("main"))
	}

	// A viewer reads the revisions, with no restore button; forced, the
	// restore is refused and changes nothing.
	viewer := w.signIn(t, w.member(t, "viewer"))
	viewer.Go(w.agencyPath(item + "/revisions/1"))
	if viewer.Status() == http.StatusOK {
		if n := browsertest.Eval[int](viewer, "document.querySelectorAll(\"form[action$='/restore']\").length"); n != 0 {
			t.Fatalf("a viewer sees %d restore forms", n)
		}
		checkTool(t, viewer)
	}
	if code := formPost(viewer, "/studio/a/"+w.cms.agency+"/"+item+"/revisions/1/restore", nil); code != http.StatusForbidden {
		t.Fatalf("a viewer's forced restore answered %d", code)
	}
	r = w.owner.do(t, "GET", "/api/public/v1/collections/posts/"+id, nil, site, w.cms.site)
	if got := r.json["item"].(map[string]any)["title"]; got != "Saved elsewhere" {
		t.Fatalf("after a refused restore the title is %v", got)
	}

	// Another agency's site is not reached through this agency's path.
	other := s.newCMS(t)
	p.Go(w.agencyPath("sites/" + other.site + "/collections/posts/items/" + id + "/revisions"))
	if p.Status() != http.StatusForbidden && p.Status() != http.StatusNotFound {
		t.Fatalf("another agency's site's revisions answered %d", p.Status())
	}
}

// testPNG is a small valid PNG image.
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{R: uint8(40 * x), G: 120, B: uint8(30 * y), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testStudioAssets: the library's upload form, a file dropped on its drop
// zone, a file of a kind not allowed, the thumbnails, the alt text and the
// delete; the editor's drop on an asset field (return_to); an editor sees
// no schema link; another agency's site is refused.
func testStudioAssets(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	dir := t.TempDir()
	hero := filepath.Join(dir, "hero.png")
	// Over 2 MiB (the pixels then padding): more than --max-body-bytes,
	// which bounds the bodies the gateway reads whole, so this upload
	// passes only as the transfer it is (studio.IsUpload).
	if err := os.WriteFile(hero, append(testPNG(t, 8, 6), make([]byte, 2<<20)...), 0o600); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.html")
	if err := os.WriteFile(notes, []byte("<!doctype html><p>not an asset</p>"), 0o600); err != nil {
		t.Fatal(err)
	}
	library := "sites/" + w.cms.site + "/assets"

	p := w.signIn(t, w.member(t, "editor"))
	p.Go(w.agencyPath(library))
	if p.Status() != http.StatusOK {
		t.Fatalf("the asset library answered %d: %s", p.Status(), p.Text("main"))
	}
	if n := browsertest.Eval[int](p, "document.querySelectorAll(\"a[href$='/schema']\").length"); n != 0 {
		t.Fatalf("an editor sees %d links to the schema", n)
	}
	checkTool(t, p)

	// A file of a kind assets may not be: the error next to the form.
	p.Upload("#upload-file", notes)
	p.Submit("#upload-form")
	p.WaitText("#upload-error", "allowed", 10*time.Second)
	if p.Status() != http.StatusBadRequest {
		t.Fatalf("an HTML file answered %d", p.Status())
	}
	checkTool(t, p)

	// A file over the deployment's limit (--max-asset-bytes, 25 MiB by
	// default): refused by its size before it is sent on, by the form.
	big := filepath.Join(dir, "big.png")
	if err := os.WriteFile(big, append(testPNG(t, 2, 2), make([]byte, 25<<20)...), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Upload("#upload-file", big)
	p.Submit("#upload-form")
	p.WaitText("#upload-error", "larger than", 20*time.Second)
	if p.Status() != http.StatusRequestEntityTooLarge {
		t.Fatalf("a file over the limit answered %d", p.Status())
	}

	// The form, with alt text.
	p.Upload("#upload-file", hero)
	p.Fill("#upload-alt", "A tiny gradient")
	p.Submit("#upload-form")
	p.WaitText(".flash", "Uploaded hero.png", 10*time.Second)
	// Dropped on the drop zone: uploaded at once.
	p.DropFile("#drop-zone", "dropped.png", "image/png", testPNG(t, 5, 5))
	p.WaitText(".flash", "Uploaded dropped.png", 10*time.Second)
	if got := browsertest.Eval[int](p, "document.querySelectorAll('.asset-grid img').length"); got != 2 {
		t.Fatalf("the library shows %d thumbnails, want 2: %s", got, p.Text("main"))
	}
	loaded := browsertest.Eval[bool](p, `Promise.all([...document.querySelectorAll('.asset-grid img')].map(i => { i.loading = "eager";
		return i.complete && i.naturalWidth > 0 ? true : new Promise(r => { i.onload = () => r(i.naturalWidth > 0); i.onerror = () => r(false); }); })).then(a => a.every(Boolean))`)
	if !loaded {
		t.Fatalf("a thumbnail did not load")
	}
	if alt := browsertest.Eval[string](p, "[...document.querySelectorAll('.asset-grid img')].map(i => i.alt).join('|')"); !strings.Contains(alt, "A tiny gradient") {
		t.Fatalf("the thumbnails' alt texts are %q", alt)
	}
	checkTool(t, p)
	screenshot(t, p, "assets")
	narrow(t, p)

	// The asset's page: alt text changed, then the asset deleted.
	p.Click(".asset-grid a[href*='/assets/']")
	p.WaitVisible("#asset-alt")
	checkTool(t, p)
	p.Fill("#asset-alt", "A loaf at dawn")
	p.Submit("#asset-alt")
	p.WaitText(".flash", "Saved the alt text", 10*time.Second)
	if got := browsertest.Eval[string](p, "document.querySelector('.asset-view img').alt"); got != "A loaf at dawn" {
		t.Fatalf("after saving, the image's alt is %q", got)
	}
	acceptConfirm(p)
	p.Submit("form[action$='/delete'] button")
	p.WaitText(".flash", "Deleted the asset", 10*time.Second)
	if got := browsertest.Eval[int](p, "document.querySelectorAll('.asset-grid .asset').length"); got != 1 {
		t.Fatalf("after deleting one of two, the library shows %d", got)
	}

	// A viewer sees the library without its forms; a forced delete is
	// refused and deletes nothing.
	left := browsertest.Eval[string](p, "document.querySelector('.asset-grid a').getAttribute('href')")
	viewer := w.signIn(t, w.member(t, "viewer"))
	viewer.Go(w.agencyPath(library))
	if viewer.Status() != http.StatusOK {
		t.Fatalf("a viewer's library answered %d", viewer.Status())
	}
	if n := browsertest.Eval[int](viewer, "document.querySelectorAll('#upload-form').length"); n != 0 {
		t.Fatalf("a viewer sees the upload form")
	}
	viewer.Go(w.s.api + left)
	if n := browsertest.Eval[int](viewer, "document.querySelectorAll('#asset-alt, form[action$=\"/delete\"]').length"); n != 0 {
		t.Fatalf("a viewer sees %d of the alt and delete forms", n)
	}
	checkTool(t, viewer)
	if code := formPost(viewer, left+"/delete", nil); code != http.StatusForbidden {
		t.Fatalf("a viewer's forced delete answered %d", code)
	}
	p.Go(w.agencyPath(library))
	if got := browsertest.Eval[int](p, "document.querySelectorAll('.asset-grid .asset').length"); got != 1 {
		t.Fatalf("after a viewer's refused delete the library shows %d assets", got)
	}

	// The editor's drop on an item's asset field posts here with return_to:
	// the answer goes back there with the new asset's id; a return_to
	// elsewhere is not followed.
	editorPage := "/studio/a/" + w.cms.agency + "/sites/" + w.cms.site + "/collections/posts/new"
	p.Go(w.agencyPath(library) + "?return_to=" + editorPage)
	p.DropFile("#drop-zone", "field.png", "image/png", testPNG(t, 3, 3))
	p.WaitVisible("main:not(:has(#drop-zone))")
	if u := p.URL(); !strings.Contains(u, "/collections/posts/new?asset=") {
		t.Fatalf("after an upload with return_to the page is %s", u)
	}
	p.Go(w.agencyPath(library) + "?return_to=https://evil.example/")
	if n := browsertest.Eval[int](p, "document.querySelectorAll('input[name=return_to]').length"); n != 0 {
		t.Fatalf("a return_to elsewhere is kept in the form")
	}

	// Another agency's site, by link.
	other := s.newTenant(t)
	p.Go(w.agencyPath("sites/" + other.site + "/assets"))
	if p.Status() != http.StatusForbidden && p.Status() != http.StatusNotFound {
		t.Fatalf("another agency's site's assets answered %d", p.Status())
	}
	if strings.Contains(p.Text("main"), "Upload a file") {
		t.Fatalf("another agency's site shows the library")
	}
}

// testStudioSchema: the owner creates a collection, adds fields, changes
// and removes one; a refused field keeps its input; an editor and a
// manager get 403 by link and see no schema link.
func testStudioSchema(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	schema := "sites/" + w.cms.site + "/schema"
	p := w.signIn(t, w.ownerEmail)
	// From the site's page (the editor's), by its link to the schema.
	p.Go(w.agencyPath("sites/" + w.cms.site + "/"))
	p.Click("a[href$='/schema']")
	p.WaitText("h1", "Schema", 10*time.Second)
	if txt := p.Text("main"); !strings.Contains(txt, "Posts") || !strings.Contains(txt, "publish_on") {
		t.Fatalf("the schema page lacks the posts collection and its fields: %s", txt)
	}
	checkTool(t, p)

	p.Fill("#create-name", "Events")
	p.Fill("#create-slug", "Not A Slug!")
	p.Submit("#create-name")
	p.WaitText("#create-error", "", 10*time.Second)
	if p.Status() != http.StatusBadRequest || browsertest.Eval[string](p, "document.querySelector('#create-name').value") != "Events" {
		t.Fatalf("a bad slug answered %d and kept the name %q", p.Status(), browsertest.Eval[string](p, "document.querySelector('#create-name').value"))
	}
	checkTool(t, p)
	p.Fill("#create-slug", "events")
	p.Fill("#create-language", "english")
	p.Submit("#create-name")
	p.WaitText(".flash", "Created the collection Events", 10*time.Second)
	checkTool(t, p)

	p.Fill("#add-key", "starts_on")
	p.Fill("#add-type", "date")
	p.Submit("#add-field")
	p.WaitText(".flash", "Added the field starts_on", 10*time.Second)
	p.Fill("#add-key", "kind")
	p.Fill("#add-type", "select")
	p.Fill("#add-options", "talk\nworkshop")
	p.Submit("#add-field")
	p.WaitText(".flash", "Added the field kind", 10*time.Second)
	p.Fill("#add-key", "speaker")
	p.Fill("#add-type", "reference")
	p.Fill("#add-target", "authors")
	p.Submit("#add-field")
	p.WaitText(".flash", "Added the field speaker", 10*time.Second)
	screenshot(t, p, "schema")
	// A field the service refuses: the error by the form, the input kept.
	p.Fill("#add-key", "Bad Key")
	p.Submit("#add-field")
	p.WaitText("#add-error", "Key must be", 10*time.Second)
	if got := browsertest.Eval[string](p, "document.querySelector('#add-key').value"); got != "Bad Key" {
		t.Fatalf("a refused field kept the key %q", got)
	}
	checkTool(t, p)
	// Change a field's options, then remove a field.
	p.Fill("#f-kind-options", "talk\nworkshop\npanel")
	p.Submit("#f-kind-options")
	p.WaitText(".flash", "Saved the field kind", 10*time.Second)
	acceptConfirm(p)
	p.Submit("form[action$='/fields/starts_on/remove'] button")
	p.WaitText(".flash", "Removed the field starts_on", 10*time.Second)
	r := w.owner.do(t, "GET", "/api/public/v1/schema/collections", nil, "Atrium-Site", w.cms.site)
	wantStatus(t, r, http.StatusOK)
	var keys []string
	for _, c := range r.json["collections"].([]any) {
		if c := c.(map[string]any); c["slug"] == "events" {
			for _, f := range c["fields"].([]any) {
				f := f.(map[string]any)
				keys = append(keys, f["key"].(string))
				if f["key"] == "kind" && len(f["options"].([]any)) != 3 {
					t.Fatalf("kind's options = %v", f["options"])
				}
			}
		}
	}
	if strings.Join(keys, ",") != "kind,speaker" {
		t.Fatalf("the events collection's fields are %v, want kind and speaker", keys)
	}

	// Editors and managers: no link, 403 by link, a forced create refused.
	for _, role := range []string{"editor", "manager"} {
		q := w.signIn(t, w.member(t, role))
		for _, page := range []string{"/", "/assets"} {
			q.Go(w.agencyPath("sites/" + w.cms.site + page))
			if n := browsertest.Eval[int](q, "document.querySelectorAll(\"a[href$='/schema']\").length"); n != 0 {
				t.Fatalf("a %s sees a link to the schema on %s", role, q.URL())
			}
		}
		q.Go(w.agencyPath(schema))
		if q.Status() != http.StatusForbidden {
			t.Fatalf("a %s's schema page answered %d", role, q.Status())
		}
		checkTool(t, q)
		if code := formPost(q, "/studio/a/"+w.cms.agency+"/"+schema, map[string]string{"name": "Sneaky", "slug": "sneaky", "search_language": "simple"}); code != http.StatusForbidden {
			t.Fatalf("a %s's forced create answered %d", role, code)
		}
	}
	r = w.owner.do(t, "GET", "/api/public/v1/schema/collections", nil, "Atrium-Site", w.cms.site)
	if strings.Contains(string(r.body), "sneaky") {
		t.Fatalf("a refused create made a collection")
	}

	// Another agency's site in the path.
	other := s.newTenant(t)
	p.Go(w.agencyPath("sites/" + other.site + "/schema"))
	if p.Status() != http.StatusForbidden && p.Status() != http.StatusNotFound {
		t.Fatalf("another agency's site's schema answered %d", p.Status())
	}
}
