package events_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/events"
)

var update = flag.Bool("update", false, "rewrite testdata/event-types.json from the catalog")

// TestEventTypesAreAsServed: the webhook types and the JSON Schemas
// generated from their data types are what GET /api/v1/event-types has
// served since the types were written by hand (testdata/event-types.json,
// that listing): moving them here changed nothing a client sees. A
// deliberate change is made with -update and shows in review.
func TestEventTypesAreAsServed(t *testing.T) {
	var got []map[string]any
	for _, ty := range events.WebhookTypes() {
		got = append(got, map[string]any{"type": ty.Name, "owner": ty.Owner, "description": ty.Description, "schema": ty.Schema()})
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/event-types.json", append(b, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/event-types.json")
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("the event types differ from testdata/event-types.json:\n%s", b)
	}
}

// sample returns a value of t with every field set, each string to a
// value of its own that can be part of a subject.
func sample(t reflect.Type, n *int) reflect.Value {
	v := reflect.New(t).Elem()
	switch {
	case t == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 11, 29, 3, 0, *n, 0, time.UTC)))
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			*n++
			v.Field(i).Set(sample(t.Field(i).Type, n))
		}
	case t.Kind() == reflect.String:
		v.SetString(fmt.Sprintf("v%d", *n))
	case t.Kind() == reflect.Bool:
		v.SetBool(true)
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		v.SetInt(int64(*n))
	case t.Kind() == reflect.Float64:
		v.SetFloat(0.25)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		v.Set(reflect.ValueOf([]string{fmt.Sprintf("v%d", *n)}))
	case t.Kind() == reflect.Map:
		v.Set(reflect.ValueOf(map[string]any{"title": "x"}))
	case t.Kind() == reflect.Pointer:
		v.Set(sample(t.Elem(), n).Addr())
	default:
		panic(t)
	}
	return v
}

// published is what a publisher of d would put on the stream for p.
func published(t *testing.T, d events.Definition, p reflect.Value) (subject string, payload []byte) {
	t.Helper()
	out := reflect.ValueOf(d).MethodByName("Marshal").Call([]reflect.Value{p})
	if err, _ := out[2].Interface().(error); err != nil {
		t.Fatalf("%s: %v", d.Pattern(), err)
	}
	return out[0].String(), out[1].Bytes()
}

// TestEveryDefinitionRoundTrips: what a publisher marshals from a payload is
// found again by its subject, passes the strict check, and, when a webhook
// type announces it, becomes a webhook event for a tenant; every webhook
// type but the test event is what some event becomes.
func TestEveryDefinitionRoundTrips(t *testing.T) {
	announced := map[string]bool{}
	for _, d := range events.Definitions() {
		n := 0
		p := sample(d.Payload(), &n)
		for _, status := range []string{"success", "error", "canceled"} {
			if f := p.FieldByName("Status"); f.IsValid() {
				f.SetString(status)
			}
			if f := p.FieldByName("Owner"); f.IsValid() {
				f.SetString("agency")
			}
			subject, payload := published(t, d, p)
			if found, ok := events.Find(subject); !ok || found != d {
				t.Errorf("%s: %s is found as %v", d.Pattern(), subject, found)
			}
			if !d.Matches(subject) || d.Matches(subject+".x") || d.Matches(strings.TrimSuffix(subject, "."+subject[strings.LastIndexByte(subject, '.')+1:])) {
				t.Errorf("%s does not match %s alone", d.Pattern(), subject)
			}
			if err := events.Check(subject, payload); err != nil {
				t.Errorf("%s: %v", d.Pattern(), err)
			}
			w, ok, err := events.ToWebhook(subject, payload)
			if err != nil || ok != d.Announced() {
				t.Errorf("%s: webhook %v, %v; announced %v", d.Pattern(), ok, err, d.Announced())
			}
			if ok {
				announced[w.Type] = true
				if w.To.ID == "" {
					t.Errorf("%s: webhook for no tenant", d.Pattern())
				}
			}
		}
	}
	for _, ty := range events.WebhookTypes() {
		if !announced[ty.Name] && ty.Name != events.WebhookTest.Name() {
			t.Errorf("no event becomes %s", ty.Name)
		}
	}
}

