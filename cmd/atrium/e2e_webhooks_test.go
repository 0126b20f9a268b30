package main

// Webhooks over HTTP, as an agency's developer meets them: endpoints
// registered with site and agency keys, every family of events delivered
// once to its own tenant's receivers and verified by the Standard Webhooks
// reference library, retries with the same webhook-id, 410 disabling,
// secret rotation, the delivery log and its replay, and tenants kept
// apart. The receivers are ours, on loopback.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	eventdefs "github.com/atrium-hq/atrium/platform/events"
)

// testRetrySchedule is the suite's retry schedule: seconds, not hours.
const testRetrySchedule = "1s,1s,1s"

// hookReceiver is an endpoint of a tenant's on loopback: it keeps every
// request and answers with the next of its answers (the last one for
// every request after).
type hookReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	answers []int
	got     []hook
	arrived chan struct{}
}

// hook is one request a receiver got.
type hook struct {
	id, timestamp, signature string
	header                   http.Header
	raw                      []byte
	body                     map[string]any
}

func (h hook) typ() string { s, _ := h.body["type"].(string); return s }

func (h hook) data() map[string]any { d, _ := h.body["data"].(map[string]any); return d }

func newHookReceiver(t *testing.T, answers ...int) *hookReceiver {
	t.Helper()
	if len(answers) == 0 {
		answers = []int{http.StatusNoContent}
	}
	r := &hookReceiver{answers: answers, arrived: make(chan struct{}, 1000)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		r.answer(w, req, raw)
	}))
	t.Cleanup(r.Close)
	return r
}

// answer records a request whose body was raw and answers it.
func (r *hookReceiver) answer(w http.ResponseWriter, req *http.Request, raw []byte) {
	h := hook{id: req.Header.Get("webhook-id"), timestamp: req.Header.Get("webhook-timestamp"),
		signature: req.Header.Get("webhook-signature"), header: req.Header.Clone(), raw: raw}
	_ = json.Unmarshal(raw, &h.body)
	r.mu.Lock()
	r.got = append(r.got, h)
	code := r.answers[min(len(r.got)-1, len(r.answers)-1)]
	r.mu.Unlock()
	r.arrived <- struct{}{}
	w.WriteHeader(code)
	fmt.Fprintf(w, "receiver answered %d", code)
}

func (r *hookReceiver) hooks() []hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// waitFor waits until the receiver has every event type of types (each at
// least once) and returns what it got.
func (r *hookReceiver) waitFor(t *testing.T, types ...string) []hook {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		got := r.hooks()
		missing := slices.DeleteFunc(slices.Clone(types), func(ty string) bool {
			return slices.ContainsFunc(got, func(h hook) bool { return h.typ() == ty })
		})
		if len(missing) == 0 {
			return got
		}
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("%s: still waiting for %v after 30 s; got %v", r.URL, missing, typesOf(got))
		}
	}
}

// waitCounts waits until the receiver has at least want[type] events of
// each type and returns what it got.
func (r *hookReceiver) waitCounts(t *testing.T, want map[string]int) []hook {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		got := r.hooks()
		count := map[string]int{}
		for _, h := range got {
			count[h.typ()]++
		}
		short := map[string]int{}
		for ty, n := range want {
			if count[ty] < n {
				short[ty] = count[ty]
			}
		}
		if len(short) == 0 {
			return got
		}
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("%s: after 30 s, of %v only %v", r.URL, want, short)
		}
	}
}

// waitCount waits until the receiver has n requests.
func (r *hookReceiver) waitCount(t *testing.T, n int) []hook {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if got := r.hooks(); len(got) >= n {
			return got
		}
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("%s: %d requests after 30 s, want %d", r.URL, len(r.hooks()), n)
		}
	}
}

func typesOf(hs []hook) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.typ()
	}
	return out
}

// verify checks h with the reference library, as a receiver does, with
// the secret (timestamp tolerance included: these are live deliveries).
func verify(t *testing.T, h hook, secret string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(h.raw, h.header); err != nil {
		t.Fatalf("delivery %s (%s) does not verify with its secret: %v\nheaders %v", h.id, h.typ(), err, h.header)
	}
}

