package main

// The editor's journey in Atrium Studio: an editor whose membership names
// one site writes a post with a body, an image and an author, schedules it
// and sees it published by itself, edits it twice, finds it by searching
// the list, meets someone else's save, and loses nothing when the session
// ends while editing; a viewer reads without a single write control and is
// refused a forced POST; another agency's item is not there by link.

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/internal/browsertest"
)

func testStudioEditor(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	site := w.cms.site
	// The owner gives posts an image field, uploads an image and writes an
	// author, over the API.
	wantStatus(t, w.owner.do(t, "PATCH", "/api/public/v1/schema/collections/posts",
		map[string]any{"add_fields": []map[string]any{{"key": "cover", "type": "asset"}}}, "Atrium-Site", site), http.StatusOK)
	asset := s.newAsset(t, w.cms.write, "loaf.png", pngBytes(t, 64, 40))
	assetID := asset["id"].(string)
	author := w.cms.createItem(t, "authors", map[string]any{"data": map[string]any{"name": "Ana Author"}, "is_published": true})
	authorID := author["id"].(string)

	editor, _ := editorInvite(t, w, "ed", "editor", []string{site})
	p := w.signIn(t, editor)

	// The sites list shows the editor's site; its collections; the posts.
	p.Go(w.agencyPath("sites"))
	p.WaitText("main", site, 10*time.Second)
	checkEditorPage(t, p)
	p.Click("a[href$='/sites/" + site + "/']")
	p.WaitText("h1", "Collections of", 10*time.Second)
	checkEditorPage(t, p)
	p.Click("a[href$='/collections/posts/']")
	p.WaitText("h1", "Posts", 10*time.Second)
	checkEditorPage(t, p)
	p.Click("a[href$='/collections/posts/new']")
	p.WaitVisible("#f-title")
	checkEditorPage(t, p)

	// A value the form cannot take is shown next to its field, with the
	// rest of the input kept.
	p.Fill("#f-title", "Sourdough at home")
	p.Fill("#f-extra", "{not json")
	p.Click("#save")
	p.WaitVisible("#f-extra-error")
	if p.Status() != http.StatusBadRequest || !strings.Contains(p.Text("#f-extra-error"), "not JSON") {
		t.Fatalf("a wrong JSON answered %d: %s", p.Status(), p.Text("#f-extra-error"))
	}
	if got := browsertest.Eval[string](p, "document.getElementById('f-title').value + '|' + document.getElementById('f-extra').getAttribute('aria-invalid')"); got != "Sourdough at home|true" {
		t.Fatalf("after the refusal the form holds %q", got)
	}
	checkEditorPage(t, p)
	p.Fill("#f-extra", "")

	// A post with a body (a heading from the toolbar), the image and the
	// author, scheduled a few seconds ahead.
	p.Fill("#f-title", "Sourdough at home")
	p.Fill("#f-body", "Flour, water, salt. ")
	p.Click(".rt-toolbar button:first-child") // Heading 2
	if body := browsertest.Eval[string](p, "document.getElementById('f-body').value"); !strings.Contains(body, "<h2>Heading</h2>") {
		t.Fatalf("the toolbar's heading button left the body as %q", body)
	}
	p.Fill("#f-author", authorID)
	p.Click("input[name='f.cover'][value='" + assetID + "']")
	publishAt := time.Now().UTC().Add(4 * time.Second)
	setValue(p, "#publish_at", publishAt.Format("2006-01-02T15:04:05"))
	clickAndWait(p, "#save", "Created")
	if state := p.Text("#item-state"); !strings.Contains(state, "scheduled") {
		t.Fatalf("after saving with a publish time the state is %q", state)
	}
	itemURL := p.URL()
	itemID := itemURL[strings.LastIndexByte(itemURL, '/')+1:]
	checkEditorPage(t, p)

	// Published by itself: the stack's scheduler publishes it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		p.Go(itemURL)
		state := p.Text("#item-state")
		if strings.HasPrefix(strings.TrimSpace(state), "published") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after its publish time the post is still %q", state)
		}
		// why sleep: the scheduler publishes on its own clock; reloading
		// in a tight loop would only load the two cores the suite shares.
		time.Sleep(300 * time.Millisecond)
	}
	live := call(t, "GET", w.cms.base+"/posts/"+itemID, w.cms.read, nil)
	wantStatus(t, live, http.StatusOK)
	it := live.json["item"].(map[string]any)
	if it["is_published"] != true || it["author"] != authorID || it["cover"] != assetID || !strings.Contains(fmt.Sprint(it["body"]), "<h2>") {
		t.Fatalf("the published post: %v", it)
	}

	// Edited twice; each save says so, and the revisions are a link away.
	for _, title := range []string{"Sourdough at home, revised", "Sourdough at home, third take"} {
		p.Fill("#f-title", title)
		clickAndWait(p, "#save", "Saved")
		if got := browsertest.Eval[string](p, "document.getElementById('f-title').value"); got != title {
			t.Fatalf("after saving, the title reads %q, want %q", got, title)
		}
	}
	if n := browsertest.Eval[int](p, "document.querySelectorAll(\"a[href$='/items/"+itemID+"/revisions']\").length"); n != 1 {
		t.Fatalf("the editor has %d links to the revisions", n)
	}
	checkEditorPage(t, p)
	screenshot(t, p, "item-editor")

	// Unpublished and published again by hand; a preview link shown once,
	// which shows the item without a key.
	clickAndWait(p, "#unpublish", "unpublished")
	if state := p.Text("#item-state"); !strings.Contains(state, "draft") {
		t.Fatalf("after unpublishing the state is %q", state)
	}
	clickAndWait(p, "#publish", "published")
	if state := p.Text("#item-state"); !strings.HasPrefix(strings.TrimSpace(state), "published") {
		t.Fatalf("after publishing the state is %q", state)
	}
	clickAndWait(p, "#make-preview", "Preview link made")
	previewURL := strings.TrimSpace(p.Text("#preview-url"))
	if !strings.HasPrefix(previewURL, "http") {
		t.Fatalf("the preview link reads %q", previewURL)
	}
	checkEditorPage(t, p)
	if pr := fetch(t, previewURL); pr.status != http.StatusOK || !strings.Contains(string(pr.body), "third take") {
		t.Fatalf("the preview link answered %d: %.300s", pr.status, pr.body)
	}
	p.Go(itemURL)

	// The list finds items by search, as one types.
	w.cms.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Rye crackers"}})
	p.Go(w.agencyPath("sites/" + site + "/collections/posts/"))
	p.WaitText("#items", "Sourdough at home, third take", 10*time.Second)
	p.Fill("#q", "crackers")
	// The list is swapped in place (htmx): wait in the page for the new one.
	if !browsertest.Eval[bool](p, `new Promise(done => { const t0 = Date.now(); (function check() {
		const txt = document.getElementById("items").innerText;
		if (txt.includes("Rye crackers") && !txt.includes("Sourdough")) return done(true);
		if (Date.now() - t0 > 10000) return done(false);
		setTimeout(check, 100); })(); })`) {
		t.Fatalf("searching for crackers lists: %s", p.Text("#items"))
	}
	if !strings.Contains(p.URL(), "q=crackers") {
		t.Fatalf("after searching the address is %s, which a reload would not keep", p.URL())
	}
	p.Go(w.agencyPath("sites/" + site + "/collections/posts/?published=true"))
	if txt := p.Text("#items"); !strings.Contains(txt, "Sourdough") || strings.Contains(txt, "Rye") {
		t.Fatalf("the published posts: %s", txt)
	}
	checkEditorPage(t, p)
	screenshot(t, p, "items-list")
	// On a phone neither the list nor the editor scrolls sideways.
	for _, u := range []string{p.URL(), itemURL} {
		p.Go(u)
		p.SetViewport(360, 740)
		if wide := browsertest.Eval[bool](p, "document.documentElement.scrollWidth > 362"); wide {
			t.Errorf("%s scrolls sideways at 360 px", u)
		}
		p.SetViewport(1280, 800)
	}
	// A reference's search (the select the editor's search box swaps in
	// when the target has more items than the select lists).
	p.Go(w.agencyPath("sites/" + site + "/collections/posts/choices?field=author&q=Ana"))
	if opts := p.Text("#f-author"); !strings.Contains(opts, "Ana Author") {
		t.Fatalf("searching the authors for Ana offers: %s", opts)
	}
	checkEditorPage(t, p)
	p.Go(w.agencyPath("sites/" + site + "/collections/posts/choices?field=author&q=Zebedee"))
	if n := browsertest.Eval[int](p, "document.querySelectorAll('#f-author option').length"); n != 1 {
		t.Fatalf("searching the authors for nobody offers %d choices, want only none", n)
	}

	// Someone else saves while the editor edits: the editor's version is
	// kept, with when they saved; saving again replaces theirs.
	p.Go(itemURL)
	p.WaitVisible("#f-title")
	wantStatus(t, call(t, "PATCH", w.cms.base+"/posts/"+itemID, w.cms.write, map[string]any{"data": map[string]any{"title": "Their title"}}), http.StatusOK)
	p.Fill("#f-title", "My title")
	p.Click("#save")
	p.WaitText("#conflict-h", "Someone else saved this item at", 10*time.Second)
	if p.Status() != http.StatusPreconditionFailed {
		t.Fatalf("the conflict answered %d", p.Status())
	}
	if got := browsertest.Eval[string](p, "document.getElementById('f-title').value"); got != "My title" {
		t.Fatalf("after the conflict the form holds %q", got)
	}
	checkEditorPage(t, p)
	clickAndWait(p, "#save", "Saved")
	if got := itemTitleOf(t, w, itemID); got != "My title" {
		t.Fatalf("after saving again the title is %q", got)
	}

	// The session ends while editing: the sign-in page keeps the change,
	// and after signing in "Save my changes" saves it.
	p.Fill("#f-title", "Written while signed out")
	ended := browsertest.Eval[int](p, `fetch("/api/v1/sessions/current", {method: "DELETE",
		headers: {"X-CSRF-Token": document.querySelector("input[name=csrf_token]").value}}).then(r => r.status)`)
	if ended != http.StatusOK && ended != http.StatusNoContent {
		t.Fatalf("ending the session answered %d", ended)
	}
	p.Click("#save")
	p.WaitVisible("#password")
	if p.Status() != http.StatusUnauthorized {
		t.Fatalf("saving without a session answered %d", p.Status())
	}
	checkEditorPage(t, p)
	p.Fill("#email", editor)
	p.Fill("#password", sessionPassword)
	p.Submit("form[action='/studio/sign-in']")
	p.WaitText("h1", "Save your changes", 10*time.Second)
	checkEditorPage(t, p)
	clickAndWait(p, "#replay button[type=submit]", "Saved")
	if got := itemTitleOf(t, w, itemID); got != "Written while signed out" {
		t.Fatalf("after the replay the title is %q", got)
	}

	// With more authors than the select lists, a search box finds the
	// others, as one types.
	for i := range referenceChoicesInTest {
		w.cms.createItem(t, "authors", map[string]any{"data": map[string]any{"name": fmt.Sprintf("Writer %03d", i)}})
	}
	p.Go(itemURL)
	p.WaitVisible("#f-author-search")
	if n := browsertest.Eval[int](p, "document.querySelectorAll('#f-author option').length"); n != referenceChoicesInTest+1 {
		// Ana Author, the current one, is among the first by name.
		t.Fatalf("the author select lists %d choices, want none and the first %d by name", n, referenceChoicesInTest)
	}
	p.Fill("#f-author-search", "Writer 150")
	if !browsertest.Eval[bool](p, `new Promise(done => { const t0 = Date.now(); (function check() {
		const opts = [...document.querySelectorAll("#f-author option")].map(o => o.textContent);
		if (opts.length === 3 && opts.includes("Writer 150") && opts.includes("Ana Author")) return done(true);
		if (Date.now() - t0 > 10000) return done(false);
		setTimeout(check, 100); })(); })`) {
		t.Fatalf("searching the authors offers: %s", p.Text("#f-author"))
	}
	if got := browsertest.Eval[string](p, "document.getElementById('f-author').selectedOptions[0].textContent"); got != "Ana Author" {
		t.Fatalf("after the search the chosen author is %q", got)
	}
	checkEditorPage(t, p)

	// Another agency's item is not there: by its id under this site, nor
	// under its own site.
	other := s.newCMS(t)
	theirs := other.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Their secret post"}})["id"].(string)
	for _, path := range []string{"sites/" + site + "/collections/posts/items/" + theirs, "sites/" + other.site + "/collections/posts/items/" + theirs} {
		p.Go(w.agencyPath(path))
		if st := p.Status(); st != http.StatusNotFound && st != http.StatusForbidden {
			t.Fatalf("another agency's item at %s answered %d", path, st)
		}
		if strings.Contains(p.Text("main"), "secret") {
			t.Fatalf("another agency's item shows at %s", path)
		}
	}
	p.Go(w.agencyPath("sites/" + site + "/collections/posts/items/" + theirs))
	if p.Status() != http.StatusNotFound {
		t.Fatalf("another agency's item id under this site answered %d", p.Status())
	}

	// A viewer reads the post without any write control, and a forced
	// POST is refused without a change.
	viewerEmail, viewer := editorInvite(t, w, "vic", "viewer", nil)
	vp := w.signIn(t, viewerEmail)
	vp.Go(itemURL)
	vp.WaitText("#read-only", "not change it", 10*time.Second)
	if n := browsertest.Eval[int](vp, "document.querySelectorAll('#save, #publish, #unpublish, #delete, #make-preview, .rt-toolbar').length"); n != 0 {
		t.Fatalf("the viewer sees %d write controls", n)
	}
	if !browsertest.Eval[bool](vp, "document.getElementById('f-title').matches(':disabled')") {
		t.Fatalf("the viewer's title field is editable")
	}
	checkEditorPage(t, vp)
	vp.Go(w.agencyPath("sites/" + site + "/collections/posts/"))
	if n := browsertest.Eval[int](vp, "document.querySelectorAll(\"a[href$='/new']\").length"); n != 0 {
		t.Fatalf("the viewer's list offers a new item")
	}
	checkEditorPage(t, vp)
	cookie := "atrium_session=" + viewer.cookie
	for _, op := range []string{"", "/publish", "/delete"} {
		r := studioCall(t, "POST", itemURL+op, url.Values{"csrf_token": {viewer.csrf}, "f.title": {"Viewer was here"}}, "Cookie", cookie)
		if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "You may not") {
			t.Fatalf("the viewer's forced POST %s answered %d: %.300s", op, r.status, r.body)
		}
	}
	if got := itemTitleOf(t, w, itemID); got != "Written while signed out" {
		t.Fatalf("after the viewer's POSTs the title is %q", got)
	}

	// Finally the editor deletes the post.
	p.Go(itemURL)
	browsertest.Eval[bool](p, "window.confirm = () => true, true")
	clickAndWait(p, "#delete", "Deleted")
	wantStatus(t, call(t, "GET", w.cms.base+"/posts/"+itemID, w.cms.read, nil), http.StatusNotFound)
}

