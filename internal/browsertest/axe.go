package browsertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// AxeVersion is the version of the vendored axe-core.
const AxeVersion = "4.14.1"

// axeSource is axe-core's axe.min.js, from `npm pack axe-core@4.14.1`.
//
//go:embed axe/axe.min.js
var axeSource string

// AxeTimeout bounds one axe run: the rules take a second or two on a
// large page of a loaded machine.
const AxeTimeout = 30 * time.Second

// Violation is one axe rule the page breaks.
type Violation struct {
	ID      string          // the rule, such as "label" or "color-contrast"
	Impact  string          // "minor", "moderate", "serious" or "critical"
	Help    string          // what the rule asks for, in a sentence
	HelpURL string          // Deque's page on the rule
	Nodes   []ViolationNode // the elements that break it
}

// ViolationNode is an element that breaks a rule.
type ViolationNode struct {
	Target  []string // CSS selectors; one per shadow root crossed
	HTML    string   // the element's opening tag, as axe quotes it
	Summary string   // what to fix, as axe says it
}

// axeRun runs axe on the document and returns the violations as JSON; the
// targets of elements in shadow roots are lists of selectors, joined here.
const axeRun = `axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.map(v => ({
	ID: v.id, Impact: v.impact || "", Help: v.help, HelpURL: v.helpUrl,
	Nodes: v.nodes.map(n => ({
		Target: n.target.map(x => Array.isArray(x) ? x.join(" >>> ") : String(x)),
		HTML: n.html, Summary: n.failureSummary || ""})),
}))))`

// Axe runs axe-core on the page as it is now and returns every violation.
//
// axe runs in an isolated world of its own, created for each run through
// the DevTools protocol: a Content-Security-Policy without 'unsafe-inline'
// or 'unsafe-eval' does not apply to it, the page's scripts cannot change
// what it sees of the JavaScript built-ins, and the page's globals stay as
// they were.
func (p *Page) Axe(t testing.TB) []Violation {
	t.Helper()
	var run chromedp.Action[string] = func(ctx context.Context, tg *chromedp.Target) (string, error) {
		p.mu.Lock()
		frame := p.mainFrame
		p.mu.Unlock()
		world, err := cdp.Call(ctx, tg, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: worldName + "-axe"})
		if err != nil {
			return "", fmt.Errorf("creating a world for axe: %w", err)
		}
		for _, step := range []struct{ what, js string }{{"loading axe", axeSource}, {"running axe", axeRun}} {
			res, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{
				Expression: step.js, ContextID: world.ExecutionContextID,
				AwaitPromise: new(true), ReturnByValue: new(true),
			})
			if err != nil {
				return "", fmt.Errorf("%s: %w", step.what, err)
			}
			if res.ExceptionDetails != nil {
				return "", fmt.Errorf("%s: %w", step.what, &chromedp.ExceptionError{ExceptionDetails: res.ExceptionDetails})
			}
			if step.js == axeRun {
				var out string
				if err := json.Unmarshal(res.Result.Value, &out); err != nil {
					return "", fmt.Errorf("axe returned %s: %w", res.Result.Value, err)
				}
				return out, nil
			}
		}
		return "", nil
	}
	raw := runFor(t, p, AxeTimeout, "checking accessibility with axe "+AxeVersion, run)
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatalf("axe's violations %s: %v", excerpt(raw, 200), err)
	}
	return vs
}

// AssertAccessible fails the test, without stopping it, for each serious or
// critical axe violation: those stop someone using the page (a field no
// screen reader can name, text too faint to read, a control the keyboard
// cannot reach). Minor and moderate ones are left to Axe's caller.
func (p *Page) AssertAccessible(t testing.TB) {
	t.Helper()
	var b strings.Builder
	n := 0
	for _, v := range p.Axe(t) {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		n++
		fmt.Fprintf(&b, "\n  [%s] %s: %s (%s)", v.Impact, v.ID, v.Help, v.HelpURL)
		for _, node := range v.Nodes {
			fmt.Fprintf(&b, "\n    %s  %s", strings.Join(node.Target, " "), excerpt(node.HTML, 200))
			if node.Summary != "" {
				fmt.Fprintf(&b, "\n      %s", excerpt(node.Summary, 300))
			}
		}
	}
	if n > 0 {
		t.Errorf("%s breaks %d serious or critical accessibility rule(s) (axe %s):%s", p.URL(), n, AxeVersion, b.String())
	}
}