// register creates a webhook with key and returns it, secret included.
func (s *stack) register(t *testing.T, key, url string, events ...string) map[string]any {
	t.Helper()
	r := call(t, "POST", s.api+"/api/v1/webhooks", key, map[string]any{"url": url, "events": events})
	wantStatus(t, r, http.StatusCreated)
	return r.json["webhook"].(map[string]any)
}

func (s *stack) hooksCall(t *testing.T, method, path, key string, body any) response {
	t.Helper()
	return call(t, method, s.api+"/api/v1/webhooks"+path, key, body)
}

func testWebhooksEndpoints(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	site := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "site_id": tn.site})
	agency := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency})
	agencyRead := s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": tn.agency})

	// Create: 201, every field, the secret shown once.
	r := call(t, "POST", s.api+"/api/v1/webhooks", site, map[string]any{"url": "https://hooks.example.com/rebuild",
		"events": []string{"item.published", "item.unpublished"}, "description": "Rebuild the static site"})
	wantStatus(t, r, http.StatusCreated)
	created := r.json["webhook"].(map[string]any)
	wantKeys(t, created, "id", "url", "events", "description", "enabled", "owner", "created_at", "updated_at", "secret",
		"disabled_reason", "failing_since", "previous_secret_expires_at")
	secret, _ := created["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < len("whsec_")+32 || created["enabled"] != true || created["owner"] != "site" ||
		created["disabled_reason"] != nil || created["failing_since"] != nil || created["previous_secret_expires_at"] != nil {
		t.Fatalf("created %v", created)
	}
	if _, err := standardwebhooks.NewWebhook(secret); err != nil {
		t.Fatalf("the secret %q is not one the reference library takes: %v", secret, err)
	}
	wantTimestamp(t, created, "created_at")
	id := created["id"].(string)
	disabled := call(t, "POST", s.api+"/api/v1/webhooks", agency, map[string]any{"url": "https://crm.example.com/in", "events": []string{"action_run.*", "prospect.created"}, "enabled": false})
	wantStatus(t, disabled, http.StatusCreated)
	if w := disabled.json["webhook"].(map[string]any); w["enabled"] != false || w["owner"] != "agency" {
		t.Fatalf("created disabled: %v", w)
	}

	// Get and list never show the secret; each key sees its own tenant's.
	got := s.hooksCall(t, "GET", "/"+id, site, nil)
	wantStatus(t, got, http.StatusOK)
	if _, has := got.json["webhook"].(map[string]any)["secret"]; has {
		t.Fatalf("GET shows the secret: %s", got.body)
	}
	list := s.hooksCall(t, "GET", "", site, nil)
	wantStatus(t, list, http.StatusOK)
	if hooks := list.json["webhooks"].([]any); len(hooks) != 1 || hooks[0].(map[string]any)["id"] != id {
		t.Fatalf("the site key lists %s, want its one webhook", list.body)
	}
	if _, has := list.json["webhooks"].([]any)[0].(map[string]any)["secret"]; has {
		t.Fatal("the list shows the secret")
	}
	if n := len(s.hooksCall(t, "GET", "", agencyRead, nil).json["webhooks"].([]any)); n != 1 {
		t.Fatalf("the agency's read key lists %d webhooks, want the agency's one", n)
	}
	// A key bound to both sees both.
	if n := len(s.hooksCall(t, "GET", "", tn.read, nil).json["webhooks"].([]any)); n != 2 {
		t.Fatalf("a key bound to the site and the agency lists %d webhooks, want both", n)
	}

	// PATCH changes what it names and keeps the rest.
	p := s.hooksCall(t, "PATCH", "/"+id, site, map[string]any{"events": []string{"item.*"}, "enabled": false})
	wantStatus(t, p, http.StatusOK)
	w := p.json["webhook"].(map[string]any)
	if w["enabled"] != false || fmt.Sprint(w["events"]) != "[item.*]" || w["description"] != "Rebuild the static site" || w["url"] != "https://hooks.example.com/rebuild" {
		t.Fatalf("after PATCH: %v", w)
	}
	if _, has := w["secret"]; has {
		t.Fatal("PATCH shows the secret")
	}

	// A read key may list but not write.
	wantError(t, call(t, "POST", s.api+"/api/v1/webhooks", agencyRead, map[string]any{"url": "https://x.example/h", "events": []string{"*"}}),
		http.StatusForbidden, "write")
	wantError(t, s.hooksCall(t, "DELETE", "/"+id, agencyRead, nil), http.StatusForbidden, "write")

	// Event types: every type, with its schema.
	types := call(t, "GET", s.api+"/api/v1/event-types", agencyRead, nil)
	wantStatus(t, types, http.StatusOK)
	var names []string
	for _, et := range types.json["event_types"].([]any) {
		et := et.(map[string]any)
		names = append(names, et["type"].(string))
		if schema, _ := et["schema"].(map[string]any); schema["type"] != "object" || et["description"] == "" {
			t.Fatalf("event type %v lacks a description or an object schema", et)
		}
	}
	for _, want := range []string{"item.created", "item.updated", "item.published", "item.unpublished", "item.deleted", "prospect.created",
		"prospect.updated", "deal.created", "deal.updated", "client.linked", "client.unlinked", "action_run.succeeded", "action_run.failed",
		"credits.changed", "dataset.changed", "webhook.test", "webhook.disabled"} {
		if !slices.Contains(names, want) {
			t.Errorf("GET /api/v1/event-types lacks %s", want)
		}
	}
	// ... exactly as platform/events declares them, with the schemas it
	// generates from the data types: the listing has no other source.
	var declared []map[string]any
	for _, ty := range eventdefs.WebhookTypes() {
		declared = append(declared, map[string]any{"type": ty.Name, "owner": ty.Owner, "description": ty.Description, "schema": ty.Schema()})
	}
	b, err := json.Marshal(declared)
	if err != nil {
		t.Fatal(err)
	}
	var wantTypes any
	if err := json.Unmarshal(b, &wantTypes); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(types.json["event_types"], wantTypes) {
		t.Errorf("GET /api/v1/event-types is not what platform/events declares:\n%s\nwant\n%s", types.body, b)
	}

	// DELETE, then it is gone.
	del := s.hooksCall(t, "DELETE", "/"+id, site, nil)
	wantStatus(t, del, http.StatusOK)
	wantError(t, s.hooksCall(t, "GET", "/"+id, site, nil), http.StatusNotFound, id)
}