// referenceChoicesInTest is how many items a reference's select lists
// (the Studio's referenceChoices): one more author than these needs the
// search box.
const referenceChoicesInTest = 200

// editorInvite makes a member of the world's agency with role (an
// editor limited to sites when given) who has accepted; it returns their
// email and their API session. (The addresses are short: an email's local
// part holds at most 64 characters.)
func editorInvite(t *testing.T, w *studioWorld, who, role string, sites []string) (string, person) {
	t.Helper()
	email := w.email(who)
	body := map[string]any{"email": email, "role": role, "name": strings.ToUpper(who[:1]) + who[1:] + " " + role}
	if sites != nil {
		body["site_ids"] = sites
	}
	r := w.owner.do(t, "POST", "/api/v1/members", body)
	wantStatus(t, r, http.StatusCreated)
	return email, w.s.accept(t, invitationToken(t, r), body["name"].(string))
}

// clickAndWait clicks a form's button and waits for the next page's
// confirmation: the current page's confirmation is removed first, so that
// the wait cannot be met by the page being left.
func clickAndWait(p *browsertest.Page, button, flash string) {
	browsertest.Eval[bool](p, "document.querySelectorAll('.flash').forEach(e => e.remove()), true")
	p.Click(button)
	p.WaitText(".flash", flash, 10*time.Second)
}

