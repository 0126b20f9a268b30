package main

// The action interface over HTTP: discovery, validation, every action run
// against local stand-ins for the outside world (a web site with known
// defects, an IndexNow endpoint, an SMTP server), credits under
// concurrency, idempotency, refreshes, records visible through the data
// read, completion events on NATS, and tenancy.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/santhosh-tekuri/jsonschema/v6"

	eventdefs "github.com/atrium-hq/atrium/platform/events"
)

// actionWorld is what actions reach outside Atrium in the tests, all on
// loopback: a site to audit, an IndexNow endpoint and an SMTP server.
type actionWorld struct {
	site     *httptest.Server
	indexNow *httptest.Server
	smtpAddr string

	mu        sync.Mutex
	submitted []map[string]any
	mails     []string // raw messages
	// holds are the pages under /held/<token> that answer only once their
	// channel is closed (a slow site, for the asynchronous runs' tests);
	// fetched is signalled when such a page is asked for, and abandoned
	// when its fetcher gave up on it (the run's work was canceled).
	holds map[string]*heldPage
}

type heldPage struct {
	release, fetched, abandoned chan struct{}
	once, gaveUp                sync.Once
}

const goodPage = `<!doctype html><html lang="en"><head><title>Sourdough Bread Baking Classes in Portland</title>
<meta name="description" content="Learn sourdough bread baking in Portland with hands-on classes for beginners and pros: starters, shaping, scoring and baking at home.">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="canonical" href="https://bakery.example/classes"></head>
<body><h1>Sourdough bread baking classes</h1><p>` + "Sourdough bread starts with a lively starter. " + `%s</p>
<h2>What you learn</h2><p>Shaping and scoring.</p><img src="/loaf.jpg" alt="A scored sourdough loaf"><a href="/book">Book a class</a></body></html>`

// badPage has known defects: a short title, no meta description, two h1,
// an image without alt text, no canonical, no lang, no viewport, few words.
const badPage = `<html><head><title>Home</title></head><body><h1>Welcome</h1><h1>Bakery</h1>
<img src="/a.jpg"><p>Fresh bread daily.</p></body></html>`

func newActionWorld(t *testing.T) *actionWorld {
	t.Helper()
	w := &actionWorld{holds: map[string]*heldPage{}}
	w.site = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		if token, ok := strings.CutPrefix(r.URL.Path, "/held/"); ok {
			w.mu.Lock()
			h := w.holds[token]
			w.mu.Unlock()
			if h != nil {
				h.once.Do(func() { close(h.fetched) })
				select {
				case <-h.release:
				case <-r.Context().Done():
					h.gaveUp.Do(func() { close(h.abandoned) })
					return
				}
			}
			fmt.Fprintf(rw, goodPage, "Held page.")
			return
		}
		switch r.URL.Path {
		case "/classes":
			fmt.Fprintf(rw, goodPage, strings.Repeat("We teach bakers of every level to bake bread at home with confidence. ", 40))
		case "/home":
			_, _ = io.WriteString(rw, badPage)
		default:
			http.NotFound(rw, r)
		}
	}))
	t.Cleanup(w.site.Close)
	w.indexNow = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.mu.Lock()
		w.submitted = append(w.submitted, body)
		w.mu.Unlock()
		rw.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(w.indexNow.Close)
	srv := smtp.NewServer(&smtpBackend{w: w})
	srv.Domain, srv.AllowInsecureAuth = "mail.test", true
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.smtpAddr = lis.Addr().String()
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	return w
}

// hold makes a page of the site that answers once release is called: its
// URL, and the page's signals.
func (w *actionWorld) hold(t *testing.T) (url string, h *heldPage, release func()) {
	t.Helper()
	token := fmt.Sprint(time.Now().UnixNano(), "-", len(w.holds))
	h = &heldPage{release: make(chan struct{}), fetched: make(chan struct{}), abandoned: make(chan struct{})}
	w.mu.Lock()
	token = fmt.Sprint(len(w.holds), "-", token)
	w.holds[token] = h
	w.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(h.release) }) }
	t.Cleanup(release)
	return w.site.URL + "/held/" + token, h, release
}

// flags point a stack at the world.
func (w *actionWorld) flags() []string {
	return []string{"--allow-private-fetch", "--indexnow-endpoint=" + w.indexNow.URL, "--indexnow-key=0123456789abcdef",
		"--smtp-addr=" + w.smtpAddr, "--smtp-from=outreach@agency.test", "--smtp-tls=none",
		// Schedules due every few seconds, looked for often (e2e_schedules_test.go).
		"--schedule-min-interval=1s", "--schedule-tick=200ms"}
}

type smtpBackend struct{ w *actionWorld }

func (b *smtpBackend) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSession{w: b.w}, nil }

type smtpSession struct{ w *actionWorld }

func (s *smtpSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *smtpSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	s.w.mu.Lock()
	s.w.mails = append(s.w.mails, string(b))
	s.w.mu.Unlock()
	return err
}
func (s *smtpSession) Reset()        {}
func (s *smtpSession) Logout() error { return nil }

// act POSTs an action with the key. Every request the service accepts
// must also be valid by the input_schema discovery publishes for its
// action, compiled by an independent JSON Schema 2020-12 validator: that
// schema is what SDKs, forms and agents build requests from.
func (s *stack) act(t testing.TB, key string, body any, headers ...string) response {
	t.Helper()
	r := call(t, "POST", s.api+"/api/v1/data", key, body, headers...)
	if b, ok := body.(map[string]any); ok && r.status == http.StatusOK {
		name, _ := b["action"].(string)
		schema := s.inputSchema(t, key, name)
		raw, _ := json.Marshal(b)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("the service accepted %s, which its discovered input_schema refuses: %v", raw, err)
		}
	}
	return r
}

