package events

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Def is the definition of one event, whose payload is a P: a struct whose
// json tags are the payload's field names. A field is required unless its
// tag says omitempty or omitzero, or it is tagged event:"optional" (a field
// older events lack but every new one has).
type Def[P any] struct {
	pattern string
	tokens  []token
	// webhook translates a payload into the webhook event announcing it;
	// nil when no webhook type announces this event.
	webhook func(P) (Webhook, error)
}

// token is one dot-separated part of a subject pattern: a literal, or a
// placeholder filled from the payload's string field of that JSON name.
type token struct {
	literal string
	field   string
	index   []int
}

// Definition is what every event's definition answers, whatever its
// payload type: the registry's view, for consumers that get a subject and
// bytes.
type Definition interface {
	// Pattern is the subject with its placeholders:
	// atrium.collections.{site_id}.{collection}.item.created.
	Pattern() string
	// Filter is the NATS subject filter of every subject of the
	// definition: atrium.collections.*.*.item.created.
	Filter() string
	// Matches reports whether subject is one of the definition's.
	Matches(subject string) bool
	// Payload is the payload's Go type.
	Payload() reflect.Type
	// Announced reports whether a webhook type announces the event.
	Announced() bool

	check(subject string, payload []byte, strict bool) error
	toWebhook(subject string, payload []byte) (Webhook, error)
}

// registry holds every definition, in declaration order (catalog.go).
var registry []Definition

// define declares an event. It panics on a pattern that names no field of
// P, a placeholder on a field that is not a string, a pattern outside
// every stream, or one that some subject would match together with an
// earlier definition: a subject must have exactly one definition.
func define[P any](pattern string, webhook func(P) (Webhook, error)) *Def[P] {
	d := &Def[P]{pattern: pattern, webhook: webhook}
	t := reflect.TypeFor[P]()
	for part := range strings.SplitSeq(pattern, ".") {
		name, ok := strings.CutPrefix(part, "{")
		if !ok {
			d.tokens = append(d.tokens, token{literal: part})
			continue
		}
		name = strings.TrimSuffix(name, "}")
		f, ok := fieldOf(t, name)
		if !ok || f.Type.Kind() != reflect.String {
			panic(fmt.Sprintf("events: %s: {%s} is not a string field of %s", pattern, name, t))
		}
		d.tokens = append(d.tokens, token{field: name, index: f.Index})
	}
	if _, ok := StreamOf(pattern); !ok {
		panic(fmt.Sprintf("events: %s is in no stream", pattern))
	}
	for _, other := range registry {
		if overlap(d.Filter(), other.Filter()) {
			panic(fmt.Sprintf("events: %s and %s can match the same subject", pattern, other.Pattern()))
		}
	}
	registry = append(registry, d)
	return d
}

// Definitions returns every event's definition, in the order
// docs/events.md lists them.
func Definitions() []Definition { return registry }

// Find returns the definition of a concrete subject.
func Find(subject string) (Definition, bool) {
	for _, d := range registry {
		if d.Matches(subject) {
			return d, true
		}
	}
	return nil, false
}

// Check parses a published event with its definition strictly: an error
// for a subject no definition matches, a payload that is not the
// definition's (a required field missing, a field of another type, a
// field the definition does not have), or a subject whose placeholders
// disagree with the payload. Tests run it on every event they see.
func Check(subject string, payload []byte) error {
	d, ok := Find(subject)
	if !ok {
		return fmt.Errorf("event on %s: no event definition matches the subject (platform/events)", subject)
	}
	return d.check(subject, payload, true)
}

// ToWebhook returns the webhook event announcing a stream event, and false
// for an event no webhook type announces (or a subject no definition
// knows: a newer publisher's event, which an older webhooks service
// skips rather than retries forever). The payload is parsed with its
// definition, leniently: a field added by a newer publisher is ignored,
// but a missing or mistyped one is an error.
func ToWebhook(subject string, payload []byte) (Webhook, bool, error) {
	d, ok := Find(subject)
	if !ok || !d.Announced() {
		return Webhook{}, false, nil
	}
	w, err := d.toWebhook(subject, payload)
	return w, err == nil, err
}

// Pattern implements Definition.
func (d *Def[P]) Pattern() string { return d.pattern }

