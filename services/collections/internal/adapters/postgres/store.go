// Package postgres is the collections store on PostgreSQL through pgx. It
// owns the collections schema; transactions and the outbox are
// platform/pgdb's. Item values are one JSONB object per item, merged in
// place by a single UPDATE so that concurrent patches of different fields
// all survive.
package postgres

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Schema is the PostgreSQL schema the collections service owns.
const Schema = "collections"

// Migrations are the collections schema's migrations.
func Migrations() pgdb.Migrations {
	return pgdb.EmbeddedMigrations(Schema, migrationFiles)
}

// Store is the PostgreSQL collections store.
type Store struct {
	reader
	db *pgdb.DB
	// recent are the collections as last read, for the writes that check
	// them (CollectionForWrite, InsertItem).
	recent *recentCollections
}

// New returns a store on db, whose pool's search path must be the
// collections schema.
func New(db *pgdb.DB) *Store {
	recent := &recentCollections{m: map[string]app.Collection{}}
	return &Store{reader: reader{q: db.Pool(), recent: recent}, db: db, recent: recent}
}

// CollectionForWrite implements app.Store: the definition last read, if
// any. InsertItem makes the write only if it still holds.
func (s *Store) CollectionForWrite(ctx context.Context, siteID, slug string) (app.Collection, error) {
	if c, ok := s.recent.get(siteID, slug); ok {
		return c, nil
	}
	return s.Collection(ctx, siteID, slug)
}

// insertItemIfDefined inserts an item ($1 to $7, $15, $16) into its
// collection ($2) only while the collection's fields are $8, and its
// revision (its edit $17 to $20) and events ($9 to $14) only with it: one
// statement, one round trip. The foreign key already reads the
// collection's row; comparing its fields costs little more.
var insertItemIfDefined = `WITH c AS (SELECT id FROM collections WHERE id = $2 AND fields = $8::jsonb),
	i AS (INSERT INTO items (` + itemCols + `)
		SELECT $1::uuid, c.id, $3::jsonb, $4::boolean, $5::bigint, $6::timestamptz, $7::timestamptz, $15::timestamptz, $16::timestamptz, $21::jsonb
		FROM c RETURNING id),
	r AS (INSERT INTO item_revisions (` + revisionCols + `)
		SELECT i.id, $5::bigint, $2::uuid, $3::jsonb, $4::boolean, $17::text, $18::text, $19::text, $20::text, $7::timestamptz FROM i)
	` + outbox.InsertSelectEach("i", 9)

const revisionCols = `item_id, version, collection_id, data, is_published, change, actor_kind, actor_id, actor_member_id, created_at`

func scanRevision(row pgx.Row) (app.Revision, error) {
	var (
		r    app.Revision
		data []byte
	)
	if err := row.Scan(&r.ItemID, &r.Version, &r.CollectionID, &data, &r.IsPublished, &r.Change, &r.Actor.Kind, &r.Actor.ID, &r.Actor.MemberID, &r.CreatedAt); err != nil {
		return r, err
	}
	r.CreatedAt = r.CreatedAt.UTC()
	if err := json.Unmarshal(data, &r.Values); err != nil {
		return r, fmt.Errorf("revision %d of item %s: stored data: %w", r.Version, r.ItemID, err)
	}
	return r, nil
}

// Revisions implements app.Store: the primary key's index, backwards.
func (r reader) Revisions(ctx context.Context, collectionID, itemID string, before int64, limit int) ([]app.Revision, error) {
	rows, err := r.q.Query(ctx, `SELECT `+revisionCols+` FROM item_revisions
		WHERE item_id = $1 AND collection_id = $2 AND ($3 <= 0 OR version < $3)
		ORDER BY version DESC LIMIT $4`, itemID, collectionID, before, limit)
	if err != nil {
		return nil, pgdb.Err(err, "revisions")
	}
	out, err := pgdb.Collect(rows, limit, scanRevision)
	if out == nil {
		out = []app.Revision{}
	}
	return out, pgdb.Err(err, "revisions")
}

// Revision implements app.Store.
func (r reader) Revision(ctx context.Context, collectionID, itemID string, version int64) (app.Revision, error) {
	rev, err := scanRevision(r.q.QueryRow(ctx, `SELECT `+revisionCols+` FROM item_revisions
		WHERE item_id = $1 AND version = $2 AND collection_id = $3`, itemID, version, collectionID))
	return rev, pgdb.Err(err, fmt.Sprintf("revision %d of item %s", version, itemID))
}

func (t tx) LatestRevision(ctx context.Context, collectionID, itemID string) (app.Revision, error) {
	rev, err := scanRevision(t.QueryRow(ctx, `SELECT `+revisionCols+` FROM item_revisions
		WHERE item_id = $1 AND collection_id = $2 ORDER BY version DESC LIMIT 1 FOR UPDATE`, itemID, collectionID))
	return rev, pgdb.Err(err, "latest revision of item "+itemID)
}

