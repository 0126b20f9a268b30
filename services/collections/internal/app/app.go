package app

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
)

// Site is a website whose content the collections interface serves.
type Site struct {
	ID        string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
	// AllowedOrigins are the origins (https://example.com, or * for
	// keys that cannot write) whose pages may call the public API with
	// the site's keys: CORS, enforced by the gateway. Never nil.
	AllowedOrigins []string
}

// Store errors, shared with every service (platform/store).
var (
	ErrNotFound  = store.ErrNotFound
	ErrDuplicate = store.ErrDuplicate
)

// Store is the collections service's persistence port, met by the memory and
// postgres adapters under the contract suite in storetest. Reads outside a
// transaction see committed state.
type Store interface {
	Site(ctx context.Context, id string) (Site, error)
	// Sites lists sites by created_at descending, then id descending.
	Sites(ctx context.Context, page pagination.Page) ([]Site, error)
	// Collections lists a site's collections by slug.
	Collections(ctx context.Context, siteID string) ([]Collection, error)
	// Collection returns a site's collection by slug.
	Collection(ctx context.Context, siteID, slug string) (Collection, error)
	// Items returns a page of the collection's items in the query's order,
	// ties broken by id.
	Items(ctx context.Context, c Collection, q ItemQuery) ([]Item, error)
	// Item returns a site's collection by slug and one of its items, in
	// one read: ErrNotFound when the site has no such collection (the
	// Collection is zero then) or the collection no such item (the
	// Collection is returned).
	Item(ctx context.Context, siteID, slug, id string) (Collection, Item, error)
	// CollectionForWrite is Collection for a write that InsertItem
	// checks: it may return a definition remembered from an earlier read.
	CollectionForWrite(ctx context.Context, siteID, slug string) (Collection, error)
	// InsertItem is Tx.InsertItem in a transaction of its own, for an
	// item of c whose writing reads nothing first (on PostgreSQL one
	// statement), made only if c's fields are still the collection's:
	// ErrCollectionChanged, and nothing written, when they are not.
	InsertItem(ctx context.Context, c Collection, it Item, announce outbox.Event) error
	// ItemsByID returns those of ids that are items of the collection,
	// in any order: one read, whatever the number of ids.
	ItemsByID(ctx context.Context, collectionID string, ids []string) ([]Item, error)
	// AssetsByID returns those of ids that are assets of the site, in any
	// order: one read.
	AssetsByID(ctx context.Context, siteID string, ids []string) ([]Asset, error)
	// Assets lists a page of a site's assets by created_at descending,
	// then id descending.
	Assets(ctx context.Context, siteID string, page pagination.Page) ([]Asset, error)
	// Asset returns a site's asset: ErrNotFound for none, another site's
	// included.
	Asset(ctx context.Context, siteID, id string) (Asset, error)
	// PreviewLinks lists the links to c's items (to one item when itemID
	// is set) that have not expired at now, by created_at descending, then
	// id descending.
	PreviewLinks(ctx context.Context, c Collection, itemID string, now time.Time) ([]PreviewLink, error)
	// PreviewLink returns the link whose token has the hash, expired or
	// not, with its collection's slug; ErrNotFound for none.
	PreviewLink(ctx context.Context, tokenHash string) (PreviewLink, error)
	// InTx runs fn in a transaction: all of its writes and events, or none.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Tx is a transaction.
type Tx interface {
	InsertSite(ctx context.Context, s Site) error
	Site(ctx context.Context, id string) (Site, error)
	// UpdateSite stores s's name, origins and updated_at; ErrNotFound
	// for no such site.
	UpdateSite(ctx context.Context, s Site) error
	Collection(ctx context.Context, siteID, slug string) (Collection, error)
	// InsertCollection fails with ErrDuplicate when the site has the slug.
	InsertCollection(ctx context.Context, c Collection) error
	// UpdateCollection stores c's name and fields and removes the values
	// of the removed fields from every item of c.
	UpdateCollection(ctx context.Context, c Collection, removed []string) error
	ItemExists(ctx context.Context, collectionID, id string) (bool, error)
	// InsertItem adds an item and enqueues the event that announces it,
	// as one write (one round trip on PostgreSQL); ErrDuplicate when the
	// id is taken.
	InsertItem(ctx context.Context, it Item, announce outbox.Event) error
	// PatchItem applies p to the item in one atomic write (its schedule
	// fields included) and returns the item before and after; ErrNotFound, or ErrVersionMismatch when
	// p.IfVersion does not hold.
	PatchItem(ctx context.Context, collectionID, id string, p ItemPatch) (before, after Item, err error)
	// DeleteItem deletes the item, and its preview links, and returns it;
	// ErrNotFound, or ErrVersionMismatch when ifVersion is set and does
	// not hold.
	DeleteItem(ctx context.Context, collectionID, id string, ifVersion *int64) (Item, error)
	// InsertAsset adds an asset and enqueues the event announcing it;
	// ErrDuplicate when its id or name is taken.
	InsertAsset(ctx context.Context, a Asset, announce outbox.Event) error
	// UpdateAsset applies p to a site's asset and returns it as changed;
	// ErrNotFound for none (another site's included).
	UpdateAsset(ctx context.Context, siteID, id string, p AssetPatch) (Asset, error)
	// DeleteAsset deletes a site's asset and returns it; ErrNotFound for
	// none (another site's included).
	DeleteAsset(ctx context.Context, siteID, id string) (Asset, error)
	// AssetExists reports whether the site has the asset.
	AssetExists(ctx context.Context, siteID, id string) (bool, error)
	// ClaimDue returns up to limit items with a scheduled change due at
	// now, each claimed by the transaction: a concurrent ClaimDue (another
	// replica's) skips them rather than waiting, and sees them again only
	// if this transaction leaves them due.
	ClaimDue(ctx context.Context, now time.Time, limit int) ([]DueItem, error)
	// InsertPreviewLink adds a link to an existing item.
	InsertPreviewLink(ctx context.Context, l PreviewLink) error
	// DeletePreviewLink deletes a site's link; ErrNotFound for none
	// (another site's included).
	DeletePreviewLink(ctx context.Context, siteID, id string) error
	// DeleteExpiredPreviewLinks deletes up to limit links that expired
	// before the time, and returns how many it deleted.
	DeleteExpiredPreviewLinks(ctx context.Context, before time.Time, limit int) (int, error)
	// Enqueue adds an event to the outbox, published after commit.
	Enqueue(ctx context.Context, e outbox.Event) error
}

// Clock returns the current time; store.Clock fixes its precision.
type Clock = store.Clock

// Sites provisions sites.
type Sites struct {
	store Store
	clock Clock
}

// NewSites returns the site use cases.
func NewSites(store Store, clock Clock) *Sites { return &Sites{store: store, clock: clock} }

// Create creates a site.
func (u *Sites) Create(ctx context.Context, name string) (Site, error) {
	name, err := checkName("name", name)
	if err != nil {
		return Site{}, err
	}
	now := u.clock.Now()
	s := Site{ID: store.NewID(), Name: name, CreatedAt: now, UpdatedAt: now, AllowedOrigins: []string{}}
	err = u.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertSite(ctx, s); err != nil {
			return err
		}
		return outbox.Add(ctx, tx, events.SiteCreated, events.SiteEvent{ID: s.ID, At: now}, now)
	})
	return s, err
}

