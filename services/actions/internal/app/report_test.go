package app_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/objstore/localdir"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/builtintext"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/mediastore"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// generate_report end to end through the run engine: the rows the data
// service holds for the client become the figures of both files, the run
// is charged once, and a bad request or another agency's client changes
// nothing.

func reportEnv(t *testing.T) (*env, *mediastore.Store) {
	t.Helper()
	e := newEnv(t, app.Config{})
	objects, err := localdir.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	blobs := mediastore.New(objects)
	e.providers.Text, e.providers.Blobs = builtintext.New(), blobs
	e.records.rows = map[string]map[string]map[string]any{
		"keywords": byID(
			map[string]any{"keyword": "sourdough starter", "position": 18.0, "tracked_at": "2026-09-28T07:00:00Z"},
			map[string]any{"keyword": "sourdough starter", "position": 7.0, "tracked_at": "2026-10-27T07:00:00Z"},
			map[string]any{"keyword": "rye bread leeds", "position": 3.0, "tracked_at": "2026-09-28T07:00:00Z"},
			map[string]any{"keyword": "rye bread leeds", "position": 5.0, "tracked_at": "2026-10-27T07:00:00Z"},
		),
		"seo_reports": byID(map[string]any{"url": "https://bakery.example/", "score": 76.5, "issues_found": 4.0, "fetched_at": "2026-10-12T09:00:00Z"}),
		"backlinks": byID(
			map[string]any{"source_url": "https://food.example/best", "source_domain": "food.example", "target_url": "https://bakery.example/", "first_seen": "2026-10-03", "domain_authority": 48.0},
			map[string]any{"source_url": "https://old.example/x", "source_domain": "old.example", "target_url": "https://bakery.example/", "first_seen": "2025-05-01", "domain_authority": 12.0},
		),
		"llm_reports": byID(map[string]any{"prompt": "best bakery in leeds", "mentioned": true, "position": 1.0, "visibility": 100.0, "scored_at": "2026-10-20T09:00:00Z"}),
	}
	return e, blobs
}

func byID(rows ...map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, r := range rows {
		r["id"] = uuid.NewString()
		out[r["id"].(string)] = r
	}
	return out
}

// file reads a stored report file back by its URL's name.
func file(t *testing.T, blobs *mediastore.Store, url string) []byte {
	t.Helper()
	name := url[strings.LastIndexByte(url, '/')+1:]
	b, err := blobs.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("the report's file %s: %v", url, err)
	}
	return b.Data
}

func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext (make services-up installs poppler-utils): %v", err)
	}
	return string(out)
}

func TestGenerateReportShowsTheClientsFiguresInBothFiles(t *testing.T) {
	e, blobs := reportEnv(t)
	e.grant(t, 5, 5)
	out, err := e.actions.Run(t.Context(), e.agency, map[string]any{"action": "generate_report", "client_id": e.client.ID, "period": "last_month", "timezone": "Europe/London"}, "")
	if err != nil || out.Run.Status != app.StatusSuccess {
		t.Fatalf("run: %+v, %v", out.Run, err)
	}
	d := out.Run.Data
	if p, _ := d["period"].(map[string]any); p["from"] != "2026-10-01" || p["to"] != "2026-10-31" {
		t.Errorf("period = %v, want October 2026 (the month before 24 November)", d["period"])
	}
	htmlURL, _ := d["html_url"].(string)
	pdfURL, _ := d["pdf_url"].(string)
	if !strings.HasSuffix(htmlURL, ".html") || !strings.HasSuffix(pdfURL, ".pdf") {
		t.Fatalf("urls = %q, %q", htmlURL, pdfURL)
	}
	page := html.UnescapeString(string(file(t, blobs, htmlURL)))
	text := pdfText(t, file(t, blobs, pdfURL))
	// Average position 10.5 (18 and 3) to 6 (7 and 5); sourdough starter
	// climbed 11; the audit's 76.5; 2 backlinks, 1 new from food.example;
	// visibility 100.
	for _, want := range []string{"Bakery", "October 2026", "10.5", "sourdough starter", "+11", "rye bread leeds", "76.5", "food.example", "100", "Atrium"} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML lacks %q", want)
		}
		if !strings.Contains(text, want) {
			t.Errorf("the PDF's text lacks %q:\n%s", want, text)
		}
	}
	fig, _ := d["figures"].(map[string]any)
	if r, _ := fig["rankings"].(map[string]any); r["average_position_start"] != 10.5 || r["average_position_end"] != 6.0 || r["improved"] != 1.0 || r["declined"] != 1.0 {
		t.Errorf("figures.rankings = %v", fig["rankings"])
	}
	// report.ready went out through the outbox with the run's files.
	var ready []events.ReportReadyEvent
	for _, ev := range e.pending() {
		if events.ReportReady.Matches(ev.Subject) {
			r, err := events.ReportReady.Parse(ev.Subject, ev.Payload)
			if err != nil {
				t.Fatal(err)
			}
			ready = append(ready, r)
		}
	}
	if len(ready) != 1 || ready[0].RunID != out.Run.ID || ready[0].ClientID != e.client.ID || ready[0].HTMLURL != htmlURL || ready[0].PDFURL != pdfURL || ready[0].PeriodFrom != "2026-10-01" {
		t.Errorf("report.ready events = %+v, want one for run %s with its URLs", ready, out.Run.ID)
	}
	// Charged once, as the catalog declares (1 AI, 2 data).
	if b := e.balance(t); b.AI != 4 || b.Data != 3 {
		t.Errorf("balance = %+v, want 4 AI and 3 data left", b)
	}
}