// PurgeRevisions implements app.Tx: the deletes past the retention that
// are still their item's newest revision (the item was not restored) are
// locked, skipping those another transaction holds (another replica's
// purge, or a restore), and their items' revisions deleted.
func (t tx) PurgeRevisions(ctx context.Context, deletedBefore time.Time, limit int) (int, error) {
	rows, err := t.Query(ctx, `WITH gone AS (
			SELECT d.item_id FROM item_revisions d
			WHERE d.change = 'deleted' AND d.created_at < $1
				AND NOT EXISTS (SELECT 1 FROM item_revisions n WHERE n.item_id = d.item_id AND n.version > d.version)
			LIMIT $2 FOR UPDATE SKIP LOCKED
		), purged AS (
			DELETE FROM item_revisions r USING gone WHERE r.item_id = gone.item_id RETURNING r.item_id
		)
		SELECT DISTINCT item_id FROM purged`, deletedBefore, limit)
	if err != nil {
		return 0, pgdb.Err(err, "purge revisions")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return len(ids), pgdb.Err(err, "purge revisions")
}

// InsertItem implements app.Store.
func (s *Store) InsertItem(ctx context.Context, c app.Collection, it app.Item, e app.Edit, announce ...outbox.Event) error {
	data, err := valuesJSON(it.Values)
	if err != nil {
		return err
	}
	fields, err := json.Marshal(c.Fields)
	if err != nil {
		return err
	}
	args := append([]any{it.ID, it.CollectionID, data, it.IsPublished, it.Version, it.CreatedAt, it.UpdatedAt, fields},
		outbox.InsertArgsEach(ctx, announce)...)
	locales, err := localesJSON(it.Locales)
	if err != nil {
		return err
	}
	args = append(args, it.PublishAt, it.UnpublishAt, e.Change, e.Actor.Kind, e.Actor.ID, e.Actor.MemberID, locales)
	n, err := s.db.ExecEvents(ctx, insertItemIfDefined, args...)
	if err != nil {
		return pgdb.Err(err, "insert item")
	}
	if n == 0 {
		s.recent.forget(c.SiteID, c.Slug)
		return app.ErrCollectionChanged
	}
	return nil
}

// InTx implements app.Store.
func (s *Store) InTx(ctx context.Context, fn func(app.Tx) error) error {
	return s.db.InTx(ctx, func(t *pgdb.Tx) error { return fn(tx{Tx: t, reader: reader{q: t, recent: s.recent}}) })
}

// reader holds the queries shared by the store and its transactions.
type reader struct {
	q      pgdb.Querier
	recent *recentCollections
}

// recentCollections are collections as last read, by site and slug.
type recentCollections struct {
	mu sync.RWMutex
	m  map[string]app.Collection
}

func (r *recentCollections) get(siteID, slug string) (app.Collection, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.m[siteID+"/"+slug]
	return c, ok
}

// keep remembers c, read in a transaction that committed or not: a
// write checks it anyway.
func (r *recentCollections) keep(c app.Collection) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= maxDefinitions {
		clear(r.m)
	}
	r.m[c.SiteID+"/"+c.Slug] = c
}

func (r *recentCollections) forget(siteID, slug string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, siteID+"/"+slug)
}

const (
	siteCols = `id, name, created_at, updated_at, allowed_origins, agency_id, client_id, default_locale, locales`
	// siteSelect reads siteCols with the owner's NULLs as "".
	siteSelect = `SELECT id, name, created_at, updated_at, allowed_origins, COALESCE(agency_id::text, ''), COALESCE(client_id::text, ''), default_locale, locales FROM sites`
)

func scanSite(row pgx.Row) (app.Site, error) {
	var site app.Site
	err := row.Scan(&site.ID, &site.Name, &site.CreatedAt, &site.UpdatedAt, &site.AllowedOrigins, &site.AgencyID, &site.ClientID,
		&site.DefaultLocale, &site.Locales)
	if site.AllowedOrigins == nil {
		site.AllowedOrigins = []string{}
	}
	if len(site.Locales) == 0 {
		// Stored as '{}' when the site set none; app.Site.Localization
		// reads nil so.
		site.Locales = nil
	}
	site.CreatedAt, site.UpdatedAt = site.CreatedAt.UTC(), site.UpdatedAt.UTC()
	return site, err
}

// Site implements app.Store.
func (r reader) Site(ctx context.Context, id string) (app.Site, error) {
	site, err := scanSite(r.q.QueryRow(ctx, siteSelect+` WHERE id = $1`, id))
	return site, pgdb.Err(err, "site "+id)
}

// Sites implements app.Store.
func (r reader) Sites(ctx context.Context, filter app.SiteFilter, page pagination.Page) ([]app.Site, error) {
	rows, err := r.q.Query(ctx, siteSelect+` WHERE ($3 = '' OR agency_id = NULLIF($3, '')::uuid) ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`,
		page.Limit, page.Offset, filter.AgencyID)
	if err != nil {
		return nil, pgdb.Err(err, "list sites")
	}
	out, err := pgdb.Collect(rows, int(page.Limit), scanSite)
	return out, pgdb.Err(err, "list sites")
}

// AgencySites implements app.Store. COLLATE "C" orders names byte by
// byte, as the memory store does, whatever the database's collation; the
// agency's rows are found through sites_agency_recent_idx.
func (r reader) AgencySites(ctx context.Context, agencyID string) ([]app.Site, error) {
	rows, err := r.q.Query(ctx, siteSelect+` WHERE agency_id = $1 ORDER BY name COLLATE "C", id`, agencyID)
	if err != nil {
		return nil, pgdb.Err(err, "list the sites of agency "+agencyID)
	}
	out, err := pgdb.Collect(rows, 8, scanSite)
	return out, pgdb.Err(err, "list the sites of agency "+agencyID)
}

const collectionCols = `id, site_id, slug, name, is_system, fields, search_language, created_at, updated_at`

func scanCollection(row pgx.Row) (app.Collection, error) {
	var (
		c      app.Collection
		fields []byte
	)
	if err := row.Scan(&c.ID, &c.SiteID, &c.Slug, &c.Name, &c.IsSystem, &fields, &c.SearchLanguage, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return c, err
	}
	return finishCollection(c, fields)
}

func finishCollection(c app.Collection, fields []byte) (app.Collection, error) {
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	var err error
	if c.Fields, err = definitions.decode(fields); err != nil {
		return c, fmt.Errorf("collection %s: stored fields: %w", c.ID, err)
	}
	return c, nil
}

