// Package memory is the collections store kept in process memory, the
// embedded default, held to the same contract suite as PostgreSQL. The lock,
// undo log and outbox are platform/memdb's.
package memory

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// Store is the in-memory collections store. Items are immutable values:
// a write replaces an item, so a reader holding one never sees it change.
type Store struct {
	db          *memdb.DB
	sites       map[string]app.Site
	collections map[string]app.Collection // by id
	slugs       map[string]string         // site id + "/" + slug -> collection id
	items       map[string]app.Item       // by id
	// order holds each collection's item ids sorted by (created_at, id),
	// oldest first, so that the default list is a slice walk.
	order map[string][]string
	// assets by id; assetOrder each site's asset ids as order does items;
	// assetNames the capability names in use.
	assets     map[string]app.Asset
	assetOrder map[string][]string
	assetNames map[string]string
	// scheduled are the ids of the items with a pending scheduled change,
	// which is what ClaimDue reads.
	scheduled map[string]struct{}
	// revisions are each item's revisions by version ascending, kept
	// after the item is deleted; deleted holds the ids of the items
	// whose newest revision is a delete, which the purge reads.
	revisions map[string][]app.Revision
	deleted   map[string]struct{}
	// previews by id, and their ids by token hash.
	previews      map[string]app.PreviewLink
	previewTokens map[string]string
	// searched are the collections' search indexes, built when a search
	// needs one and rebuilt after a write to the collection (generation
	// counts those writes).
	searchMu   sync.Mutex
	searched   map[string]*searchIndex
	generation map[string]uint64
}

// searchIndex maps each word of a collection's items to the items holding
// it and how often, as of one generation of the collection.
type searchIndex struct {
	generation uint64
	words      map[string]map[string]int
}

// touch marks a write to a collection's items: its search index is stale.
// Called with the store locked for writing; a rolled-back write costs one
// rebuild.
func (s *Store) touch(collectionID string) { s.generation[collectionID]++ }

// index returns c's search index, building it if it is stale. Called with
// the store locked for reading.
func (s *Store) index(c app.Collection) *searchIndex {
	s.searchMu.Lock()
	defer s.searchMu.Unlock()
	gen := s.generation[c.ID]
	if idx, ok := s.searched[c.ID]; ok && idx.generation == gen {
		return idx
	}
	idx := &searchIndex{generation: gen, words: map[string]map[string]int{}}
	for _, id := range s.order[c.ID] {
		for _, w := range app.Words(app.SearchText(c, s.items[id])) {
			m := idx.words[w]
			if m == nil {
				m = map[string]int{}
				idx.words[w] = m
			}
			m[id]++
		}
	}
	s.searched[c.ID] = idx
	return idx
}

// search returns the ids of c's items holding every one of words, in the
// collection's order (oldest first), and how often they hold them.
func (s *Store) search(c app.Collection, words []string) ([]string, map[string]int) {
	idx := s.index(c)
	lists := make([]map[string]int, len(words))
	for i, w := range words {
		if lists[i] = idx.words[w]; len(lists[i]) == 0 {
			return nil, nil
		}
	}
	slices.SortFunc(lists, func(a, b map[string]int) int { return cmp.Compare(len(a), len(b)) })
	rank := map[string]int{}
	var ids []string
next:
	for id, n := range lists[0] {
		for _, l := range lists[1:] {
			k := l[id]
			if k == 0 {
				continue next
			}
			n += k
		}
		rank[id] = n
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(s.items[a].CreatedAt.Compare(s.items[b].CreatedAt), cmp.Compare(a, b))
	})
	return ids, rank
}

// New returns an empty store on db.
func New(db *memdb.DB) *Store {
	return &Store{db: db, sites: map[string]app.Site{}, collections: map[string]app.Collection{},
		slugs: map[string]string{}, items: map[string]app.Item{}, order: map[string][]string{},
		assets: map[string]app.Asset{}, assetOrder: map[string][]string{}, assetNames: map[string]string{},
		previews: map[string]app.PreviewLink{}, previewTokens: map[string]string{}, scheduled: map[string]struct{}{},
		revisions: map[string][]app.Revision{}, deleted: map[string]struct{}{},
		searched: map[string]*searchIndex{}, generation: map[string]uint64{}}
}

