package events

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Owner is the kind of tenant whose endpoints receive a webhook type: a
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
	// Client addresses a webhook event to every agency a client is linked
	// to (a dataset's change): the webhooks service asks the CRM which.
	// It is an audience, never a type's owner.
	Client Owner = "client"
)

// Tenant is whose endpoints receive one webhook event: a site or an
// agency by id, or a client (its agencies).
type Tenant struct {
	Kind Owner
	ID   string
}

// Webhook is the webhook event a stream event becomes: its type's name,
// whom it is for, and its data (a value of the type's data type).
type Webhook struct {
	Type string
	To   Tenant
	Data any
}

// addressable checks that w goes to a tenant its type's owner allows.
func (w Webhook) addressable() error {
	if w.To.ID == "" {
		return errors.New("no tenant to address it to")
	}
	ty, ok := LookupWebhook(w.Type)
	if !ok {
		return fmt.Errorf("%s is not a webhook type", w.Type)
	}
	allowed := map[Owner][]Owner{Site: {Site}, Agency: {Agency, Client}, Any: {Site, Agency}}[ty.Owner]
	for _, k := range allowed {
		if w.To.Kind == k {
			return nil
		}
	}
	return fmt.Errorf("a %s event cannot go to a %s's endpoints", w.Type, w.To.Kind)
}

// Hook is a webhook type whose data is a D.
type Hook[D any] struct{ name string }

// WebhookType is a webhook type as GET /api/v1/event-types lists it.
type WebhookType struct {
	Name        string
	Owner       Owner
	Description string
	// Data is the Go type of its data; Schema its JSON Schema.
	Data reflect.Type
}

// Schema is the JSON Schema of the type's data, generated from its Go
// type: thin payloads, the ids and the fields a receiver routes on.
func (t WebhookType) Schema() map[string]any { return Schema(t.Data) }

// webhookTypes holds every webhook type, in declaration order.
var webhookTypes []WebhookType

// hook declares a webhook type.
func hook[D any](name string, owner Owner, description string) *Hook[D] {
	if owner != Site && owner != Agency && owner != Any || description == "" || !strings.Contains(name, ".") {
		panic("events: bad webhook type " + name)
	}
	if _, dup := LookupWebhook(name); dup {
		panic("events: webhook type " + name + " declared twice")
	}
	webhookTypes = append(webhookTypes, WebhookType{name, owner, description, reflect.TypeFor[D]()})
	return &Hook[D]{name}
}

// Name is the type's name (item.created).
func (h *Hook[D]) Name() string { return h.name }

// To returns the webhook event of this type with data d, for to's
// endpoints.
func (h *Hook[D]) To(to Tenant, d D) Webhook { return Webhook{Type: h.name, To: to, Data: d} }

// WebhookTypes returns every webhook type, in the order GET
// /api/v1/event-types lists them.
func WebhookTypes() []WebhookType { return webhookTypes }

// LookupWebhook returns the webhook type named name.
func LookupWebhook(name string) (WebhookType, bool) {
	for _, t := range webhookTypes {
		if t.Name == name {
			return t, true
		}
	}
	return WebhookType{}, false
}