// definitions are the field lists decoded from their stored JSON, by that
// JSON. Every read of an item reads its collection, and decoding the same
// definitions on each was a tenth of a single-item read; keyed by the
// bytes themselves, an entry can never be stale.
var definitions = fieldCache{m: map[string][]app.Field{}}

type fieldCache struct {
	mu sync.RWMutex
	m  map[string][]app.Field
}

// maxDefinitions bounds the cache; past it, it starts again.
const maxDefinitions = 4096

// decode returns the fields stored as raw. The slice is shared: callers
// do not change it in place (the memory store shares its fields the same
// way).
func (c *fieldCache) decode(raw []byte) ([]app.Field, error) {
	c.mu.RLock()
	fields, ok := c.m[string(raw)]
	c.mu.RUnlock()
	if ok {
		return fields, nil
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= maxDefinitions {
		clear(c.m)
	}
	c.m[string(raw)] = fields
	c.mu.Unlock()
	return fields, nil
}

// Collections implements app.Store.
func (r reader) Collections(ctx context.Context, siteID string) ([]app.Collection, error) {
	rows, err := r.q.Query(ctx, `SELECT `+collectionCols+` FROM collections WHERE site_id = $1 ORDER BY slug`, siteID)
	if err != nil {
		return nil, pgdb.Err(err, "collections")
	}
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.Collection, error) { return scanCollection(row) })
	if cs == nil {
		cs = []app.Collection{}
	}
	return cs, pgdb.Err(err, "collections")
}

// Collection implements app.Store.
func (r reader) Collection(ctx context.Context, siteID, slug string) (app.Collection, error) {
	c, err := scanCollection(r.q.QueryRow(ctx, `SELECT `+collectionCols+` FROM collections WHERE site_id = $1 AND slug = $2`, siteID, slug))
	if err != nil {
		return c, pgdb.Err(err, "collection "+slug)
	}
	r.recent.keep(c)
	return c, nil
}

const itemCols = `id, collection_id, data, is_published, version, created_at, updated_at, publish_at, unpublish_at, locales`

func scanItem(row pgx.Row) (app.Item, error) {
	var (
		it      app.Item
		data    []byte
		locales []byte
	)
	if err := row.Scan(&it.ID, &it.CollectionID, &data, &it.IsPublished, &it.Version, &it.CreatedAt, &it.UpdatedAt, &it.PublishAt, &it.UnpublishAt, &locales); err != nil {
		return it, err
	}
	var err error
	if it.Locales, err = readLocales(locales); err != nil {
		return it, fmt.Errorf("item %s: stored locales: %w", it.ID, err)
	}
	it.CreatedAt, it.UpdatedAt = it.CreatedAt.UTC(), it.UpdatedAt.UTC()
	it.PublishAt, it.UnpublishAt = utc(it.PublishAt), utc(it.UnpublishAt)
	if err := json.Unmarshal(data, &it.Values); err != nil {
		return it, fmt.Errorf("item %s: stored data: %w", it.ID, err)
	}
	return it, nil
}

// Items implements app.Store.
func (r reader) Items(ctx context.Context, c app.Collection, q app.ItemQuery) ([]app.Item, error) {
	sql := `SELECT ` + itemCols + ` FROM items WHERE collection_id = $1`
	args := []any{c.ID}
	if q.Fields != nil {
		// Only the projection's keys leave the server: the others (a
		// post's body, most of its bytes) are deleted from the row's
		// data by name, which reads no value.
		args = append(args, q.Fields.Keys())
		sql = `SELECT ` + strings.Replace(itemCols, "data", `data - coalesce((SELECT array_agg(k) FROM jsonb_object_keys(data) k WHERE k <> ALL($2::text[])), '{}')`, 1) +
			` FROM items WHERE collection_id = $1`
	}
	if q.Published != nil {
		args = append(args, *q.Published)
		sql += ` AND is_published = $` + strconv.Itoa(len(args))
	}
	if q.FilterKey != "" {
		args = append(args, q.FilterKey, []byte(q.FilterValue))
		sql += fmt.Sprintf(` AND data @> jsonb_build_object($%d::text, $%d::jsonb)`, len(args)-1, len(args))
	}
	dir := " DESC"
	if q.Asc {
		dir = " ASC"
	}
	order := "created_at"
	if q.OrderBy == "updated_at" {
		order = "updated_at"
	}
	if len(q.Words) > 0 {
		doc, err := searchDocument(c)
		if err != nil {
			return nil, err
		}
		// The words are searched as the memory store splits them, so
		// that both match the same items. The collection id is written
		// into the statement so that the planner can match the
		// collection's partial search index.
		args = append(args, strings.Join(q.Words, " "))
		query := fmt.Sprintf(`plainto_tsquery(%s, $%d)`, regconfig(c), len(args))
		sql += " AND collection_id = '" + c.ID + "' AND " + doc + " @@ " + query
		if q.OrderBy == app.OrderRelevance {
			order = "ts_rank(" + doc + ", " + query + ")"
		}
	}
	if q.OrderField != nil {
		expr, err := sortExpr(*q.OrderField)
		if err != nil {
			return nil, err
		}
		// The collection id is written into the statement so that the
		// planner can match the collection's partial sort index.
		if !uuidText.MatchString(c.ID) {
			return nil, fmt.Errorf("collection id %q is not a UUID", c.ID)
		}
		sql += " AND collection_id = '" + c.ID + "'"
		order = expr
	}
	args = append(args, q.Page.Limit, q.Page.Offset)
	sql += ` ORDER BY ` + order + dir + `, id` + dir + fmt.Sprintf(` LIMIT $%d OFFSET $%d`, len(args)-1, len(args))
	rows, err := r.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, pgdb.Err(err, "items")
	}
	items, err := pgdb.Collect(rows, int(q.Page.Limit), scanItem)
	return items, pgdb.Err(err, "items")
}

