package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// audited is the audit trail's records the store's outbox holds, as
// "action resource_type resource_id [fields]", in order.
func (e *env) audited(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, ev := range e.pending() {
		if !events.AuditRecorded.Matches(ev.Subject) {
			continue
		}
		a, err := events.AuditRecorded.Parse(ev.Subject, ev.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if a.AgencyID != e.agency || a.Service != "actions" {
			t.Errorf("%s is recorded for agency %q by %q; want %q by actions", a.Action, a.AgencyID, a.Service, e.agency)
		}
		if strings.HasPrefix(a.Action, "run.") || a.Action == "credits.changed" {
			continue // the runs' own records, which their tests cover
		}
		out = append(out, fmt.Sprintf("%s %s %s %v", a.Action, a.ResourceType, a.ResourceID, a.Fields))
	}
	return out
}

// Every write an agency makes to its schedules, its branding and its
// report links is in the audit trail, written with the write: what was
// done, to which object, the names of the fields set. A write that fails,
// or changes nothing (pausing a paused schedule), records nothing.
func TestSchedulesBrandingAndSharesAreAudited(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 100, 0)
		ctx := t.Context()
		if _, err := e.actions.CreateSchedule(ctx, e.agency, e.hourlyBlog(), true); err != nil {
			t.Fatal(err)
		}
		s, err := e.actions.CreateSchedule(ctx, e.agency, e.hourlyBlog(), false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.actions.UpdateSchedule(ctx, e.agency, s.ID, app.ScheduleInput{Description: ptr("Hourly rye"), At: ptr("07:00")}); err == nil {
			t.Fatal("an update giving at to a cron schedule was accepted")
		}
		if _, err := e.actions.UpdateSchedule(ctx, e.agency, s.ID, app.ScheduleInput{Description: ptr("Hourly rye"), PauseAfter: ptr(5)}); err != nil {
			t.Fatal(err)
		}
		for _, change := range []func(context.Context, string, string) (app.ScheduleView, error){
			e.actions.PauseSchedule, e.actions.PauseSchedule, e.actions.ResumeSchedule, e.actions.ResumeSchedule} {
			if _, err := change(ctx, e.agency, s.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.actions.TriggerSchedule(ctx, e.agency, s.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.actions.DeleteSchedule(ctx, e.agency, s.ID); err != nil {
			t.Fatal(err)
		}

		reports := app.NewReports(e.store.(app.BrandingStore))
		if _, err := reports.PutBranding(ctx, e.agency, action.Branding{}); err == nil {
			t.Fatal("a branding without a name was accepted")
		}
		if _, err := reports.PutBranding(ctx, e.agency, action.Branding{Name: "Northwind SEO"}); err != nil {
			t.Fatal(err)
		}
		shares := app.NewShares(e.store.(app.ShareStore), time.Now, func() string { return "http://atrium.example" })
		reportRun := func(_ context.Context, agencyID, id string) (app.Run, error) {
			return app.Run{ID: id, AgencyID: agencyID, ClientID: e.client.ID, Action: "generate_report", Status: app.StatusSuccess,
				Data: map[string]any{"html_url": "/media/a.html", "pdf_url": "/media/a.pdf"}}, nil
		}
		runID := "01a2287a-2f67-722e-b382-43e1db7db5e1"
		sh, _, err := shares.Create(ctx, reportRun, e.agency, runID, 30)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := shares.Revoke(ctx, e.agency, sh.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := shares.Revoke(ctx, "01a2287a-2f67-722e-b382-000000000000", sh.ID); apperr.KindOf(err) != apperr.KindNotFound {
			t.Fatalf("another agency revoking the link: %v; want not found", err)
		}

		want := []string{
			"schedule.created schedule " + s.ID + " [action client_id cron params timezone]",
			"schedule.updated schedule " + s.ID + " [description pause_after_failures]",
			"schedule.paused schedule " + s.ID + " []",
			"schedule.resumed schedule " + s.ID + " []",
			"schedule.triggered schedule " + s.ID + " []",
			"schedule.deleted schedule " + s.ID + " []",
			"branding.set branding " + e.agency + " [colors name]",
			"share.created report_share " + sh.ID + " [expires_in_days run_id]",
			"share.revoked report_share " + sh.ID + " []",
		}
		if got := e.audited(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("the audit trail holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