// Filter implements Definition.
func (d *Def[P]) Filter() string {
	parts := make([]string, len(d.tokens))
	for i, t := range d.tokens {
		parts[i] = t.literal
		if t.field != "" {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, ".")
}

// Payload implements Definition.
func (d *Def[P]) Payload() reflect.Type { return reflect.TypeFor[P]() }

// Announced implements Definition.
func (d *Def[P]) Announced() bool { return d.webhook != nil }

// Matches implements Definition, without allocating: the webhooks service
// asks it of every definition for every event.
func (d *Def[P]) Matches(subject string) bool {
	rest := subject
	for i, t := range d.tokens {
		part, after, more := strings.Cut(rest, ".")
		if more != (i < len(d.tokens)-1) {
			return false
		}
		if t.field == "" && part != t.literal || t.field != "" && part == "" {
			return false
		}
		rest = after
	}
	return true
}

// Subject is the concrete subject of an event with payload p: the
// pattern's placeholders filled from p's fields. A value that cannot be
// one token of a NATS subject (empty, or holding a dot, a wildcard or
// white space) is an error.
func (d *Def[P]) Subject(p P) (string, error) {
	v := reflect.ValueOf(p)
	var b strings.Builder
	for i, t := range d.tokens {
		if i > 0 {
			b.WriteByte('.')
		}
		if t.field == "" {
			b.WriteString(t.literal)
			continue
		}
		s := v.FieldByIndex(t.index).String()
		if !validToken(s) {
			return "", fmt.Errorf("events: %s: %s %q cannot be a part of a subject", d.pattern, t.field, s)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func validToken(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return r == '.' || r == '*' || r == '>' || r <= ' ' || r == 0x7f
	})
}

// Marshal returns the subject and the JSON of an event with payload p:
// what platform/outbox's Of and Add enqueue. (This package does not
// import the outbox: a reader of events, the gateway, would pull in its
// PostgreSQL driver.)
func (d *Def[P]) Marshal(p P) (subject string, payload []byte, err error) {
	subject, err = d.Subject(p)
	if err != nil {
		return "", nil, err
	}
	payload, err = json.Marshal(p)
	if err != nil {
		return "", nil, fmt.Errorf("marshal %s event: %w", subject, err)
	}
	return subject, payload, nil
}

// Parse reads a payload published on subject: fields this definition does
// not know are ignored (a newer publisher's), a required field missing or
// of another type is an error naming it, and so is a subject whose
// placeholders disagree with the payload.
func (d *Def[P]) Parse(subject string, payload []byte) (P, error) {
	return d.parse(subject, payload, false)
}

func (d *Def[P]) parse(subject string, payload []byte, strict bool) (P, error) {
	var p P
	if !d.Matches(subject) {
		return p, fmt.Errorf("event on %s: the subject is not %s", subject, d.pattern)
	}
	if err := shape(payload, reflect.TypeFor[P](), "", strict); err != nil {
		return p, fmt.Errorf("event on %s: payload %w", subject, err)
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return p, fmt.Errorf("event on %s: payload is not a %s payload: %w", subject, d.pattern, err)
	}
	v := reflect.ValueOf(p)
	rest := subject
	for _, t := range d.tokens {
		var part string
		part, rest, _ = strings.Cut(rest, ".")
		if t.field != "" && v.FieldByIndex(t.index).String() != part {
			return p, fmt.Errorf("event on %s: the subject says %s %q, the payload %q", subject, t.field, part, v.FieldByIndex(t.index).String())
		}
	}
	return p, nil
}

func (d *Def[P]) check(subject string, payload []byte, strict bool) error {
	_, err := d.parse(subject, payload, strict)
	return err
}

func (d *Def[P]) toWebhook(subject string, payload []byte) (Webhook, error) {
	p, err := d.parse(subject, payload, false)
	if err != nil {
		return Webhook{}, err
	}
	w, err := d.webhook(p)
	if err != nil {
		return Webhook{}, fmt.Errorf("event on %s: %w", subject, err)
	}
	if err := w.addressable(); err != nil {
		return Webhook{}, fmt.Errorf("event on %s: %w", subject, err)
	}
	return w, nil
}

// overlap reports whether two subject filters of single-token wildcards
// can match the same subject.
func overlap(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if len(pa) != len(pb) {
		return false
	}
	for i := range pa {
		if pa[i] != "*" && pb[i] != "*" && pa[i] != pb[i] {
			return false
		}
	}
	return true
}