// Item implements app.Store: the collection and the item in one query.
func (r reader) Item(ctx context.Context, siteID, slug, id string) (app.Collection, app.Item, error) {
	var (
		c         app.Collection
		fields    []byte
		itemID    *string
		it        app.Item
		data      []byte
		locales   []byte
		published *bool
		version   *int64
		created   *time.Time
		updated   *time.Time
		publishAt *time.Time
		unpubAt   *time.Time
	)
	err := r.q.QueryRow(ctx, `SELECT c.id, c.site_id, c.slug, c.name, c.is_system, c.fields, c.search_language, c.created_at, c.updated_at,
			i.id, i.data, i.is_published, i.version, i.created_at, i.updated_at, i.publish_at, i.unpublish_at, i.locales
		FROM collections c LEFT JOIN items i ON i.collection_id = c.id AND i.id = $3
		WHERE c.site_id = $1 AND c.slug = $2`, siteID, slug, id).
		Scan(&c.ID, &c.SiteID, &c.Slug, &c.Name, &c.IsSystem, &fields, &c.SearchLanguage, &c.CreatedAt, &c.UpdatedAt,
			&itemID, &data, &published, &version, &created, &updated, &publishAt, &unpubAt, &locales)
	if err != nil {
		return app.Collection{}, app.Item{}, pgdb.Err(err, "collection "+slug)
	}
	if c, err = finishCollection(c, fields); err != nil {
		return app.Collection{}, app.Item{}, err
	}
	r.recent.keep(c)
	if itemID == nil {
		return c, app.Item{}, fmt.Errorf("item %s: %w", id, app.ErrNotFound)
	}
	it = app.Item{ID: *itemID, CollectionID: c.ID, IsPublished: *published, Version: *version, CreatedAt: created.UTC(), UpdatedAt: updated.UTC(),
		PublishAt: utc(publishAt), UnpublishAt: utc(unpubAt)}
	if err := json.Unmarshal(data, &it.Values); err != nil {
		return c, app.Item{}, fmt.Errorf("item %s: stored data: %w", it.ID, err)
	}
	if it.Locales, err = readLocales(locales); err != nil {
		return c, app.Item{}, fmt.Errorf("item %s: stored locales: %w", it.ID, err)
	}
	return c, it, nil
}

type tx struct {
	*pgdb.Tx
	reader
}

func (t tx) InsertSite(ctx context.Context, site app.Site) error {
	_, err := t.Exec(ctx, `INSERT INTO sites (`+siteCols+`) VALUES ($1, $2, $3, $4, $5, NULLIF($6, '')::uuid, NULLIF($7, '')::uuid, $8, $9)`,
		site.ID, site.Name, site.CreatedAt, site.UpdatedAt, origins(site), site.AgencyID, site.ClientID, site.DefaultLocale, locales(site))
	return pgdb.Err(err, "insert site")
}

func origins(site app.Site) []string {
	if site.AllowedOrigins == nil {
		return []string{}
	}
	return site.AllowedOrigins
}

func locales(site app.Site) []string {
	if site.Locales == nil {
		return []string{}
	}
	return site.Locales
}

func (t tx) UpdateSite(ctx context.Context, site app.Site) error {
	tag, err := t.Exec(ctx, `UPDATE sites SET name = $2, updated_at = $3, allowed_origins = $4,
		agency_id = NULLIF($5, '')::uuid, client_id = NULLIF($6, '')::uuid, default_locale = $7, locales = $8 WHERE id = $1`,
		site.ID, site.Name, site.UpdatedAt, origins(site), site.AgencyID, site.ClientID, site.DefaultLocale, locales(site))
	if err != nil {
		return pgdb.Err(err, "update site")
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("site %s: %w", site.ID, app.ErrNotFound)
	}
	return nil
}

func (t tx) ItemsInLocales(ctx context.Context, siteID string, locales []string) (map[string]int, error) {
	rows, err := t.Query(ctx, `SELECT l, count(*) FROM items i JOIN collections c ON c.id = i.collection_id,
			jsonb_object_keys(i.locales) l
		WHERE c.site_id = $1 AND i.locales <> '{}' AND l = ANY($2::text[]) GROUP BY l`, siteID, locales)
	if err != nil {
		return nil, pgdb.Err(err, "count the items in locales")
	}
	out := map[string]int{}
	var (
		l string
		n int
	)
	_, err = pgx.ForEachRow(rows, []any{&l, &n}, func() error { out[l] = n; return nil })
	return out, pgdb.Err(err, "count the items in locales")
}

func (t tx) InsertCollection(ctx context.Context, c app.Collection) error {
	fields, err := json.Marshal(c.Fields)
	if err != nil {
		return err
	}
	_, err = t.Exec(ctx, `INSERT INTO collections (`+collectionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		c.ID, c.SiteID, c.Slug, c.Name, c.IsSystem, fields, searchLanguage(c), c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return pgdb.Err(err, "insert collection "+c.Slug)
	}
	if err := t.syncSortIndexes(ctx, c, nil); err != nil {
		return err
	}
	return t.syncSearchIndex(ctx, c)
}