func testWebhooksValidation(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	site := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "site_id": tn.site})
	created := s.register(t, site, "https://hooks.example.com/ok", "item.*")
	id := created["id"].(string)
	for _, c := range []struct {
		name   string
		method string
		path   string
		key    string
		body   any
		status int
		words  []string
	}{
		{"no url", "POST", "", site, map[string]any{"events": []string{"item.*"}}, 400, []string{"url"}},
		{"relative url", "POST", "", site, map[string]any{"url": "/hook", "events": []string{"item.*"}}, 400, []string{"url must be an absolute"}},
		{"ftp url", "POST", "", site, map[string]any{"url": "ftp://hooks.example.com/x", "events": []string{"item.*"}}, 400, []string{"url"}},
		{"no events", "POST", "", site, map[string]any{"url": "https://hooks.example.com/x"}, 400, []string{"events must list at least one"}},
		{"unknown event", "POST", "", site, map[string]any{"url": "https://hooks.example.com/x", "events": []string{"item.archived"}}, 400,
			[]string{`events[0] "item.archived"`, "item.created"}},
		{"agency event with a site key", "POST", "", site, map[string]any{"url": "https://hooks.example.com/x", "events": []string{"deal.created"}}, 400,
			[]string{"deal.created", "site key"}},
		{"both tenants' events with a key bound to both", "POST", "", tn.write, map[string]any{"url": "https://hooks.example.com/x",
			"events": []string{"item.created", "deal.created"}}, 400, []string{"mixes the site's and the agency's"}},
		{"* with a key bound to both", "POST", "", tn.write, map[string]any{"url": "https://hooks.example.com/x", "events": []string{"*"}}, 400,
			[]string{"does not say whose webhook this is"}},
		{"unknown field", "POST", "", site, map[string]any{"url": "https://hooks.example.com/x", "events": []string{"*"}, "secret": "mine"}, 400,
			[]string{"unknown field", "secret"}},
		{"events not strings", "PATCH", "/" + id, site, map[string]any{"events": []any{1}}, 400, []string{"events[0] must be a string"}},
		{"empty events", "PATCH", "/" + id, site, map[string]any{"events": []any{}}, 400, []string{"events must list at least one"}},
		{"description of two lines", "PATCH", "/" + id, site, map[string]any{"description": "a\nb"}, 400, []string{"description"}},
		{"rotation too long", "POST", "/" + id + "/rotate-secret", site, map[string]any{"previous_expires_in_seconds": 86401}, 400,
			[]string{"previous_expires_in_seconds must be an integer between 0 and 86400"}},
		{"bad status filter", "GET", "/" + id + "/deliveries?status=done", site, nil, 400, []string{"status must be one of pending, succeeded, failed"}},
		{"bad limit", "GET", "/" + id + "/deliveries?limit=0", site, nil, 400, []string{"limit"}},
		{"recover without since", "POST", "/" + id + "/recover", site, map[string]any{}, 400, []string{"since is required"}},
		{"recover since not a time", "POST", "/" + id + "/recover", site, map[string]any{"since": "yesterday"}, 400, []string{"since must be"}},
		{"not an id", "GET", "/not-an-id", site, nil, 404, []string{"webhook"}},
		{"no key", "GET", "", "", nil, 401, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, s.hooksCall(t, c.method, c.path, c.key, c.body), c.status, c.words...)
		})
	}
	// Nothing changed.
	got := s.hooksCall(t, "GET", "/"+id, site, nil).json["webhook"].(map[string]any)
	if fmt.Sprint(got["events"]) != "[item.*]" || got["description"] != "" || got["updated_at"] != created["updated_at"] {
		t.Fatalf("the refused requests changed the webhook: %v", got)
	}
	if n := len(s.hooksCall(t, "GET", "", site, nil).json["webhooks"].([]any)); n != 1 {
		t.Fatalf("%d webhooks after refused creations, want 1", n)
	}
}