// TestCheckIsStrict: an event that does not match its definition is an
// error naming what is wrong; the lenient parse of the webhooks service
// ignores only a field it does not know.
func TestCheckIsStrict(t *testing.T) {
	const site, agency = "0192f7c4-0000-7000-8000-000000000001", "0192f7c4-0000-7000-8000-000000000002"
	item := `"id":"i","site_id":"` + site + `","collection":"posts","collection_id":"c","is_published":true,"version":3,"at":"2026-11-25T10:00:00Z"`
	itemSubject := "atrium.collections." + site + ".posts.item.created"
	for _, tc := range []struct {
		subject, payload, say string
	}{
		{"atrium.crm.nothing.created", `{}`, "no event definition matches"},
		{"atrium.crm.prospect.created.again", `{}`, "no event definition matches"},
		{itemSubject, `{` + item + `,"extra":1}`, `"extra", which its definition does not`},
		{itemSubject, `{"id":"i","site_id":"` + site + `","collection":"posts","is_published":true,"version":3,"at":"2026-11-25T10:00:00Z"}`, `has no "collection_id"`},
		{itemSubject, strings.Replace(`{`+item+`}`, `"version":3`, `"version":"3"`, 1), "version"},
		{itemSubject, strings.Replace(`{`+item+`}`, `"version":3`, `"version":null`, 1), `"version" null`},
		{"atrium.collections." + site + ".pages.item.created", `{` + item + `}`, `the subject says collection "pages", the payload "posts"`},
		{"atrium.crm.prospect.created", `[1]`, "not a JSON object"},
		{"atrium.actions.credits.changed", `{"agency_id":"` + agency + `","added":{"ai":1},"balance":{"ai":1,"data":0},"at":"2026-11-25T10:00:00Z"}`, `has no "added.data"`},
		{"atrium.actions.credits.changed", `{"agency_id":"` + agency + `","added":{"ai":1,"data":0,"x":1},"balance":{"ai":1,"data":0},"at":"2026-11-25T10:00:00Z"}`, `"added.x", which`},
		{"atrium.crm.prospect.created", `{"id":"p","agency_id":"` + agency + `","at":"yesterday"}`, "at"},
	} {
		err := events.Check(tc.subject, []byte(tc.payload))
		if err == nil || !strings.Contains(err.Error(), tc.say) || !strings.Contains(err.Error(), tc.subject) {
			t.Errorf("Check(%s, %s) = %v, want an error naming the subject and saying %q", tc.subject, tc.payload, err, tc.say)
		}
	}
	// A newer publisher's extra field: the webhooks service still delivers.
	w, ok, err := events.ToWebhook(itemSubject, []byte(`{`+item+`,"extra":1}`))
	if err != nil || !ok || w.Type != "item.created" || w.To != (events.Tenant{Kind: events.Site, ID: site}) {
		t.Errorf("lenient parse: %+v, %v, %v", w, ok, err)
	}
	// A completion published before runs had a state: its state is its status.
	w, ok, err = events.ToWebhook("atrium.actions.completed.seo_audit", []byte(`{"run_id":"r","action":"seo_audit","client_id":"c","agency_id":"`+agency+`","status":"error","status_code":502,"data":{"error":"x"},"credits_spent":{"ai":0,"data":0},"provider_cost":0,"cached":false,"started_at":"2026-11-25T10:00:00Z","finished_at":"2026-11-25T10:00:01Z"}`))
	if err != nil || !ok || w.Type != "action_run.failed" || w.Data.(events.RunData).State != "error" {
		t.Errorf("completion without a state: %+v, %v, %v", w, ok, err)
	}
}

// TestSubjectsAreOneTokenPerField: a value that would change the
// subject's shape is refused when the event is built, not published to a
// subject no consumer expects.
func TestSubjectsAreOneTokenPerField(t *testing.T) {
	for _, slug := range []string{"", "a.b", "a*", ">", "a b"} {
		if _, _, err := events.ItemCreated.Marshal(events.ItemEvent{SiteID: "s", Collection: slug}); err == nil || !strings.Contains(err.Error(), "collection") {
			t.Errorf("collection %q: %v", slug, err)
		}
	}
	s, err := events.ItemCreated.Subject(events.ItemEvent{SiteID: "s1", Collection: "asset"})
	if err != nil || s != "atrium.collections.s1.asset.item.created" {
		t.Fatalf("subject %q, %v", s, err)
	}
	// A collection whose slug is "asset": its items are items, not assets.
	if d, _ := events.Find(s); d != events.ItemCreated {
		t.Errorf("%s found as %v", s, d)
	}
	if d, _ := events.Find("atrium.collections.s1.asset.created"); d != events.AssetCreated {
		t.Errorf("an asset subject found as %v", d)
	}
	if events.ItemCreated.Filter() != "atrium.collections.*.*.item.created" || events.RunCompleted.Pattern() != "atrium.actions.completed.{action}" {
		t.Errorf("filter %s, pattern %s", events.ItemCreated.Filter(), events.RunCompleted.Pattern())
	}
}

// TestEveryDefinitionIsInAStream: each subject is held by the stream of
// the service that publishes it.
func TestEveryDefinitionIsInAStream(t *testing.T) {
	for _, d := range events.Definitions() {
		s, ok := events.StreamOf(d.Pattern())
		if !ok || !strings.HasPrefix(d.Pattern(), strings.TrimSuffix(s.Subjects, ">")) {
			t.Errorf("%s: stream %+v", d.Pattern(), s)
		}
	}
}

// BenchmarkToWebhook is the webhooks service's cost per event of an item
// event: finding its definition, parsing its payload, building the data.
func BenchmarkToWebhook(b *testing.B) {
	subject, payload, err := events.ItemPublished.Marshal(events.ItemEvent{ID: "0192f7c4-0000-7000-8000-000000000004", SiteID: "0192f7c4-0000-7000-8000-000000000001",
		Collection: "posts", IsPublished: true, Version: 3, At: time.Now(), CollectionID: "0192f7c4-0000-7000-8000-000000000009"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := events.ToWebhook(subject, payload); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestEveryEventIsDocumented: docs/events.md lists every definition's
// subject and nothing else, and docs/webhooks.md every webhook type, so
// that readers outside Go have the same contract.
func TestEveryEventIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if subject, ok := strings.CutPrefix(line, "| `atrium."); ok {
			documented["atrium."+subject[:strings.IndexByte(subject, '`')]] = true
		}
	}
	for _, d := range events.Definitions() {
		// The docs call a collection's slug <slug>, the other placeholders
		// by their field's name.
		subject := strings.NewReplacer("{collection}", "<slug>", "{", "<", "}", ">").Replace(d.Pattern())
		if !documented[subject] {
			t.Errorf("docs/events.md does not list %s", subject)
		}
		delete(documented, subject)
	}
	for subject := range documented {
		t.Errorf("docs/events.md lists %s, which no definition has", subject)
	}
	hooks, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ty := range events.WebhookTypes() {
		if !strings.Contains(string(hooks), "`"+ty.Name+"`") {
			t.Errorf("docs/webhooks.md does not name %s", ty.Name)
		}
	}
}
