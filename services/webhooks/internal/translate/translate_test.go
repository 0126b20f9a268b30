package translate_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
	"github.com/atrium-hq/atrium/services/webhooks/internal/translate"
)

const (
	site   = "0192f7c4-0000-7000-8000-000000000001"
	agency = "0192f7c4-0000-7000-8000-000000000002"
	client = "0192f7c4-0000-7000-8000-000000000003"
	item   = "0192f7c4-0000-7000-8000-000000000004"
	run    = "0192f7c4-0000-7000-8000-000000000005"
)

var at = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// TestEveryFamilyTranslates: each family's stream event, with the payload
// docs/events.md gives it, becomes its webhook type, addressed to the right
// tenant, with exactly the fields of the type's schema: the run's article
// and the event's own time stay out.
func TestEveryFamilyTranslates(t *testing.T) {
	assetPayload := `{"id":"` + item + `","site_id":"` + site + `","filename":"hero.png","content_type":"image/png","size":1234,"sha256":"ab","at":"2026-11-25T10:00:00Z"}`
	itemPayload := `{"id":"` + item + `","site_id":"` + site + `","collection":"posts","collection_id":"c","is_published":true,"version":3,"at":"2026-11-25T10:00:00Z"}`
	for _, tc := range []struct {
		subject, payload string
		typ              string
		aud              translate.Audience
	}{
		{"atrium.collections." + site + ".posts.item.created", itemPayload, "item.created", translate.Audience{Kind: eventtypes.Site, ID: site}},
		{"atrium.collections." + site + ".posts.item.published", itemPayload, "item.published", translate.Audience{Kind: eventtypes.Site, ID: site}},
		{"atrium.collections." + site + ".posts.item.deleted", itemPayload, "item.deleted", translate.Audience{Kind: eventtypes.Site, ID: site}},
		{"atrium.collections." + site + ".asset.created", assetPayload, "asset.created", translate.Audience{Kind: eventtypes.Site, ID: site}},
		{"atrium.collections." + site + ".asset.deleted", assetPayload, "asset.deleted", translate.Audience{Kind: eventtypes.Site, ID: site}},
		// A collection whose slug is "asset": its items are items.
		{"atrium.collections." + site + ".asset.item.created", strings.Replace(itemPayload, `"posts"`, `"asset"`, 1), "item.created", translate.Audience{Kind: eventtypes.Site, ID: site}},
		{"atrium.crm.prospect.created", `{"id":"p","agency_id":"` + agency + `","at":"2026-11-25T10:00:00Z"}`, "prospect.created", translate.Audience{Kind: eventtypes.Agency, ID: agency}},
		{"atrium.crm.deal.updated", `{"id":"d","agency_id":"` + agency + `","at":"2026-11-25T10:00:00Z"}`, "deal.updated", translate.Audience{Kind: eventtypes.Agency, ID: agency}},
		{"atrium.crm.client.linked", `{"agency_id":"` + agency + `","client_id":"` + client + `","at":"2026-11-25T10:00:00Z"}`, "client.linked", translate.Audience{Kind: eventtypes.Agency, ID: agency}},
		{"atrium.crm.client.unlinked", `{"agency_id":"` + agency + `","client_id":"` + client + `","at":"2026-11-25T10:00:00Z"}`, "client.unlinked", translate.Audience{Kind: eventtypes.Agency, ID: agency}},
		{"atrium.actions.completed.generate_blog", `{"run_id":"` + run + `","action":"generate_blog","client_id":"` + client + `","agency_id":"` + agency + `","status":"success","status_code":200,"data":{"body":"a long article"},"credits_spent":{"ai":1,"data":0},"provider_cost":0,"cached":false,"started_at":"2026-11-25T10:00:00Z","finished_at":"2026-11-25T10:00:01Z"}`,
			"action_run.succeeded", translate.Audience{Kind: eventtypes.Agency, ID: agency}},
		{"atrium.actions.completed.seo_audit", `{"run_id":"` + run + `","action":"seo_audit","client_id":"` + client + `","agency_id":"` + agency + `","status":"error","status_code":502,"data":{"error":"x"},"credits_spent":{"ai":0,"data":0},"provider_cost":0,"cached":false,"started_at":"2026-11-25T10:00:00Z","finished_at":"2026-11-25T10:00:01Z"}`,
			"action_run.failed", translate.Audience{Kind: eventtypes.Agency, ID: agency}},
		{"atrium.actions.completed.seo_audit", `{"run_id":"` + run + `","action":"seo_audit","client_id":"` + client + `","agency_id":"` + agency + `","state":"canceled","status":"canceled","status_code":499,"data":{"error":"x"},"credits_spent":{"ai":0,"data":0},"provider_cost":0,"cached":false,"started_at":"2026-11-25T10:00:00Z","finished_at":"2026-11-25T10:00:01Z"}`,
			"action_run.canceled", translate.Audience{Kind: eventtypes.Agency, ID: agency}},
		{"atrium.actions.credits.changed", `{"agency_id":"` + agency + `","added":{"ai":5,"data":0},"balance":{"ai":10,"data":3},"at":"2026-11-25T10:00:00Z"}`, "credits.changed", translate.Audience{Kind: eventtypes.Agency, ID: agency}},
		{"atrium.data.rows.updated", `{"client_id":"` + client + `","resource":"blogs","count":1,"at":"2026-11-25T10:00:00Z"}`, "dataset.changed", translate.Audience{Kind: translate.Client, ID: client}},
		{"atrium.webhooks.webhook.disabled", `{"webhook_id":"` + item + `","owner":"site","tenant_id":"` + site + `","url":"https://hooks.example.com/x","reason":"the endpoint answered 410 Gone","disabled_at":"2026-11-25T10:00:00Z"}`,
			"webhook.disabled", translate.Audience{Kind: eventtypes.Site, ID: site}},
	} {
		ev, ok, err := translate.Translate("evt", tc.subject, []byte(tc.payload), at)
		if err != nil || !ok {
			t.Errorf("%s: %v, %v; want a %s event", tc.subject, ok, err, tc.typ)
			continue
		}
		if ev.Type != tc.typ || ev.Audience != tc.aud || ev.ID != "evt" {
			t.Errorf("%s: %s to %+v (id %s); want %s to %+v", tc.subject, ev.Type, ev.Audience, ev.ID, tc.typ, tc.aud)
		}
		ty, _ := eventtypes.Lookup(ev.Type)
		props := ty.Data["properties"].(map[string]any)
		for f := range ev.Data {
			if _, ok := props[f]; !ok {
				t.Errorf("%s: data field %q is not in the %s schema", tc.subject, f, ev.Type)
			}
		}
		for _, f := range ty.Data["required"].([]string) {
			if _, ok := ev.Data[f]; !ok {
				t.Errorf("%s: data lacks the required %q", tc.subject, f)
			}
		}
	}
}