// testWebhooksPrivateAddresses runs against a stack without
// --allow-private-fetch: plain http and private addresses are refused at
// registration.
func testWebhooksPrivateAddresses(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	key := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency})
	for _, u := range []string{"http://hooks.example.com/x", "https://127.0.0.1/x", "https://10.1.2.3/x", "https://169.254.169.254/latest",
		"https://100.64.0.1/x", "https://[::1]/x", "https://localhost/x"} {
		r := call(t, "POST", s.api+"/api/v1/webhooks", key, map[string]any{"url": u, "events": []string{"deal.*"}})
		wantError(t, r, http.StatusBadRequest, "url")
	}
	if n := len(s.hooksCall(t, "GET", "", key, nil).json["webhooks"].([]any)); n != 0 {
		t.Fatalf("%d webhooks registered at private addresses", n)
	}
}

// testWebhooksEveryFamily writes events of every family for two tenants,
// each with a site receiver and an agency receiver: every receiver gets
// each of its tenant's events once, verified, and none of the other's.
func testWebhooksEveryFamily(t *testing.T, s *stack) {
	type side struct {
		tn             tenant
		client         string
		siteRx, agency *hookReceiver
		siteSecret     string
		agencySecret   string
	}
	var sides [2]*side
	for i := range sides {
		c := s.newCMS(t)
		sd := &side{tn: c.tenant, siteRx: newHookReceiver(t), agency: newHookReceiver(t)}
		sd.siteSecret = s.register(t, c.write, sd.siteRx.URL+"/site", "item.*", "asset.*")["secret"].(string)
		sd.agencySecret = s.register(t, c.write, sd.agency.URL+"/agency", "prospect.*", "deal.*", "client.*", "action_run.*", "credits.changed",
			"dataset.changed")["secret"].(string)
		sides[i] = sd
	}
	for _, sd := range sides {
		tn := sd.tn
		// Site: an item created, updated, published, unpublished, deleted.
		c := cmsTenant{tenant: tn, base: s.api + "/api/public/v1/collections"}
		item := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Hello"}})["id"].(string)
		wantStatus(t, call(t, "PATCH", c.base+"/posts/"+item, tn.write, map[string]any{"data": map[string]any{"title": "Hello again"}}), http.StatusOK)
		wantStatus(t, call(t, "PATCH", c.base+"/posts/"+item, tn.write, map[string]any{"data": map[string]any{}, "is_published": true}), http.StatusOK)
		wantStatus(t, call(t, "PATCH", c.base+"/posts/"+item, tn.write, map[string]any{"data": map[string]any{}, "is_published": false}), http.StatusOK)
		wantStatus(t, call(t, "DELETE", c.base+"/posts/"+item, tn.write, nil), http.StatusOK)
		// Site: an item created already published is announced as
		// published too (a "rebuild on publish" hook must hear of it).
		c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Live at once"}, "is_published": true})
		// Site: an asset uploaded, changed (no webhook type), deleted.
		asset := s.newAsset(t, tn.write, "hook.png", pngBytes(t, 4, 4))["id"].(string)
		wantStatus(t, call(t, "PATCH", s.assetsURL()+"/"+asset, tn.write, map[string]any{"alt": "x"}), http.StatusOK)
		wantStatus(t, call(t, "DELETE", s.assetsURL()+"/"+asset, tn.write, nil), http.StatusOK)
		// Agency: the CRM, links, credits, runs and the datasets they write.
		prospect := s.newProspect(t, tn, "Corner Bakery")["id"].(string)
		wantStatus(t, s.adminCall(t, "PATCH", "/admin/v1/agencies/"+tn.agency+"/prospects/"+prospect, map[string]any{"pipeline_stage": "contacted"}), http.StatusOK)
		deal := s.create(t, "/admin/v1/agencies/"+tn.agency+"/deals", "deal", map[string]any{"owner_member_id": tn.member, "title": "Retainer",
			"currency": "USD", "expected_close_date": "2027-01-01"})["id"].(string)
		wantStatus(t, s.adminCall(t, "PATCH", "/admin/v1/agencies/"+tn.agency+"/deals/"+deal, map[string]any{"stage": "won"}), http.StatusOK)
		sd.client = s.newClient(t, tn, true)
		other := s.newClient(t, tn, true)
		wantStatus(t, s.adminCall(t, "DELETE", "/admin/v1/agencies/"+tn.agency+"/clients/"+other, nil), http.StatusOK)
		s.grant(t, tn.agency, 10, 10)
		wantAction(t, s.act(t, tn.write, map[string]any{"action": "generate_blog", "client_id": sd.client, "keyword": "rye"}), "generate_blog", sd.client, "success")
		wantAction(t, s.act(t, tn.write, map[string]any{"action": "seo_audit", "client_id": sd.client, "url": "http://127.0.0.1:1/closed"}), "seo_audit", sd.client, "error")
	}
	// Each write is one event: three PATCHes are three item.updated, the
	// two that change is_published one item.published and one
	// item.unpublished besides; the item created published one
	// item.created and one item.published; two clients were linked; the runs write
	// rows of more than one dataset (checked: at least one).
	siteTypes := map[string]int{"item.created": 2, "item.updated": 3, "item.published": 2, "item.unpublished": 1, "item.deleted": 1,
		"asset.created": 1, "asset.deleted": 1}
	agencyTypes := map[string]int{"prospect.created": 1, "prospect.updated": 1, "deal.created": 1, "deal.updated": 1, "client.linked": 2,
		"client.unlinked": 1, "credits.changed": 1, "action_run.succeeded": 1, "action_run.failed": 1, "dataset.changed": 1}
	for _, sd := range sides {
		for _, rx := range []struct {
			r      *hookReceiver
			secret string
			types  map[string]int
		}{{sd.siteRx, sd.siteSecret, siteTypes}, {sd.agency, sd.agencySecret, agencyTypes}} {
			got := rx.r.waitCounts(t, rx.types)
			seen := map[string]bool{}
			count := map[string]int{}
			for _, h := range got {
				verify(t, h, rx.secret)
				if seen[h.id] {
					t.Errorf("webhook-id %s (%s) delivered twice", h.id, h.typ())
				}
				seen[h.id] = true
				count[h.typ()]++
				d := h.data()
				if !sameTenant(d, sd.tn, sd.client) {
					t.Errorf("%s got %s of another tenant: %v", rx.r.URL, h.typ(), d)
				}
				if ts, _ := h.body["timestamp"].(string); !timestampRE.MatchString(ts) {
					t.Errorf("%s body timestamp %q", h.typ(), ts)
				}
			}
			for ty, n := range rx.types {
				if count[ty] != n && ty != "dataset.changed" {
					t.Errorf("%s delivered %d times to %s, want %d", ty, count[ty], rx.r.URL, n)
				}
			}
			if len(count) != len(rx.types) {
				t.Errorf("%s got types %v, want only %v", rx.r.URL, count, rx.types)
			}
		}
	}
}