var (
	uuidText = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	keyText  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// sortExpr is the SQL expression a field's items are ordered by: numbers
// as numeric, booleans as boolean, everything else as text in byte order
// (COLLATE "C", the memory store's order). NULL (no value) sorts last
// ascending and first descending, PostgreSQL's default and the memory
// store's.
func sortExpr(f app.Field) (string, error) {
	if !keyText.MatchString(f.Key) {
		return "", fmt.Errorf("field key %q cannot be ordered by", f.Key)
	}
	switch f.Type {
	case app.TypeNumber, app.TypeInteger:
		return "((data->>'" + f.Key + "')::numeric)", nil
	case app.TypeBoolean:
		return "((data->>'" + f.Key + "')::boolean)", nil
	}
	return "((data->>'" + f.Key + "') COLLATE \"C\")", nil
}

// sortIndex names the partial index that orders c's items by key.
func sortIndex(collectionID, key string) string {
	h := fnv.New64a()
	h.Write([]byte(collectionID + "/" + key))
	return fmt.Sprintf("items_sort_%016x", h.Sum64())
}

// syncSortIndexes gives every sortable field of c a partial index over
// c's items, (value, id), and drops those of the removed fields. An index
// is built in the transaction that defines the field; building it holds
// writes to items for as long as it takes.
func (t tx) syncSortIndexes(ctx context.Context, c app.Collection, removed []string) error {
	if !uuidText.MatchString(c.ID) {
		return fmt.Errorf("collection id %q is not a UUID", c.ID)
	}
	for _, k := range removed {
		if _, err := t.Exec(ctx, `DROP INDEX IF EXISTS `+sortIndex(c.ID, k)); err != nil {
			return pgdb.Err(err, "drop sort index")
		}
	}
	for _, f := range c.Fields {
		if !f.Sortable() {
			if _, err := t.Exec(ctx, `DROP INDEX IF EXISTS `+sortIndex(c.ID, f.Key)); err != nil {
				return pgdb.Err(err, "drop sort index")
			}
			continue
		}
		expr, err := sortExpr(f)
		if err != nil {
			return err
		}
		if _, err := t.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+sortIndex(c.ID, f.Key)+` ON items (`+expr+`, id)
			WHERE collection_id = '`+c.ID+`'`); err != nil {
			return pgdb.Err(err, "create sort index")
		}
	}
	return nil
}

// searchLanguage is c's search language as stored.
func searchLanguage(c app.Collection) string {
	if c.SearchLanguage == "" {
		return app.DefaultSearchLanguage
	}
	return c.SearchLanguage
}

// regconfig is c's search language as an SQL constant: an expression
// index needs it written into the expression.
func regconfig(c app.Collection) string {
	lang := searchLanguage(c)
	if !keyText.MatchString(lang) {
		lang = app.DefaultSearchLanguage
	}
	return "'" + lang + "'::regconfig"
}

// searchDocument is the tsvector expression q searches in c's items: its
// text and rich_text values joined, in its language. PostgreSQL's parser
// skips HTML tags and entities, so rich text is searched as text. The
// expression is immutable, so that an index can hold it; the query writes
// it exactly as the index does.
func searchDocument(c app.Collection) (string, error) {
	if !uuidText.MatchString(c.ID) {
		return "", fmt.Errorf("collection id %q is not a UUID", c.ID)
	}
	var parts []string
	for _, f := range c.SearchFields() {
		if !keyText.MatchString(f.Key) {
			return "", fmt.Errorf("field key %q cannot be searched", f.Key)
		}
		parts = append(parts, "coalesce(data->>'"+f.Key+"', '')")
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("collection %s has no text fields to search", c.Slug)
	}
	return "to_tsvector(" + regconfig(c) + ", " + strings.Join(parts, " || ' ' || ") + ")", nil
}

// searchIndexPrefix begins the name of every search index of a
// collection; the rest of the name is derived from the expression, so
// that a changed language or field list makes a new index.
func searchIndexPrefix(collectionID string) string {
	h := fnv.New64a()
	h.Write([]byte(collectionID))
	return fmt.Sprintf("items_search_%016x_", h.Sum64())
}

// syncSearchIndex gives c a partial GIN index over its search document
// and drops the indexes of its earlier definitions. Like the sort
// indexes it is built in the transaction that changes the definition.
func (t tx) syncSearchIndex(ctx context.Context, c app.Collection) error {
	prefix := searchIndexPrefix(c.ID)
	want := ""
	doc, err := searchDocument(c)
	if err == nil {
		h := fnv.New32a()
		h.Write([]byte(doc))
		want = fmt.Sprintf("%s%08x", prefix, h.Sum32())
	}
	rows, err := t.Query(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND starts_with(indexname, $1)`, prefix)
	if err != nil {
		return pgdb.Err(err, "search indexes")
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return pgdb.Err(err, "search indexes")
	}
	for _, n := range names {
		if n != want {
			if _, err := t.Exec(ctx, `DROP INDEX IF EXISTS `+pgx.Identifier{n}.Sanitize()); err != nil {
				return pgdb.Err(err, "drop search index")
			}
		}
	}
	if want == "" {
		return nil
	}
	_, err = t.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+want+` ON items USING gin (`+doc+`) WHERE collection_id = '`+c.ID+`'`)
	return pgdb.Err(err, "create search index")
}

func (t tx) UpdateCollection(ctx context.Context, c app.Collection, removed []string) error {
	fields, err := json.Marshal(c.Fields)
	if err != nil {
		return err
	}
	tag, err := t.Exec(ctx, `UPDATE collections SET name = $2, fields = $3, search_language = $4, updated_at = $5 WHERE id = $1`,
		c.ID, c.Name, fields, searchLanguage(c), c.UpdatedAt)
	if err != nil {
		return pgdb.Err(err, "update collection "+c.Slug)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("collection %s: %w", c.ID, app.ErrNotFound)
	}
	if len(removed) > 0 {
		_, err = t.Exec(ctx, `UPDATE items SET data = data - $2::text[] WHERE collection_id = $1 AND data ?| $2::text[]`, c.ID, removed)
		if err != nil {
			return pgdb.Err(err, "remove fields of "+c.Slug)
		}
		// The other locales' values of the removed fields go too, and a
		// locale left with none goes with them.
		_, err = t.Exec(ctx, `UPDATE items SET locales = (
				SELECT coalesce(jsonb_object_agg(l, v - $2::text[]) FILTER (WHERE (v - $2::text[]) <> '{}'), '{}')
				FROM jsonb_each(locales) e(l, v))
			WHERE collection_id = $1 AND locales <> '{}'`, c.ID, removed)
		if err != nil {
			return pgdb.Err(err, "remove the localized values of the fields of "+c.Slug)
		}
	}
	if err := t.syncSortIndexes(ctx, c, removed); err != nil {
		return err
	}
	return t.syncSearchIndex(ctx, c)
}

func (t tx) ItemExists(ctx context.Context, collectionID, id string) (bool, error) {
	var ok bool
	err := t.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM items WHERE collection_id = $1 AND id = $2)`, collectionID, id).Scan(&ok)
	return ok, pgdb.Err(err, "item "+id)
}

