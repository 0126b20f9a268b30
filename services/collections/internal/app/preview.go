package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
)

// PreviewLink lets whoever holds its token read one item, drafts
// included, without a key, until it expires or is revoked. Only the
// token's SHA-256 is kept: a leaked table gives out no working link.
type PreviewLink struct {
	ID           string
	SiteID       string
	CollectionID string
	// Collection is the collection's slug, read with the link.
	Collection string
	ItemID     string
	// TokenHash is the hex SHA-256 of the token.
	TokenHash string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Preview link lifetimes, in seconds.
const (
	DefaultPreviewSeconds = 7 * 24 * 3600
	MinPreviewSeconds     = 1
	MaxPreviewSeconds     = 30 * 24 * 3600
)

// tokenBytes is the token's randomness: 256 bits, as unguessable as the
// API keys.
const tokenBytes = 32

// tokenLen is the length of a token as text (unpadded base64url).
var tokenLen = base64.RawURLEncoding.EncodedLen(tokenBytes)

// HashToken is the hex SHA-256 a token is stored and looked up as.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func newToken() string {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// isToken reports whether s has a token's shape, so that anything else
// (a NUL, which PostgreSQL refuses, included) is a 404 without a read.
func isToken(s string) bool {
	if len(s) != tokenLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// Previews is the preview links' use cases.
type Previews struct {
	store   PreviewStore
	content *Content
	clock   Clock
}

// NewPreviews returns the preview links' use cases; content reads the
// items they show.
func NewPreviews(store PreviewStore, content *Content, clock Clock) *Previews {
	return &Previews{store: store, content: content, clock: clock}
}

func previewNotFound(id string) error { return value.NotFound("preview link", id) }

// Create gives out a link to an item of the site for seconds (nil: the
// default), and returns it with its token, which is never stored.
func (u *Previews) Create(ctx context.Context, siteID, slug, itemID string, seconds *int32) (PreviewLink, string, error) {
	life := int32(DefaultPreviewSeconds)
	if seconds != nil {
		if *seconds < MinPreviewSeconds || *seconds > MaxPreviewSeconds {
			return PreviewLink{}, "", apperr.Invalid("expires_in_seconds must be from %d to %d (30 days); got %d", MinPreviewSeconds, MaxPreviewSeconds, *seconds)
		}
		life = *seconds
	}
	c, it, err := u.content.Item(ctx, siteID, slug, itemID)
	if err != nil {
		return PreviewLink{}, "", err
	}
	token := newToken()
	now := u.clock.Now()
	l := PreviewLink{ID: store.NewID(), SiteID: siteID, CollectionID: c.ID, Collection: c.Slug, ItemID: it.ID,
		TokenHash: HashToken(token), CreatedAt: now, ExpiresAt: now.Add(time.Duration(life) * time.Second)}
	err = u.store.InTx(ctx, func(tx PreviewTx) error {
		// The item may have gone since it was read: a link to nothing is
		// refused as the read would have been.
		ok, err := tx.ItemExists(ctx, c.ID, it.ID)
		if err != nil {
			return err
		}
		if !ok {
			return itemNotFound(itemID, slug)
		}
		if err := tx.InsertPreviewLink(ctx, l); err != nil {
			return err
		}
		// The token is a secret: the record names the link, never it.
		return record(ctx, tx, audit.Change{Action: "preview_link.created", ResourceType: "preview_link", ResourceID: l.ID,
			Fields: []string{"item_id", "expires_at"}}, siteID, "", now)
	})
	if err != nil {
		return PreviewLink{}, "", err
	}
	return l, token, nil
}

// List returns the live links of one of the site's collections, newest
// first; itemID, when given, keeps those of one item.
func (u *Previews) List(ctx context.Context, siteID, slug, itemID string) ([]PreviewLink, error) {
	if slug == "" {
		return nil, apperr.Invalid("collection is required: the slug of the collection whose preview links to list")
	}
	c, err := u.content.collection(ctx, siteID, slug)
	if err != nil {
		return nil, err
	}
	if itemID != "" {
		if itemID, err = value.BodyID("item_id", itemID); err != nil {
			return nil, err
		}
	}
	return u.store.PreviewLinks(ctx, c, itemID, u.clock.Now())
}

// Revoke deletes one of the site's links: its token answers 404 from then
// on.
func (u *Previews) Revoke(ctx context.Context, siteID, id string) error {
	canonical, err := value.PathID("preview link", id)
	if err != nil {
		return err
	}
	return u.store.InTx(ctx, func(tx PreviewTx) error {
		err := tx.DeletePreviewLink(ctx, siteID, canonical)
		if errors.Is(err, ErrNotFound) {
			return previewNotFound(id)
		} else if err != nil {
			return err
		}
		return record(ctx, tx, audit.Change{Action: "preview_link.deleted", ResourceType: "preview_link", ResourceID: canonical}, siteID, "", u.clock.Now())
	})
}

// errNoPreview is the one answer to every token that shows nothing, so
// that an expired link cannot be told from one that never existed.
var errNoPreview = apperr.NotFound("no preview at this address: the link expired or was revoked, its item was deleted, or the address is not one Atrium gave out")

// Show returns the item a token shows, with its collection and the link.
func (u *Previews) Show(ctx context.Context, token string) (Collection, Item, PreviewLink, error) {
	if !isToken(token) {
		return Collection{}, Item{}, PreviewLink{}, errNoPreview
	}
	l, err := u.store.PreviewLink(ctx, HashToken(token))
	if errors.Is(err, ErrNotFound) || (err == nil && !u.clock.Now().Before(l.ExpiresAt)) {
		return Collection{}, Item{}, PreviewLink{}, errNoPreview
	} else if err != nil {
		return Collection{}, Item{}, PreviewLink{}, err
	}
	c, it, err := u.store.Item(ctx, l.SiteID, l.Collection, l.ItemID)
	if errors.Is(err, ErrNotFound) {
		return Collection{}, Item{}, PreviewLink{}, errNoPreview
	}
	return c, it, l, err
}