// sameTenant reports whether an event's data names only tn's site or
// agency (and its client).
func sameTenant(d map[string]any, tn tenant, client string) bool {
	if site, ok := d["site_id"]; ok && site != tn.site {
		return false
	}
	if agency, ok := d["agency_id"]; ok && agency != tn.agency {
		return false
	}
	if c, ok := d["client_id"]; ok && d["agency_id"] == nil && c != client {
		return false // dataset.changed names only the client
	}
	return true
}

func testWebhooksRetriesAndGone(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	key := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency})
	flaky := newHookReceiver(t, http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusOK)
	gone := newHookReceiver(t, http.StatusGone)
	watcher := newHookReceiver(t)
	flakyHook := s.register(t, key, flaky.URL, "deal.*")
	goneHook := s.register(t, key, gone.URL, "deal.*")
	watcherHook := s.register(t, key, watcher.URL, "webhook.disabled")
	s.create(t, "/admin/v1/agencies/"+tn.agency+"/deals", "deal", map[string]any{"owner_member_id": tn.member, "title": "Flaky",
		"currency": "USD", "expected_close_date": "2027-01-01"})

	// Retried on the schedule with the same webhook-id, each signed anew.
	got := flaky.waitCount(t, 3)
	for i, h := range got {
		verify(t, h, flakyHook["secret"].(string))
		if h.id != got[0].id {
			t.Fatalf("attempt %d has webhook-id %s, the first %s", i+1, h.id, got[0].id)
		}
	}
	// The log shows three attempts, the last one the success.
	var d map[string]any
	eventually(t, 10*time.Second, func() bool {
		ds := s.hooksCall(t, "GET", "/"+flakyHook["id"].(string)+"/deliveries", key, nil).json["deliveries"].([]any)
		d = ds[0].(map[string]any)
		return d["status"] == "succeeded"
	})
	attempts := d["attempts"].([]any)
	if len(attempts) != 3 || attempts[0].(map[string]any)["status_code"] != float64(503) || attempts[2].(map[string]any)["status_code"] != float64(200) ||
		!strings.Contains(attempts[0].(map[string]any)["response_body"].(string), "receiver answered 503") || d["next_attempt_at"] != nil {
		t.Fatalf("the delivery log after 503, 500, 200: %v", d)
	}

	// 410 disables the endpoint and the tenant's other endpoint hears it.
	disabled := watcher.waitFor(t, "webhook.disabled")[0]
	verify(t, disabled, watcherHook["secret"].(string))
	if disabled.data()["webhook_id"] != goneHook["id"] || !strings.Contains(disabled.data()["reason"].(string), "410") {
		t.Fatalf("webhook.disabled data %v", disabled.data())
	}
	after := s.hooksCall(t, "GET", "/"+goneHook["id"].(string), key, nil).json["webhook"].(map[string]any)
	if after["enabled"] != false || !strings.Contains(fmt.Sprint(after["disabled_reason"]), "410") {
		t.Fatalf("after a 410 the webhook is %v", after)
	}
	if n := len(gone.hooks()); n != 1 {
		t.Fatalf("the endpoint that answered 410 got %d requests, want 1", n)
	}
	// Enabled again by its owner, it receives again.
	wantStatus(t, s.hooksCall(t, "PATCH", "/"+goneHook["id"].(string), key, map[string]any{"enabled": true}), http.StatusOK)
	if w := s.hooksCall(t, "GET", "/"+goneHook["id"].(string), key, nil).json["webhook"].(map[string]any); w["disabled_reason"] != nil {
		t.Fatalf("re-enabled webhook still says %v", w["disabled_reason"])
	}
}

