package eventtypes

import (
	"fmt"
	"slices"
	"strings"
)

// Owner is the kind of tenant whose endpoints receive an event type: a
// site-bound key manages a site's endpoints, an agency-bound key an
// agency's.
type Owner string

const (
	// Site events concern a site's collections.
	Site Owner = "site"
	// Agency events concern an agency's CRM, linked clients, runs and
	// credits.
	Agency Owner = "agency"
	// Any is for the webhooks' own events, which every endpoint may get.
	Any Owner = "any"
)

// Type is one event type.
type Type struct {
	Name        string
	Owner       Owner
	Description string
	// Data is the JSON Schema of the event's data: thin payloads, the ids
	// and the fields a receiver routes on; the current state is read
	// through the API.
	Data map[string]any
}

func object(required []string, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "required": required, "properties": props, "additionalProperties": false}
}

var (
	uuid      = map[string]any{"type": "string", "format": "uuid"}
	timestamp = map[string]any{"type": "string", "format": "date-time"}
	credits   = object([]string{"ai", "data"}, map[string]any{
		"ai": map[string]any{"type": "integer", "minimum": 0}, "data": map[string]any{"type": "integer", "minimum": 0},
	})
	item = object([]string{"id", "site_id", "collection", "is_published", "version"}, map[string]any{
		"id": uuid, "site_id": uuid,
		"collection":   map[string]any{"type": "string", "description": "the collection's slug"},
		"is_published": map[string]any{"type": "boolean"},
		"version":      map[string]any{"type": "integer", "minimum": 1, "description": "the item's write count, its ETag without quotes: drop an event older than what you have"},
	})
	asset = object([]string{"id", "site_id", "content_type", "size"}, map[string]any{
		"id": uuid, "site_id": uuid,
		"content_type": map[string]any{"type": "string", "description": "the type the file's content was found to be (image/png, application/pdf, ...)"},
		"size":         map[string]any{"type": "integer", "minimum": 1, "description": "bytes"},
	})
	crmRecord = object([]string{"id", "agency_id"}, map[string]any{"id": uuid, "agency_id": uuid})
	link      = object([]string{"agency_id", "client_id"}, map[string]any{"agency_id": uuid, "client_id": uuid})
	run       = object([]string{"run_id", "action", "client_id", "agency_id", "state", "status", "status_code", "credits_spent"}, map[string]any{
		"run_id": uuid, "action": map[string]any{"type": "string"}, "client_id": uuid, "agency_id": uuid,
		"state":         map[string]any{"type": "string", "enum": []any{"success", "error", "canceled"}, "description": "the run's state, as GET /api/v1/runs/{run_id} shows it"},
		"status":        map[string]any{"type": "string", "enum": []any{"success", "error", "canceled"}},
		"status_code":   map[string]any{"type": "integer"},
		"credits_spent": credits,
	})
)

// All is every event type, in the order GET /api/v1/event-types lists them.
var All = []Type{
	{"item.created", Site, "An item was created in one of the site's collections.", item},
	{"item.updated", Site, "An item was changed (every PATCH, and every scheduled publish or unpublish applied).", item},
	{"item.published", Site, "An item became published, by a PATCH or at its publish_at (after its item.updated).", item},
	{"item.unpublished", Site, "An item stopped being published, by a PATCH or at its unpublish_at (after its item.updated).", item},
	{"item.deleted", Site, "An item was deleted.", item},
	{"asset.created", Site, "A file was uploaded to the site's assets.", asset},
	{"asset.deleted", Site, "An asset was deleted; its file is no longer served.", asset},
	{"prospect.created", Agency, "A prospect was added to the agency's pipeline.", crmRecord},
	{"prospect.updated", Agency, "A prospect was changed.", crmRecord},
	{"deal.created", Agency, "A deal was added.", crmRecord},
	{"deal.updated", Agency, "A deal was changed.", crmRecord},
	{"client.linked", Agency, "A client was linked to the agency.", link},
	{"client.unlinked", Agency, "A client was unlinked from the agency.", link},
	{"action_run.succeeded", Agency, "An action run of the agency finished with status success.", run},
	{"action_run.failed", Agency, "An action run of the agency finished with status error (nothing was charged).", run},
	{"action_run.canceled", Agency, "An action run of the agency was canceled before it finished (nothing was charged).", run},
	{"credits.changed", Agency, "The agency's credit balance was changed by an administrator.", object([]string{"agency_id", "added", "balance"}, map[string]any{
		"agency_id": uuid, "added": object([]string{"ai", "data"}, map[string]any{"ai": map[string]any{"type": "integer"}, "data": map[string]any{"type": "integer"}}), "balance": credits,
	})},
	{"dataset.changed", Agency, "Rows of a linked client's dataset were written.", object([]string{"client_id", "resource", "count"}, map[string]any{
		"client_id": uuid, "resource": map[string]any{"type": "string", "description": "the dataset, as GET /api/v1/data names it"}, "count": map[string]any{"type": "integer", "minimum": 1},
	})},
	{"webhook.test", Any, "Sent by POST /api/v1/webhooks/{id}/test to that endpoint only.", object([]string{"webhook_id"}, map[string]any{"webhook_id": uuid})},
	{"webhook.disabled", Any, "An endpoint of the tenant was disabled after failing continuously or answering 410; sent to the tenant's other endpoints.", object([]string{"webhook_id", "url", "reason", "disabled_at"}, map[string]any{
		"webhook_id": uuid, "url": map[string]any{"type": "string", "format": "uri"}, "reason": map[string]any{"type": "string"}, "disabled_at": timestamp,
	})},
}