func slugKey(siteID, slug string) string { return siteID + "/" + slug }

// Site implements app.Store.
func (s *Store) Site(_ context.Context, id string) (app.Site, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.site(id)
}

// Sites implements app.Store.
func (s *Store) Sites(_ context.Context, filter app.SiteFilter, page pagination.Page) ([]app.Site, error) {
	s.db.RLock()
	rows := slices.Collect(maps.Values(s.sites))
	s.db.RUnlock()
	if filter.AgencyID != "" {
		rows = slices.DeleteFunc(rows, func(site app.Site) bool { return site.AgencyID != filter.AgencyID })
	}
	slices.SortFunc(rows, func(a, b app.Site) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	start := min(int(page.Offset), len(rows))
	return slices.Clone(rows[start:min(start+int(page.Limit), len(rows))]), nil
}

// AgencySites implements app.Store. It scans the sites: an agency's list
// is read when a console opens, never on a content request's path.
func (s *Store) AgencySites(_ context.Context, agencyID string) ([]app.Site, error) {
	s.db.RLock()
	out := []app.Site{}
	for _, site := range s.sites {
		if site.AgencyID == agencyID {
			out = append(out, site)
		}
	}
	s.db.RUnlock()
	slices.SortFunc(out, func(a, b app.Site) int { return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID)) })
	return out, nil
}

func (s *Store) site(id string) (app.Site, error) {
	site, ok := s.sites[id]
	if !ok {
		return app.Site{}, fmt.Errorf("site %s: %w", id, app.ErrNotFound)
	}
	return site, nil
}

// Collections implements app.Store.
func (s *Store) Collections(_ context.Context, siteID string) ([]app.Collection, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	out := []app.Collection{}
	for _, c := range s.collections {
		if c.SiteID == siteID {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b app.Collection) int { return cmp.Compare(a.Slug, b.Slug) })
	return out, nil
}

// Collection implements app.Store.
func (s *Store) Collection(_ context.Context, siteID, slug string) (app.Collection, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.collection(siteID, slug)
}

func (s *Store) collection(siteID, slug string) (app.Collection, error) {
	id, ok := s.slugs[slugKey(siteID, slug)]
	if !ok {
		return app.Collection{}, fmt.Errorf("collection %s: %w", slug, app.ErrNotFound)
	}
	return s.collections[id], nil
}

func matches(it app.Item, q app.ItemQuery) bool {
	if q.Published != nil && it.IsPublished != *q.Published {
		return false
	}
	if q.FilterKey != "" && !bytes.Equal(it.Values[q.FilterKey], q.FilterValue) {
		return false
	}
	return true
}

// Items implements app.Store.
func (s *Store) Items(_ context.Context, c app.Collection, q app.ItemQuery) ([]app.Item, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	ids := s.order[c.ID]
	var rank map[string]int
	if len(q.Words) > 0 {
		ids, rank = s.search(c, q.Words)
	}
	if q.OrderBy == app.OrderRelevance {
		slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(rank[a], rank[b]), cmp.Compare(a, b)) })
	} else if q.OrderField != nil {
		ids = slices.Clone(ids)
		key := q.OrderField.Key
		slices.SortFunc(ids, func(a, b string) int {
			return cmp.Or(app.CompareValues(s.items[a].Values[key], s.items[b].Values[key]), cmp.Compare(a, b))
		})
	} else if q.OrderBy == "updated_at" {
		ids = slices.Clone(ids)
		slices.SortFunc(ids, func(a, b string) int {
			ia, ib := s.items[a], s.items[b]
			return cmp.Or(ia.UpdatedAt.Compare(ib.UpdatedAt), cmp.Compare(a, b))
		})
	}
	out := make([]app.Item, 0, min(int(q.Page.Limit), len(ids)))
	skip := int(q.Page.Offset)
	for i := range ids {
		j := i
		if !q.Asc {
			j = len(ids) - 1 - i
		}
		it := s.items[ids[j]]
		if !matches(it, q) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		it.Values = q.Fields.Project(it.Values)
		out = append(out, it)
		if len(out) == int(q.Page.Limit) {
			break
		}
	}
	return out, nil
}