// inputSchemas holds, per stack (its API URL), the compiled input schema
// of each action as GET /api/v1/actions published it.
var inputSchemas sync.Map

func (s *stack) inputSchema(t testing.TB, key, action string) *jsonschema.Schema {
	t.Helper()
	if m, ok := inputSchemas.Load(s.api); ok {
		if sc, ok := m.(map[string]*jsonschema.Schema)[action]; ok {
			return sc
		}
		t.Fatalf("discovery has no input_schema for %q", action)
	}
	r := call(t, "GET", s.api+"/api/v1/actions", key, nil)
	wantStatus(t, r, http.StatusOK)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := map[string]*jsonschema.Schema{}
	for _, a := range r.json["actions"].([]any) {
		a := a.(map[string]any)
		name := a["name"].(string)
		raw, _ := json.Marshal(a["input_schema"])
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		url := "https://atrium.test/actions/" + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if out[name], err = c.Compile(url); err != nil {
			t.Fatalf("%s: the discovered input_schema does not compile: %v", name, err)
		}
	}
	inputSchemas.Store(s.api, out)
	return s.inputSchema(t, key, action)
}

func (s *stack) grant(t testing.TB, agency string, ai, data int) {
	t.Helper()
	wantStatus(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+agency+"/credits", map[string]any{"ai": ai, "data": data}), http.StatusOK)
}

func (s *stack) credits(t testing.TB, agency string) (ai, data float64) {
	t.Helper()
	r := s.adminCall(t, "GET", "/admin/v1/agencies/"+agency+"/credits", nil)
	wantStatus(t, r, http.StatusOK)
	b := r.json["balance"].(map[string]any)
	return b["ai"].(float64), b["data"].(float64)
}

// wantAction checks an action response: 200, the shape, the status.
func wantAction(t *testing.T, r response, action, client, status string) map[string]any {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r.json, "action", "client_id", "status", "status_code", "data")
	if r.json["action"] != action || r.json["client_id"] != client || r.json["status"] != status {
		t.Fatalf("%s answered %s, want status %s", action, r.body, status)
	}
	if r.header.Get("Atrium-AI-Credits-Remaining") == "" || r.header.Get("Atrium-Data-Credits-Remaining") == "" {
		t.Fatalf("%s response lacks the balance headers: %v", action, r.header)
	}
	return r.json["data"].(map[string]any)
}

func testActionsDiscovery(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	r := call(t, "GET", s.api+"/api/v1/actions", tn.read, nil)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r.json, "actions")
	var names []string
	for _, a := range r.json["actions"].([]any) {
		a := a.(map[string]any)
		names = append(names, a["name"].(string))
		wantKeys(t, a, "name", "description", "fields", "cost", "writes", "refreshes", "execution", "typical_seconds", "input_schema")
		if a["execution"] != "both" || a["typical_seconds"].(float64) <= 0 {
			t.Fatalf("%s: execution %v, typical_seconds %v", a["name"], a["execution"], a["typical_seconds"])
		}
		schema := a["input_schema"].(map[string]any)
		if schema["$schema"] != "https://json-schema.org/draft/2020-12/schema" || schema["additionalProperties"] != false ||
			dig(schema, "properties", "action", "const") != a["name"] {
			t.Fatalf("%s: input_schema %v", a["name"], schema)
		}
		wantKeys(t, a["cost"].(map[string]any), "ai", "data")
		for _, f := range a["fields"].([]any) {
			f := f.(map[string]any)
			for _, k := range []string{"name", "type", "description", "required", "allowed_values"} {
				if _, ok := f[k]; !ok {
					t.Fatalf("%s field %v lacks %s", a["name"], f["name"], k)
				}
			}
		}
		if a["name"] == "generate_blog" {
			fields := a["fields"].([]any)
			kw, tone := fields[0].(map[string]any), fields[2].(map[string]any)
			if kw["name"] != "keyword" || kw["required"] != true || kw["type"] != "string" || tone["name"] != "tone" ||
				len(tone["allowed_values"].([]any)) != 5 || tone["default"] != "professional" || a["writes"] != "blogs" {
				t.Fatalf("generate_blog discovery = %v", a)
			}
			props := a["input_schema"].(map[string]any)["properties"].(map[string]any)
			if !slices.Equal(strs(a["input_schema"].(map[string]any)["required"]), []string{"action", "client_id", "keyword"}) ||
				dig(props, "keyword", "maxLength") != 100.0 || len(dig(props, "tone", "enum").([]any)) != 5 || dig(props, "tone", "default") != "professional" {
				t.Fatalf("generate_blog input_schema = %v", a["input_schema"])
			}
		}
		if a["name"] == "seo_audit" {
			url := a["fields"].([]any)[0].(map[string]any)
			if url["format"] != "url" || a["refreshes"] != true {
				t.Fatalf("seo_audit discovery = %v", a)
			}
		}
	}
	want := []string{"seo_audit", "optimize_page", "generate_keywords", "generate_topical_map", "generate_blog", "generate_blog_image",
		"generate_geo_article", "generate_press_release", "generate_gbp_post", "deploy_blog", "index_url", "fetch_backlinks",
		"generate_outreach_email", "send_prospect_email", "run_grid_search", "run_llm_visibility", "generate_report", "score_call"}
	if !slices.Equal(names, want) {
		t.Fatalf("actions = %v\nwant %v", names, want)
	}
	noAgency := s.newKey(t, map[string]any{"scopes": []string{"read"}, "site_id": tn.site})
	wantError(t, call(t, "GET", s.api+"/api/v1/actions", noAgency, nil), http.StatusForbidden, "agency")
}

