package eventtypes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/events"
)

// Owner is the kind of tenant whose endpoints receive an event type
// (platform/events defines it with the types).
type Owner = events.Owner

const (
	// Site events concern a site's collections.
	Site = events.Site
	// Agency events concern an agency's CRM, linked clients, runs and
	// credits.
	Agency = events.Agency
	// Any is for the webhooks' own events, which every endpoint may get.
	Any = events.Any
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

// All is every event type, in the order GET /api/v1/event-types lists them:
// platform/events' webhook types, their schemas generated from their data
// types.
var All = func() []Type {
	var out []Type
	for _, t := range events.WebhookTypes() {
		out = append(out, Type{t.Name, t.Owner, t.Description, t.Schema()})
	}
	return out
}()

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
