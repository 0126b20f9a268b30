package browsertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// DefaultTimeout bounds each step of a page (a navigation, a click, a wait
// for an element) unless the Page's Timeout says otherwise. A step that
// waits longer is stuck, and the test says which step.
const DefaultTimeout = 10 * time.Second

// Page is one browser tab. Its helpers fail the test that opened it, with
// the address, an excerpt of the visible text and a screenshot; call them
// from that test's goroutine.
type Page struct {
	// Timeout bounds each step; DefaultTimeout unless set.
	Timeout time.Duration

	t   testing.TB
	ctx context.Context

	mu        sync.Mutex
	mainFrame cdp.FrameID
	status    int
	console   []string
	failures  int
}

// Go navigates to url and waits for the page to load. A page answered with
// an error status still loads; read Status to check it.
func (p *Page) Go(url string) {
	p.t.Helper()
	p.do(fmt.Sprintf("opening %s", url), chromedp.Navigate(url))
}

// Fill empties the field and types value into it, key by key, as a person
// would, so that the page's input handlers run. A <select> gets the option
// with that value.
func (p *Page) Fill(selector, value string) {
	p.t.Helper()
	what := fmt.Sprintf("filling %s", selector)
	p.do(what, chromedp.WaitVisible(chromedp.CSS(selector)))
	kind := p.eval(what, fmt.Sprintf(`(() => {
		const el = document.querySelector(%s);
		if (el instanceof HTMLSelectElement) {
			el.value = %s;
			el.dispatchEvent(new Event("input", {bubbles: true}));
			el.dispatchEvent(new Event("change", {bubbles: true}));
			return el.value === %[2]s ? "select" : "no option";
		}
		if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && !el.isContentEditable) {
			return "not a field: <" + el.localName + ">";
		}
		el.focus();
		if (el.isContentEditable) { el.textContent = ""; } else { el.value = ""; }
		el.dispatchEvent(new Event("input", {bubbles: true}));
		return "field";
	})()`, jsString(selector), jsString(value)))
	switch kind {
	case "select":
		return
	case "field":
		if value != "" {
			p.do(what, chromedp.SendKeys(chromedp.CSS(selector), value))
		}
	case "no option":
		p.fail(what, fmt.Errorf("the <select> has no option with the value %q", value))
	default:
		p.fail(what, errors.New(kind+"; Fill takes an <input>, a <textarea>, a <select> or a contenteditable element"))
	}
}

// Click clicks the middle of the element with the mouse, once it is
// visible.
func (p *Page) Click(selector string) {
	p.t.Helper()
	p.do("clicking "+selector, chromedp.Click(chromedp.CSS(selector)))
}

// Submit submits the form that selector names, or the form of the element
// (a field or a button) that it names, as pressing Enter or a submit button
// does: the form's checks and submit handlers run, unlike form.submit().
func (p *Page) Submit(selector string) {
	p.t.Helper()
	what := "submitting " + selector
	p.do(what, chromedp.WaitReady(chromedp.CSS(selector)))
	res := p.eval(what, fmt.Sprintf(`(() => {
		const el = document.querySelector(%s);
		const form = el instanceof HTMLFormElement ? el : el.form;
		if (!form) return "<" + el.localName + "> is neither a form nor in one";
		const submitter = (el instanceof HTMLButtonElement || el instanceof HTMLInputElement) && el.type === "submit" ? el : null;
		form.requestSubmit(submitter);
		return "";
	})()`, jsString(selector)))
	if res != "" {
		p.fail(what, errors.New(res))
	}
}

// WaitVisible waits until the element exists and is visible.
func (p *Page) WaitVisible(selector string) {
	p.t.Helper()
	p.do(fmt.Sprintf("waiting for %s to be visible", selector), chromedp.WaitVisible(chromedp.CSS(selector)))
}

// WaitText waits until the element's visible text contains substring, and
// returns that text. It waits through navigations: the element may be on
// the page a click or a submit leads to.
func (p *Page) WaitText(selector, substring string, timeout time.Duration) string {
	p.t.Helper()
	var last string
	var found bool
	var mu sync.Mutex
	// chromedp's query retries the wait func until it returns nodes, on the
	// page the tab shows at that moment. innerText is read through
	// Runtime.callFunctionOn, which no Content-Security-Policy blocks
	// (chromedp's Poll compiles its predicate with new Function, which a
	// policy without 'unsafe-eval' refuses, and reports).
	wait := func(ctx context.Context, t *chromedp.Target, f *chromedp.Frame, _ runtime.ExecutionContextID, ids ...cdp.NodeID) ([]*chromedp.Node, error) {
		nodes := make([]*chromedp.Node, 0, len(ids))
		f.RLock()
		for _, id := range ids {
			if n := f.Nodes[id]; n != nil {
				nodes = append(nodes, n)
			}
		}
		f.RUnlock()
		if len(nodes) == 0 {
			return nil, nil
		}
		text, err := innerText(ctx, t, ids[0])
		if err != nil {
			return nil, err
		}
		mu.Lock()
		last, found = text, true
		mu.Unlock()
		if !strings.Contains(text, substring) {
			return nil, nil
		}
		return nodes, nil
	}
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Query(chromedp.CSS(selector), chromedp.WaitFunc(wait)))
	mu.Lock()
	defer mu.Unlock()
	switch {
	case errors.Is(err, context.DeadlineExceeded) && !found:
		err = fmt.Errorf("not within %s; no element matched", timeout)
	case errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("not within %s; its text was %q", timeout, excerpt(last, 300))
	}
	if err != nil {
		p.fail(fmt.Sprintf("waiting for %s to contain %q", selector, substring), err)
	}
	return last
}

