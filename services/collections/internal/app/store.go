package app

// The store ports, one per use case (as the CRM's are): each use case
// holds the reads and the transaction it needs and no more, so that a
// use case that grows (revisions, locales) grows its own port. An adapter
// implements Store, the union, held to the one contract suite
// (storetest.RunAll); SiteStoreOf and the others present it as each port.

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
)

// Store is what a collections store adapter implements: the reads of
// every use case and transactions that can do the writes of every use
// case. The memory and postgres adapters both satisfy it. Reads outside a
// transaction see committed state.
type Store interface {
	SiteReader
	ContentReader
	AssetReader
	PreviewReader
	// InTx runs fn in a transaction: all of its writes and events, or none.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Tx is an adapter's transaction: every use case's transaction port at
// once.
type Tx interface {
	SiteTx
	ContentTx
	AssetTx
	PreviewTx
	ScheduleTx
}

// SiteStore is the store as the site use cases use it.
type SiteStore interface {
	SiteReader
	InTx(ctx context.Context, fn func(SiteTx) error) error
}

// SiteReader is what the site use cases read outside transactions.
type SiteReader interface {
	Site(ctx context.Context, id string) (Site, error)
	// Sites lists the sites filter matches by created_at descending,
	// then id descending.
	Sites(ctx context.Context, filter SiteFilter, page pagination.Page) ([]Site, error)
	// AgencySites lists every site agencyID (a canonical id) owns, by
	// name, then id: names compare byte by byte, so that every adapter
	// answers in the same order whatever the database's collation.
	AgencySites(ctx context.Context, agencyID string) ([]Site, error)
}

// SiteTx is a transaction as the site use cases use it.
type SiteTx interface {
	InsertSite(ctx context.Context, s Site) error
	Site(ctx context.Context, id string) (Site, error)
	// UpdateSite stores s's name, origins, owner (agency and client) and
	// updated_at; ErrNotFound
	// for no such site.
	UpdateSite(ctx context.Context, s Site) error
	// ItemsInLocales counts, for each of locales, the items of the site
	// that hold a value in it (Item.Locales); locales none holds are
	// absent.
	ItemsInLocales(ctx context.Context, siteID string, locales []string) (map[string]int, error)
	// Enqueue adds an event to the outbox, published after commit.
	Enqueue(ctx context.Context, e outbox.Event) error
}

// ContentStore is the store as the collection and item use cases (Content) use it.
type ContentStore interface {
	ContentReader
	InTx(ctx context.Context, fn func(ContentTx) error) error
}

// ContentReader is what the collection and item use cases (Content) read outside transactions.
type ContentReader interface {
	Site(ctx context.Context, id string) (Site, error)
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
	InsertItem(ctx context.Context, c Collection, it Item, e Edit, announce ...outbox.Event) error
	// Revisions returns up to limit revisions of an item of the
	// collection, by version descending, those before version before
	// only when it is above 0: a deleted item's too, while they are kept.
	Revisions(ctx context.Context, collectionID, itemID string, before int64, limit int) ([]Revision, error)
	// Revision returns one revision of an item of the collection;
	// ErrNotFound for none.
	Revision(ctx context.Context, collectionID, itemID string, version int64) (Revision, error)
	// ItemsByID returns those of ids that are items of the collection,
	// in any order: one read, whatever the number of ids.
	ItemsByID(ctx context.Context, collectionID string, ids []string) ([]Item, error)
	// AssetsByID returns those of ids that are assets of the site, in any
	// order: one read.
	AssetsByID(ctx context.Context, siteID string, ids []string) ([]Asset, error)
}

// ContentTx is a transaction as the collection and item use cases (Content) use it.
type ContentTx interface {
	Collection(ctx context.Context, siteID, slug string) (Collection, error)
	// InsertCollection fails with ErrDuplicate when the site has the slug.
	InsertCollection(ctx context.Context, c Collection) error
	// UpdateCollection stores c's name and fields and removes the values
	// of the removed fields from every item of c.
	UpdateCollection(ctx context.Context, c Collection, removed []string) error
	ItemExists(ctx context.Context, collectionID, id string) (bool, error)
	// InsertItem adds an item, its revision (e, at it.UpdatedAt) and
	// enqueues the events that announce it (item.created, and
	// item.published for an item created published), as one write (one
	// round trip on PostgreSQL); ErrDuplicate when the id is taken.
	InsertItem(ctx context.Context, it Item, e Edit, announce ...outbox.Event) error
	// PatchItem applies p to the item in one atomic write (its schedule
	// fields included), with the revision it makes (p.Edit, at p.At), and
	// returns the item before and after; ErrNotFound, or
	// ErrVersionMismatch when p.IfVersion does not hold.
	PatchItem(ctx context.Context, collectionID, id string, p ItemPatch) (before, after Item, err error)
	// DeleteItem deletes the item, and its preview links, keeps its
	// revision of the delete (e at at, the item's data, version one
	// more, not published) and returns the item as it was; ErrNotFound,
	// or ErrVersionMismatch when ifVersion is set and does not hold.
	DeleteItem(ctx context.Context, collectionID, id string, ifVersion *int64, e Edit, at time.Time) (Item, error)
	// LatestRevision returns the item's newest revision, locked until the
	// transaction ends (the retention purge skips it meanwhile);
	// ErrNotFound for none.
	LatestRevision(ctx context.Context, collectionID, itemID string) (Revision, error)
	// AssetExists reports whether the site has the asset.
	AssetExists(ctx context.Context, siteID, id string) (bool, error)
	// Enqueue adds an event to the outbox, published after commit.
	Enqueue(ctx context.Context, e outbox.Event) error
}

// AssetStore is the store as the asset use cases use it.
type AssetStore interface {
	AssetReader
	InTx(ctx context.Context, fn func(AssetTx) error) error
}

// AssetReader is what the asset use cases read outside transactions.
type AssetReader interface {
	// Asset returns a site's asset: ErrNotFound for none, another site's
	// included.
	Asset(ctx context.Context, siteID, id string) (Asset, error)
	// Assets lists a page of a site's assets by created_at descending,
	// then id descending.
	Assets(ctx context.Context, siteID string, page pagination.Page) ([]Asset, error)
}

// AssetTx is a transaction as the asset use cases use it.
type AssetTx interface {
	// InsertAsset adds an asset and enqueues the event announcing it;
	// ErrDuplicate when its id or name is taken.
	InsertAsset(ctx context.Context, a Asset, announce outbox.Event) error
	// UpdateAsset applies p to a site's asset and returns it as changed;
	// ErrNotFound for none (another site's included).
	UpdateAsset(ctx context.Context, siteID, id string, p AssetPatch) (Asset, error)
	// DeleteAsset deletes a site's asset and returns it; ErrNotFound for
	// none (another site's included).
	DeleteAsset(ctx context.Context, siteID, id string) (Asset, error)
	// Enqueue adds an event to the outbox, published after commit.
	Enqueue(ctx context.Context, e outbox.Event) error
}

// PreviewStore is the store as the preview link use cases use it.
type PreviewStore interface {
	PreviewReader
	InTx(ctx context.Context, fn func(PreviewTx) error) error
}

// PreviewReader is what the preview link use cases read outside transactions.
type PreviewReader interface {
	// Item returns a site's collection by slug and one of its items, in
	// one read: ErrNotFound when the site has no such collection (the
	// Collection is zero then) or the collection no such item (the
	// Collection is returned).
	Item(ctx context.Context, siteID, slug, id string) (Collection, Item, error)
	// PreviewLinks lists the links to c's items (to one item when itemID
	// is set) that have not expired at now, by created_at descending, then
	// id descending.
	PreviewLinks(ctx context.Context, c Collection, itemID string, now time.Time) ([]PreviewLink, error)
	// PreviewLink returns the link whose token has the hash, expired or
	// not, with its collection's slug; ErrNotFound for none.
	PreviewLink(ctx context.Context, tokenHash string) (PreviewLink, error)
}

// PreviewTx is a transaction as the preview link use cases use it.
type PreviewTx interface {
	ItemExists(ctx context.Context, collectionID, id string) (bool, error)
	// InsertPreviewLink adds a link to an existing item.
	InsertPreviewLink(ctx context.Context, l PreviewLink) error
	// DeletePreviewLink deletes a site's link; ErrNotFound for none
	// (another site's included).
	DeletePreviewLink(ctx context.Context, siteID, id string) error
	// Enqueue adds an event to the outbox, published after commit.
	Enqueue(ctx context.Context, e outbox.Event) error
}

// ScheduleStore is the store as the scheduler uses it: transactions only.
type ScheduleStore interface {
	InTx(ctx context.Context, fn func(ScheduleTx) error) error
}

// ScheduleTx is a transaction as the scheduler uses it.
type ScheduleTx interface {
	// ClaimDue returns up to limit items with a scheduled change due at
	// now, each claimed by the transaction: a concurrent ClaimDue (another
	// replica's) skips them rather than waiting, and sees them again only
	// if this transaction leaves them due.
	ClaimDue(ctx context.Context, now time.Time, limit int) ([]DueItem, error)
	// PatchItem applies p to the item in one atomic write (its schedule
	// fields included) and returns the item before and after; ErrNotFound, or ErrVersionMismatch when
	// p.IfVersion does not hold.
	PatchItem(ctx context.Context, collectionID, id string, p ItemPatch) (before, after Item, err error)
	// PurgeRevisions deletes every revision of up to limit items whose
	// newest revision is a delete made before the time, skipping those
	// another transaction holds, and returns how many items it purged.
	PurgeRevisions(ctx context.Context, deletedBefore time.Time, limit int) (int, error)
	// DeleteExpiredPreviewLinks deletes up to limit links that expired
	// before the time, and returns how many it deleted.
	DeleteExpiredPreviewLinks(ctx context.Context, before time.Time, limit int) (int, error)
	// Enqueue adds an event to the outbox, published after commit.
	Enqueue(ctx context.Context, e outbox.Event) error
}

// SiteStoreOf presents an adapter's Store as the port of the site use cases.
func SiteStoreOf(s Store) SiteStore {
	return view[SiteTx]{s, func(tx Tx) SiteTx { return tx }}
}

// ContentStoreOf presents an adapter's Store as the port of the collection and item use cases (Content).
func ContentStoreOf(s Store) ContentStore {
	return view[ContentTx]{s, func(tx Tx) ContentTx { return tx }}
}

// AssetStoreOf presents an adapter's Store as the port of the asset use cases.
func AssetStoreOf(s Store) AssetStore {
	return view[AssetTx]{s, func(tx Tx) AssetTx { return tx }}
}

// PreviewStoreOf presents an adapter's Store as the port of the preview link use cases.
func PreviewStoreOf(s Store) PreviewStore {
	return view[PreviewTx]{s, func(tx Tx) PreviewTx { return tx }}
}

// ScheduleStoreOf presents an adapter's Store as the port of the scheduler.
func ScheduleStoreOf(s Store) ScheduleStore {
	return view[ScheduleTx]{s, func(tx Tx) ScheduleTx { return tx }}
}

// view is a Store whose InTx hands fn the transaction as a narrower port
// T. Go does not accept a func(SiteTx) where a func(Tx) is expected,
// although every Tx is a SiteTx, so narrow does that conversion (and the
// compiler checks it); the port's own interface type hides the other use
// cases' reads.
type view[T any] struct {
	Store
	narrow func(Tx) T
}

func (v view[T]) InTx(ctx context.Context, fn func(T) error) error {
	return v.Store.InTx(ctx, func(tx Tx) error { return fn(v.narrow(tx)) })
}