// localesJSON is an item's other locales as stored: {} for none.
func localesJSON(l map[string]app.Values) ([]byte, error) {
	if len(l) == 0 {
		return []byte(`{}`), nil
	}
	return json.Marshal(l)
}

// readLocales reads the stored locales: nil for none, as the memory
// store holds them.
func readLocales(b []byte) (map[string]app.Values, error) {
	var l map[string]app.Values
	if err := json.Unmarshal(b, &l); err != nil || len(l) == 0 {
		return nil, err
	}
	return l, nil
}

func valuesJSON(v app.Values) ([]byte, error) {
	if v == nil {
		return []byte(`{}`), nil
	}
	return json.Marshal(v)
}

// insertItem is the statement that inserts it's row, and its arguments.
func insertItem(it app.Item) (string, []any, error) {
	data, err := valuesJSON(it.Values)
	if err != nil {
		return "", nil, err
	}
	locales, err := localesJSON(it.Locales)
	if err != nil {
		return "", nil, err
	}
	return `INSERT INTO items (` + itemCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		[]any{it.ID, it.CollectionID, data, it.IsPublished, it.Version, it.CreatedAt, it.UpdatedAt, it.PublishAt, it.UnpublishAt, locales}, nil
}

// InsertItem sends the item's row, its revision and its events in one
// round trip.
func (t tx) InsertItem(ctx context.Context, it app.Item, e app.Edit, announce ...outbox.Event) error {
	sql, args, err := insertItem(it)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	b.Queue(`INSERT INTO item_revisions (`+revisionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		it.ID, it.Version, it.CollectionID, args[2], it.IsPublished, e.Change, e.Actor.Kind, e.Actor.ID, e.Actor.MemberID, it.UpdatedAt)
	for _, e := range announce {
		t.EnqueueIn(ctx, b, e)
	}
	return pgdb.Err(t.SendBatch(ctx, b).Close(), "insert item")
}

// PatchItem locks the row, then merges in one UPDATE: the removed keys go,
// the given values replace theirs, the rest stay as the latest committed
// write left them.
func (t tx) PatchItem(ctx context.Context, collectionID, id string, p app.ItemPatch) (app.Item, app.Item, error) {
	set, err := valuesJSON(p.Set)
	if err != nil {
		return app.Item{}, app.Item{}, err
	}
	unset := p.Unset
	if unset == nil {
		unset = []string{}
	}
	var (
		wasPublished bool
		after        app.Item
		data         []byte
		locales      []byte
	)
	// The revision is written by the same statement, from the row the
	// UPDATE returns.
	err = t.QueryRow(ctx, `
		WITH current AS (
			SELECT id, is_published, version FROM items WHERE collection_id = $1 AND id = $2 FOR UPDATE
		), u AS (
			UPDATE items i SET data = CASE WHEN $16::text = '' THEN (i.data - $3::text[]) || $4::jsonb ELSE i.data END,
				locales = CASE WHEN $16::text = '' THEN i.locales
					WHEN ((coalesce(i.locales->$16::text, '{}') - $3::text[]) || $4::jsonb) = '{}' THEN i.locales - $16::text
					ELSE jsonb_set(i.locales, ARRAY[$16::text], (coalesce(i.locales->$16::text, '{}') - $3::text[]) || $4::jsonb) END,
				is_published = COALESCE($5, i.is_published), version = i.version + 1, updated_at = $6,
				publish_at = CASE WHEN $8 THEN $9::timestamptz ELSE i.publish_at END,
				unpublish_at = CASE WHEN $10 THEN $11::timestamptz ELSE i.unpublish_at END
			FROM current c
			WHERE i.id = c.id AND ($7::bigint IS NULL OR c.version = $7)
			RETURNING c.is_published AS was_published, i.id, i.collection_id, i.data, i.is_published, i.version, i.created_at, i.updated_at, i.publish_at, i.unpublish_at, i.locales
		), r AS (
			INSERT INTO item_revisions (`+revisionCols+`)
			SELECT id, version, collection_id, data, is_published, $12, $13, $14, $15, $6 FROM u
		)
		SELECT was_published, id, collection_id, data, is_published, version, created_at, updated_at, publish_at, unpublish_at, locales FROM u`,
		collectionID, id, unset, set, p.IsPublished, p.At, p.IfVersion, p.SetPublishAt, p.PublishAt, p.SetUnpublishAt, p.UnpublishAt,
		p.Edit.Change, p.Edit.Actor.Kind, p.Edit.Actor.ID, p.Edit.Actor.MemberID, p.Locale).
		Scan(&wasPublished, &after.ID, &after.CollectionID, &data, &after.IsPublished, &after.Version, &after.CreatedAt, &after.UpdatedAt, &after.PublishAt, &after.UnpublishAt, &locales)
	if errors.Is(err, pgx.ErrNoRows) {
		// Either no such item, or a version that does not hold.
		var v int64
		if err := t.QueryRow(ctx, `SELECT version FROM items WHERE collection_id = $1 AND id = $2`, collectionID, id).Scan(&v); err == nil {
			return app.Item{}, app.Item{}, app.ErrVersionMismatch
		}
		return app.Item{}, app.Item{}, fmt.Errorf("item %s: %w", id, app.ErrNotFound)
	}
	if err != nil {
		return app.Item{}, app.Item{}, pgdb.Err(err, "patch item "+id)
	}
	after.CreatedAt, after.UpdatedAt = after.CreatedAt.UTC(), after.UpdatedAt.UTC()
	after.PublishAt, after.UnpublishAt = utc(after.PublishAt), utc(after.UnpublishAt)
	if err := json.Unmarshal(data, &after.Values); err != nil {
		return app.Item{}, app.Item{}, fmt.Errorf("item %s: stored data: %w", id, err)
	}
	if after.Locales, err = readLocales(locales); err != nil {
		return app.Item{}, app.Item{}, fmt.Errorf("item %s: stored locales: %w", id, err)
	}
	// before is after with what the events compare restored; its values
	// and schedule are not read by anyone.
	before := after
	before.IsPublished, before.Version = wasPublished, after.Version-1
	return before, after, nil
}