// Item implements app.Store.
func (s *Store) Item(_ context.Context, siteID, slug, id string) (app.Collection, app.Item, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	c, err := s.collection(siteID, slug)
	if err != nil {
		return app.Collection{}, app.Item{}, err
	}
	it, err := s.item(c.ID, id)
	return c, it, err
}

func (s *Store) item(collectionID, id string) (app.Item, error) {
	it, ok := s.items[id]
	if !ok || it.CollectionID != collectionID {
		return app.Item{}, fmt.Errorf("item %s: %w", id, app.ErrNotFound)
	}
	return it, nil
}

// CollectionForWrite implements app.Store: the collection as it is.
func (s *Store) CollectionForWrite(ctx context.Context, siteID, slug string) (app.Collection, error) {
	return s.Collection(ctx, siteID, slug)
}

// InsertItem implements app.Store.
func (s *Store) InsertItem(ctx context.Context, c app.Collection, it app.Item, e app.Edit, announce ...outbox.Event) error {
	return s.InTx(ctx, func(tx app.Tx) error {
		if now, ok := s.collections[c.ID]; !ok || !reflect.DeepEqual(now.Fields, c.Fields) {
			return app.ErrCollectionChanged
		}
		return tx.InsertItem(ctx, it, e, announce...)
	})
}

// Revisions implements app.Store.
func (s *Store) Revisions(_ context.Context, collectionID, itemID string, before int64, limit int) ([]app.Revision, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	out := []app.Revision{}
	revs := s.revisions[itemID]
	for i := len(revs) - 1; i >= 0 && len(out) < limit; i-- {
		r := revs[i]
		if r.CollectionID == collectionID && (before <= 0 || r.Version < before) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Revision implements app.Store.
func (s *Store) Revision(_ context.Context, collectionID, itemID string, version int64) (app.Revision, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	for _, r := range s.revisions[itemID] {
		if r.Version == version && r.CollectionID == collectionID {
			return r, nil
		}
	}
	return app.Revision{}, fmt.Errorf("revision %d of item %s: %w", version, itemID, app.ErrNotFound)
}

// keep appends an item's revision. Appending leaves the elements of the
// slice before it as they were, so that a rollback restores it by length
// (as the items' order does) and every write does not copy the item's
// history; readers copy what they return under the read lock.
func (t *tx) keep(it app.Item, version int64, published bool, e app.Edit, at time.Time) {
	r := app.Revision{ItemID: it.ID, CollectionID: it.CollectionID, Version: version, Values: maps.Clone(it.Values), IsPublished: published,
		Change: e.Change, Actor: e.Actor, CreatedAt: at}
	if r.Values == nil {
		r.Values = app.Values{}
	}
	memdb.Put(t.Tx, t.s.revisions, it.ID, append(t.s.revisions[it.ID], r))
	if e.Change == app.ChangeDeleted {
		memdb.Put(t.Tx, t.s.deleted, it.ID, struct{}{})
	} else {
		memdb.Delete(t.Tx, t.s.deleted, it.ID)
	}
}

func (t *tx) LatestRevision(_ context.Context, collectionID, itemID string) (app.Revision, error) {
	revs := t.s.revisions[itemID]
	if len(revs) == 0 || revs[len(revs)-1].CollectionID != collectionID {
		return app.Revision{}, fmt.Errorf("revisions of item %s: %w", itemID, app.ErrNotFound)
	}
	return revs[len(revs)-1], nil
}

// PurgeRevisions implements app.Tx. The transaction holds the store's
// write lock, which is the claim.
func (t *tx) PurgeRevisions(_ context.Context, deletedBefore time.Time, limit int) (int, error) {
	n := 0
	for id := range t.s.deleted {
		if n == limit {
			break
		}
		revs := t.s.revisions[id]
		if len(revs) == 0 || !revs[len(revs)-1].CreatedAt.Before(deletedBefore) {
			continue
		}
		memdb.Delete(t.Tx, t.s.revisions, id)
		memdb.Delete(t.Tx, t.s.deleted, id)
		n++
	}
	return n, nil
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *memdb.Tx) error { return fn(&tx{Tx: t, s: s}) })
}

