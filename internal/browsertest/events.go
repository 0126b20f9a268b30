package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The page's Content-Security-Policy violations are caught in an isolated
// world of the harness's own: the page's scripts neither see the listener
// nor the binding it reports through, so the harness changes nothing the
// page can observe.
const (
	worldName   = "atrium-browsertest"
	bindingName = "__atriumBrowsertestCSP"
	cspListener = `document.addEventListener("securitypolicyviolation", e => {
	globalThis.` + bindingName + `(JSON.stringify({
		directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile,
		line: e.lineNumber, sample: e.sample, disposition: e.disposition}));
}, true);`
)

// cspViolation is what the isolated world reports of a violation.
type cspViolation struct {
	Directive   string `json:"directive"`
	Blocked     string `json:"blocked"`
	Source      string `json:"source"`
	Line        int    `json:"line"`
	Sample      string `json:"sample"`
	Disposition string `json:"disposition"`
}

// start opens the tab and sets up the CSP listener on every document it
// will load.
func (p *Page) start(closeTab context.CancelFunc) {
	p.t.Helper()
	// The first Run on the tab's context binds the tab to the context it is
	// given, so it gets the tab's own and is bounded by a timer instead.
	timer := time.AfterFunc(StartTimeout, closeTab)
	err := chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		p.mu.Lock()
		// A page target's main frame has the target's id.
		p.mainFrame = cdp.FrameID(t.TargetID)
		p.mu.Unlock()
		if _, err := cdp.Call(ctx, t, runtime.AddBinding, runtime.AddBindingParams{Name: bindingName, ExecutionContextName: worldName}); err != nil {
			return fmt.Errorf("adding the CSP binding: %w", err)
		}
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: cspListener, WorldName: worldName, RunImmediately: new(true),
		})
		if err != nil {
			return fmt.Errorf("adding the CSP listener: %w", err)
		}
		return nil
	}))
	if !timer.Stop() {
		p.t.Fatalf("opening a tab took longer than %s", StartTimeout)
	}
	if err != nil {
		p.t.Fatalf("opening a tab: %v", err)
	}
}

// record is called by the tab's reader for every event, in order, before
// the reply to any later command: what it records is there when the step
// that caused it returns. It must return fast and send no command.
func (p *Page) record(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == p.mainFrame && ev.Response != nil {
			p.status = int(ev.Response.Status)
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			p.console = append(p.console, "console."+string(ev.Type)+": "+argsText(ev.Args))
		}
	case *runtime.EventExceptionThrown:
		if d := ev.ExceptionDetails; d != nil {
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text += " " + d.Exception.Description
			}
			p.console = append(p.console, fmt.Sprintf("exception: %s (%s:%d)", text, d.URL, d.LineNumber+1))
		}
	case *log.EventEntryAdded:
		if e := ev.Entry; e != nil && e.Level == log.EntryLevelError {
			p.console = append(p.console, fmt.Sprintf("%s error: %s (%s)", e.Source, e.Text, e.URL))
		}
	case *runtime.EventBindingCalled:
		if ev.Name != bindingName {
			return
		}
		var v cspViolation
		if err := json.Unmarshal([]byte(ev.Payload), &v); err != nil {
			p.console = append(p.console, "CSP violation (unreadable report): "+ev.Payload)
			return
		}
		msg := fmt.Sprintf("CSP violation: %s refused %s (%s:%d)", v.Directive, v.Blocked, v.Source, v.Line)
		if v.Sample != "" {
			msg += fmt.Sprintf(" %q", v.Sample)
		}
		if v.Disposition == "report" {
			msg += " [report-only]"
		}
		p.console = append(p.console, msg)
	}
}

// argsText renders console arguments as the console shows them, roughly.
func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		var s string
		switch {
		case a == nil:
			continue
		case a.Type == "string" && json.Unmarshal(a.Value, &s) == nil:
		case a.Description != "":
			s = a.Description
		case len(a.Value) > 0:
			s = string(a.Value)
		default:
			s = string(a.Type)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}