// Lookup returns the type named name.
func Lookup(name string) (Type, bool) {
	i := slices.IndexFunc(All, func(t Type) bool { return t.Name == name })
	if i < 0 {
		return Type{}, false
	}
	return All[i], true
}

// Matches reports whether the subscription pattern p (a type's name,
// "prefix.*" or "*") matches the type named name.
func Matches(p, name string) bool {
	if p == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(p, ".*"); ok {
		return strings.HasPrefix(name, prefix+".")
	}
	return p == name
}

// For returns the types an owner's endpoints may receive.
func For(o Owner) []Type {
	var out []Type
	for _, t := range All {
		if t.Owner == o || t.Owner == Any {
			out = append(out, t)
		}
	}
	return out
}

// OwnersOf returns the tenant kinds (Site, Agency) whose event types the
// patterns match, in that order; the webhooks' own types (Any) count for
// neither. A key bound to both a site and an agency registers an endpoint
// for the one its patterns name.
func OwnersOf(patterns []string) []Owner {
	var out []Owner
	for _, o := range []Owner{Site, Agency} {
		for _, t := range All {
			if t.Owner == o && slices.ContainsFunc(patterns, func(p string) bool { return Matches(p, t.Name) }) {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// Families names an owner's event types as patterns, for messages.
func Families(o Owner) string {
	var out []string
	for _, t := range All {
		if t.Owner != o {
			continue
		}
		f, _, _ := strings.Cut(t.Name, ".")
		if p := f + ".*"; !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

// CheckSubscription validates the events list of an endpoint of owner o:
// at least one pattern, each a type of the owner's, a "prefix.*" that
// matches at least one of them, or "*". The error names the pattern that
// is wrong and what is allowed, for the 400.
func CheckSubscription(o Owner, patterns []string) error {
	if len(patterns) == 0 {
		return fmt.Errorf("events must list at least one event type, a prefix such as %q, or %q", "item.*", "*")
	}
	allowed := For(o)
	for i, p := range patterns {
		if p == "*" {
			continue
		}
		if !slices.ContainsFunc(allowed, func(t Type) bool { return Matches(p, t.Name) }) {
			return fmt.Errorf("events[%d] %q matches no event type a %s key's endpoints receive; allowed: %s, a prefix of them followed by .*, or *", i, p, o, names(allowed))
		}
	}
	return nil
}

func names(ts []Type) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return strings.Join(out, ", ")
}

// CheckListen validates the events filter of an event stream opened by a
// key whose tenants are of the kinds os: each pattern a type one of them
// receives, a "prefix.*" that matches at least one such type, or "*". No
// pattern at all is every type (the caller passes "*"). The error names the
// pattern that is wrong and what is allowed, for the 400.
func CheckListen(os []Owner, patterns []string) error {
	var allowed []Type
	for _, t := range All {
		if t.Owner == Any || slices.Contains(os, t.Owner) {
			allowed = append(allowed, t)
		}
	}
	for i, p := range patterns {
		if p == "*" {
			continue
		}
		if !slices.ContainsFunc(allowed, func(t Type) bool { return Matches(p, t.Name) }) {
			return fmt.Errorf("events[%d] %q matches no event type this key receives; allowed: %s, a prefix of them followed by .*, or *", i, p, names(allowed))
		}
	}
	return nil
}