type tx struct {
	*memdb.Tx
	s *Store
}

func (t *tx) InsertSite(_ context.Context, site app.Site) error {
	if _, ok := t.s.sites[site.ID]; ok {
		return fmt.Errorf("site %s: %w", site.ID, app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.sites, site.ID, site)
	return nil
}

func (t *tx) Site(_ context.Context, id string) (app.Site, error) { return t.s.site(id) }

func (t *tx) UpdateSite(_ context.Context, site app.Site) error {
	if _, ok := t.s.sites[site.ID]; !ok {
		return fmt.Errorf("site %s: %w", site.ID, app.ErrNotFound)
	}
	memdb.Put(t.Tx, t.s.sites, site.ID, site)
	return nil
}

func (t *tx) ItemsInLocales(_ context.Context, siteID string, locales []string) (map[string]int, error) {
	out := map[string]int{}
	for _, it := range t.s.items {
		if len(it.Locales) == 0 || t.s.collections[it.CollectionID].SiteID != siteID {
			continue
		}
		for _, l := range locales {
			if _, ok := it.Locales[l]; ok {
				out[l]++
			}
		}
	}
	return out, nil
}

func (t *tx) Collection(_ context.Context, siteID, slug string) (app.Collection, error) {
	return t.s.collection(siteID, slug)
}

func (t *tx) InsertCollection(_ context.Context, c app.Collection) error {
	if _, ok := t.s.sites[c.SiteID]; !ok {
		return fmt.Errorf("site %s: %w", c.SiteID, app.ErrNotFound)
	}
	if _, ok := t.s.slugs[slugKey(c.SiteID, c.Slug)]; ok {
		return fmt.Errorf("collection %s: %w", c.Slug, app.ErrDuplicate)
	}
	memdb.Put(t.Tx, t.s.collections, c.ID, c)
	memdb.Put(t.Tx, t.s.slugs, slugKey(c.SiteID, c.Slug), c.ID)
	return nil
}

func (t *tx) UpdateCollection(_ context.Context, c app.Collection, removed []string) error {
	if _, ok := t.s.collections[c.ID]; !ok {
		return fmt.Errorf("collection %s: %w", c.ID, app.ErrNotFound)
	}
	memdb.Put(t.Tx, t.s.collections, c.ID, c)
	if len(removed) == 0 {
		return nil
	}
	for _, id := range t.s.order[c.ID] {
		it := t.s.items[id]
		vals := maps.Clone(it.Values)
		for _, k := range removed {
			delete(vals, k)
		}
		it.Values = vals
		if it.Locales != nil {
			locales := map[string]app.Values{}
			for l, v := range it.Locales {
				if v = patched(v, app.ItemPatch{Unset: removed}); len(v) > 0 {
					locales[l] = v
				}
			}
			it.Locales = nil
			if len(locales) > 0 {
				it.Locales = locales
			}
		}
		memdb.Put(t.Tx, t.s.items, id, it)
	}
	t.s.touch(c.ID)
	return nil
}

func (t *tx) ItemExists(_ context.Context, collectionID, id string) (bool, error) {
	_, err := t.s.item(collectionID, id)
	return err == nil, nil
}

// position is where an item sorts in its collection's order.
func position(s *Store, ids []string, it app.Item) (int, bool) {
	return slices.BinarySearchFunc(ids, it, func(id string, target app.Item) int {
		e := s.items[id]
		return cmp.Or(e.CreatedAt.Compare(target.CreatedAt), cmp.Compare(id, target.ID))
	})
}

func (t *tx) setOrder(collectionID string, ids []string) {
	old, existed := t.s.order[collectionID]
	t.s.order[collectionID] = ids
	t.OnRollback(func() {
		if existed {
			t.s.order[collectionID] = old
		} else {
			delete(t.s.order, collectionID)
		}
	})
}

func (t *tx) InsertItem(ctx context.Context, it app.Item, e app.Edit, announce ...outbox.Event) error {
	if _, ok := t.s.items[it.ID]; ok {
		return fmt.Errorf("item %s: %w", it.ID, app.ErrDuplicate)
	}
	ids := t.s.order[it.CollectionID]
	i, _ := position(t.s, ids, it)
	var next []string
	if i == len(ids) {
		// The usual case, a new item being the newest: append, which
		// leaves the old slice's elements as they were, so a rollback
		// restores it by length. Copying every id on each create made
		// creates slower as the collection grew.
		next = append(ids, it.ID)
	} else {
		// A new slice, so that a rollback restores the old one untouched.
		next = make([]string, 0, len(ids)+1)
		next = append(append(append(next, ids[:i]...), it.ID), ids[i:]...)
	}
	memdb.Put(t.Tx, t.s.items, it.ID, it)
	t.s.touch(it.CollectionID)
	t.setOrder(it.CollectionID, next)
	t.track(it)
	t.keep(it, it.Version, it.IsPublished, e, it.UpdatedAt)
	for _, e := range announce {
		if err := t.Enqueue(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) PatchItem(_ context.Context, collectionID, id string, p app.ItemPatch) (app.Item, app.Item, error) {
	before, err := t.s.item(collectionID, id)
	if err != nil {
		return app.Item{}, app.Item{}, err
	}
	if p.IfVersion != nil && *p.IfVersion != before.Version {
		return app.Item{}, app.Item{}, app.ErrVersionMismatch
	}
	after := before
	if p.Locale == "" {
		after.Values = patched(before.Values, p)
	} else {
		after.Locales = maps.Clone(before.Locales)
		if after.Locales == nil {
			after.Locales = map[string]app.Values{}
		}
		if v := patched(before.Locales[p.Locale], p); len(v) > 0 {
			after.Locales[p.Locale] = v
		} else {
			delete(after.Locales, p.Locale)
		}
		if len(after.Locales) == 0 {
			after.Locales = nil
		}
	}
	if p.IsPublished != nil {
		after.IsPublished = *p.IsPublished
	}
	if p.SetPublishAt {
		after.PublishAt = p.PublishAt
	}
	if p.SetUnpublishAt {
		after.UnpublishAt = p.UnpublishAt
	}
	after.Version++
	after.UpdatedAt = p.At
	memdb.Put(t.Tx, t.s.items, id, after)
	t.track(after)
	t.keep(after, after.Version, after.IsPublished, p.Edit, p.At)
	t.s.touch(collectionID)
	return before, after, nil
}

// patched is a copy of values with p's Unset and Set applied.
func patched(values app.Values, p app.ItemPatch) app.Values {
	out := maps.Clone(values)
	if out == nil {
		out = app.Values{}
	}
	for _, k := range p.Unset {
		delete(out, k)
	}
	maps.Copy(out, p.Set)
	return out
}

func (t *tx) DeleteItem(_ context.Context, collectionID, id string, ifVersion *int64, e app.Edit, at time.Time) (app.Item, error) {
	it, err := t.s.item(collectionID, id)
	if err != nil {
		return app.Item{}, err
	}
	if ifVersion != nil && *ifVersion != it.Version {
		return app.Item{}, app.ErrVersionMismatch
	}
	ids := t.s.order[collectionID]
	if i, found := position(t.s, ids, it); found {
		t.setOrder(collectionID, slices.Concat(ids[:i], ids[i+1:]))
	}
	memdb.Delete(t.Tx, t.s.items, id)
	memdb.Delete(t.Tx, t.s.scheduled, id)
	t.keep(it, it.Version+1, false, e, at)
	// Its preview links go with it. A scan: links are few (people make
	// them by hand) and deletes rare beside reads.
	for _, l := range t.s.previews {
		if l.ItemID == id {
			t.deletePreview(l)
		}
	}
	t.s.touch(collectionID)
	return it, nil
}

// Assets implements app.Store.
func (s *Store) Assets(_ context.Context, siteID string, page pagination.Page) ([]app.Asset, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	ids := s.assetOrder[siteID]
	out := make([]app.Asset, 0, min(int(page.Limit), len(ids)))
	for i := len(ids) - 1 - int(page.Offset); i >= 0 && len(out) < int(page.Limit); i-- {
		out = append(out, s.assets[ids[i]])
	}
	return out, nil
}

// Asset implements app.Store.
func (s *Store) Asset(_ context.Context, siteID, id string) (app.Asset, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	return s.asset(siteID, id)
}

func (s *Store) asset(siteID, id string) (app.Asset, error) {
	a, ok := s.assets[id]
	if !ok || a.SiteID != siteID {
		return app.Asset{}, fmt.Errorf("asset %s: %w", id, app.ErrNotFound)
	}
	return a, nil
}

func assetPosition(s *Store, ids []string, a app.Asset) (int, bool) {
	return slices.BinarySearchFunc(ids, a, func(id string, target app.Asset) int {
		e := s.assets[id]
		return cmp.Or(e.CreatedAt.Compare(target.CreatedAt), cmp.Compare(id, target.ID))
	})
}

func (t *tx) setAssetOrder(siteID string, ids []string) {
	old, existed := t.s.assetOrder[siteID]
	t.s.assetOrder[siteID] = ids
	t.OnRollback(func() {
		if existed {
			t.s.assetOrder[siteID] = old
		} else {
			delete(t.s.assetOrder, siteID)
		}
	})
}

func (t *tx) InsertAsset(ctx context.Context, a app.Asset, announce outbox.Event) error {
	if _, ok := t.s.sites[a.SiteID]; !ok {
		return fmt.Errorf("site %s: %w", a.SiteID, app.ErrNotFound)
	}
	if _, ok := t.s.assets[a.ID]; ok {
		return fmt.Errorf("asset %s: %w", a.ID, app.ErrDuplicate)
	}
	if _, ok := t.s.assetNames[a.Name]; ok {
		return fmt.Errorf("asset name %s: %w", a.Name, app.ErrDuplicate)
	}
	ids := t.s.assetOrder[a.SiteID]
	i, _ := assetPosition(t.s, ids, a)
	next := make([]string, 0, len(ids)+1)
	next = append(append(append(next, ids[:i]...), a.ID), ids[i:]...)
	memdb.Put(t.Tx, t.s.assets, a.ID, a)
	memdb.Put(t.Tx, t.s.assetNames, a.Name, a.ID)
	t.setAssetOrder(a.SiteID, next)
	return t.Enqueue(ctx, announce)
}

func (t *tx) UpdateAsset(_ context.Context, siteID, id string, p app.AssetPatch) (app.Asset, error) {
	a, err := t.s.asset(siteID, id)
	if err != nil {
		return app.Asset{}, err
	}
	if p.Alt != nil {
		a.Alt = *p.Alt
	}
	if p.Filename != nil {
		a.Filename = *p.Filename
	}
	a.UpdatedAt = p.At
	memdb.Put(t.Tx, t.s.assets, id, a)
	return a, nil
}

func (t *tx) DeleteAsset(_ context.Context, siteID, id string) (app.Asset, error) {
	a, err := t.s.asset(siteID, id)
	if err != nil {
		return app.Asset{}, err
	}
	ids := t.s.assetOrder[siteID]
	if i, found := assetPosition(t.s, ids, a); found {
		t.setAssetOrder(siteID, slices.Concat(ids[:i], ids[i+1:]))
	}
	memdb.Delete(t.Tx, t.s.assets, id)
	memdb.Delete(t.Tx, t.s.assetNames, a.Name)
	return a, nil
}

func (t *tx) AssetExists(_ context.Context, siteID, id string) (bool, error) {
	_, err := t.s.asset(siteID, id)
	return err == nil, nil
}

// PreviewLinks implements app.Store.
func (s *Store) PreviewLinks(_ context.Context, c app.Collection, itemID string, now time.Time) ([]app.PreviewLink, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	out := []app.PreviewLink{}
	for _, l := range s.previews {
		if l.CollectionID == c.ID && (itemID == "" || l.ItemID == itemID) && now.Before(l.ExpiresAt) {
			l.Collection = c.Slug
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b app.PreviewLink) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out, nil
}

// PreviewLink implements app.Store.
func (s *Store) PreviewLink(_ context.Context, tokenHash string) (app.PreviewLink, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	l, ok := s.previews[s.previewTokens[tokenHash]]
	if !ok {
		return app.PreviewLink{}, fmt.Errorf("preview link: %w", app.ErrNotFound)
	}
	l.Collection = s.collections[l.CollectionID].Slug
	return l, nil
}

func (t *tx) InsertPreviewLink(_ context.Context, l app.PreviewLink) error {
	if _, err := t.s.item(l.CollectionID, l.ItemID); err != nil {
		return err
	}
	if _, ok := t.s.previews[l.ID]; ok {
		return fmt.Errorf("preview link %s: %w", l.ID, app.ErrDuplicate)
	}
	if _, ok := t.s.previewTokens[l.TokenHash]; ok {
		return fmt.Errorf("preview token: %w", app.ErrDuplicate)
	}
	l.Collection = ""
	memdb.Put(t.Tx, t.s.previews, l.ID, l)
	memdb.Put(t.Tx, t.s.previewTokens, l.TokenHash, l.ID)
	return nil
}

func (t *tx) DeletePreviewLink(_ context.Context, siteID, id string) error {
	l, ok := t.s.previews[id]
	if !ok || l.SiteID != siteID {
		return fmt.Errorf("preview link %s: %w", id, app.ErrNotFound)
	}
	t.deletePreview(l)
	return nil
}

func (t *tx) DeleteExpiredPreviewLinks(_ context.Context, before time.Time, limit int) (int, error) {
	n := 0
	for _, l := range t.s.previews {
		if n == limit {
			break
		}
		if l.ExpiresAt.Before(before) {
			t.deletePreview(l)
			n++
		}
	}
	return n, nil
}

func (t *tx) deletePreview(l app.PreviewLink) {
	memdb.Delete(t.Tx, t.s.previews, l.ID)
	memdb.Delete(t.Tx, t.s.previewTokens, l.TokenHash)
}

// track keeps the scheduled set in step with it.
func (t *tx) track(it app.Item) {
	if it.PublishAt != nil || it.UnpublishAt != nil {
		memdb.Put(t.Tx, t.s.scheduled, it.ID, struct{}{})
	} else {
		memdb.Delete(t.Tx, t.s.scheduled, it.ID)
	}
}

// ClaimDue implements app.Tx. The transaction holds the store's write
// lock, which is the claim.
func (t *tx) ClaimDue(_ context.Context, now time.Time, limit int) ([]app.DueItem, error) {
	var out []app.DueItem
	for id := range t.s.scheduled {
		it := t.s.items[id]
		due := (it.PublishAt != nil && !it.PublishAt.After(now)) || (it.UnpublishAt != nil && !it.UnpublishAt.After(now))
		if !due {
			continue
		}
		c := t.s.collections[it.CollectionID]
		out = append(out, app.DueItem{ID: it.ID, CollectionID: c.ID, SiteID: c.SiteID, Slug: c.Slug, PublishAt: it.PublishAt, UnpublishAt: it.UnpublishAt})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// ItemsByID implements app.Store.
func (s *Store) ItemsByID(_ context.Context, collectionID string, ids []string) ([]app.Item, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	out := make([]app.Item, 0, len(ids))
	for _, id := range ids {
		if it, err := s.item(collectionID, id); err == nil {
			out = append(out, it)
		}
	}
	return out, nil
}

// AssetsByID implements app.Store.
func (s *Store) AssetsByID(_ context.Context, siteID string, ids []string) ([]app.Asset, error) {
	s.db.RLock()
	defer s.db.RUnlock()
	out := make([]app.Asset, 0, len(ids))
	for _, id := range ids {
		if a, err := s.asset(siteID, id); err == nil {
			out = append(out, a)
		}
	}
	return out, nil
}
