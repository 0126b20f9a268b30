package app

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/netguard"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
	"github.com/atrium-hq/atrium/services/webhooks/internal/signing"
)

// MaxEndpoints is how many endpoints a tenant may register: enough for a
// site's or an agency's systems, few enough that fanning an event out stays
// cheap and a leaked key cannot make the deployment call a thousand URLs.
const MaxEndpoints = 50

// MaxDescription is the longest description, in characters.
const MaxDescription = 500

// MaxPreviousValidity is the longest a rotated-out secret keeps signing.
const MaxPreviousValidity = 24 * time.Hour

// Endpoints is the endpoint API's use cases.
type Endpoints struct {
	Store EndpointStore
	// Guard checks the URL at registration (the deliverer checks the
	// resolved address at every connection); Guard.AllowPrivate also lets
	// plain http through, for local testing (--allow-private-fetch).
	Guard *netguard.Guard
	Now   func() time.Time
}

// NewEndpoint is a registration's fields.
type NewEndpoint struct {
	URL         string
	Events      []string
	Description string
	// Enabled defaults to true when nil.
	Enabled *bool
}

// EndpointChange is a PATCH: nil fields are left as they are.
type EndpointChange struct {
	URL         *string
	Events      []string // nil: unchanged
	Description *string
	Enabled     *bool
}

func (u *Endpoints) now() time.Time {
	if u.Now != nil {
		return stamp(u.Now())
	}
	return stamp(time.Now())
}

// checkURL is the registration's URL rule: absolute https on a public
// address, or http and private addresses where the guard allows them.
func (u *Endpoints) checkURL(raw string) (string, error) {
	url, err := u.Guard.CheckURL(raw)
	if err != nil {
		where := "an absolute https URL on a public address"
		if u.Guard.AllowPrivate {
			where = "an absolute http or https URL"
		}
		return "", apperr.Invalid("url must be %s; %s", where, err)
	}
	if url.Scheme != "https" && !u.Guard.AllowPrivate {
		return "", apperr.Invalid("url must be an absolute https URL; got %q (plain http is allowed only with --allow-private-fetch, for local testing)", raw)
	}
	return url.String(), nil
}