func TestGenerateReportRefusesABadRequestAndAnotherAgencysClient(t *testing.T) {
	e, _ := reportEnv(t)
	e.grant(t, 5, 5)
	for _, c := range []struct {
		body  map[string]any
		kind  apperr.Kind
		words []string
	}{
		{map[string]any{"period": "yesterday"}, apperr.KindInvalid, []string{"generate_report.period", "last_month"}},
		{map[string]any{"period": map[string]any{"from": "2026-10-31", "to": "2026-10-01"}}, apperr.KindInvalid, []string{"before"}},
		{map[string]any{"period": "last_week", "sections": []any{"rankings", "weather"}}, apperr.KindInvalid, []string{"generate_report.sections[1]", "llm_visibility"}},
		{map[string]any{"period": "last_week", "timezone": "Mars/Olympus"}, apperr.KindInvalid, []string{"IANA"}},
		{map[string]any{"period": "last_week", "client_id": uuid.NewString()}, apperr.KindPermissionDenied, []string{"not linked"}},
	} {
		body := map[string]any{"action": "generate_report", "client_id": e.client.ID}
		for k, v := range c.body {
			body[k] = v
		}
		_, err := e.actions.Run(t.Context(), e.agency, body, "")
		wantKind(t, err, c.kind, c.words...)
	}
	if b := e.balance(t); b.AI != 5 || b.Data != 5 {
		t.Errorf("balance = %+v after refused requests, want nothing spent", b)
	}
}

// recordingMail keeps what it is asked to send, or refuses it all.
type recordingMail struct {
	mu     sync.Mutex
	sent   []provider.Mail
	refuse error
}

func (m *recordingMail) Send(_ context.Context, msg provider.Mail) (provider.SentMail, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refuse != nil {
		return provider.SentMail{}, m.refuse
	}
	m.sent = append(m.sent, msg)
	return provider.SentMail{MessageID: "<" + uuid.NewString() + "@atrium.test>", From: "reports@agency.example"}, nil
}

// A report that names recipients is emailed to each, one message each,
// with its links; a report that cannot be sent is a failed run, not
// charged; a bad address is a 400 before anything is made.
func TestGenerateReportEmailsItsRecipients(t *testing.T) {
	e, _ := reportEnv(t)
	mail := &recordingMail{}
	e.providers.Mail = mail
	e.grant(t, 5, 5)
	to := []any{"owner@bakery.example", "marketing@bakery.example"}
	out, err := e.actions.Run(t.Context(), e.agency, map[string]any{"action": "generate_report", "client_id": e.client.ID, "period": "last_month", "email_to": to}, "")
	if err != nil || out.Run.Status != app.StatusSuccess {
		t.Fatalf("run: %+v, %v", out.Run, err)
	}
	d := out.Run.Data
	link, _ := d["share_url"].(string)
	if link == "" {
		link, _ = d["html_url"].(string)
	}
	if len(mail.sent) != 2 {
		t.Fatalf("%d messages sent, want one to each of %v", len(mail.sent), to)
	}
	for i, m := range mail.sent {
		if m.To != to[i] || m.Subject != d["title"] || !strings.Contains(m.HTML, html.EscapeString(link)) || !strings.Contains(m.HTML, html.EscapeString(d["pdf_url"].(string))) {
			t.Errorf("message %d = %+v, want to %s, the report's title and its links (%s, %s)", i, m, to[i], link, d["pdf_url"])
		}
	}
	if got, _ := d["emailed_to"].([]any); len(got) != 2 {
		t.Errorf("emailed_to = %v, want %v", d["emailed_to"], to)
	}
	before := e.balance(t)

	// A mail server that refuses: the run fails and nothing is spent.
	mail.refuse = errors.New("550 mailbox unavailable")
	out, err = e.actions.Run(t.Context(), e.agency, map[string]any{"action": "generate_report", "client_id": e.client.ID, "period": "last_month", "email_to": to[:1]}, "")
	if err == nil && out.Run.Status == app.StatusSuccess {
		t.Fatalf("a report the mail server refused: %+v, want a failed run", out.Run)
	}
	if b := e.balance(t); b != before {
		t.Errorf("balance = %+v after a report that could not be sent, want %+v", b, before)
	}

	// A bad address or too many: 400, nothing made or spent.
	for _, bad := range []any{[]any{"not an address"}, make([]any, 21)} {
		if arr := bad.([]any); len(arr) == 21 {
			for i := range arr {
				arr[i] = fmt.Sprintf("p%d@bakery.example", i)
			}
		}
		_, err := e.actions.Run(t.Context(), e.agency, map[string]any{"action": "generate_report", "client_id": e.client.ID, "period": "last_month", "email_to": bad}, "")
		if apperr.KindOf(err) != apperr.KindInvalid || !strings.Contains(err.Error(), "email_to") {
			t.Errorf("email_to %v: %v, want a 400 naming email_to", bad, err)
		}
	}
	if b := e.balance(t); b != before {
		t.Errorf("balance = %+v after refused requests, want %+v", b, before)
	}
}
