package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// testSchedulesCreditsRunOut is issue 27's "a balance that runs out": two
// schedules due every two seconds, one of an agency whose balance covers
// a single run, one capped by its max_credits_per_month at a single run.
// Each starts its one run, then skips its slots (schedule.run_skipped,
// naming the balance or the cap) and, after pause_after_failures (2) of
// them in a row, pauses itself (schedule.paused). The events reach the
// agencies' webhook receivers signed as Standard Webhooks, and no credit
// is spent past what each allowed.
func testSchedulesCreditsRunOut(t *testing.T, s *stack) {
	type tenantSchedule struct {
		tn     tenant
		rx     *hookReceiver
		secret string
		id     string
		reason string // what every balance skip's reason names
	}
	start := func(grant int, limit map[string]any, reason string) *tenantSchedule {
		tn := s.newTenant(t)
		client := s.newClient(t, tn, true)
		s.grant(t, tn.agency, grant, 0)
		agencyKey := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency})
		rx := newHookReceiver(t)
		hook := s.register(t, agencyKey, rx.URL, "schedule.run_skipped", "schedule.paused")
		body := map[string]any{"action": "generate_blog", "client_id": client, "params": map[string]any{"keyword": "sourdough"},
			"cron": "*/2 * * * * *", "timezone": "Europe/London", "pause_after_failures": 2}
		if limit != nil {
			body["max_credits_per_month"] = limit
		}
		created := call(t, "POST", s.api+"/api/v1/schedules", tn.write, body)
		wantStatus(t, created, http.StatusCreated)
		return &tenantSchedule{tn: tn, rx: rx, secret: hook["secret"].(string), id: created.json["schedule"].(map[string]any)["id"].(string), reason: reason}
	}
	// generate_blog costs 2 AI credits: a balance of 2 covers one run, and
	// so does a cap of 2 beside a balance of 100.
	short := start(2, nil, "credit")
	capped := start(100, map[string]any{"ai": 2, "data": 0}, "max_credits_per_month")

	for _, sc := range []*tenantSchedule{short, capped} {
		// Deliveries are concurrent: the pause may arrive before the
		// second skip, and a slot skipped because the run before it was
		// still going is a skip too (one that does not count).
		var (
			got   []hook
			skips int
		)
		eventually(t, 30*time.Second, func() bool {
			got, skips = sc.rx.hooks(), 0
			paused := false
			for _, h := range got {
				reason, _ := h.data()["reason"].(string)
				if h.typ() == "schedule.run_skipped" && strings.Contains(reason, sc.reason) {
					skips++
				}
				paused = paused || h.typ() == "schedule.paused"
			}
			return paused && skips >= 2
		})
		for _, h := range got {
			verify(t, h, sc.secret)
			d := h.data()
			if d["schedule_id"] != sc.id || d["agency_id"] != sc.tn.agency {
				t.Fatalf("%s for schedule %v of agency %v; want %s of %s", h.typ(), d["schedule_id"], d["agency_id"], sc.id, sc.tn.agency)
			}
			if reason, _ := d["reason"].(string); h.typ() == "schedule.paused" && (!strings.Contains(reason, "pause_after_failures") || d["failures"] != float64(2)) {
				t.Fatalf("schedule.paused = %s; want the 2 failures and pause_after_failures named", h.raw)
			}
		}
		if skips < 2 {
			t.Fatalf("schedule %s paused after %d skips naming %q; want 2 before the pause: %v", sc.id, skips, sc.reason, typesOf(got))
		}
		// The schedule says so, its slots say why, and exactly one run
		// was started: nothing past what its owner allowed was spent.
		g := call(t, "GET", s.api+"/api/v1/schedules/"+sc.id, sc.tn.read, nil)
		wantStatus(t, g, http.StatusOK)
		sch := g.json["schedule"].(map[string]any)
		if sch["state"] != "paused" || sch["next_run_at"] != nil {
			t.Fatalf("after the skips the schedule is %v (next_run_at %v); want paused, with no next run", sch["state"], sch["next_run_at"])
		}
		slots, _ := sch["slots"].([]any)
		var skipped int
		for _, sl := range slots {
			m := sl.(map[string]any)
			if m["outcome"] == "skipped" && strings.Contains(m["reason"].(string), sc.reason) {
				skipped++
			}
		}
		if skipped < 2 {
			t.Fatalf("the schedule's slots show %d skips naming %q; want 2: %v", skipped, sc.reason, slots)
		}
		runs := call(t, "GET", s.api+"/api/v1/runs?schedule_id="+sc.id, sc.tn.read, nil)
		wantStatus(t, runs, http.StatusOK)
		if l, _ := runs.json["runs"].([]any); len(l) != 1 {
			t.Fatalf("the schedule started %d runs; want 1 (its credits covered one)", len(l))
		}
	}
	// The short agency's balance is spent to 0 and never below; the capped
	// one spent only its cap.
	eventually(t, 10*time.Second, func() bool { ai, _ := s.credits(t, short.tn.agency); return ai == 0 })
	if ai, _ := s.credits(t, capped.tn.agency); ai != 98 {
		t.Fatalf("the capped agency's balance is %v AI credits; want 98 (100 less its cap of 2)", ai)
	}
	// Resumed, a paused schedule is active again (and would skip again).
	r := call(t, "POST", s.api+"/api/v1/schedules/"+short.id+"/resume", short.tn.write, map[string]any{})
	wantStatus(t, r, http.StatusOK)
	if st := r.json["schedule"].(map[string]any)["state"]; st != "active" {
		t.Fatalf("resumed schedule is %v; want active", st)
	}
	wantStatus(t, call(t, "DELETE", s.api+"/api/v1/schedules/"+short.id, short.tn.write, nil), http.StatusOK)
	wantStatus(t, call(t, "DELETE", s.api+"/api/v1/schedules/"+capped.id, capped.tn.write, nil), http.StatusOK)
}
