package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
)

// SecretPrefix starts every key secret, so that leaked keys are easy to
// recognise (and to find with secret scanners).
const SecretPrefix = "atr_"

// secretBytes is the entropy of a secret: 256 bits, which is why one
// unsalted SHA-256 is enough to store it.
const secretBytes = 32

// displayPrefixLen is how much of a secret is kept in clear to recognise the
// key in lists: "atr_" and 8 characters, 48 of the 256 bits.
const displayPrefixLen = len(SecretPrefix) + 8

// keyListPolicy pages the admin key list.
var keyListPolicy = pagination.Policy{DefaultLimit: 50, MaxLimit: 200, Clamp: true}

// Keys issues, lists, revokes and verifies API keys.
type Keys struct {
	store Store
	sites SiteDirectory
	clock Clock
}

// NewKeys returns the key use cases.
func NewKeys(store Store, sites SiteDirectory, clock Clock) *Keys {
	return &Keys{store: store, sites: sites, clock: clock}
}

// NewKey is the input of Create.
type NewKey struct {
	Name      string
	Scopes    []string
	SiteID    string
	AgencyID  string
	ExpiresAt *time.Time
}

// Create issues a key and returns it with its secret, which is not stored
// and cannot be shown again.
func (k *Keys) Create(ctx context.Context, in NewKey) (APIKey, string, error) {
	name, err := text("name", in.Name, maxName, false)
	if err != nil {
		return APIKey{}, "", err
	}
	scopes, err := parseScopes(in.Scopes)
	if err != nil {
		return APIKey{}, "", err
	}
	if in.SiteID == "" && in.AgencyID == "" {
		return APIKey{}, "", apperr.Invalid("a key must be bound to a site_id (collections interface), an agency_id (CRM, data and action interfaces), or both")
	}
	now := k.clock.now()
	key := APIKey{ID: newID(), Name: name, Scopes: scopes, CreatedAt: now}
	if in.ExpiresAt != nil {
		exp := in.ExpiresAt.UTC().Truncate(time.Microsecond)
		if !exp.After(now) {
			return APIKey{}, "", apperr.Invalid("expires_at must be in the future; got %s", exp.Format(time.RFC3339))
		}
		key.ExpiresAt = &exp
	}
	if in.SiteID != "" {
		if key.SiteID, err = bodyID("site_id", in.SiteID); err != nil {
			return APIKey{}, "", err
		}
		ok, err := k.sites.SiteExists(ctx, key.SiteID)
		if err != nil {
			return APIKey{}, "", apperr.Unavailable(err, "cannot check site_id now: the collections service is unavailable; retry later")
		}
		if !ok {
			return APIKey{}, "", apperr.Invalid("site_id %q does not name an existing site", key.SiteID)
		}
	}
	if in.AgencyID != "" {
		if key.AgencyID, err = bodyID("agency_id", in.AgencyID); err != nil {
			return APIKey{}, "", err
		}
	}
	secret, err := newSecret()
	if err != nil {
		return APIKey{}, "", err
	}
	digest := sha256.Sum256([]byte(secret))
	key.SecretSHA256 = digest[:]
	key.Prefix = secret[:displayPrefixLen]
	err = k.store.InTx(ctx, func(tx Tx) error {
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
		return enqueue(ctx, tx, SubjectKeyCreated, keyEvent{KeyID: key.ID, SiteID: key.SiteID, AgencyID: key.AgencyID, At: now}, now)
	})
	if err != nil {
		return APIKey{}, "", err
	}
	return key, secret, nil
}

func parseScopes(in []string) ([]principal.Scope, error) {
	names := make([]string, len(principal.Scopes))
	for i, s := range principal.Scopes {
		names[i] = string(s)
	}
	if len(in) == 0 {
		return nil, apperr.Invalid("scopes is required: one or both of %s", strings.Join(names, ", "))
	}
	var out []principal.Scope
	for _, s := range principal.Scopes {
		if slices.Contains(in, string(s)) {
			out = append(out, s)
		}
	}
	for _, s := range in {
		if !slices.Contains(names, s) {
			return nil, apperr.Invalid("scopes may contain only %s; got %q", strings.Join(names, ", "), s)
		}
	}
	return out, nil
}

func newSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// List lists keys, newest first. Filter ids that are not UUIDs match no key.
func (k *Keys) List(ctx context.Context, filter KeyFilter, limit, offset *int32) ([]APIKey, error) {
	page, err := keyListPolicy.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	if filter.AgencyID != "" {
		if filter.AgencyID, err = bodyID("agency_id", filter.AgencyID); err != nil {
			return nil, err
		}
	}
	if filter.SiteID != "" {
		if filter.SiteID, err = bodyID("site_id", filter.SiteID); err != nil {
			return nil, err
		}
	}
	return k.store.Keys(ctx, filter, page)
}

// Revoke revokes a key. Revoking a revoked key returns it unchanged.
func (k *Keys) Revoke(ctx context.Context, id string) (APIKey, error) {
	id, err := pathID("key", id)
	if err != nil {
		return APIKey{}, err
	}
	var key APIKey
	err = k.store.InTx(ctx, func(tx Tx) error {
		key, err = tx.Key(ctx, id)
		if err != nil {
			return notFound(err, "key %q not found", id)
		}
		if key.RevokedAt != nil {
			return nil
		}
		now := k.clock.now()
		key.RevokedAt = &now
		if err := tx.UpdateKey(ctx, key); err != nil {
			return err
		}
		return enqueue(ctx, tx, SubjectKeyRevoked, keyEvent{KeyID: key.ID, SiteID: key.SiteID, AgencyID: key.AgencyID, RevokedAt: &now, At: now}, now)
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