func testActionsValidation(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	unlinked := s.newClient(t, s.newTenant(t), true)
	s.grant(t, tn.agency, 100, 100)
	for _, c := range []struct {
		key   string
		body  any
		code  int
		words []string
	}{
		{tn.read, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "x"}, 403, []string{"write"}},
		{tn.write, `[1,2]`, 400, []string{"body"}},
		{tn.write, `{"action": "generate_blog",`, 400, []string{"body"}},
		{tn.write, map[string]any{"client_id": client}, 400, []string{"action is required: the name of an action, one of: seo_audit"}},
		{tn.write, map[string]any{"action": "generate_essay", "client_id": client}, 400, []string{"action must be the name of an action, one of: seo_audit", "score_call", `got "generate_essay"`}},
		{tn.write, map[string]any{"action": "generate_blog"}, 400, []string{"client_id is required"}},
		{tn.write, map[string]any{"action": "generate_blog", "client_id": client}, 400, []string{"generate_blog.keyword is required"}},
		{tn.write, map[string]any{"action": "generate_geo_article", "client_id": client, "keyword": "plumber", "city": "Austin"}, 400, []string{"generate_geo_article.state is required"}},
		// Required means present, not null and not blank, with the words
		// every interface uses (docs/http-api.md#values).
		{tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": ""}, 400,
			[]string{"generate_blog.keyword is required: a string of at most 100 characters, on one line without control characters"}},
		{tn.write, map[string]any{"action": "generate_geo_article", "client_id": client, "keyword": "plumber", "city": "Austin", "state": "  "}, 400,
			[]string{"generate_geo_article.state is required: a string of at most 100 characters, on one line without control characters"}},
		// Text PostgreSQL cannot hold is refused before anything is reserved
		// (it was a 500 on PostgreSQL, with the credits held until recovery).
		{tn.write, map[string]any{"action": "run_llm_visibility", "client_id": client, "prompt": "best bakery\u0000?", "brand_name": "Crust"}, 400,
			[]string{"run_llm_visibility.prompt must be a string of at most 2,000 characters, without NUL characters (U+0000)"}},
		{tn.write, map[string]any{"action": "seo_audit", "client_id": client, "url": "not a url"}, 400, []string{"seo_audit.url must be an absolute http or https URL"}},
		{tn.write, map[string]any{"action": "run_grid_search", "client_id": client, "keyword": "k", "lat": 40, "lng": 200}, 400, []string{"run_grid_search.lng must be a number between -180 and 180; got the number 200"}},
		{tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "x", "tone": "grumpy"}, 400, []string{"generate_blog.tone must be one of: professional", `got "grumpy"`}},
		{tn.write, map[string]any{"action": "send_prospect_email", "client_id": client, "to": "nobody", "subject": "s", "html": "h"}, 400, []string{"send_prospect_email.to must be an email address such as ana@example.com"}},
		// A recipient the mail relay cannot take (non-ASCII: it ended as a
		// 500) or that names the address to deliver to (an address literal).
		{tn.write, map[string]any{"action": "send_prospect_email", "client_id": client, "to": "zoë@client.example", "subject": "s", "html": "h"}, 400,
			[]string{"send_prospect_email.to must be an email address such as ana@example.com (ASCII, at a domain name", `got "zoë@client.example"`}},
		{tn.write, map[string]any{"action": "send_prospect_email", "client_id": client, "to": "bob@[127.0.0.1]", "subject": "s", "html": "h"}, 400,
			[]string{"send_prospect_email.to must be an email address", `got "bob@[127.0.0.1]"`}},
		{tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "x", "extra": 1}, 400, []string{"extra is not a field of generate_blog"}},
		{tn.write, map[string]any{"action": "generate_blog", "client_id": unlinked, "keyword": "x"}, 403, []string{"not linked to this key's agency, or does not exist"}},
		{tn.write, map[string]any{"action": "generate_blog", "client_id": "00000000-0000-4000-8000-000000000000", "keyword": "x"}, 403, []string{"not linked to this key's agency, or does not exist"}},
		{tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": strings.Repeat("k", 101)}, 400, []string{"at most 100 characters"}},
		{tn.write, map[string]any{"action": "score_call", "client_id": client, "transcript": strings.Repeat("hello ", 300_000)}, 413, []string{"body"}},
		// Data after the object: the action it holds must not run.
		{tn.write, `{"action": "generate_blog", "client_id": "` + client + `", "keyword": "x"} trailing`, 400,
			[]string{"request body must be one JSON object with nothing after it", "column 98"}},
		{tn.write, `{"action": "generate_blog", "client_id": "` + client + `", "keyword": "x"}{}`, 400,
			[]string{"request body must be one JSON object with nothing after it", "column 97"}},
	} {
		r := s.act(t, c.key, c.body)
		wantError(t, r, c.code, c.words...)
	}
	// PUT and DELETE on the data URL are not actions.
	wantError(t, call(t, "DELETE", s.api+"/api/v1/data", tn.write, nil), http.StatusMethodNotAllowed, "GET", "POST")
	s.wantNothingRan(t, tn, client, 100, 100)
}

// wantNothingRan checks that the requests refused so far changed nothing
// for the client: the agency's credits are as granted, and once a run made
// now is recorded, it is the client's only row of action_runs (a request
// that got as far as reserving would have left one too).
func (s *stack) wantNothingRan(t *testing.T, tn tenant, client string, ai, data float64) {
	t.Helper()
	if gotAI, gotData := s.credits(t, tn.agency); gotAI != ai || gotData != data {
		t.Fatalf("credits after refused requests = %v AI, %v data; want %v and %v, untouched", gotAI, gotData, ai, data)
	}
	marker := wantAction(t, s.act(t, tn.write, map[string]any{"action": "generate_press_release", "client_id": client, "headline": "Marker"}),
		"generate_press_release", client, "success")
	var rows []any
	eventually(t, 5*time.Second, func() bool {
		rows = s.read(t, tn.read, params("resource", "action_runs", "client_id", client)).json["data"].([]any)
		return len(rows) > 0
	})
	if len(rows) != 1 || rows[0].(map[string]any)["record_id"] != marker["id"] {
		t.Fatalf("action_runs after refused requests and one run = %v, want only that run", rows)
	}
}