// List lists sites, newest first: the operator's way back to a site's id.
func (u *Sites) List(ctx context.Context, limit, offset *int32) ([]Site, error) {
	page, err := pagination.Admin.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	return u.store.Sites(ctx, page)
}

// Get returns a site. An id that is not a UUID names no site.
func (u *Sites) Get(ctx context.Context, id string) (Site, error) {
	canonical, err := value.PathID("site", id)
	if err != nil {
		return Site{}, err
	}
	s, err := u.store.Site(ctx, canonical)
	if errors.Is(err, ErrNotFound) {
		return Site{}, value.NotFound("site", id)
	}
	return s, err
}

// maxOrigins bounds a site's allowed origins.
const maxOrigins = 50

// checkOrigin validates an allowed origin: "*", or a web origin as
// browsers send it in the Origin header (scheme, host and a port unless
// it is the scheme's default; no path, lower case).
func checkOrigin(i int, o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "/") || o != strings.ToLower(o) ||
		(u.Port() == "443" && u.Scheme == "https") || (u.Port() == "80" && u.Scheme == "http") {
		return apperr.Invalid("allowed_origins[%d] must be * or an origin as browsers send it: http or https, a lower-case host and a port only if not the default, no path (https://www.example.com); got %q", i, o)
	}
	return nil
}

// SetOrigins replaces a site's allowed origins (CORS). An id that is not
// a UUID names no site.
func (u *Sites) SetOrigins(ctx context.Context, id string, origins []string) (Site, error) {
	canonical, err := value.PathID("site", id)
	if err != nil {
		return Site{}, err
	}
	if len(origins) > maxOrigins {
		return Site{}, apperr.Invalid("allowed_origins lists at most %d origins; got %d", maxOrigins, len(origins))
	}
	clean := []string{}
	for i, o := range origins {
		if err := checkOrigin(i, o); err != nil {
			return Site{}, err
		}
		if !slices.Contains(clean, o) {
			clean = append(clean, o)
		}
	}
	var s Site
	err = u.store.InTx(ctx, func(tx Tx) error {
		s, err = tx.Site(ctx, canonical)
		if errors.Is(err, ErrNotFound) {
			return value.NotFound("site", id)
		} else if err != nil {
			return err
		}
		s.AllowedOrigins, s.UpdatedAt = clean, u.clock.Now()
		if err := tx.UpdateSite(ctx, s); err != nil {
			return err
		}
		return outbox.Add(ctx, tx, events.SiteUpdated, events.SiteEvent{ID: s.ID, At: s.UpdatedAt}, s.UpdatedAt)
	})
	return s, err
}