func (t tx) DeleteItem(ctx context.Context, collectionID, id string, ifVersion *int64, e app.Edit, at time.Time) (app.Item, error) {
	it, err := scanItem(t.QueryRow(ctx, `WITH d AS (
			DELETE FROM items WHERE collection_id = $1 AND id = $2 AND ($3::bigint IS NULL OR version = $3) RETURNING `+itemCols+`
		), r AS (
			INSERT INTO item_revisions (`+revisionCols+`)
			SELECT id, version + 1, collection_id, data, false, $4, $5, $6, $7, $8 FROM d
		)
		SELECT `+itemCols+` FROM d`, collectionID, id, ifVersion, e.Change, e.Actor.Kind, e.Actor.ID, e.Actor.MemberID, at))
	if errors.Is(err, pgx.ErrNoRows) {
		var v int64
		if err := t.QueryRow(ctx, `SELECT version FROM items WHERE collection_id = $1 AND id = $2`, collectionID, id).Scan(&v); err == nil {
			return app.Item{}, app.ErrVersionMismatch
		}
		return app.Item{}, fmt.Errorf("item %s: %w", id, app.ErrNotFound)
	}
	return it, pgdb.Err(err, "delete item "+id)
}

const assetCols = `id, site_id, name, filename, content_type, size, width, height, alt, sha256, created_at, updated_at`

func scanAsset(row pgx.Row) (app.Asset, error) {
	var (
		a    app.Asset
		w, h *int32
	)
	if err := row.Scan(&a.ID, &a.SiteID, &a.Name, &a.Filename, &a.ContentType, &a.Size, &w, &h, &a.Alt, &a.SHA256, &a.CreatedAt, &a.UpdatedAt); err != nil {
		return a, err
	}
	if w != nil && h != nil {
		width, height := int(*w), int(*h)
		a.Width, a.Height = &width, &height
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, nil
}

// Assets implements app.Store.
func (r reader) Assets(ctx context.Context, siteID string, page pagination.Page) ([]app.Asset, error) {
	rows, err := r.q.Query(ctx, `SELECT `+assetCols+` FROM assets WHERE site_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
		siteID, page.Limit, page.Offset)
	if err != nil {
		return nil, pgdb.Err(err, "list assets")
	}
	out, err := pgdb.Collect(rows, int(page.Limit), scanAsset)
	return out, pgdb.Err(err, "list assets")
}

// Asset implements app.Store.
func (r reader) Asset(ctx context.Context, siteID, id string) (app.Asset, error) {
	a, err := scanAsset(r.q.QueryRow(ctx, `SELECT `+assetCols+` FROM assets WHERE site_id = $1 AND id = $2`, siteID, id))
	return a, pgdb.Err(err, "asset "+id)
}

func intOrNil(p *int) any {
	if p == nil {
		return nil
	}
	return int32(*p) //nolint:gosec // G115: image sizes are checked to fit 32 bits (filetype.Dimensions)
}

// InsertAsset sends the asset's row and its event in one round trip.
func (t tx) InsertAsset(ctx context.Context, a app.Asset, announce outbox.Event) error {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO assets (`+assetCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		a.ID, a.SiteID, a.Name, a.Filename, a.ContentType, a.Size, intOrNil(a.Width), intOrNil(a.Height), a.Alt, a.SHA256, a.CreatedAt, a.UpdatedAt)
	t.EnqueueIn(ctx, b, announce)
	return pgdb.Err(t.SendBatch(ctx, b).Close(), "insert asset")
}

func (t tx) UpdateAsset(ctx context.Context, siteID, id string, p app.AssetPatch) (app.Asset, error) {
	a, err := scanAsset(t.QueryRow(ctx, `UPDATE assets SET alt = COALESCE($3, alt), filename = COALESCE($4, filename), updated_at = $5
		WHERE site_id = $1 AND id = $2 RETURNING `+assetCols, siteID, id, p.Alt, p.Filename, p.At))
	return a, pgdb.Err(err, "update asset "+id)
}

func (t tx) DeleteAsset(ctx context.Context, siteID, id string) (app.Asset, error) {
	a, err := scanAsset(t.QueryRow(ctx, `DELETE FROM assets WHERE site_id = $1 AND id = $2 RETURNING `+assetCols, siteID, id))
	return a, pgdb.Err(err, "delete asset "+id)
}

func (t tx) AssetExists(ctx context.Context, siteID, id string) (bool, error) {
	var ok bool
	err := t.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM assets WHERE site_id = $1 AND id = $2)`, siteID, id).Scan(&ok)
	return ok, pgdb.Err(err, "asset "+id)
}

const previewCols = `p.id, p.site_id, p.collection_id, c.slug, p.item_id, p.token_hash, p.created_at, p.expires_at`

func scanPreview(row pgx.Row) (app.PreviewLink, error) {
	var l app.PreviewLink
	err := row.Scan(&l.ID, &l.SiteID, &l.CollectionID, &l.Collection, &l.ItemID, &l.TokenHash, &l.CreatedAt, &l.ExpiresAt)
	l.CreatedAt, l.ExpiresAt = l.CreatedAt.UTC(), l.ExpiresAt.UTC()
	return l, err
}

// PreviewLinks implements app.Store.
func (r reader) PreviewLinks(ctx context.Context, c app.Collection, itemID string, now time.Time) ([]app.PreviewLink, error) {
	var item *string
	if itemID != "" {
		item = &itemID
	}
	rows, err := r.q.Query(ctx, `SELECT `+previewCols+` FROM preview_links p JOIN collections c ON c.id = p.collection_id
		WHERE p.collection_id = $1 AND ($2::uuid IS NULL OR p.item_id = $2) AND p.expires_at > $3
		ORDER BY p.created_at DESC, p.id DESC`, c.ID, item, now)
	if err != nil {
		return nil, pgdb.Err(err, "preview links")
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.PreviewLink, error) { return scanPreview(row) })
	if out == nil {
		out = []app.PreviewLink{}
	}
	return out, pgdb.Err(err, "preview links")
}

// PreviewLink implements app.Store.
func (r reader) PreviewLink(ctx context.Context, tokenHash string) (app.PreviewLink, error) {
	l, err := scanPreview(r.q.QueryRow(ctx, `SELECT `+previewCols+` FROM preview_links p JOIN collections c ON c.id = p.collection_id
		WHERE p.token_hash = $1`, tokenHash))
	return l, pgdb.Err(err, "preview link")
}

func (t tx) InsertPreviewLink(ctx context.Context, l app.PreviewLink) error {
	_, err := t.Exec(ctx, `INSERT INTO preview_links (id, site_id, collection_id, item_id, token_hash, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, l.ID, l.SiteID, l.CollectionID, l.ItemID, l.TokenHash, l.CreatedAt, l.ExpiresAt)
	return pgdb.Err(err, "insert preview link")
}

