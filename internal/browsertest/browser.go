package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// StartTimeout bounds the start of Chromium. It takes a second or two on a
// quiet machine; a loaded CI runner can need several times that.
const StartTimeout = 30 * time.Second

// Browser is one headless Chromium for one test (and its subtests). It is
// closed by the test's cleanup.
type Browser struct {
	// ctx is the chromedp context that owns the browser process. It has run
	// once, so every child made with chromedp.NewContext is a new tab of
	// this browser rather than a browser of its own.
	ctx context.Context
}

// Start finds Debian's Chromium, starts it headless and returns it; the
// test's cleanup stops it. Without Chromium the test is skipped, unless CI
// is "true": there a missing browser is a broken machine, and the test
// fails.
func Start(t testing.TB) *Browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		msg := "chromium is not installed (make services-up installs Debian's package: apt-get install -y --no-install-recommends chromium): %v"
		if os.Getenv("CI") == "true" {
			t.Fatalf(msg, err)
		}
		t.Skipf(msg, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		// The tests run as root in containers, where Chromium's sandbox
		// cannot start; the pages are the tests' own.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		// A fresh profile: nothing from another run (cookies, storage,
		// cache) can make a test pass.
		chromedp.UserDataDir(t.TempDir()),
		// No traffic of Chromium's own: the build machines reach no
		// Google service, and waiting on one slows every page.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
	)
	// The browser lives as long as this context: not t.Context(), which
	// ends before the cleanups run and would leave the tabs' cleanups
	// without a browser to talk to.
	alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, stopBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		stopBrowser()
		stopAlloc()
	})

	// A timeout on the context of the first Run would stop the browser
	// when it ends, so the start is bounded by a timer that stops it only
	// if the start has not finished.
	timer := time.AfterFunc(StartTimeout, stopBrowser)
	err = chromedp.Do(ctx)
	if !timer.Stop() {
		t.Fatalf("starting %s took longer than %s", path, StartTimeout)
	}
	if err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return &Browser{ctx: ctx}
}

// PageOption changes how NewPage opens a page.
type PageOption func(*pageConfig)

type pageConfig struct {
	ownCookies bool
}

// OwnCookies gives the page a browser context of its own, like an incognito
// window: its own cookies, storage and cache. Two people (an owner and an
// editor) can then be signed in at once in one test. Without it, pages
// share the browser's default context, as tabs of one window do.
func OwnCookies() PageOption {
	return func(c *pageConfig) { c.ownCookies = true }
}

// NewPage opens a new tab, closed by the test's cleanup.
func (b *Browser) NewPage(t testing.TB, opts ...PageOption) *Page {
	t.Helper()
	var cfg pageConfig
	for _, o := range opts {
		o(&cfg)
	}
	var copts []chromedp.ContextOption
	if cfg.ownCookies {
		copts = append(copts, chromedp.WithNewBrowserContext())
	}
	p := &Page{t: t, Timeout: DefaultTimeout}
	// The listener is added before the tab's first message, so that no
	// response or console message of the page is missed.
	copts = append(copts, chromedp.WithListener(p.record))
	ctx, closeTab := chromedp.NewContext(b.ctx, copts...)
	t.Cleanup(closeTab)
	p.ctx = ctx
	p.start(closeTab)
	return p
}
