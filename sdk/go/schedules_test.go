package atrium

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// TestSchedules: a dry run asks for one and answers a schedule without an
// id; the list walks every page with its filters kept; a trigger is a
// write that is not sent twice after a 500, since a second could start a
// second run; pause and resume go to their own routes.
func TestSchedules(t *testing.T) {
	srv := newServer(t, status(200, `{"schedule":{"id":"","action":"generate_keywords","state":"active","next_runs":["2026-11-30T07:00:00Z"],"estimated_credits":{"per_run":{"ai":0,"data":2},"per_month":{"ai":0,"data":8}}}}`))
	c, _ := client(srv)
	every, at := "week", "07:00"
	got, err := c.Schedules.Create(t.Context(), ScheduleInput{Action: "generate_keywords", ClientID: "c1", Params: map[string]any{"seed": "rye"},
		Every: &every, At: &at, Timezone: "Europe/London", MaxCreditsPerMonth: &Credits{Data: 20}}, DryRun())
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "" || got.EstimatedCredits.PerMonth.Data != 8 || len(got.NextRuns) != 1 {
		t.Fatalf("dry run read as %+v", got)
	}
	r := srv.requests()[0]
	var sent map[string]any
	_ = json.Unmarshal([]byte(srv.bodies[0]), &sent)
	if r.Method != "POST" || r.URL.Path != "/api/v1/schedules" || r.URL.Query().Get("dry_run") != "true" ||
		sent["every"] != "week" || sent["timezone"] != "Europe/London" || sent["cron"] != nil || fmt.Sprint(sent["max_credits_per_month"]) != "map[ai:0 data:20]" {
		t.Fatalf("sent %s %s %s", r.Method, r.URL, srv.bodies[0])
	}

	var queries []string
	pages := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		queries = append(queries, q.Encode())
		if q.Get("cursor") == "" {
			_, _ = io.WriteString(w, `{"schedules":[{"id":"s1"},{"id":"s2"}],"next_cursor":"k"}`)
			return
		}
		_, _ = io.WriteString(w, `{"schedules":[{"id":"s3"}]}`)
	})
	c, _ = client(pages)
	var ids []string
	for s, err := range c.Schedules.List(t.Context(), ScheduleQuery{ClientID: "c1", Action: "audit_site", State: "paused"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	if fmt.Sprint(ids) != "[s1 s2 s3]" || fmt.Sprint(queries) != "[action=audit_site&client_id=c1&limit=100&state=paused action=audit_site&client_id=c1&cursor=k&limit=100&state=paused]" {
		t.Fatalf("listed %v with %v", ids, queries)
	}

	failing := newServer(t, status(500, `{"error":"boom"}`))
	c, _ = client(failing)
	if _, err := c.Schedules.Trigger(t.Context(), "s1"); err == nil || len(failing.requests()) != 1 {
		t.Fatalf("a trigger answered 500 gave %v after %d attempts; want the error after 1", err, len(failing.requests()))
	}

	ok := newServer(t, status(202, `{"run":{"id":"r1","state":"queued","status_code":202}}`), status(200, `{"schedule":{"id":"s1","state":"paused"}}`), status(200, `{"schedule":{"id":"s1","state":"active"}}`))
	c, _ = client(ok)
	run, err := c.Schedules.Trigger(t.Context(), "s1")
	if err != nil || run.ID != "r1" || run.Finished() {
		t.Fatalf("Trigger = %+v, %v", run, err)
	}
	if s, err := c.Schedules.Pause(t.Context(), "s1"); err != nil || s.State != "paused" {
		t.Fatalf("Pause = %+v, %v", s, err)
	}
	if s, err := c.Schedules.Resume(t.Context(), "s1"); err != nil || s.State != "active" {
		t.Fatalf("Resume = %+v, %v", s, err)
	}
	var paths []string
	for _, r := range ok.requests() {
		paths = append(paths, r.Method+" "+r.URL.Path)
	}
	if fmt.Sprint(paths) != "[POST /api/v1/schedules/s1/trigger POST /api/v1/schedules/s1/pause POST /api/v1/schedules/s1/resume]" {
		t.Fatalf("requests %v", paths)
	}
}

// TestBrandingAndShares: the branding is put whole; a share's URL is read
// from the create's answer; a revoke is a DELETE retried like a read.
func TestBrandingAndShares(t *testing.T) {
	srv := newServer(t, status(200, `{"branding":{"name":"Northwind SEO","colors":{"primary":"#1f3a5f","accent":"#e07a2e"}}}`),
		status(201, `{"share":{"id":"sh1","run_id":"r1","url":"http://x/r/tok","state":"active"}}`),
		status(503, `{"error":"stopping"}`), status(200, `{"share":{"id":"sh1","state":"revoked","revoked_at":"2026-11-29T10:00:00Z"}}`))
	c, _ := client(srv)
	b, err := c.Branding.Put(t.Context(), Branding{Name: "Northwind SEO", Colors: BrandColors{Primary: "#1f3a5f"}})
	if err != nil || b.Colors.Accent != "#e07a2e" {
		t.Fatalf("Put = %+v, %v", b, err)
	}
	if srv.bodies[0] != `{"name":"Northwind SEO","colors":{"primary":"#1f3a5f"}}` {
		t.Fatalf("put %s", srv.bodies[0])
	}
	sh, err := c.ReportShares.Create(t.Context(), NewReportShare{RunID: "r1", ExpiresInDays: 30})
	if err != nil || sh.URL != "http://x/r/tok" || srv.bodies[1] != `{"run_id":"r1","expires_in_days":30}` {
		t.Fatalf("Create = %+v, %v; sent %s", sh, err, srv.bodies[1])
	}
	sh, err = c.ReportShares.Revoke(t.Context(), "sh1")
	if err != nil || sh.State != "revoked" || sh.RevokedAt == nil {
		t.Fatalf("Revoke = %+v, %v", sh, err)
	}
	if r := srv.requests()[3]; r.Method != "DELETE" || r.URL.Path != "/api/v1/report-shares/sh1" {
		t.Fatalf("revoked with %s %s", r.Method, r.URL)
	}
}