// testActionsPrivateAddresses runs against a stack without
// --allow-private-fetch, as a deployment runs: every spelling of a private
// address that the fetch refuses (the forms the probe found past the old
// request-time check, which then reserved credits and ended as status
// error 403) is refused when the request is made, 400, and nothing runs.
func testActionsPrivateAddresses(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 10)
	for _, host := range []string{"2130706433", "0x7f000001", "127.1", "[::127.0.0.1]", "[64:ff9b::127.0.0.1]", "198.18.0.1", "255.255.255.255", "[fec0::1]"} {
		for _, act := range []string{"seo_audit", "optimize_page"} {
			r := s.act(t, tn.write, map[string]any{"action": act, "client_id": client, "url": "http://" + host + "/admin"})
			wantError(t, r, http.StatusBadRequest, act+".url must be an absolute http or https URL on a public address", "is a private network address")
		}
	}
	s.wantNothingRan(t, tn, client, 10, 10)
}

// testActionsEveryAction runs all seventeen with valid input and checks
// each answer and the record it left.
func testActionsEveryAction(t *testing.T, s *stack, w *actionWorld) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 1000, 1000)
	run := func(body map[string]any) map[string]any {
		t.Helper()
		body["client_id"] = client
		return wantAction(t, s.act(t, tn.write, body), body["action"].(string), client, "success")
	}
	audit := run(map[string]any{"action": "seo_audit", "url": w.site.URL + "/home"})
	if audit["url"] != w.site.URL+"/home" || audit["issues_found"].(float64) < 6 || audit["score"].(float64) >= 70 || audit["id"] == nil {
		t.Fatalf("seo_audit of a page with known defects = %v", audit)
	}
	var found []string
	for _, i := range audit["issues"].([]any) {
		found = append(found, i.(map[string]any)["check"].(string))
	}
	for _, want := range []string{"meta_description_present", "single_h1", "image_alt", "canonical", "title_length"} {
		if !slices.Contains(found, want) {
			t.Fatalf("seo_audit issues %v lack %s", found, want)
		}
	}
	good := run(map[string]any{"action": "seo_audit", "url": w.site.URL + "/classes"})
	if good["score"].(float64) <= audit["score"].(float64) {
		t.Fatalf("the good page scored %v, the bad one %v", good["score"], audit["score"])
	}
	opt := run(map[string]any{"action": "optimize_page", "url": w.site.URL + "/home", "keyword": "sourdough bread"})
	if !strings.Contains(strings.ToLower(opt["suggested_title"].(string)), "sourdough") || len(opt["recommendations"].([]any)) == 0 {
		t.Fatalf("optimize_page = %v", opt)
	}
	kw := run(map[string]any{"action": "generate_keywords", "seed": "sourdough bread", "location": "Portland"})
	if kw["source"] != "synthetic" || kw["count"].(float64) < 5 {
		t.Fatalf("generate_keywords = %v", kw)
	}
	tm := run(map[string]any{"action": "generate_topical_map", "topic": "home baking", "depth": 3})
	if tm["pillar_count"].(float64) < 3 {
		t.Fatalf("generate_topical_map = %v", tm)
	}
	blog := run(map[string]any{"action": "generate_blog", "keyword": "sourdough starter", "tone": "friendly", "category_id": "baking"})
	if blog["id"] == nil || !strings.Contains(strings.ToLower(blog["post_title"].(string)), "sourdough starter") || blog["status"] != "draft" {
		t.Fatalf("generate_blog = %v", blog)
	}
	img := run(map[string]any{"action": "generate_blog_image", "title": "Sourdough starter, step by step", "style": "bold"})
	testMedia(t, img["url"].(string))
	geo := run(map[string]any{"action": "generate_geo_article", "keyword": "wedding cakes", "city": "Austin", "state": "TX"})
	if !strings.Contains(geo["title"].(string), "Austin") {
		t.Fatalf("generate_geo_article = %v", geo)
	}
	run(map[string]any{"action": "generate_press_release", "headline": "Bakery opens a second shop", "body_points": []string{"Opens May 1", "Twenty new jobs"}})
	run(map[string]any{"action": "generate_gbp_post", "topic": "weekend bread sale", "cta": "order"})
	dep := run(map[string]any{"action": "deploy_blog", "post_id": blog["id"]})
	if dep["published_post"].(map[string]any)["status"] != "published" {
		t.Fatalf("deploy_blog = %v", dep)
	}
	idx := s.act(t, tn.write, map[string]any{"action": "index_url", "client_id": client, "url": "https://bakery.example/classes"})
	wantAction(t, idx, "index_url", client, "success")
	if idx.json["status_code"] != float64(202) {
		t.Fatalf("index_url status_code = %v, want the endpoint's 202", idx.json["status_code"])
	}
	w.mu.Lock()
	sub := w.submitted[len(w.submitted)-1]
	w.mu.Unlock()
	if sub["host"] != "bakery.example" || sub["key"] != "0123456789abcdef" || fmt.Sprint(sub["urlList"]) != "[https://bakery.example/classes]" {
		t.Fatalf("IndexNow received %v", sub)
	}
	bl := run(map[string]any{"action": "fetch_backlinks"})
	if bl["domain"] != "client.example" || bl["backlinks"].(float64) < 10 || bl["source"] != "synthetic" {
		t.Fatalf("fetch_backlinks = %v", bl)
	}
	out := run(map[string]any{"action": "generate_outreach_email", "prospectUrl": "https://breadblog.example/resources"})
	if out["target_domain"] != "breadblog.example" || out["subject"] == "" {
		t.Fatalf("generate_outreach_email = %v", out)
	}
	sent := run(map[string]any{"action": "send_prospect_email", "to": "editor@breadblog.example", "subject": "A guest post on rye", "html": "<p>Hello <b>there</b></p>"})
	if sent["status"] != "sent" || sent["message_id"] == "" {
		t.Fatalf("send_prospect_email = %v", sent)
	}
	w.mu.Lock()
	mail := w.mails[len(w.mails)-1]
	w.mu.Unlock()
	if !strings.Contains(mail, "Subject: A guest post on rye") || !strings.Contains(mail, "editor@breadblog.example") {
		t.Fatalf("the SMTP server received:\n%s", mail)
	}
	grid := run(map[string]any{"action": "run_grid_search", "keyword": "bakery", "lat": 45.52, "lng": -122.68, "radius": 3})
	if len(grid["points"].([]any)) != 25 || grid["grid_size"] != float64(5) {
		t.Fatalf("run_grid_search = %v", grid)
	}
	llm := run(map[string]any{"action": "run_llm_visibility", "prompt": "Which bakery in Portland has the best sourdough?", "brand_name": "Bakery", "competitors": []string{"Crust Co", "Loaf Lab"}})
	if _, ok := llm["visibility"].(float64); !ok || llm["engine"] != "atrium-builtin" {
		t.Fatalf("run_llm_visibility = %v", llm)
	}
	call := run(map[string]any{"action": "score_call", "call_id": "call-1", "transcript": "Agent: Thank you for calling, how can I help?\nCaller: I'd like a quote for a wedding cake and to book a tasting this week.\nAgent: Let me confirm your name and number, I can book you for Thursday."})
	if call["lead_grade"] != "A" && call["lead_grade"] != "B" {
		t.Fatalf("score_call of a buying call = %v", call)
	}

	// The records are rows of the client's datasets.
	for resource, want := range map[string]float64{"seo_reports": 2, "blogs": 1, "blog_images": 1, "geo_articles": 1, "press_releases": 1,
		"gbp_posts": 1, "topical_maps": 1, "grid_searches": 1, "llm_reports": 1, "call_scores": 1, "integrations": 1, "domain_metrics": 1, "backlink_outreach": 2, "action_runs": 18} {
		var total float64
		deadline := time.Now().Add(5 * time.Second)
		for {
			r := s.read(t, tn.read, params("resource", resource, "client_id", client))
			if total = r.json["pagination"].(map[string]any)["total"].(float64); total == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %v rows of the client, want %v", resource, total, want)
			}
			time.Sleep(50 * time.Millisecond) // why sleep: polls the data read, where the records land after the action's response
		}
	}
	r := s.read(t, tn.read, params("resource", "blogs", "client_id", client, "filter_field", "id", "filter_value", blog["id"].(string)))
	if row := r.json["data"].([]any)[0].(map[string]any); row["status"] != "published" || row["published"] != true || row["post_title"] != blog["post_title"] {
		t.Fatalf("the deployed blog reads back as %v", row)
	}
}