func testWebhooksRotation(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	key := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency})
	rx := newHookReceiver(t)
	hook := s.register(t, key, rx.URL, "prospect.created")
	id, old := hook["id"].(string), hook["secret"].(string)
	r := s.hooksCall(t, "POST", "/"+id+"/rotate-secret", key, map[string]any{"previous_expires_in_seconds": 3600})
	wantStatus(t, r, http.StatusOK)
	rotated := r.json["webhook"].(map[string]any)
	newSecret, _ := rotated["secret"].(string)
	if !strings.HasPrefix(newSecret, "whsec_") || newSecret == old || rotated["previous_secret_expires_at"] == nil {
		t.Fatalf("rotated %v", rotated)
	}
	s.newProspect(t, tn, "Rotating Bakery")
	h := rx.waitFor(t, "prospect.created")[0]
	if n := len(strings.Fields(h.signature)); n != 2 {
		t.Fatalf("during the overlap the signature header has %d signatures, want 2: %q", n, h.signature)
	}
	verify(t, h, newSecret) // a receiver that switched
	verify(t, h, old)       // and one that has not yet

	// With no overlap, only the new secret signs.
	r = s.hooksCall(t, "POST", "/"+id+"/rotate-secret", key, map[string]any{"previous_expires_in_seconds": 0})
	wantStatus(t, r, http.StatusOK)
	third := r.json["webhook"].(map[string]any)["secret"].(string)
	test := s.hooksCall(t, "POST", "/"+id+"/test", key, nil)
	wantStatus(t, test, http.StatusOK)
	sent := rx.waitFor(t, "webhook.test")
	last := sent[len(sent)-1]
	if n := len(strings.Fields(last.signature)); n != 1 {
		t.Fatalf("after a rotation without overlap: %d signatures", n)
	}
	verify(t, last, third)
	wh, _ := standardwebhooks.NewWebhook(newSecret)
	if wh.Verify(last.raw, last.header) == nil {
		t.Fatal("the rotated-out secret still verifies after its overlap was set to 0")
	}
}

