package main

import (
	"net/http"
	"testing"
	"time"
)

// testSchedules is a schedule's journey over HTTP: a dry run that creates
// nothing, a schedule due every two seconds whose runs appear with its
// schedule_id, pause, resume and trigger, and the refusals: a bad timing,
// another tenant's id (404) and a read-only key (403).
func testSchedules(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 100, 0)
	body := map[string]any{"action": "generate_blog", "client_id": client, "params": map[string]any{"keyword": "sourdough"},
		"cron": "*/2 * * * * *", "timezone": "Europe/London", "description": "e2e"}
	dry := call(t, "POST", s.api+"/api/v1/schedules?dry_run=true", tn.write, body)
	wantStatus(t, dry, http.StatusOK)
	preview := dry.json["schedule"].(map[string]any)
	if next, _ := preview["next_runs"].([]any); len(next) != 5 || preview["state"] != "active" {
		t.Fatalf("dry run = %s", dry.body)
	}
	// A preview names no schedule: an id would read as one to get or
	// delete.
	if id, _ := preview["id"].(string); id != "" {
		t.Fatalf("the dry run answered the id %q of a schedule that does not exist; want none", id)
	}
	if per := preview["estimated_credits"].(map[string]any)["per_run"].(map[string]any); per["ai"] != float64(2) {
		t.Fatalf("estimated per run = %v; want 2 AI", per)
	}
	list := call(t, "GET", s.api+"/api/v1/schedules", tn.read, nil)
	wantStatus(t, list, http.StatusOK)
	if l, _ := list.json["schedules"].([]any); len(l) != 0 {
		t.Fatalf("the dry run created a schedule: %s", list.body)
	}
	created := call(t, "POST", s.api+"/api/v1/schedules", tn.write, body)
	wantStatus(t, created, http.StatusCreated)
	sc := created.json["schedule"].(map[string]any)
	id := sc["id"].(string)
	wantTimestamp(t, sc, "next_run_at")
	// Its runs appear, each carrying its schedule_id.
	var runs []any
	eventually(t, 20*time.Second, func() bool {
		r := call(t, "GET", s.api+"/api/v1/runs?schedule_id="+id, tn.read, nil)
		wantStatus(t, r, http.StatusOK)
		runs, _ = r.json["runs"].([]any)
		return len(runs) >= 1
	})
	for _, r := range runs {
		if r.(map[string]any)["schedule_id"] != id {
			t.Fatalf("a run of the schedule has schedule_id %v", r.(map[string]any)["schedule_id"])
		}
	}
	// The slot's outcome is recorded just after its run is queued.
	eventually(t, 10*time.Second, func() bool {
		got := call(t, "GET", s.api+"/api/v1/schedules/"+id, tn.read, nil)
		wantStatus(t, got, http.StatusOK)
		slots, _ := got.json["schedule"].(map[string]any)["slots"].([]any)
		return len(slots) > 0
	})
	paused := call(t, "POST", s.api+"/api/v1/schedules/"+id+"/pause", tn.write, map[string]any{})
	wantStatus(t, paused, http.StatusOK)
	if p := paused.json["schedule"].(map[string]any); p["state"] != "paused" || p["next_run_at"] != nil {
		t.Fatalf("paused = %s", paused.body)
	}
	resumed := call(t, "POST", s.api+"/api/v1/schedules/"+id+"/resume", tn.write, map[string]any{})
	wantStatus(t, resumed, http.StatusOK)
	if resumed.json["schedule"].(map[string]any)["state"] != "active" {
		t.Fatalf("resumed = %s", resumed.body)
	}
	trig := call(t, "POST", s.api+"/api/v1/schedules/"+id+"/trigger", tn.write, map[string]any{})
	wantStatus(t, trig, http.StatusAccepted)
	if run := trig.json["run"].(map[string]any); run["schedule_id"] != id || trig.header.Get("Location") != "/api/v1/runs/"+run["id"].(string) {
		t.Fatalf("trigger = %s (Location %q)", trig.body, trig.header.Get("Location"))
	}
	// Refusals: a time zone that is none, a schedule_id filter
	// that is no id, another tenant's schedule, a read-only key.
	bad := call(t, "POST", s.api+"/api/v1/schedules", tn.write, map[string]any{"action": "generate_blog", "client_id": client,
		"params": map[string]any{"keyword": "rye"}, "cron": "*/2 * * * * *", "timezone": "Mars/Olympus_Mons"})
	wantStatus(t, bad, http.StatusBadRequest)
	wantStatus(t, call(t, "GET", s.api+"/api/v1/runs?schedule_id=nope", tn.read, nil), http.StatusBadRequest)
	other := s.newTenant(t)
	wantStatus(t, call(t, "GET", s.api+"/api/v1/schedules/"+id, other.read, nil), http.StatusNotFound)
	wantStatus(t, call(t, "POST", s.api+"/api/v1/schedules/"+id+"/trigger", other.write, map[string]any{}), http.StatusNotFound)
	wantStatus(t, call(t, "DELETE", s.api+"/api/v1/schedules/"+id, other.write, nil), http.StatusNotFound)
	wantStatus(t, call(t, "POST", s.api+"/api/v1/schedules", tn.read, body), http.StatusForbidden)
	wantStatus(t, call(t, "POST", s.api+"/api/v1/schedules/"+id+"/pause", tn.read, map[string]any{}), http.StatusForbidden)
	wantStatus(t, call(t, "DELETE", s.api+"/api/v1/schedules/"+id, tn.write, nil), http.StatusOK)
	wantStatus(t, call(t, "GET", s.api+"/api/v1/schedules/"+id, tn.read, nil), http.StatusNotFound)
}