// testMedia fetches a generated image without a key.
func testMedia(t *testing.T, u string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("GET %s = %d %v", u, resp.StatusCode, resp.Header)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() != 1200 || img.Bounds().Dy() != 630 {
		t.Fatalf("media %s is not a 1200x630 PNG: %v", u, err)
	}
	missing := u[:len(u)-len("0123456789abcdef0123456789abcdef.png")] + strings.Repeat("0", 32) + ".png"
	wantError(t, call(t, "GET", missing, "", nil), http.StatusNotFound, "no media")
}

func testActionsCredits(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	blog := map[string]any{"action": "generate_blog", "client_id": client, "keyword": "rye bread"}
	r := s.act(t, tn.write, blog)
	wantError(t, r, http.StatusPaymentRequired, "insufficient AI credits", "generate_blog needs 2 AI credits", "has 0 available")
	if r.header.Get("Atrium-AI-Credits-Remaining") != "0" {
		t.Fatalf("402 balance header = %q", r.header.Get("Atrium-AI-Credits-Remaining"))
	}
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+tn.agency+"/credits", map[string]any{"ai": 0, "data": 0}), 400, "ai and data are both 0")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies/00000000-0000-4000-8000-000000000000/credits", map[string]any{"ai": 5}), 404, "not found")
	wantError(t, s.adminCall(t, "POST", "/admin/v1/agencies/"+tn.agency+"/credits", map[string]any{"ai": "lots"}), 400, "ai")
	r = s.adminCall(t, "POST", "/admin/v1/agencies/"+tn.agency+"/credits", map[string]any{"ai": 40, "data": 1})
	wantStatus(t, r, http.StatusOK)
	if b := r.json["balance"].(map[string]any); b["ai"] != float64(40) || b["data"] != float64(1) {
		t.Fatalf("added credits answered %s", r)
	}
	// Fifty at once against credits for twenty: exactly twenty run.
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			body := map[string]any{"action": "generate_blog", "client_id": client, "keyword": fmt.Sprint("bread ", i)}
			r := s.act(t, tn.write, body)
			code := r.status
			if code == 200 && r.json["status"] != "success" {
				code = -1
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[200] != 20 || codes[402] != 30 {
		t.Fatalf("50 concurrent generate_blog against credits for 20: %v; want 20 x 200 and 30 x 402", codes)
	}
	if ai, data := s.credits(t, tn.agency); ai != 0 || data != 1 {
		t.Fatalf("balance after = %v AI, %v data; want 0 and 1", ai, data)
	}
	r = call(t, "GET", s.api+"/api/v1/credits", tn.read, nil)
	wantStatus(t, r, http.StatusOK)
	if b := r.json["balance"].(map[string]any); b["ai"] != float64(0) || b["data"] != float64(1) {
		t.Fatalf("GET /api/v1/credits = %s", r)
	}
	eventually(t, 5*time.Second, func() bool {
		r := s.read(t, tn.read, params("resource", "blogs", "client_id", client))
		return r.json["pagination"].(map[string]any)["total"] == float64(20)
	})
}

