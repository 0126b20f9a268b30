package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/apikey"
	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/value"
)

// Keys issues, lists, revokes and verifies API keys.
type Keys struct {
	store KeyStore
	sites SiteDirectory
	clock Clock
}

// KeyStore is the store as Keys uses it.
type KeyStore interface {
	KeyReader
	InTx(ctx context.Context, fn func(KeyTx) error) error
}

// KeyReader is what Keys reads outside transactions.
type KeyReader interface {
	KeyBySecretSHA256(ctx context.Context, digest []byte) (APIKey, error)
	// Keys lists keys by created_at descending, then id descending.
	Keys(ctx context.Context, filter KeyFilter, page pagination.Page) ([]APIKey, error)
}

// KeyFilter narrows Keys; empty fields match every key.
type KeyFilter struct {
	AgencyID string
	SiteID   string
}

// KeyTx is a transaction as Keys uses it (see Tx for what its getters
// lock).
type KeyTx interface {
	// Agency is read to check the agency a key is bound to.
	Agency(ctx context.Context, id string) (Agency, error)
	Key(ctx context.Context, id string) (APIKey, error)
	InsertKey(ctx context.Context, k APIKey) error
	UpdateKey(ctx context.Context, k APIKey) error
	// Enqueue adds an event to the outbox; the relay publishes it to NATS
	// after the transaction commits.
	outbox.Enqueuer
}

// SiteDirectory answers whether a site exists and which agency owns it.
// Sites belong to the collections service; the CRM asks it when a key is
// bound to a site.
type SiteDirectory interface {
	// SiteOwner reports whether the site exists and, if so, the agency
	// that owns it ("" for an unowned site). An error means the answer is
	// unknown (the collections service is unreachable).
	SiteOwner(ctx context.Context, id string) (agencyID string, exists bool, err error)
}

// NewKeys returns the key use cases.
func NewKeys(store KeyStore, sites SiteDirectory, clock Clock) *Keys {
	return &Keys{store: store, sites: sites, clock: clock}
}

// NewKey is the input of Create.
type NewKey struct {
	Name      string
	Scopes    []string
	SiteID    string
	AgencyID  string
	ExpiresAt *time.Time
	// PublishedOnly issues a key that reads only published items and
	// cannot write; it takes only the read scope.
	PublishedOnly bool
	// CreatedByMemberID is the owner issuing an agency's key.
	CreatedByMemberID string
}

// Create issues a key and returns it with its secret, which is not stored
// and cannot be shown again.
func (k *Keys) Create(ctx context.Context, in NewKey) (APIKey, string, error) {
	name, err := value.Line("name", in.Name, maxName, false)
	if err != nil {
		return APIKey{}, "", err
	}
	scopes, err := principal.ParseScopes(in.Scopes)
	if err != nil {
		return APIKey{}, "", err
	}
	if in.PublishedOnly && slices.Contains(scopes, principal.ScopeWrite) {
		return APIKey{}, "", apperr.Invalid("a published_only key cannot write, so its scopes must be [read]; got %s", principal.ScopeNames(scopes))
	}
	if in.PublishedOnly && in.SiteID == "" {
		// Such a key may only read a site's published content
		// (principal.Authorize): without a site it could call nothing.
		return APIKey{}, "", apperr.Invalid("a published_only key reads a site's published collections, items and assets, so it needs a site_id")
	}
	if in.SiteID == "" && in.AgencyID == "" {
		return APIKey{}, "", apperr.Invalid("a key must be bound to a site_id (collections interface), an agency_id (CRM, data and action interfaces), or both")
	}
	now := k.clock.Now()
	key := APIKey{ID: newID(), Name: name, Scopes: scopes, CreatedAt: now, PublishedOnly: in.PublishedOnly, CreatedByMemberID: in.CreatedByMemberID}
	if in.ExpiresAt != nil {
		exp := in.ExpiresAt.UTC().Truncate(time.Microsecond)
		if !exp.After(now) {
			return APIKey{}, "", apperr.Invalid("expires_at must be in the future; got %s", exp.Format(time.RFC3339))
		}
		key.ExpiresAt = &exp
	}
	if in.AgencyID != "" {
		if key.AgencyID, err = value.BodyID("agency_id", in.AgencyID); err != nil {
			return APIKey{}, "", err
		}
	}
	if in.SiteID != "" {
		if key.SiteID, err = value.BodyID("site_id", in.SiteID); err != nil {
			return APIKey{}, "", err
		}
		owner, ok, err := k.sites.SiteOwner(ctx, key.SiteID)
		if err != nil {
			return APIKey{}, "", apperr.Unavailable(err, "cannot check site_id now: the collections service is unavailable; retry later")
		}
		if !ok {
			return APIKey{}, "", apperr.Invalid("site_id %q does not name an existing site", key.SiteID)
		}
		// A key bound to an agency reaches only the agency's sites
		// (docs/architecture.md#tenancy-model); an unowned site only keys
		// bound to it alone.
		if key.AgencyID != "" && owner != key.AgencyID {
			if owner == "" {
				return APIKey{}, "", apperr.Invalid("site_id %q belongs to no agency, so a key for agency_id %q cannot reach it: assign the site to the agency (PATCH /admin/v1/sites/{site_id} with agency_id), or issue the key without agency_id", key.SiteID, key.AgencyID)
			}
			return APIKey{}, "", apperr.Invalid("site_id %q belongs to another agency than agency_id %q: a key reaches only its agency's sites", key.SiteID, key.AgencyID)
		}
	}
	secret, err := apikey.Generate()
	if err != nil {
		return APIKey{}, "", err
	}
	digest := apikey.Digest(secret)
	key.SecretSHA256 = digest[:]
	key.Prefix = apikey.DisplayPrefix(secret)
	err = k.store.InTx(ctx, func(tx KeyTx) error {
		if key.AgencyID != "" {
			if _, err := tx.Agency(ctx, key.AgencyID); err != nil {
				if errors.Is(err, ErrNotFound) {
					return apperr.Invalid("agency_id %q does not name an existing agency", key.AgencyID)
				}
				return err
			}
		}
		if err := tx.InsertKey(ctx, key); err != nil {
			return err
		}
		fields := []string{"name", "scopes"}
		for f, set := range map[string]bool{"site_id": key.SiteID != "", "agency_id": key.AgencyID != "", "expires_at": key.ExpiresAt != nil, "published_only": key.PublishedOnly} {
			if set {
				fields = append(fields, f)
			}
		}
		if err := audit.Record(ctx, tx, auditService, audit.Change{Action: "key.created", ResourceType: "key", ResourceID: key.ID, Fields: fields,
			AgencyID: key.AgencyID, SiteID: key.SiteID}, now); err != nil {
			return err
		}
		return outbox.Add(ctx, tx, events.KeyCreated, events.KeyEvent{KeyID: key.ID, SiteID: key.SiteID, AgencyID: key.AgencyID, At: now}, now)
	})
	if err != nil {
		return APIKey{}, "", err
	}
	return key, secret, nil
}

