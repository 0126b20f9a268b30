package eventtypes_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
)

// TestCatalogIsTheIssues: the catalog holds exactly the event types
// issues 14 and 16 name, each once, with a description and an object schema whose
// required fields are among its properties.
func TestCatalogIsTheIssues(t *testing.T) {
	want := []string{"item.created", "item.updated", "item.published", "item.unpublished", "item.deleted", "asset.created", "asset.deleted",
		"prospect.created", "prospect.updated", "deal.created", "deal.updated", "client.linked", "client.unlinked",
		"action_run.succeeded", "action_run.failed", "action_run.canceled", "credits.changed", "schedule.run_skipped", "schedule.paused", "dataset.changed", "report.ready", "webhook.test", "webhook.disabled"}
	var got []string
	for _, ty := range eventtypes.All {
		got = append(got, ty.Name)
		if ty.Description == "" {
			t.Errorf("%s has no description", ty.Name)
		}
		if _, err := json.Marshal(ty.Data); err != nil {
			t.Errorf("%s: schema does not marshal: %v", ty.Name, err)
		}
		props, _ := ty.Data["properties"].(map[string]any)
		req, _ := ty.Data["required"].([]string)
		if ty.Data["type"] != "object" || len(props) == 0 {
			t.Errorf("%s: data schema is not an object with properties", ty.Name)
		}
		for _, r := range req {
			if _, ok := props[r]; !ok {
				t.Errorf("%s: required field %q is not a property", ty.Name, r)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("event types %v, want %v", got, want)
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "item.created", true},
		{"item.*", "item.created", true},
		{"item.*", "items.created", false},
		{"action_run.*", "action_run.failed", true},
		{"item.created", "item.created", true},
		{"item.created", "item.updated", false},
		{"item", "item.created", false},
	} {
		if got := eventtypes.Matches(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// TestSubscriptionsAreTheOwners: a site's endpoints subscribe to item
// events and the webhooks' own; an agency's to the rest; a wrong pattern's
// error names it and lists what is allowed.
func TestSubscriptionsAreTheOwners(t *testing.T) {
	ok := []struct {
		owner    eventtypes.Owner
		patterns []string
	}{
		{eventtypes.Site, []string{"item.published", "item.*", "webhook.*", "*"}},
		{eventtypes.Agency, []string{"action_run.*", "credits.changed", "dataset.changed", "client.*", "webhook.disabled"}},
	}
	for _, c := range ok {
		if err := eventtypes.CheckSubscription(c.owner, c.patterns); err != nil {
			t.Errorf("%s %v: %v", c.owner, c.patterns, err)
		}
	}
	bad := []struct {
		owner    eventtypes.Owner
		patterns []string
		say      string
	}{
		{eventtypes.Site, nil, "at least one"},
		{eventtypes.Site, []string{"prospect.created"}, `events[0] "prospect.created" matches no event type a site key's endpoints receive`},
		{eventtypes.Agency, []string{"action_run.*", "item.*"}, `events[1] "item.*"`},
		{eventtypes.Agency, []string{"action_run"}, "a prefix of them followed by .*"},
		{eventtypes.Agency, []string{"nope.*"}, "allowed: prospect.created"},
	}
	for _, c := range bad {
		err := eventtypes.CheckSubscription(c.owner, c.patterns)
		if err == nil || !strings.Contains(err.Error(), c.say) {
			t.Errorf("%s %v = %v, want an error saying %q", c.owner, c.patterns, err, c.say)
		}
	}
}

// TestOwnersOf: which tenant a list of patterns speaks for, for keys bound
// to both a site and an agency.
func TestOwnersOf(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		want     []eventtypes.Owner
	}{
		{[]string{"item.published"}, []eventtypes.Owner{eventtypes.Site}},
		{[]string{"item.*", "webhook.disabled"}, []eventtypes.Owner{eventtypes.Site}},
		{[]string{"action_run.*", "credits.changed"}, []eventtypes.Owner{eventtypes.Agency}},
		{[]string{"item.created", "deal.created"}, []eventtypes.Owner{eventtypes.Site, eventtypes.Agency}},
		{[]string{"*"}, []eventtypes.Owner{eventtypes.Site, eventtypes.Agency}},
		{[]string{"webhook.*"}, nil},
	} {
		if got := eventtypes.OwnersOf(tc.patterns); !slices.Equal(got, tc.want) {
			t.Errorf("OwnersOf(%v) = %v, want %v", tc.patterns, got, tc.want)
		}
	}
	if got := eventtypes.Families(eventtypes.Agency); got != "prospect.*, deal.*, client.*, action_run.*, credits.*, schedule.*, dataset.*, report.*" {
		t.Errorf("Families(agency) = %q", got)
	}
}