func testActionsIdempotency(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 0)
	body := map[string]any{"action": "generate_blog", "client_id": client, "keyword": "focaccia"}
	first := s.act(t, tn.write, body, "Idempotency-Key", "order-42")
	d1 := wantAction(t, first, "generate_blog", client, "success")
	again := s.act(t, tn.write, `{"keyword": "focaccia", "client_id": "`+client+`", "action": "generate_blog"}`, "Idempotency-Key", "order-42")
	d2 := wantAction(t, again, "generate_blog", client, "success")
	if d2["id"] != d1["id"] || again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("replay = %s (headers %v), first %s", again, again.header, first)
	}
	if ai, _ := s.credits(t, tn.agency); ai != 8 {
		t.Fatalf("AI credits after a replay = %v, want 8 (charged once)", ai)
	}
	// A key that gRPC metadata cannot carry is refused, not dropped (which
	// made each retry a new run, charged again): twice, and nothing charged.
	for range 2 {
		wantError(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "brioche"}, "Idempotency-Key", "r\xc3\xa9sum\xc3\xa9-1"),
			http.StatusBadRequest, "Idempotency-Key header must be printable ASCII", "byte 2 is 0xc3")
	}
	if ai, _ := s.credits(t, tn.agency); ai != 8 {
		t.Fatalf("AI credits after two refused non-ASCII keys = %v, want 8 (nothing charged)", ai)
	}
	body["keyword"] = "ciabatta"
	wantError(t, s.act(t, tn.write, body, "Idempotency-Key", "order-42"), http.StatusUnprocessableEntity, "order-42", "different request body")
	// Without the key, the same request is a new run, as the spec says.
	d3 := wantAction(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "focaccia"}), "generate_blog", client, "success")
	if d3["id"] == d1["id"] {
		t.Fatal("a request without a key was deduplicated")
	}
}

func testActionsRefresh(t *testing.T, s *stack, w *actionWorld) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 100, 100)
	var ids []any
	for range 2 {
		d := wantAction(t, s.act(t, tn.write, map[string]any{"action": "seo_audit", "client_id": client, "url": w.site.URL + "/home"}), "seo_audit", client, "success")
		ids = append(ids, d["id"])
		wantAction(t, s.act(t, tn.write, map[string]any{"action": "fetch_backlinks", "client_id": client}), "fetch_backlinks", client, "success")
	}
	if ids[0] != ids[1] {
		t.Fatalf("two audits of one URL made reports %v", ids)
	}
	total := func(resource string) float64 {
		r := s.read(t, tn.read, params("resource", resource, "client_id", client))
		return r.json["pagination"].(map[string]any)["total"].(float64)
	}
	eventually(t, 5*time.Second, func() bool { return total("action_runs") == 4 })
	if total("seo_reports") != 1 {
		t.Fatalf("seo_reports after two audits = %v, want 1", total("seo_reports"))
	}
	tasks, links, metrics := total("seo_tasks"), total("backlinks"), total("domain_metrics")
	wantAction(t, s.act(t, tn.write, map[string]any{"action": "seo_audit", "client_id": client, "url": w.site.URL + "/home"}), "seo_audit", client, "success")
	wantAction(t, s.act(t, tn.write, map[string]any{"action": "fetch_backlinks", "client_id": client}), "fetch_backlinks", client, "success")
	eventually(t, 5*time.Second, func() bool { return total("action_runs") == 6 })
	if total("seo_tasks") != tasks || total("backlinks") != links || total("domain_metrics") != metrics || metrics != 1 {
		t.Fatalf("a third refresh changed the counts: tasks %v -> %v, backlinks %v -> %v, metrics %v", tasks, total("seo_tasks"), links, total("backlinks"), metrics)
	}
}

// testActionsUnlinkAppliesOnItsEvent: the actions service remembers that a
// client is linked (linkcache), and forgets it on the CRM's unlink event:
// an action right after the event is refused, although the link was
// remembered by the action just before.
func testActionsUnlinkAppliesOnItsEvent(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 1000, 0)
	blog := map[string]any{"action": "generate_blog", "client_id": client, "keyword": "sourdough"}
	wantAction(t, s.act(t, tn.write, blog), "generate_blog", client, "success")
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync(eventdefs.ClientUnlinked.Filter())
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.adminCall(t, "DELETE", "/admin/v1/agencies/"+tn.agency+"/clients/"+client, nil), http.StatusOK)
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("no client.unlinked event for %s: %v", client, err)
		}
		if ev, err := eventdefs.ClientUnlinked.Parse(msg.Subject, msg.Data); err == nil && ev.ClientID == client {
			break
		}
	}
	// The actions service hears the event on its own connection, a moment
	// after this test may: it must refuse within a second of it, well
	// inside the 5 s TTL, which therefore cannot be what refused.
	heard := time.Now()
	for {
		r := s.act(t, tn.write, blog)
		if r.status != http.StatusOK {
			wantError(t, r, http.StatusForbidden, "not linked to this key's agency")
			t.Logf("refused %s after the test heard the unlink event", time.Since(heard))
			return
		}
		if time.Since(heard) > time.Second {
			t.Fatalf("the unlinked client was still admitted %s after its unlink event", time.Since(heard))
		}
		time.Sleep(5 * time.Millisecond) // why sleep: polls the admission, which has no push form, until the replica has heard the event
	}
}

func testActionsAutoDeploy(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 0)
	wantStatus(t, s.adminCall(t, "PATCH", "/admin/v1/clients/"+client, map[string]any{"auto_deploy": true}), http.StatusOK)
	d := wantAction(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "brioche"}), "generate_blog", client, "success")
	if d["status"] != "published" || d["published"] != true || d["published_at"] == nil {
		t.Fatalf("generate_blog for an auto-deploy client = %v, want published", d)
	}
}