// innerText reads the node's innerText.
func innerText(ctx context.Context, t *chromedp.Target, id cdp.NodeID) (string, error) {
	obj, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{NodeID: id})
	if err != nil {
		return "", err
	}
	defer func() {
		_, _ = cdp.Call(ctx, t, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: obj.Object.ObjectID})
	}()
	res, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: `function() { return this.innerText ?? this.textContent; }`,
		ObjectID:            obj.Object.ObjectID,
		ReturnByValue:       new(true),
	})
	if err != nil {
		return "", err
	}
	var s string
	if res.Result == nil || json.Unmarshal(res.Result.Value, &s) != nil {
		return "", nil
	}
	return s, nil
}

// Text returns the element's visible text (innerText).
func (p *Page) Text(selector string) string {
	p.t.Helper()
	return run(p, "reading the text of "+selector, chromedp.Text(chromedp.CSS(selector)))
}

// URL returns the address the tab shows.
func (p *Page) URL() string {
	p.t.Helper()
	return run(p, "reading the address", chromedp.Location())
}

// Status returns the HTTP status of the last document the tab loaded (by
// Go, a link or a form), or 0 before the first.
func (p *Page) Status() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// SetViewport sets the size of the page's viewport in CSS pixels, for
// example 360 by 740 to check the layout a phone gets.
func (p *Page) SetViewport(width, height int) {
	p.t.Helper()
	if width <= 0 || height <= 0 {
		p.t.Fatalf("SetViewport(%d, %d): the width and the height must be positive", width, height)
	}
	p.do(fmt.Sprintf("setting the viewport to %dx%d", width, height), chromedp.EmulateViewport(int64(width), int64(height)))
}

// Keyboard types keys into whatever has the focus, as real key events.
// Special keys are the constants of github.com/chromedp/chromedp/kb, such
// as kb.Tab and kb.Enter, so that a test can use the page with the
// keyboard alone.
func (p *Page) Keyboard(keys string) {
	p.t.Helper()
	p.do(fmt.Sprintf("pressing %q", keys), chromedp.KeyEvent(keys))
}

// Screenshot writes a PNG of the whole page (beyond the viewport) to path.
func (p *Page) Screenshot(path string) {
	p.t.Helper()
	png := run(p, "taking a screenshot", fullScreenshot)
	if err := os.WriteFile(path, png, 0o600); err != nil {
		p.t.Fatalf("writing the screenshot: %v", err)
	}
}

// fullScreenshot captures the whole page as a PNG. chromedp's
// FullScreenshot stops at the viewport once SetViewport has overridden the
// device's size, so the page's content size is clipped explicitly.
var fullScreenshot chromedp.Action[[]byte] = func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
	m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	params := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: new(true), FromSurface: new(true)}
	if c := m.CSSContentSize; c != nil && c.Width > 0 && c.Height > 0 {
		params.Clip = &page.Viewport{Width: c.Width, Height: c.Height, Scale: 1}
	}
	r, err := cdp.Call(ctx, t, page.CaptureScreenshot, params)
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// Eval evaluates the JavaScript expression in the page and returns its
// value decoded as JSON into T; a promise is awaited. It is evaluated
// through the DevTools protocol, which the page's Content-Security-Policy
// does not restrict. (A function rather than a method: Go methods take no
// type parameters.)
func Eval[T any](p *Page, js string) T {
	p.t.Helper()
	return run(p, "evaluating "+excerpt(js, 80), chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// Upload sets the files of the <input type=file> (DOM.setFileInputFiles),
// as picking them in the file chooser does; the input's change event
// fires.
func (p *Page) Upload(selector string, paths ...string) {
	p.t.Helper()
	what := "uploading to " + selector
	abs := make([]string, len(paths))
	for i, path := range paths {
		a, err := filepath.Abs(path)
		if err == nil {
			_, err = os.Stat(a)
		}
		if err != nil {
			p.t.Fatalf("%s: %v", what, err)
		}
		abs[i] = a
	}
	p.do(what, chromedp.SetUploadFiles(chromedp.CSS(selector), abs))
}

// DropFile drops a file with that name, media type and content on the
// element, as dragging it from the desktop does: the element gets
// dragenter, dragover and drop events whose DataTransfer holds the file.
func (p *Page) DropFile(selector, name, mediaType string, content []byte) {
	p.t.Helper()
	what := fmt.Sprintf("dropping %s on %s", name, selector)
	p.do(what, chromedp.WaitVisible(chromedp.CSS(selector)))
	res := p.eval(what, fmt.Sprintf(`(() => {
		const el = document.querySelector(%s);
		const bytes = Uint8Array.from(atob(%s), c => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], %s, {type: %s}));
		const r = el.getBoundingClientRect();
		const at = {clientX: r.left + r.width / 2, clientY: r.top + r.height / 2};
		for (const type of ["dragenter", "dragover", "drop"]) {
			el.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, composed: true, dataTransfer: dt, ...at}));
		}
		return "";
	})()`, jsString(selector), jsString(base64.StdEncoding.EncodeToString(content)), jsString(name), jsString(mediaType)))
	if res != "" {
		p.fail(what, errors.New(res))
	}
}

// ConsoleErrors returns what the page reported as an error since it was
// opened: console.error and console.assert calls, uncaught exceptions and
// unhandled rejections, the browser's own error log (a failed load, a
// refused resource) and each Content-Security-Policy violation. A failed
// load includes /favicon.ico, which Chromium asks for when a page names no
// icon: a page that wants no such error serves one, or names one with
// <link rel="icon"> (a data: URL needs img-src to allow data:). A
// violation is there twice: as the browser's log line, present when the
// step that caused it returns, and as the page's securitypolicyviolation
// event ("CSP violation: <directive> refused <what> (<where>)"), which the
// page dispatches as a task of its own and which also reports the
// violations of a Content-Security-Policy-Report-Only header.
func (p *Page) ConsoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.console...)
}