// checkEvents checks a subscription and returns it with each name kept
// once, where it first appears: a name given twice subscribes to nothing
// more, and storing it as sent would let a client make every list answer
// and every event's fan-out as large as it likes. How many names a request
// may carry is the proto's max_items (64, enforced before the service sees
// the request: docs/webhooks.md).
func checkEvents(o eventtypes.Owner, events []string) ([]string, error) {
	if err := eventtypes.CheckSubscription(o, events); err != nil {
		return nil, apperr.Invalid("%s", err)
	}
	out := make([]string, 0, len(events))
	for _, e := range events {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func checkDescription(s string) (string, error) {
	return value.Line("description", s, MaxDescription, true)
}

// Create registers an endpoint of t and returns it with its new secret.
func (u *Endpoints) Create(ctx context.Context, t Tenant, in NewEndpoint) (Endpoint, error) {
	url, err := u.checkURL(in.URL)
	if err != nil {
		return Endpoint{}, err
	}
	events, err := checkEvents(t.Kind, in.Events)
	if err != nil {
		return Endpoint{}, err
	}
	desc, err := checkDescription(in.Description)
	if err != nil {
		return Endpoint{}, err
	}
	secret, err := signing.NewSecret()
	if err != nil {
		return Endpoint{}, err
	}
	now := u.now()
	e := Endpoint{ID: uuid.Must(uuid.NewV7()).String(), Tenant: t, URL: url, Events: events, Description: desc,
		Enabled: in.Enabled == nil || *in.Enabled, Secret: secret, CreatedAt: now, UpdatedAt: now}
	err = u.Store.InTx(ctx, func(tx EndpointTx) error {
		n, err := tx.CountEndpoints(ctx, t)
		if err != nil {
			return err
		}
		if n >= MaxEndpoints {
			return apperr.Conflict("this %s has %d webhooks, the most it may have; delete one it no longer needs", t.Kind, n)
		}
		if err := tx.InsertEndpoint(ctx, e); err != nil {
			return err
		}
		fields := []string{"url", "events", "description", "enabled", "secret"}
		return audit.Record(ctx, tx, auditService, change(t, "webhook.created", "webhook", e.ID, fields...), now)
	})
	if err != nil {
		return Endpoint{}, err
	}
	return e, nil
}

// Get returns t's endpoint id.
func (u *Endpoints) Get(ctx context.Context, t Tenant, id string) (Endpoint, error) {
	id, err := value.PathID("webhook", id)
	if err != nil {
		return Endpoint{}, err
	}
	e, err := u.Store.Endpoint(ctx, t, id)
	return e, notFound(err, id)
}

// List returns t's endpoints, newest first.
func (u *Endpoints) List(ctx context.Context, t Tenant) ([]Endpoint, error) {
	return u.Store.Endpoints(ctx, t)
}

// Update applies a PATCH to t's endpoint id. Enabling an endpoint that
// Atrium disabled clears the reason and the failure run.
func (u *Endpoints) Update(ctx context.Context, t Tenant, id string, c EndpointChange) (Endpoint, error) {
	id, err := value.PathID("webhook", id)
	if err != nil {
		return Endpoint{}, err
	}
	var url, desc string
	if c.URL != nil {
		if url, err = u.checkURL(*c.URL); err != nil {
			return Endpoint{}, err
		}
	}
	if c.Events != nil {
		if c.Events, err = checkEvents(t.Kind, c.Events); err != nil {
			return Endpoint{}, err
		}
	}
	if c.Description != nil {
		if desc, err = checkDescription(*c.Description); err != nil {
			return Endpoint{}, err
		}
	}
	var out Endpoint
	err = u.Store.InTx(ctx, func(tx EndpointTx) error {
		e, err := tx.Endpoint(ctx, t, id)
		if err != nil {
			return err
		}
		if c.URL != nil {
			e.URL = url
		}
		if c.Events != nil {
			e.Events = c.Events
		}
		if c.Description != nil {
			e.Description = desc
		}
		if c.Enabled != nil {
			if *c.Enabled && !e.Enabled {
				e.DisabledReason, e.FailingSince = "", time.Time{}
			}
			e.Enabled = *c.Enabled
		}
		e.UpdatedAt = u.now()
		out = e
		if err := tx.UpdateEndpoint(ctx, e); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, change(t, "webhook.updated", "webhook", e.ID, changedFields(c)...), e.UpdatedAt)
	})
	return out, notFound(err, id)
}

// Delete removes t's endpoint id.
func (u *Endpoints) Delete(ctx context.Context, t Tenant, id string) error {
	id, err := value.PathID("webhook", id)
	if err != nil {
		return err
	}
	err = u.Store.InTx(ctx, func(tx EndpointTx) error {
		if err := tx.DeleteEndpoint(ctx, t, id); err != nil {
			return err
		}
		return audit.Record(ctx, tx, auditService, change(t, "webhook.deleted", "webhook", id), u.now())
	})
	return notFound(err, id)
}

// RotateSecret gives t's endpoint id a new secret; the current one keeps
// signing, beside it, for previousValidity (0 ends it at once; at most
// MaxPreviousValidity).
func (u *Endpoints) RotateSecret(ctx context.Context, t Tenant, id string, previousValidity time.Duration) (Endpoint, error) {
	id, err := value.PathID("webhook", id)
	if err != nil {
		return Endpoint{}, err
	}
	if previousValidity < 0 || previousValidity > MaxPreviousValidity {
		return Endpoint{}, apperr.Invalid("previous_expires_in_seconds must be an integer between 0 and %d; got %d", int(MaxPreviousValidity.Seconds()), int64(previousValidity.Seconds()))
	}
	secret, err := signing.NewSecret()
	if err != nil {
		return Endpoint{}, err
	}
	var out Endpoint
	err = u.Store.InTx(ctx, func(tx EndpointTx) error {
		e, err := tx.Endpoint(ctx, t, id)
		if err != nil {
			return err
		}
		now := u.now()
		e.Previous, e.PreviousUntil = signing.Secret{}, time.Time{}
		if previousValidity > 0 {
			e.Previous, e.PreviousUntil = e.Secret, now.Add(previousValidity)
		}
		e.Secret, e.UpdatedAt = secret, now
		out = e
		if err := tx.UpdateEndpoint(ctx, e); err != nil {
			return err
		}
		// The secret's name, never its value.
		return audit.Record(ctx, tx, auditService, change(t, "webhook.secret_rotated", "webhook", e.ID, "secret"), now)
	})
	return out, notFound(err, id)
}

// notFound words a store's not-found as the API's 404.
func notFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return value.NotFound("webhook", id)
	}
	return err
}
