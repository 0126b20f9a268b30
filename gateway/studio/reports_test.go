package studio

import (
	"bytes"
	"strings"
	"testing"
	"time"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// The Reports section shows each report's files to everyone who reads it,
// and the share controls only as far as the judge's answers (MayShare,
// MayList, MayRevoke) go; a refused form keeps what was typed on its own
// report only.
func TestReportsSectionShowsControlsOnlyWhereAllowed(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	tpl := p.byName["manager/client"]
	view := View{v: &visit{m: &crmv1.Membership{AgencyId: "ag1"}}}
	at := time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)
	base := reportsView{ClientID: "c1", Reports: []reportItem{
		{RunID: "r1", Title: "October report", From: "2026-10-01", To: "2026-10-31", HTML: "https://atrium.example/media/a.html", PDF: "https://atrium.example/media/a.pdf", At: at},
		{RunID: "r2", Title: "September report", From: "2026-09-01", To: "2026-09-30", HTML: "https://atrium.example/media/b.html", PDF: "https://atrium.example/media/b.pdf", At: at},
	}, Live: []shareItem{{ID: "s1", Title: "October report", Created: at, Expire: at.AddDate(0, 0, 90)}}}
	draw := func(rv reportsView) string {
		var b bytes.Buffer
		if err := tpl.ExecuteTemplate(&b, "reports", struct {
			V View
			D any
		}{view, rv}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	// A client member: the files, nothing else.
	page := draw(base)
	if !strings.Contains(page, `href="https://atrium.example/media/a.pdf"`) || !strings.Contains(page, "2026-10-01 to 2026-10-31") {
		t.Errorf("the reports' files are missing:\n%s", page)
	}
	if strings.Contains(page, "<form") || strings.Contains(page, "Live share links") {
		t.Errorf("share controls shown without the judge's leave:\n%s", page)
	}

	// A viewer: the live links, no form.
	viewer := base
	viewer.MayList = true
	if page := draw(viewer); !strings.Contains(page, "Live share links") || strings.Contains(page, "<form") {
		t.Errorf("a viewer's section:\n%s", page)
	}

	// A manager whose 0-day link was refused: every form, the error and
	// the 0 on the refused report only.
	mgr := base
	mgr.MayShare, mgr.MayList, mgr.MayRevoke = true, true, true
	mgr.Error, mgr.ErrorRun, mgr.Days = "Expires_in_days must be 1 to 365; got 0.", "r2", "0"
	page = draw(mgr)
	for _, want := range []string{`action="/studio/a/ag1/clients/c1/reports/r1/shares"`, `action="/studio/a/ag1/clients/c1/report-shares/s1/revoke"`,
		`id="days-r1" name="expires_in_days" type="number" min="1" max="365" required value="90"`, `value="0" inputmode="numeric" aria-invalid="true"`, "1 to 365"} {
		if !strings.Contains(page, want) {
			t.Errorf("the manager's section lacks %q:\n%s", want, page)
		}
	}
	if strings.Count(page, `aria-invalid="true"`) != 1 {
		t.Errorf("the error marks %d fields; want the refused report's", strings.Count(page, `aria-invalid="true"`))
	}
}
