package browsertest

import (
	"bytes"
	"fmt"
	"html"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"
)

// policy is as strict as the console's: no inline script, no eval.
const policy = "default-src 'self'; script-src 'self'"

// appJS is the pages' one script, served from the same origin as the
// policy allows.
const appJS = `
const out = document.getElementById("out");
const file = document.getElementById("file");
if (file) file.addEventListener("change", () => {
	out.textContent = "picked " + file.files[0].name + " (" + file.files[0].size + " bytes)";
});
const drop = document.getElementById("drop");
if (drop) {
	drop.addEventListener("dragover", e => e.preventDefault());
	drop.addEventListener("drop", async e => {
		e.preventDefault();
		const f = e.dataTransfer.files[0];
		out.textContent = "dropped " + f.name + " " + f.type + ": " + await f.text();
	});
}
const later = document.getElementById("later");
if (later) setTimeout(() => { later.textContent = "Saved"; }, 300);
`

// site serves the small pages the harness is tested on, each with the
// strict policy.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	page := func(w http.ResponseWriter, status int, title, body string) {
		w.Header().Set("Content-Security-Policy", policy)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8">`+
			`<meta name="viewport" content="width=device-width, initial-scale=1"><title>%s</title><link rel="stylesheet" href="/app.css"></head>`+
			`<body><main><h1>%[1]s</h1>%s<p id="out"></p></main><script src="/app.js"></script></body></html>`, title, body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = io.WriteString(w, appJS)
	})
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = io.WriteString(w, ".tall { height: 2000px; }")
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /good", func(w http.ResponseWriter, _ *http.Request) {
		page(w, http.StatusOK, "Sign in", `<form action="/signed-in" method="post">`+
			`<label for="email">Email</label> <input id="email" name="email" type="email">`+
			`<button type="submit">Sign in</button></form>`)
	})
	mux.HandleFunc("POST /signed-in", func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusOK, "Welcome", `<p id="who">Signed in as `+html.EscapeString(r.FormValue("email"))+`</p>`)
	})
	mux.HandleFunc("GET /unlabeled", func(w http.ResponseWriter, _ *http.Request) {
		page(w, http.StatusOK, "Search", `<form><input id="q" type="text"></form>`)
	})
	mux.HandleFunc("GET /inline", func(w http.ResponseWriter, _ *http.Request) {
		page(w, http.StatusOK, "Inline", `<script>document.title = "inline ran";</script>`)
	})
	mux.HandleFunc("GET /report-only", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Security-Policy-Report-Only", "img-src 'none'")
		page(w, http.StatusOK, "Report only", `<img src="/favicon.ico" alt="">`)
	})
	mux.HandleFunc("GET /later", func(w http.ResponseWriter, _ *http.Request) {
		page(w, http.StatusOK, "Later", `<p id="later">Saving…</p>`)
	})
	mux.HandleFunc("GET /set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "who", Value: r.FormValue("v"), Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
		page(w, http.StatusOK, "Set", "")
	})
	mux.HandleFunc("GET /who", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("who")
		who := "nobody"
		if err == nil {
			who = c.Value
		}
		page(w, http.StatusOK, "Who", `<p id="who">`+html.EscapeString(who)+`</p>`)
	})
	mux.HandleFunc("GET /upload", func(w http.ResponseWriter, _ *http.Request) {
		page(w, http.StatusOK, "Upload", `<form action="/upload" method="post" enctype="multipart/form-data">`+
			`<label for="file">File</label> <input id="file" name="file" type="file">`+
			`<button id="send" type="submit">Send</button></form>`+
			`<div id="drop" role="region" aria-label="Drop a file here">Drop a file here</div>`)
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		f, h, err := r.FormFile("file")
		if err != nil {
			page(w, http.StatusBadRequest, "No file", html.EscapeString(err.Error()))
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		page(w, http.StatusCreated, "Uploaded", `<p id="got">`+html.EscapeString(fmt.Sprintf("%s: %q", h.Filename, b))+`</p>`)
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		page(w, http.StatusOK, "Keys", `<form action="/signed-in" method="post">`+
			`<label for="a">First</label> <input id="a" name="email">`+
			`<label for="b">Second</label> <input id="b" name="other">`+
			`<button type="submit">Go</button></form>`)
	})
	mux.HandleFunc("GET /tall", func(w http.ResponseWriter, _ *http.Request) {
		page(w, http.StatusOK, "Tall", `<div class="tall">tall</div>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestHarness runs the harness's checks on one browser: starting Chromium
// is the slow part.
func TestHarness(t *testing.T) {
	b := Start(t)
	srv := site(t)

	t.Run("a good page under the strict policy passes axe and raises nothing", func(t *testing.T) {
		p := b.NewPage(t)
		p.Go(srv.URL + "/good")
		if p.Status() != http.StatusOK {
			t.Fatalf("status = %d, want 200", p.Status())
		}
		if vs := p.Axe(t); len(vs) != 0 {
			t.Fatalf("axe found %+v on a page that follows the rules", vs)
		}
		p.AssertAccessible(t)
		if errs := p.ConsoleErrors(); len(errs) != 0 {
			t.Fatalf("the page (and axe in it) raised %q", errs)
		}
		// axe ran in a world of its own: the page's globals are unchanged.
		if got := Eval[string](p, `typeof window.axe`); got != "undefined" {
			t.Fatalf("typeof window.axe = %q in the page, want undefined", got)
		}
	})

	t.Run("an unlabeled input is a serious axe violation", func(t *testing.T) {
		p := b.NewPage(t)
		p.Go(srv.URL + "/unlabeled")
		vs := p.Axe(t)
		i := slices.IndexFunc(vs, func(v Violation) bool { return v.ID == "label" })
		if i < 0 {
			t.Fatalf("axe found %+v, want the rule label", vs)
		}
		v := vs[i]
		if v.Impact != "serious" && v.Impact != "critical" {
			t.Fatalf("label violation impact = %q, want serious or critical", v.Impact)
		}
		if len(v.Nodes) != 1 || !slices.Equal(v.Nodes[0].Target, []string{"#q"}) || !strings.Contains(v.Nodes[0].HTML, `id="q"`) {
			t.Fatalf("label violation nodes = %+v, want the input #q", v.Nodes)
		}
		if v.Help == "" || !strings.HasPrefix(v.HelpURL, "https://dequeuniversity.com/rules/axe/4.14/label") {
			t.Fatalf("label violation help = %q %q", v.Help, v.HelpURL)
		}

		// AssertAccessible fails the test and names the rule and the element.
		rec := record(t, func(tb testing.TB) { p.AssertAccessible(tb) })
		if !rec.failed || !strings.Contains(rec.text(), "label") || !strings.Contains(rec.text(), "#q") || !strings.Contains(rec.text(), "dequeuniversity.com") {
			t.Fatalf("AssertAccessible reported %q (failed %v), want the rule label on #q with its help page", rec.text(), rec.failed)
		}
	})

	t.Run("an inline script the policy refuses is a console error", func(t *testing.T) {
		p := b.NewPage(t)
		p.Go(srv.URL + "/inline")
		if got := Eval[string](p, `document.title`); got != "Inline" {
			t.Fatalf("title = %q: the inline script ran despite the policy", got)
		}
		// The violation event is dispatched as a task after the refusal:
		// wait for the page to have run its tasks (a round trip through
		// the event loop), not for a fixed time.
		Eval[bool](p, `new Promise(r => setTimeout(() => r(true)))`)
		errs := p.ConsoleErrors()
		for _, want := range []string{
			"security error: Executing inline script violates the following Content Security Policy directive 'script-src 'self''",
			"CSP violation: script-src-elem refused inline (" + srv.URL + "/inline:1)",
		} {
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, want) }) {
				t.Fatalf("console errors = %q, want %q", errs, want)
			}
		}
	})

	t.Run("a report-only policy's violation is a console error too", func(t *testing.T) {
		p := b.NewPage(t)
		p.Go(srv.URL + "/report-only")
		Eval[bool](p, `new Promise(r => setTimeout(() => r(true)))`)
		errs := p.ConsoleErrors()
		want := "CSP violation: img-src refused " + srv.URL + "/favicon.ico"
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, want) && strings.HasSuffix(e, "[report-only]") }) {
			t.Fatalf("console errors = %q, want %q marked report-only", errs, want)
		}
	})

	t.Run("console.error and exceptions are reported", func(t *testing.T) {
		p := b.NewPage(t)
		p.Go(srv.URL + "/good")
		Eval[bool](p, `console.error("boom", 42); setTimeout(() => { throw new Error("thrown later"); }); new Promise(r => setTimeout(() => r(true), 10))`)
		errs := p.ConsoleErrors()
		if len(errs) != 2 || errs[0] != "console.error: boom 42" || !strings.Contains(errs[1], "thrown later") {
			t.Fatalf("console errors = %q, want console.error and the exception", errs)
		}
	})

	t.Run("pages with their own cookies are two people", func(t *testing.T) {
		owner := b.NewPage(t, OwnCookies())
		editor := b.NewPage(t, OwnCookies())
		owner.Go(srv.URL + "/set?v=owner")
		editor.Go(srv.URL + "/set?v=editor")
		owner.Go(srv.URL + "/who")
		editor.Go(srv.URL + "/who")
		if got := owner.Text("#who"); got != "owner" {
			t.Fatalf("the owner's page sends the cookie of %q", got)
		}
		if got := editor.Text("#who"); got != "editor" {
			t.Fatalf("the editor's page sends the cookie of %q", got)
		}
		// A page without its own cookies shares the default jar, which
		// neither person's sign-in reached.
		other := b.NewPage(t)
		other.Go(srv.URL + "/who")
		if got := other.Text("#who"); got != "nobody" {
			t.Fatalf("a page of the default context sends the cookie of %q", got)
		}
	})

	t.Run("the keyboard alone moves the focus and submits", func(t *testing.T) {
		p := b.NewPage(t)
		p.Go(srv.URL + "/keys")
		var order []string
		for range 3 {
			p.Keyboard(kb.Tab)
			order = append(order, Eval[string](p, `document.activeElement.id || document.activeElement.localName`))
		}
		if !slices.Equal(order, []string{"a", "b", "button"}) {
			t.Fatalf("Tab moved the focus through %q, want a, b, button", order)
		}
		p.Fill("#a", "kim@example.com")
		p.Keyboard(kb.Enter)
		got := p.WaitText("#who", "kim@example.com", 5*time.Second)
		if got != "Signed in as kim@example.com" || p.Status() != http.StatusOK || !strings.HasSuffix(p.URL(), "/signed-in") {
			t.Fatalf("after Enter: %q, status %d at %s", got, p.Status(), p.URL())
		}
	})

	t.Run("fill, submit, status and waiting for text", func(t *testing.T) {
		p := b.NewPage(t)
		p.Go(srv.URL + "/nowhere")
		if p.Status() != http.StatusNotFound {
			t.Fatalf("status of a missing page = %d, want 404", p.Status())
		}
		p.Go(srv.URL + "/good")
		p.Fill("#email", "first@example.com")
		p.Fill("#email", "ann@example.com") // Fill replaces
		p.Submit("#email")
		if got := p.WaitText("#who", "ann@", 5*time.Second); got != "Signed in as ann@example.com" {
			t.Fatalf("signed in page says %q", got)
		}
		p.Go(srv.URL + "/later")
		if got := p.WaitText("#later", "Saved", 5*time.Second); got != "Saved" {
			t.Fatalf("WaitText returned %q", got)
		}
	})

	t.Run("a failing step says where the page was and what it showed", func(t *testing.T) {
		var shot string
		rec := record(t, func(tb testing.TB) {
			p := b.NewPage(tb)
			p.Timeout = 500 * time.Millisecond
			p.Go(srv.URL + "/good")
			p.WaitVisible("#missing")
		})
		msg := rec.text()
		for _, want := range []string{"waiting for #missing to be visible", srv.URL + "/good", "status 200", "Sign in", "screenshot: /"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("the failure says %q, want it to mention %q", msg, want)
			}
		}
		shot = strings.Fields(msg[strings.Index(msg, "screenshot: ")+len("screenshot: "):])[0]
		checkPNG(t, shot)

		rec = record(t, func(tb testing.TB) {
			p := b.NewPage(tb)
			p.Go(srv.URL + "/later")
			p.WaitText("#later", "Saved", 5*time.Second)
			p.WaitText("#later", "Never", 300*time.Millisecond)
		})
		if !strings.Contains(rec.text(), `its text was "Saved"`) {
			t.Fatalf("the failure of WaitText says %q, want the text it last saw", rec.text())
		}
		rec = record(t, func(tb testing.TB) {
			p := b.NewPage(tb)
			p.Go(srv.URL + "/later")
			p.WaitText("#nothing", "Saved", 300*time.Millisecond)
		})
		if !strings.Contains(rec.text(), `waiting for #nothing to contain "Saved": not within 300ms; no element matched`) {
			t.Fatalf("the failure of WaitText on a missing element says %q", rec.text())
		}
	})

	t.Run("a phone-sized viewport and a full-page screenshot", func(t *testing.T) {
		p := b.NewPage(t)
		p.SetViewport(360, 740)
		p.Go(srv.URL + "/tall")
		if w := Eval[int](p, `window.innerWidth`); w != 360 {
			t.Fatalf("innerWidth = %d, want 360", w)
		}
		path := filepath.Join(t.TempDir(), "tall.png")
		p.Screenshot(path)
		w, h := checkPNG(t, path)
		if w != 360 || h < 2000 {
			t.Fatalf("screenshot is %dx%d, want 360 wide and the whole 2000 px page", w, h)
		}
		if errs := p.ConsoleErrors(); len(errs) != 0 {
			t.Fatalf("console errors = %q", errs)
		}
	})

	t.Run("uploading and dropping a file", func(t *testing.T) {
		p := b.NewPage(t)
		p.Go(srv.URL + "/upload")
		path := filepath.Join(t.TempDir(), "notes.txt")
		if err := os.WriteFile(path, []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		p.Upload("#file", path)
		p.WaitText("#out", "picked notes.txt (6 bytes)", 5*time.Second)
		p.Submit("#send")
		if got := p.WaitText("#got", "notes.txt", 5*time.Second); got != `notes.txt: "hello\n"` || p.Status() != http.StatusCreated {
			t.Fatalf("the server got %q (status %d)", got, p.Status())
		}

		p.Go(srv.URL + "/upload")
		p.DropFile("#drop", "photo.svg", "image/svg+xml", []byte("<svg/>"))
		p.WaitText("#out", "dropped photo.svg image/svg+xml: <svg/>", 5*time.Second)
		if errs := p.ConsoleErrors(); len(errs) != 0 {
			t.Fatalf("console errors = %q", errs)
		}
	})
}

// checkPNG decodes the file as a PNG and returns its size.
func checkPNG(t *testing.T, path string) (width, height int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot %s is not a PNG: %v", path, err)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

// recorder is a testing.TB that keeps what a helper reports instead of
// failing the real test, so that the tests can read the helpers' messages.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	msgs   []string
	failed bool
}

// record runs fn with a recorder, on a goroutine of its own so that Fatal
// can end it as it ends a test.
func record(t *testing.T, fn func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, s)
	r.failed = true
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "\n")
}

func (r *recorder) Helper()                   {}
func (r *recorder) Error(a ...any)            { r.add(fmt.Sprint(a...)) }
func (r *recorder) Errorf(f string, a ...any) { r.add(fmt.Sprintf(f, a...)) }
func (r *recorder) Fatal(a ...any)            { r.add(fmt.Sprint(a...)); runtime.Goexit() }
func (r *recorder) Fatalf(f string, a ...any) {
	r.add(fmt.Sprintf(f, a...))
	runtime.Goexit()
}
