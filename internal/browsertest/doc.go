// Package browsertest is the room where end-to-end tests drive a real
// browser: Debian's Chromium, headless, through chromedp (the standard Go
// driver of the DevTools protocol). Atrium Studio is a web console, and
// only a browser shows what its users get: that a form can be filled with
// the keyboard alone, that two people signed in at once do not see each
// other's session, that the page raises no error and breaks no rule of its
// own Content-Security-Policy, and that axe-core (the accessibility engine
// browsers' own audits use) finds nothing serious.
//
// It lives in the root module, beside cmd/atrium, because chromedp is a test
// dependency of that module only; cmd/atrium's end-to-end tests import it.
//
// A test starts one browser and opens a page per person:
//
//	b := browsertest.Start(t)
//	owner := b.NewPage(t, browsertest.OwnCookies())
//	owner.Go(studioURL + "/studio/")
//	owner.Fill("#email", "owner@example.com")
//	owner.Submit("#sign-in")
//	owner.WaitText("h1", "Sites", 5*time.Second)
//	owner.AssertAccessible(t)
//	if errs := owner.ConsoleErrors(); len(errs) > 0 {
//		t.Fatalf("the console raised %q", errs)
//	}
//
// Every helper fails the test on error with what a person debugging it
// needs first: the page's address, an excerpt of its visible text and a
// screenshot. Screenshots go under t.TempDir(), which the test removes
// when it ends; set ATRIUM_BROWSER_ARTIFACTS to a directory to keep them
// (CI uploads that directory).
//
// axe-core 4.14.1 is vendored in axe/ (axe.min.js with its licence, MPL-2.0,
// and the licences of what it bundles), embedded in the test binary: the
// build machines reach no CDN, and a pinned copy keeps results stable.
package browsertest