// do runs the steps within the page's timeout and fails the test on error.
func (p *Page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	run(p, what, chromedp.Steps(steps...))
}

// eval evaluates a helper's own script, which returns a string.
func (p *Page) eval(what, js string) string {
	p.t.Helper()
	return run(p, what, chromedp.Evaluate[string](js))
}

// run runs the action within the page's timeout and fails the test on
// error.
func run[T any](p *Page, what string, a chromedp.Action[T]) T {
	p.t.Helper()
	return runFor(p.t, p, p.timeout(), what, a)
}

// runFor runs the action within timeout and fails t on error.
func runFor[T any](t testing.TB, p *Page, timeout time.Duration, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("not done within %s (%w)", timeout, err)
	}
	if err != nil {
		p.failT(t, what, err)
	}
	return v
}

func (p *Page) timeout() time.Duration {
	if p.Timeout <= 0 {
		return DefaultTimeout
	}
	return p.Timeout
}

// fail ends the test with what a person debugging it needs first: where
// the page was, what it showed, and a picture of it.
func (p *Page) fail(what string, err error) {
	p.t.Helper()
	p.failT(p.t, what, err)
}

// failT is fail for the test t, which may be a subtest of the page's.
func (p *Page) failT(t testing.TB, what string, err error) {
	t.Helper()
	// A fresh, short context: the step's own may have timed out.
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	url, uerr := chromedp.Run(ctx, chromedp.Location())
	if uerr != nil {
		url = "(unknown: " + uerr.Error() + ")"
	}
	text, terr := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if terr != nil {
		text = "(unknown: " + terr.Error() + ")"
	}
	var shot string
	png, serr := chromedp.Run(ctx, fullScreenshot)
	if serr == nil {
		shot, serr = p.writeArtifact(t, png)
	}
	if serr != nil {
		shot = "(none: " + serr.Error() + ")"
	}
	p.mu.Lock()
	console := append([]string(nil), p.console...)
	p.mu.Unlock()
	msg := fmt.Sprintf("%s: %v\n\taddress: %s (status %d)\n\tvisible text: %q\n\tscreenshot: %s",
		what, err, url, p.Status(), excerpt(text, 500), shot)
	if len(console) > 0 {
		msg += fmt.Sprintf("\n\tconsole errors: %q", console)
	}
	t.Fatal(msg)
}

// writeArtifact writes a failure's screenshot under t.TempDir(), or under
// ATRIUM_BROWSER_ARTIFACTS when set, since the test removes its temporary
// directory when it ends.
func (p *Page) writeArtifact(t testing.TB, png []byte) (string, error) {
	p.mu.Lock()
	p.failures++
	n := p.failures
	p.mu.Unlock()
	dir := os.Getenv("ATRIUM_BROWSER_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o750); err != nil { //nolint:gosec // G703: the directory the person running the tests chose
		return "", err
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	if len(name) > 100 { // a file name has at most 255 bytes
		name = name[:100]
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-failure-%d.png", name, n))
	if err := os.WriteFile(path, png, 0o600); err != nil { //nolint:gosec // G703: under the directory the person running the tests chose
		return "", err
	}
	return path, nil
}

// excerpt shortens s to about n bytes, on a rune boundary.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// jsString quotes s as a JavaScript string literal (JSON is a subset).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