func testActionsEvents(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 0)
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("atrium.actions.completed.generate_blog")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	r := s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "bagels"})
	d := wantAction(t, r, "generate_blog", client, "success")
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("no completion event for the run: %v", err)
		}
		var ev map[string]any
		if err := json.Unmarshal(msg.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if ev["client_id"] != client {
			continue
		}
		wantKeys(t, ev, "run_id", "action", "client_id", "agency_id", "state", "status", "status_code", "data", "credits_spent", "provider_cost", "cached", "started_at", "finished_at")
		if ev["agency_id"] != tn.agency || ev["status"] != "success" || ev["status_code"] != float64(200) || ev["provider_cost"] != float64(0) || ev["cached"] != false ||
			ev["data"].(map[string]any)["id"] != d["id"] || msg.Header.Get("Nats-Msg-Id") != ev["run_id"] ||
			fmt.Sprint(ev["credits_spent"]) != "map[ai:2 data:0]" {
			t.Fatalf("completion event = %v (Nats-Msg-Id %q)", ev, msg.Header.Get("Nats-Msg-Id"))
		}
		return
	}
}

func testActionsTenancy(t *testing.T, s *stack) {
	mine, theirs := s.newTenant(t), s.newTenant(t)
	myClient := s.newClient(t, mine, true)
	s.grant(t, mine.agency, 10, 10)
	s.grant(t, theirs.agency, 10, 10)
	// Their key on my client: the same 403 as for a client that does not exist.
	wantError(t, s.act(t, theirs.write, map[string]any{"action": "generate_blog", "client_id": myClient, "keyword": "x"}), http.StatusForbidden, "not linked")
	wantAction(t, s.act(t, mine.write, map[string]any{"action": "generate_blog", "client_id": myClient, "keyword": "x"}), "generate_blog", myClient, "success")
	if ai, _ := s.credits(t, theirs.agency); ai != 10 {
		t.Fatalf("their credits moved to %v", ai)
	}
	if ai, _ := s.credits(t, mine.agency); ai != 8 {
		t.Fatalf("my credits = %v, want 8", ai)
	}
	r := s.read(t, theirs.read, params("resource", "action_runs", "client_id", myClient))
	wantError(t, r, http.StatusForbidden, "not linked")
}

// testActionRuns: every run, failed ones included, is a row of
// action_runs.
func testActionRuns(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 10)
	ok := wantAction(t, s.act(t, tn.write, map[string]any{"action": "generate_press_release", "client_id": client, "headline": "New oven"}), "generate_press_release", client, "success")
	failed := s.act(t, tn.write, map[string]any{"action": "seo_audit", "client_id": client, "url": "http://127.0.0.1:1/closed"})
	wantAction(t, failed, "seo_audit", client, "error")
	if failed.json["status_code"].(float64) < 500 {
		t.Fatalf("an unreachable page answered status_code %v", failed.json["status_code"])
	}
	if _, data := s.credits(t, tn.agency); data != 10 {
		t.Fatalf("a failed audit was charged: data credits %v", data)
	}
	var rows []any
	eventually(t, 5*time.Second, func() bool {
		r := s.read(t, tn.read, params("resource", "action_runs", "client_id", client, "order", "created_at", "direction", "asc"))
		rows = r.json["data"].([]any)
		return len(rows) == 2
	})
	first, second := rows[0].(map[string]any), rows[1].(map[string]any)
	if first["action"] != "generate_press_release" || first["status"] != "success" || first["record_id"] != ok["id"] || first["credits_ai"] != float64(1) ||
		second["action"] != "seo_audit" || second["status"] != "error" || second["credits_data"] != float64(0) || second["error"] == nil {
		t.Fatalf("action_runs = %v", rows)
	}
	r := s.read(t, tn.read, params("resource", "action_runs", "client_id", client, "filter_field", "status", "filter_value", "error"))
	if r.json["pagination"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("action_runs with status=error: %s", r)
	}
}

// testActionRunsAreTheAgencys: a client linked to two agencies is a client
// of two tenants; the runs each agency makes (its credits, its inputs) are
// its own, in the rows, the totals and the cursor pages of action_runs.
func testActionRunsAreTheAgencys(t *testing.T, s *stack) {
	a, b := s.newTenant(t), s.newTenant(t)
	client := s.newClient(t, a, true)
	wantStatus(t, s.adminCall(t, "PUT", "/admin/v1/agencies/"+b.agency+"/clients/"+client, nil), http.StatusOK)
	s.grant(t, a.agency, 10, 10)
	s.grant(t, b.agency, 10, 10)
	for _, tn := range []tenant{a, a, b} {
		wantAction(t, s.act(t, tn.write, map[string]any{"action": "generate_press_release", "client_id": client, "headline": "Secret plans of " + tn.agency}),
			"generate_press_release", client, "success")
	}
	for _, tc := range []struct {
		tn   tenant
		runs int
	}{{a, 2}, {b, 1}} {
		var r response
		eventually(t, 5*time.Second, func() bool {
			r = s.read(t, tc.tn.read, params("resource", "action_runs", "client_id", client))
			return r.json["pagination"].(map[string]any)["total"] == float64(tc.runs)
		})
		rows := r.json["data"].([]any)
		if len(rows) != tc.runs {
			t.Fatalf("agency %s reads %d runs, want its %d: %s", tc.tn.agency, len(rows), tc.runs, r)
		}
		for _, row := range rows {
			if row := row.(map[string]any); row["agency_id"] != tc.tn.agency {
				t.Fatalf("agency %s reads a run of agency %v: %v", tc.tn.agency, row["agency_id"], row)
			}
		}
		f := s.read(t, tc.tn.read, params("resource", "action_runs", "client_id", client, "filter_field", "status", "filter_value", "success"))
		if got := f.json["pagination"].(map[string]any)["total"]; got != float64(tc.runs) {
			t.Fatalf("agency %s: status=success total %v, want %d", tc.tn.agency, got, tc.runs)
		}
		// One run a page: the cursor walk stays within the agency's runs.
		seen, cursor := 0, ""
		for range 5 {
			q := params("resource", "action_runs", "client_id", client, "limit", "1")
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			page := s.read(t, tc.tn.read, q)
			wantStatus(t, page, http.StatusOK)
			for _, row := range page.json["data"].([]any) {
				seen++
				if row.(map[string]any)["agency_id"] != tc.tn.agency {
					t.Fatalf("agency %s's cursor walk reached another agency's run: %v", tc.tn.agency, row)
				}
			}
			if cursor, _ = page.json["pagination"].(map[string]any)["next_cursor"].(string); cursor == "" {
				break
			}
		}
		if seen != tc.runs {
			t.Fatalf("agency %s's cursor walk read %d runs, want %d", tc.tn.agency, seen, tc.runs)
		}
	}
}

