package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// routes is an API answering by method and path ("GET /api/v1/actions"),
// recording each request as the recorder does.
func routes(t *testing.T, answers map[string]string) (*recorder, string) {
	t.Helper()
	r := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := recorded{method: req.Method, path: req.URL.Path, query: req.URL.RawQuery, auth: req.Header.Get("Authorization")}
		if b, _ := io.ReadAll(req.Body); len(b) > 0 {
			_ = json.Unmarshal(b, &rec.body)
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, rec)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		body, ok := answers[req.Method+" "+req.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			body = `{"error":"no route in the test"}`
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

const keywordsAction = `{"actions":[{"name":"generate_keywords","cost":{"ai":0,"data":2},"input_schema":{"properties":{
	"action":{"type":"string"},"client_id":{"type":"string"},"seed":{"type":"string"},"limit":{"type":"integer"},"locations":{"type":"array","items":{"type":"string"}}}}}]}`

const scheduleJSON = `{"schedule":{"id":"s1","action":"generate_keywords","client_id":"c1","every":"week","weekday":"monday","at":"07:00",
	"timezone":"Europe/London","state":"active","next_run_at":"2026-11-30T07:00:00Z","failures":0}}`

// TestSchedulesCreate: the flags become the API's fields, --param typed by
// the action's schema over --params-json; --dry-run asks for a preview and
// says nothing was created; the table spells the timing.
func TestSchedulesCreate(t *testing.T) {
	rec, url := routes(t, map[string]string{"GET /api/v1/actions": keywordsAction, "POST /api/v1/schedules": scheduleJSON})
	env := map[string]string{"ATRIUM_URL": url, "ATRIUM_API_KEY": "atr_k"}
	r := runCLI(t, env, nil, "schedules", "create", "--action", "generate_keywords", "--client", "c1", "--timezone", "Europe/London",
		"--every", "week", "--weekday", "monday", "--at", "07:00", "--params-json", `{"seed":"old","extra":true}`,
		"--param", "seed=rye, spelt", "--param", "limit=50", "--param", "locations=London,Leeds", "--max-data", "20", "--pause-after", "5",
		"--description", "Weekly ideas", "--dry-run", "-o", "table")
	if r.code != ExitOK || !strings.Contains(r.stdout, "every week monday 07:00") || !strings.Contains(r.stderr, "nothing was created") {
		t.Fatalf("create --dry-run: %+v", r)
	}
	reqs := rec.requests()
	post := reqs[len(reqs)-1]
	want := `{"action":"generate_keywords","at":"07:00","client_id":"c1","description":"Weekly ideas","every":"week",` +
		`"max_credits_per_month":{"ai":0,"data":20},"params":{"extra":true,"limit":50,"locations":["London","Leeds"],"seed":"rye, spelt"},` +
		`"pause_after_failures":5,"timezone":"Europe/London","weekday":"monday"}`
	if b, _ := json.Marshal(post.body); post.method != "POST" || post.path != "/api/v1/schedules" || post.query != "dry_run=true" || string(b) != want {
		t.Fatalf("sent %s %s?%s %s\nwant %s", post.method, post.path, post.query, b, want)
	}

	// Without --param nothing but the create is sent; no dry run, no note.
	n := len(rec.requests())
	r = runCLI(t, env, nil, "schedules", "create", "--action", "generate_keywords", "--client", "c1", "--timezone", "UTC", "--cron", "0 7 * * 1")
	if r.code != ExitOK || r.stderr != "" || len(rec.requests()) != n+1 || rec.requests()[n].query != "" || rec.requests()[n].body["cron"] != "0 7 * * 1" {
		t.Fatalf("create --cron: %+v, %+v", r, rec.requests()[n:])
	}
}

// TestSchedulesUpdateSendsOnlyWhatIsGiven: a PATCH names only the flags
// given; a --param is typed by the schedule's own action, read first.
func TestSchedulesUpdateSendsOnlyWhatIsGiven(t *testing.T) {
	rec, url := routes(t, map[string]string{"GET /api/v1/actions": keywordsAction, "GET /api/v1/schedules/s1": scheduleJSON, "PATCH /api/v1/schedules/s1": scheduleJSON})
	env := map[string]string{"ATRIUM_URL": url, "ATRIUM_API_KEY": "atr_k"}
	r := runCLI(t, env, nil, "schedules", "update", "s1", "--at", "08:00", "--pause-after", "2")
	if r.code != ExitOK {
		t.Fatalf("update: %+v", r)
	}
	if b, _ := json.Marshal(rec.requests()[0].body); len(rec.requests()) != 1 || string(b) != `{"at":"08:00","pause_after_failures":2}` {
		t.Fatalf("update sent %+v", rec.requests())
	}
	r = runCLI(t, env, nil, "schedules", "update", "s1", "--param", "limit=10")
	reqs := rec.requests()[1:]
	if b, _ := json.Marshal(reqs[len(reqs)-1].body); r.code != ExitOK || string(b) != `{"params":{"limit":10}}` || reqs[0].path != "/api/v1/schedules/s1" {
		t.Fatalf("update --param: %+v sent %+v", r, reqs)
	}
}

// TestSchedulesUsage: what the command line gets wrong exits 2 before
// anything is sent, saying what is allowed.
func TestSchedulesUsage(t *testing.T) {
	rec, url := routes(t, map[string]string{"GET /api/v1/actions": keywordsAction})
	env := map[string]string{"ATRIUM_URL": url, "ATRIUM_API_KEY": "atr_k"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"schedules", "create", "--action", "generate_keywords", "--client", "c1", "--cron", "0 7 * * 1"}, "missing: --timezone"},
		{[]string{"schedules", "create", "--action", "generate_keywords", "--client", "c1", "--timezone", "UTC"}, "give the timing"},
		{[]string{"schedules", "create", "--action", "a", "--client", "c1", "--timezone", "UTC", "--cron", "* * * * *", "--every", "day"}, "give one"},
		{[]string{"schedules", "create", "--action", "a", "--client", "c1", "--timezone", "UTC", "--every", "day", "--at", "07:00", "--ends-at", "tomorrow"}, "RFC 3339"},
		{[]string{"schedules", "create", "--action", "a", "--client", "c1", "--timezone", "UTC", "--every", "day", "--monthday", "x"}, "whole number"},
		{[]string{"schedules", "update", "s1", "--params-json", "[1]"}, "one JSON object"},
		{[]string{"schedules", "get"}, "name one schedule"},
		{[]string{"schedules", "pause", "a", "b"}, "name one schedule"},
		{[]string{"schedules", "list", "--limit", "-1"}, "--limit must be"},
		{[]string{"branding", "set", "--primary", "#000000"}, "--name is required"},
		{[]string{"report-shares", "create"}, "--run is required"},
		{[]string{"report-shares", "revoke"}, "usage: atrium report-shares revoke"},
	} {
		r := runCLI(t, env, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("atrium %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
	for _, req := range rec.requests() {
		if req.path != "/api/v1/schedules/s1" {
			t.Fatalf("a usage error sent %+v", req)
		}
	}
}

// TestSchedulesVerbs: list walks the pages with its filters; pause,
// resume, trigger and delete reach their routes and print their answers.
func TestSchedulesVerbs(t *testing.T) {
	rec, url := routes(t, map[string]string{
		"GET /api/v1/schedules":             `{"schedules":[{"id":"s1","action":"generate_keywords","cron":"0 7 * * 1","state":"paused"}]}`,
		"POST /api/v1/schedules/s1/pause":   `{"schedule":{"id":"s1","state":"paused"}}`,
		"POST /api/v1/schedules/s1/resume":  `{"schedule":{"id":"s1","state":"active"}}`,
		"POST /api/v1/schedules/s1/trigger": `{"run":{"id":"r9","action":"generate_keywords","state":"queued","status_code":202}}`,
		"DELETE /api/v1/schedules/s1":       `{}`,
	})
	env := map[string]string{"ATRIUM_URL": url, "ATRIUM_API_KEY": "atr_k"}
	r := runCLI(t, env, nil, "schedules", "list", "--client", "c1", "--state", "paused", "-o", "csv")
	if r.code != ExitOK || !strings.Contains(r.stdout, "s1,generate_keywords,,paused,cron 0 7 * * 1") {
		t.Fatalf("list: %+v", r)
	}
	if q := rec.requests()[0].query; !strings.Contains(q, "client_id=c1") || !strings.Contains(q, "state=paused") {
		t.Fatalf("list asked %s", q)
	}
	for verb, want := range map[string]string{"pause": `"state": "paused"`, "resume": `"state": "active"`, "trigger": `"id": "r9"`, "delete": "deleted schedule s1"} {
		if r := runCLI(t, env, nil, "schedules", verb, "s1"); r.code != ExitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("schedules %s: %+v; want %q", verb, r, want)
		}
	}
}

// TestBrandingAndReportShares: set sends the whole branding; a share's URL is
// printed with the note that it is shown once; revoke is a DELETE.
func TestBrandingAndReportShares(t *testing.T) {
	rec, url := routes(t, map[string]string{
		"PUT /api/v1/branding":             `{"branding":{"name":"Northwind SEO","colors":{"primary":"#112233","accent":"#e07a2e"}}}`,
		"GET /api/v1/report-shares":        `{"shares":[{"id":"sh1","run_id":"r1","client_id":"c1","state":"active"}],"next_cursor":"n"}`,
		"POST /api/v1/report-shares":       `{"share":{"id":"sh2","run_id":"r1","url":"http://x/r/tok","state":"active"}}`,
		"DELETE /api/v1/report-shares/sh2": `{"share":{"id":"sh2","state":"revoked","revoked_at":"2026-11-29T10:00:00Z"}}`,
	})
	env := map[string]string{"ATRIUM_URL": url, "ATRIUM_API_KEY": "atr_k"}
	r := runCLI(t, env, nil, "branding", "set", "--name", "Northwind SEO", "--primary", "#112233")
	if b, _ := json.Marshal(rec.requests()[0].body); r.code != ExitOK || string(b) != `{"colors":{"primary":"#112233"},"name":"Northwind SEO"}` || !strings.Contains(r.stdout, "#e07a2e") {
		t.Fatalf("branding set: %+v sent %s", r, b)
	}
	r = runCLI(t, env, nil, "report-shares", "list", "--run", "r1", "--limit", "1", "-o", "csv")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "id,run_id,client_id,state") || !strings.Contains(r.stdout, "sh1,r1,c1,active") || len(rec.requests()) != 2 {
		t.Fatalf("report-shares list: %+v (%d requests: --limit 1 reads one page)", r, len(rec.requests()))
	}
	r = runCLI(t, env, nil, "report-shares", "create", "--run", "r1", "--days", "30", "-o", "table")
	if b, _ := json.Marshal(rec.requests()[2].body); r.code != ExitOK || !strings.Contains(r.stdout, "http://x/r/tok") || !strings.Contains(r.stderr, "shown only now") || string(b) != `{"expires_in_days":30,"run_id":"r1"}` {
		t.Fatalf("report-shares create: %+v sent %s", r, b)
	}
	r = runCLI(t, env, nil, "report-shares", "revoke", "sh2")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"state": "revoked"`) || rec.requests()[3].method != "DELETE" {
		t.Fatalf("report-shares revoke: %+v", r)
	}
}