func testWebhooksLogAndReplay(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	key := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency})
	down := newHookReceiver(t, http.StatusInternalServerError) // fails every attempt of the schedule
	hook := s.register(t, key, down.URL, "prospect.*")
	id := hook["id"].(string)

	// The test event is sent at once and answered with its delivery.
	test := s.hooksCall(t, "POST", "/"+id+"/test", key, nil)
	wantStatus(t, test, http.StatusOK)
	d := test.json["delivery"].(map[string]any)
	wantKeys(t, d, "id", "event_id", "event_type", "status", "attempts", "next_attempt_at", "created_at", "payload")
	a := d["attempts"].([]any)[0].(map[string]any)
	wantKeys(t, a, "at", "status_code", "duration_ms", "response_body", "error")
	if d["event_type"] != "webhook.test" || d["status"] != "pending" || a["status_code"] != float64(500) || d["next_attempt_at"] == nil {
		t.Fatalf("the test's delivery: %v", d)
	}

	for i := range 3 {
		s.newProspect(t, tn, fmt.Sprint("Logged Bakery ", i))
	}
	// Four attempts each (the schedule has three retries), then failed.
	var failed []any
	eventually(t, 30*time.Second, func() bool {
		failed = s.hooksCall(t, "GET", "/"+id+"/deliveries?status=failed", key, nil).json["deliveries"].([]any)
		return len(failed) == 4
	})
	// Pages of 2 with the cursor, newest first, each delivery once.
	var seen []string
	path := "/" + id + "/deliveries?status=failed&limit=2"
	for next := ""; ; {
		r := s.hooksCall(t, "GET", path+next, key, nil)
		wantStatus(t, r, http.StatusOK)
		for _, d := range r.json["deliveries"].([]any) {
			seen = append(seen, d.(map[string]any)["id"].(string))
		}
		c, ok := r.json["next_cursor"].(string)
		if !ok {
			break
		}
		next = "&cursor=" + c
	}
	if len(seen) != 4 || !slices.IsSortedFunc(seen, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Fatalf("paged %v, want the 4 failed deliveries newest first", seen)
	}
	first := failed[0].(map[string]any)
	if n := len(first["attempts"].([]any)); n != 4 {
		t.Fatalf("a failed delivery has %d attempts, want 4 (1 + 3 retries)", n)
	}
	received := len(down.hooks())

	// Retry one: sent at once with the same webhook-id, answered.
	down.mu.Lock()
	down.answers = []int{http.StatusOK}
	down.mu.Unlock()
	r := s.hooksCall(t, "POST", "/"+id+"/deliveries/"+first["id"].(string)+"/retry", key, nil)
	wantStatus(t, r, http.StatusOK)
	if rd := r.json["delivery"].(map[string]any); rd["status"] != "succeeded" || len(rd["attempts"].([]any)) != 5 {
		t.Fatalf("retried delivery %v", rd)
	}
	got := down.waitCount(t, received+1)
	if got[len(got)-1].id != first["event_id"] {
		t.Fatalf("the retry carries webhook-id %s, want the event's %s", got[len(got)-1].id, first["event_id"])
	}

	// Recover the rest of the window: every other failed one, once each.
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	rec := s.hooksCall(t, "POST", "/"+id+"/recover", key, map[string]any{"since": since})
	wantStatus(t, rec, http.StatusOK)
	if rec.json["recovered"] != float64(3) {
		t.Fatalf("recover = %s, want the 3 failed deliveries left", rec.body)
	}
	eventually(t, 15*time.Second, func() bool {
		ds := s.hooksCall(t, "GET", "/"+id+"/deliveries?status=succeeded", key, nil).json["deliveries"].([]any)
		return len(ds) == 4
	})
	// The replays did not repeat the writes: still 3 prospects.
	if n := len(s.list(t, "/api/v1/prospects", tn.read)); n != 3 {
		t.Fatalf("%d prospects after the replays, want 3", n)
	}
}