// List lists keys, newest first. Filter ids that are not UUIDs match no key.
func (k *Keys) List(ctx context.Context, filter KeyFilter, limit, offset *int32) ([]APIKey, error) {
	page, err := pagination.Admin.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	if filter.AgencyID != "" {
		if filter.AgencyID, err = value.BodyID("agency_id", filter.AgencyID); err != nil {
			return nil, err
		}
	}
	if filter.SiteID != "" {
		if filter.SiteID, err = value.BodyID("site_id", filter.SiteID); err != nil {
			return nil, err
		}
	}
	return k.store.Keys(ctx, filter, page)
}

// Revoke revokes a key. Revoking a revoked key returns it unchanged.
func (k *Keys) Revoke(ctx context.Context, id string) (APIKey, error) { return k.revoke(ctx, "", id) }

// revoke revokes a key; with agencyID, only one of that agency's (another
// agency's key is not found).
func (k *Keys) revoke(ctx context.Context, agencyID, id string) (APIKey, error) {
	id, err := value.PathID("key", id)
	if err != nil {
		return APIKey{}, err
	}
	var key APIKey
	err = k.store.InTx(ctx, func(tx KeyTx) error {
		key, err = tx.Key(ctx, id)
		if err == nil && agencyID != "" && key.AgencyID != agencyID {
			err = ErrNotFound
		}
		if err != nil {
			return notFound(err, "key %q not found", id)
		}
		if key.RevokedAt != nil {
			return nil
		}
		now := k.clock.Now()
		key.RevokedAt = &now
		if err := tx.UpdateKey(ctx, key); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, auditService, audit.Change{Action: "key.revoked", ResourceType: "key", ResourceID: key.ID,
			AgencyID: key.AgencyID, SiteID: key.SiteID}, now); err != nil {
			return err
		}
		return outbox.Add(ctx, tx, events.KeyRevoked, events.KeyEvent{KeyID: key.ID, SiteID: key.SiteID, AgencyID: key.AgencyID, RevokedAt: &now, At: now}, now)
	})
	return key, err
}

// Verify returns the key whose secret has the given SHA-256 digest. It does
// not judge expiry or revocation: the caller reports those distinctly.
func (k *Keys) Verify(ctx context.Context, digest []byte) (APIKey, error) {
	if len(digest) != sha256.Size {
		return APIKey{}, apperr.Invalid("secret_sha256 must be %d bytes; got %d", sha256.Size, len(digest))
	}
	key, err := k.store.KeyBySecretSHA256(ctx, digest)
	if err != nil {
		return APIKey{}, notFound(err, "unknown API key")
	}
	// The store found the row by an index on the digest; comparing again in
	// constant time keeps the decision itself free of timing differences
	// whatever the adapter's lookup does.
	if subtle.ConstantTimeCompare(key.SecretSHA256, digest) != 1 {
		return APIKey{}, apperr.NotFound("unknown API key")
	}
	return key, nil
}