func (t tx) DeletePreviewLink(ctx context.Context, siteID, id string) error {
	tag, err := t.Exec(ctx, `DELETE FROM preview_links WHERE site_id = $1 AND id = $2`, siteID, id)
	if err != nil {
		return pgdb.Err(err, "delete preview link "+id)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("preview link %s: %w", id, app.ErrNotFound)
	}
	return nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ClaimDue implements app.Tx: the due items' rows are locked, skipping
// those another transaction (another replica's scheduler) holds, so each
// change is applied by one. The two partial indexes on publish_at and
// unpublish_at find them.
func (t tx) ClaimDue(ctx context.Context, now time.Time, limit int) ([]app.DueItem, error) {
	rows, err := t.Query(ctx, `SELECT i.id, i.collection_id, c.site_id, c.slug, i.publish_at, i.unpublish_at
		FROM items i JOIN collections c ON c.id = i.collection_id
		WHERE i.publish_at <= $1 OR i.unpublish_at <= $1
		LIMIT $2 FOR UPDATE OF i SKIP LOCKED`, now, limit)
	if err != nil {
		return nil, pgdb.Err(err, "due items")
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.DueItem, error) {
		var d app.DueItem
		err := row.Scan(&d.ID, &d.CollectionID, &d.SiteID, &d.Slug, &d.PublishAt, &d.UnpublishAt)
		d.PublishAt, d.UnpublishAt = utc(d.PublishAt), utc(d.UnpublishAt)
		return d, err
	})
	return out, pgdb.Err(err, "due items")
}

func (t tx) DeleteExpiredPreviewLinks(ctx context.Context, before time.Time, limit int) (int, error) {
	tag, err := t.Exec(ctx, `DELETE FROM preview_links WHERE id IN (
		SELECT id FROM preview_links WHERE expires_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, before, limit)
	if err != nil {
		return 0, pgdb.Err(err, "delete expired preview links")
	}
	return int(tag.RowsAffected()), nil
}

// ItemsByID implements app.Store: one query, whatever the number of ids.
func (r reader) ItemsByID(ctx context.Context, collectionID string, ids []string) ([]app.Item, error) {
	rows, err := r.q.Query(ctx, `SELECT `+itemCols+` FROM items WHERE collection_id = $1 AND id = ANY($2::uuid[])`, collectionID, ids)
	if err != nil {
		return nil, pgdb.Err(err, "items by id")
	}
	items, err := pgdb.Collect(rows, len(ids), scanItem)
	return items, pgdb.Err(err, "items by id")
}

// AssetsByID implements app.Store: one query.
func (r reader) AssetsByID(ctx context.Context, siteID string, ids []string) ([]app.Asset, error) {
	rows, err := r.q.Query(ctx, `SELECT `+assetCols+` FROM assets WHERE site_id = $1 AND id = ANY($2::uuid[])`, siteID, ids)
	if err != nil {
		return nil, pgdb.Err(err, "assets by id")
	}
	out, err := pgdb.Collect(rows, len(ids), scanAsset)
	return out, pgdb.Err(err, "assets by id")
}