// testWebhooksTenancy: every route with another tenant's webhook and
// delivery ids answers 404, and changes nothing.
func testWebhooksTenancy(t *testing.T, s *stack) {
	mine, theirs := s.newTenant(t), s.newTenant(t)
	myKey := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": mine.agency})
	theirKey := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": theirs.agency, "site_id": theirs.site})
	rx := newHookReceiver(t)
	hook := s.register(t, myKey, rx.URL, "prospect.*")
	id := hook["id"].(string)
	wantStatus(t, s.hooksCall(t, "POST", "/"+id+"/test", myKey, nil), http.StatusOK)
	delivery := s.hooksCall(t, "GET", "/"+id+"/deliveries", myKey, nil).json["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/" + id, nil},
		{"PATCH", "/" + id, map[string]any{"enabled": false}},
		{"POST", "/" + id + "/rotate-secret", map[string]any{}},
		{"POST", "/" + id + "/test", nil},
		{"GET", "/" + id + "/deliveries", nil},
		{"POST", "/" + id + "/deliveries/" + delivery + "/retry", nil},
		{"POST", "/" + id + "/recover", map[string]any{"since": "2026-01-01T00:00:00Z"}},
		{"DELETE", "/" + id, nil},
	} {
		wantError(t, s.hooksCall(t, c.method, c.path, theirKey, c.body), http.StatusNotFound, id)
	}
	if n := len(s.hooksCall(t, "GET", "", theirKey, nil).json["webhooks"].([]any)); n != 0 {
		t.Fatalf("another tenant lists %d webhooks", n)
	}
	// Their prospect reaches no receiver of mine.
	s.newProspect(t, theirs, "Their Bakery")
	s.newProspect(t, mine, "My Bakery")
	got := rx.waitFor(t, "prospect.created")
	for _, h := range got {
		if d := h.data(); h.typ() == "prospect.created" && d["agency_id"] != mine.agency {
			t.Fatalf("my receiver got another agency's prospect: %v", d)
		}
	}
	w := s.hooksCall(t, "GET", "/"+id, myKey, nil).json["webhook"].(map[string]any)
	if w["enabled"] != true || w["updated_at"] != hook["updated_at"] {
		t.Fatalf("another tenant's calls changed my webhook: %v", w)
	}
}

// testWebhooksHangingEndpoint: an endpoint that never answers, with a
// backlog of deliveries, does not delay another tenant's: that one
// receives within a second of the write.
func testWebhooksHangingEndpoint(t *testing.T, s *stack) {
	stuck, other := s.newTenant(t), s.newTenant(t)
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hanging.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers return, then the server closes
	stuckKey := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": stuck.agency})
	s.register(t, stuckKey, hanging.URL, "prospect.*")
	for i := range 12 {
		s.newProspect(t, stuck, fmt.Sprint("Stuck Bakery ", i))
	}
	rx := newHookReceiver(t)
	otherKey := s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": other.agency})
	s.register(t, otherKey, rx.URL, "prospect.created")
	written := time.Now()
	s.newProspect(t, other, "Punctual Bakery")
	rx.waitFor(t, "prospect.created")
	if took := time.Since(written); took > time.Second {
		t.Fatalf("the healthy endpoint received %s after the write, behind a hanging one; want within a second", took)
	}
}