// checkEditorPage is checkPage, except that the journey's own refusals
// (a refused form's 400, the conflict's 412, the ended session's 401,
// another agency's 404),
// which Chromium logs as failed loads of the page itself and which the
// journey asserts with Page.Status, are not errors of the page.
func checkEditorPage(t *testing.T, p *browsertest.Page) {
	t.Helper()
	p.AssertAccessible(t)
	var errs []string
	for _, e := range p.ConsoleErrors() {
		if documentRefusal.MatchString(e) {
			continue
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		t.Errorf("the page %s logged errors: %s", p.URL(), strings.Join(errs, "; "))
	}
}

var documentRefusal = regexp.MustCompile(`^network error: Failed to load resource: the server responded with a status of (400|401|403|404|412) \([^)]*\) \(http://[^ ]+/studio/a/[^ ]+\)$`)

// setValue sets an input's value as a picker would (a datetime-local takes
// no typed text reliably).
func setValue(p *browsertest.Page, selector, value string) {
	browsertest.Eval[bool](p, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q;
		el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); return el.value !== ""; })()`, selector, value))
}

// itemTitleOf reads a post's title over the API.
func itemTitleOf(t *testing.T, w *studioWorld, id string) string {
	t.Helper()
	r := call(t, "GET", w.cms.base+"/posts/"+id, w.cms.read, nil)
	wantStatus(t, r, http.StatusOK)
	title, _ := r.json["item"].(map[string]any)["title"].(string)
	return title
}

// testStudioEditorDrop: a file dropped on an item's asset field is
// uploaded to the site's asset library (the content tools' page, POST
// sites/{site}/assets with return_to), chosen in the field, and saved with
// the item. It needs that page: add it to suiteTests with the content
// tools' journeys.
func testStudioEditorDrop(t *testing.T, s *stack) {
	w := newStudioWorld(t, s)
	site := w.cms.site
	wantStatus(t, w.owner.do(t, "PATCH", "/api/public/v1/schema/collections/posts",
		map[string]any{"add_fields": []map[string]any{{"key": "cover", "type": "asset"}}}, "Atrium-Site", site), http.StatusOK)
	editor, _ := editorInvite(t, w, "ed", "editor", []string{site})
	p := w.signIn(t, editor)
	p.Go(w.agencyPath("sites/" + site + "/collections/posts/new"))
	p.Fill("#f-title", "With a dropped cover")
	p.DropFile("#f-cover", "dropped.png", "image/png", pngBytes(t, 20, 10))
	p.WaitText("#f-cover .drop-status", "uploaded and chosen", 15*time.Second)
	if got := browsertest.Eval[string](p, "document.getElementById('f-title').value"); got != "With a dropped cover" {
		t.Fatalf("the drop lost the title: %q", got)
	}
	if n := browsertest.Eval[int](p, "document.querySelectorAll('#f-cover img').length"); n != 1 {
		t.Fatalf("after the drop the picker shows %d thumbnails", n)
	}
	checkEditorPage(t, p)
	clickAndWait(p, "#save", "Created")
	itemURL := p.URL()
	r := call(t, "GET", w.cms.base+"/posts/"+itemURL[strings.LastIndexByte(itemURL, '/')+1:], w.cms.write, nil)
	wantStatus(t, r, http.StatusOK)
	cover, _ := r.json["item"].(map[string]any)["cover"].(string)
	a := call(t, "GET", s.assetsURL()+"/"+cover, w.cms.write, nil)
	wantStatus(t, a, http.StatusOK)
	if a.json["asset"].(map[string]any)["filename"] != "dropped.png" {
		t.Fatalf("the item's cover is %v", a.json["asset"])
	}
}