// TestActionProviderFailures runs generation against a model server that
// fails, then one too slow for the provider timeout: status error with the
// provider's code (504 for the timeout), HTTP 200, nothing charged.
func TestActionProviderFailures(t *testing.T) {
	var mode string
	var mu sync.Mutex
	// The slow model answers when the test ends (or the caller gives up),
	// long after the provider timeout; Close waits for its handlers.
	testDone := make(chan struct{})
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		m := mode
		mu.Unlock()
		switch m {
		case "fail":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error": {"message": "model is overloaded"}}`)
		case "slow":
			select {
			case <-r.Context().Done():
			case <-testDone:
			}
		}
	}))
	defer llm.Close()
	defer close(testDone)
	s := startStack(t, "--llm-base-url="+llm.URL+"/v1", "--llm-model=test", "--provider-timeout=300ms")
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 10, 5)
	for _, c := range []struct {
		mode  string
		code  float64
		words string
	}{{"fail", 503, "overloaded"}, {"slow", 504, "300ms"}} {
		mu.Lock()
		mode = c.mode
		mu.Unlock()
		r := s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": client, "keyword": "rye"})
		d := wantAction(t, r, "generate_blog", client, "error")
		if r.json["status_code"] != c.code || !strings.Contains(fmt.Sprint(d["error"]), c.words) {
			t.Fatalf("%s model: %s", c.mode, r)
		}
		if r.header.Get("Atrium-AI-Credits-Remaining") != "10" {
			t.Fatalf("%s model: balance header %q, want 10 (nothing charged)", c.mode, r.header.Get("Atrium-AI-Credits-Remaining"))
		}
	}
	// Sending mail with no SMTP server configured is a provider failure too.
	r := s.act(t, tn.write, map[string]any{"action": "send_prospect_email", "client_id": client, "to": "a@b.example", "subject": "s", "html": "<p>x</p>"})
	if d := wantAction(t, r, "send_prospect_email", client, "error"); r.json["status_code"] != float64(503) || !strings.Contains(fmt.Sprint(d["error"]), "--smtp-addr") {
		t.Fatalf("send without SMTP = %s", r)
	}
	// Fetching this machine is refused unless --allow-private-fetch.
	wantError(t, s.act(t, tn.write, map[string]any{"action": "seo_audit", "client_id": client, "url": "http://127.0.0.1:8080/"}), 400, "private")
}

// TestActionEventsSurviveANATSOutage stops NATS, runs actions, starts NATS
// again: every completion event arrives, exactly once, in the stream.
func TestActionEventsSurviveANATSOutage(t *testing.T) {
	n := &restartableNATS{port: -1, storeDir: t.TempDir()}
	n.start(t)
	s := startStack(t, "--nats-url="+n.url())
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 100, 0)
	// One run before the outage creates the stream.
	var runs []string
	do := func() {
		r := s.act(t, tn.write, map[string]any{"action": "generate_gbp_post", "client_id": client, "topic": "fresh bread"})
		wantAction(t, r, "generate_gbp_post", client, "success")
	}
	do()
	n.stop()
	for range 5 {
		do()
	}
	n.start(t)
	defer n.stop()
	nc, err := nats.Connect(n.url())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(30 * time.Second)
	for {
		stream, err := js.Stream(t.Context(), "ATRIUM_ACTIONS")
		if err == nil {
			info, err := stream.Info(t.Context(), jetstream.WithSubjectFilter("atrium.actions.completed.>"))
			if err == nil && info.State.NumSubjects > 0 && info.State.Subjects["atrium.actions.completed.generate_gbp_post"] >= 6 {
				runs = runIDs(t, stream)
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the events of the runs during the outage did not arrive within 30s\n%s", s.logs)
		}
		time.Sleep(200 * time.Millisecond) // why sleep: polls the stream, where the events land
	}
	seen := map[string]int{}
	for _, id := range runs {
		seen[id]++
	}
	if len(runs) != 6 || len(seen) != 6 {
		t.Fatalf("stream holds %d completion events for %d runs, want 6 distinct: %v", len(runs), len(seen), seen)
	}
}

func runIDs(t *testing.T, stream jetstream.Stream) []string {
	t.Helper()
	cons, err := stream.OrderedConsumer(t.Context(), jetstream.OrderedConsumerConfig{FilterSubjects: []string{"atrium.actions.completed.>"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for {
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			var ev struct {
				RunID string `json:"run_id"`
			}
			_ = json.Unmarshal(msg.Data(), &ev)
			ids = append(ids, ev.RunID)
		}
		if n == 0 {
			return ids
		}
	}
}

// dig follows path through nested JSON objects; nil where one is missing.
func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// strs is a JSON array of strings as a slice; nil if v is not one.
func strs(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, it := range items {
		s, _ := it.(string)
		out = append(out, s)
	}
	return out
}