// TestOthersTranslateToNothing: events no webhook type announces are
// skipped, and a payload without its promised fields is an error.
func TestOthersTranslateToNothing(t *testing.T) {
	for _, subject := range []string{"atrium.crm.key.created", "atrium.collections.site.created", "atrium.collections.collection.updated", "atrium.crm.agency.created",
		// An asset's PATCH is on the stream, but no webhook type announces it.
		"atrium.collections." + site + ".asset.updated"} {
		if _, ok, err := translate.Translate("e", subject, []byte(`{"id":"x","at":"y"}`), at); ok || err != nil {
			t.Errorf("%s: %v, %v; want skipped", subject, ok, err)
		}
	}
	if _, _, err := translate.Translate("e", "atrium.crm.prospect.created", []byte(`{"id":"p"}`), at); err == nil {
		t.Error("a prospect event without agency_id translated")
	}
	if _, _, err := translate.Translate("e", "atrium.webhooks.webhook.disabled", []byte(`{"webhook_id":"w","owner":"client","tenant_id":"c","url":"u","reason":"r","disabled_at":"t"}`), at); err == nil {
		t.Error("a webhook.disabled event owned by neither a site nor an agency translated")
	}
	if _, _, err := translate.Translate("e", "atrium.crm.prospect.created", []byte(`[1]`), at); err == nil {
		t.Error("a payload that is not an object translated")
	}
}

// TestBodyIsStandardWebhooks: the delivery body is {"type", "timestamp",
// "data"} with an RFC 3339 timestamp.
func TestBodyIsStandardWebhooks(t *testing.T) {
	ev, _, err := translate.Translate("e", "atrium.crm.deal.created", []byte(`{"id":"d","agency_id":"`+agency+`","at":"2026-11-25T10:00:00Z"}`), at)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ev.Body()
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	_ = json.Unmarshal(b, &got)
	_ = json.Unmarshal([]byte(`{"type":"deal.created","timestamp":"2026-11-25T10:00:00Z","data":{"id":"d","agency_id":"`+agency+`"}}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("body %s, want %v", b, want)
	}
}
