package app

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
)

// Item is an item of a collection.
type Item struct {
	ID           string
	SiteID       string
	CollectionID string
	Values       Values
	// Locales holds, by locale, the values of localized fields in the
	// site's other locales (Values is the default locale's); nil for
	// none. Stores keep a locale only while it holds a value, and read it
	// whole whatever ItemQuery.Fields projects.
	Locales map[string]Values
	// ReadIn is the locale a read asked for (ReadLocale.Localize), ""
	// for a read that named none; Fallbacks names, for each localized
	// field whose value came from another locale of the chain, that
	// locale. Neither is stored.
	ReadIn      string
	Fallbacks   map[string]string
	IsPublished bool
	// PublishAt and UnpublishAt are the pending scheduled changes, if any
	// (schedule.go).
	PublishAt, UnpublishAt *time.Time
	// Version counts the item's writes; its ETag is derived from it.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ETag is the item's entity tag, a strong validator.
func (it Item) ETag() string { return `"` + strconv.FormatInt(it.Version, 10) + `"` }

// ItemQuery selects and orders a page of a collection's items.
type ItemQuery struct {
	Page pagination.Page
	// Published, when set, keeps only published (true) or draft items.
	Published *bool
	// FilterKey and FilterValue (JSON) keep items whose field equals the value.
	FilterKey   string
	FilterValue json.RawMessage
	// OrderBy is created_at, updated_at or, with OrderField set, a field.
	// Asc reverses the default newest (largest) first. Ties are broken by id
	// in the same direction. Items without a value for the field sort after
	// every value (last ascending, first descending).
	OrderBy    string
	OrderField *Field
	Asc        bool
	// Words, when set, keeps the items whose text and rich_text fields
	// hold every one of them (Words of q); OrderBy is then created_at,
	// updated_at, a field or OrderRelevance.
	Words []string
	// Fields, when not nil, are the only fields whose values the items
	// carry (selection and order still see every field).
	Fields Projection
}

// ItemPatch is an atomic change to an item, applied by the store in one
// write so that concurrent patches of different fields all survive.
type ItemPatch struct {
	// Locale, when set, is the site's locale (not its default) whose
	// values Set and Unset change, in Item.Locales; "" changes Values.
	Locale      string
	Set         Values
	Unset       []string
	IsPublished *bool
	// SetPublishAt and SetUnpublishAt replace the pending scheduled change
	// with PublishAt or UnpublishAt (nil: none).
	SetPublishAt, SetUnpublishAt bool
	PublishAt, UnpublishAt       *time.Time
	// IfVersion, when set, applies the patch only to that version.
	IfVersion *int64
	At        time.Time
	// Edit is the revision's change and actor.
	Edit Edit
}

// ErrVersionMismatch is returned by the store when an IfVersion does not
// hold.
var ErrVersionMismatch = errors.New("item version does not match")

// ErrCollectionChanged is returned by Store.InsertItem when the item was
// checked against fields the collection no longer has.
var ErrCollectionChanged = errors.New("the collection's fields changed")

// itemPolicy is the item list's limit rule: default 100, above 1000 capped.
var itemPolicy = pagination.Policy{DefaultLimit: 100, MaxLimit: 1000, Clamp: true}

// ItemOrders are the orders every item list offers; sortable fields add
// theirs (OrderFields).
var ItemOrders = []string{"created_at", "updated_at"}

// OrderFields lists what c's items can be ordered by.
func OrderFields(c Collection) []string {
	out := slices.Clone(ItemOrders)
	for _, f := range c.Fields {
		if f.Sortable() {
			out = append(out, f.Key)
		}
	}
	return out
}

// Content is the collections interface's use cases: collections and items
// of one site.
type Content struct {
	store ContentStore
	clock Clock
}

// NewContent returns the content use cases.
func NewContent(store ContentStore, clock Clock) *Content {
	return &Content{store: store, clock: clock}
}

// Collections lists the site's collections.
func (u *Content) Collections(ctx context.Context, siteID string) ([]Collection, error) {
	return u.store.Collections(ctx, siteID)
}

func (u *Content) collection(ctx context.Context, siteID, slug string) (Collection, error) {
	if !isSlug(slug) {
		// Names no collection; the store is not asked (a NUL, which
		// PostgreSQL refuses, would be a fault rather than a 404).
		return Collection{}, collectionNotFound(slug)
	}
	c, err := u.store.Collection(ctx, siteID, slug)
	if errors.Is(err, ErrNotFound) {
		return Collection{}, collectionNotFound(slug)
	}
	return c, err
}

func collectionNotFound(slug string) error { return apperr.NotFound("collection %q not found", slug) }

// itemID reads an item id from a path: one that is not a UUID names no
// item, so it is the same 404 as an id that names none.
func itemID(v, slug string) (string, error) {
	if id, ok := value.ParseID(v); ok {
		return id, nil
	}
	return "", itemNotFound(v, slug)
}

// ItemNotFound is the error for an item the caller cannot see: one that
// does not exist, or a draft for a published-only key.
func ItemNotFound(id, slug string) error { return itemNotFound(id, slug) }

func itemNotFound(id, slug string) error {
	return apperr.NotFound("item %q not found in collection %q", id, slug)
}

// ListParams are the item list's parameters as the caller sent them.
type ListParams struct {
	Limit, Offset            *int32
	Published                *bool
	FilterField, FilterValue string
	Order, Direction         string
	// Q searches the text and rich_text fields for its words.
	Q string
	// Fields, when set, names the fields each item carries (ParseProjection,
	// with Expand's fields added); the rest are not read.
	Fields, Expand string
	// PublishedOnly is set for a published-only key, which sees drafts as
	// not existing: asking for them lists nothing.
	PublishedOnly bool
	// Locale and Fallback read the items in a locale of the site
	// (itemlocales.go); "" reads the data as stored.
	Locale, Fallback string
}

// Items returns the collection and a page of its items.
func (u *Content) Items(ctx context.Context, siteID, slug string, p ListParams) (Collection, []Item, pagination.Page, error) {
	page, err := itemPolicy.Parse(p.Limit, p.Offset)
	if err != nil {
		return Collection{}, nil, page, err
	}
	q := ItemQuery{Page: page, Published: p.Published, OrderBy: "created_at"}
	switch p.Direction {
	case "", "desc":
	case "asc":
		q.Asc = true
	default:
		return Collection{}, nil, page, apperr.Invalid("direction must be asc or desc (default desc); got %q", p.Direction)
	}
	if (p.FilterField == "") != (p.FilterValue == "") {
		return Collection{}, nil, page, apperr.Invalid("filter_field and filter_value go together: give both or neither")
	}
	c, err := u.collection(ctx, siteID, slug)
	if err != nil {
		return Collection{}, nil, page, err
	}
	if q.Fields, err = ParseProjection(c, p.Fields, p.Expand); err != nil {
		return Collection{}, nil, page, err
	}
	if p.Q != "" {
		if q.Words, err = checkQuery(c, p.Q); err != nil {
			return Collection{}, nil, page, err
		}
	}
	switch p.Order {
	case "", "created_at", "updated_at":
		if p.Order != "" {
			q.OrderBy = p.Order
		}
	case OrderRelevance:
		if p.Q == "" {
			return Collection{}, nil, page, apperr.Invalid("order=relevance orders a search's results: it needs q")
		}
		q.OrderBy = OrderRelevance
	default:
		f, ok := c.Field(p.Order)
		if !ok || !f.Sortable() {
			allowed := OrderFields(c)
			if p.Q != "" {
				allowed = append(allowed, OrderRelevance)
			}
			return Collection{}, nil, page, apperr.Invalid("Invalid order field. Allowed: %s", strings.Join(allowed, ", "))
		}
		q.OrderBy, q.OrderField = f.Key, &f
	}
	if p.FilterField != "" {
		f, ok := c.Field(p.FilterField)
		if !ok {
			return Collection{}, nil, page, apperr.Invalid("Invalid filter field. Allowed: %s", fieldList(c))
		}
		if q.FilterValue, err = parseFilterValue(f, p.FilterValue); err != nil {
			return Collection{}, nil, page, err
		}
		q.FilterKey = f.Key
	}
	rl, err := u.readLocale(ctx, siteID, p.Locale, p.Fallback)
	if err != nil {
		return Collection{}, nil, page, err
	}
	if rl.Requested() && rl.Locale != rl.Default {
		// The stores filter and order on the data, the default locale's
		// values: refused rather than answered in another locale's order.
		for _, f := range []*Field{q.OrderField, fieldPtr(c, q.FilterKey)} {
			if f != nil && f.Localized {
				return Collection{}, nil, page, apperr.Invalid("filter_field and order on a localized field (%s) read the default locale (%s) only, for now: drop locale or use another field", f.Key, rl.Default)
			}
		}
	}
	if p.PublishedOnly {
		if q.Published != nil && !*q.Published {
			return c, []Item{}, page, nil
		}
		yes := true
		q.Published = &yes
	}
	items, err := u.store.Items(ctx, c, q)
	if err == nil {
		shown := c.Fields
		if q.Fields != nil {
			shown = q.Fields
		}
		rl.Localize(shown, items)
	}
	return c, items, page, err
}

func fieldPtr(c Collection, key string) *Field {
	if f, ok := c.Field(key); ok {
		return &f
	}
	return nil
}

// ItemIn is Item read in a locale of the site (ListParams.Locale and
// Fallback); "" reads the data as stored.
func (u *Content) ItemIn(ctx context.Context, siteID, slug, id, locale, fallback string) (Collection, Item, error) {
	c, it, err := u.Item(ctx, siteID, slug, id)
	if err != nil {
		return c, it, err
	}
	rl, err := u.readLocale(ctx, siteID, locale, fallback)
	if err != nil {
		return Collection{}, Item{}, err
	}
	items := []Item{it}
	rl.Localize(c.Fields, items)
	return c, items[0], nil
}

// Item returns one item of a collection.
func (u *Content) Item(ctx context.Context, siteID, slug, id string) (Collection, Item, error) {
	id, err := itemID(id, slug)
	if err != nil {
		return Collection{}, Item{}, err
	}
	if !isSlug(slug) {
		return Collection{}, Item{}, collectionNotFound(slug)
	}
	c, it, err := u.store.Item(ctx, siteID, slug, id)
	switch {
	case errors.Is(err, ErrNotFound) && c.ID == "":
		return Collection{}, Item{}, collectionNotFound(slug)
	case errors.Is(err, ErrNotFound):
		return Collection{}, Item{}, itemNotFound(id, slug)
	}
	return c, it, err
}

// NewItem is the input of CreateItem.
type NewItem struct {
	// Data is the decoded JSON object of field values; nil when the caller
	// sent none.
	Data        map[string]any
	IsPublished *bool
	// PublishAt and UnpublishAt, when given, schedule the item's
	// publishing and unpublishing (RFC 3339, in the future).
	PublishAt, UnpublishAt *string
	// Admin writes system collections too.
	Admin bool
}

func systemCollection(c Collection) error {
	return apperr.PermissionDenied("collection %q is a system collection and read-only: its items cannot be created, updated or deleted through this API", c.Slug)
}

// CreateItem validates and adds an item.
func (u *Content) CreateItem(ctx context.Context, siteID, slug string, in NewItem) (Collection, Item, error) {
	if !isSlug(slug) {
		return Collection{}, Item{}, collectionNotFound(slug)
	}
	// The definition may be remembered from an earlier read: the write is
	// made only if it still holds, and a refusal is given only once the
	// collection has been read as it is now.
	c, err := u.store.CollectionForWrite(ctx, siteID, slug)
	for attempt := 1; ; attempt++ {
		if errors.Is(err, ErrNotFound) {
			return Collection{}, Item{}, collectionNotFound(slug)
		} else if err != nil {
			return Collection{}, Item{}, err
		}
		it, created, ch, verr := u.newItem(ctx, c, siteID, in)
		if verr != nil || len(ch.refs) > 0 {
			fresh, ferr := u.collection(ctx, siteID, slug)
			if ferr != nil {
				return Collection{}, Item{}, ferr
			}
			if !reflect.DeepEqual(fresh.Fields, c.Fields) && attempt < 3 {
				c = fresh
				continue
			}
			if verr != nil {
				return Collection{}, Item{}, verr
			}
			return u.createWithReferences(ctx, fresh, it, created, ch.refs)
		}
		err = u.store.InsertItem(ctx, c, it, editOf(ctx, ChangeCreated), created...)
		if !errors.Is(err, ErrCollectionChanged) {
			return c, it, err
		}
		if attempt == 3 {
			return Collection{}, Item{}, apperr.Aborted(err, "collection %q was changed while the item was written; retry the request", slug)
		}
		c, err = u.collection(ctx, siteID, slug)
	}
}

// newItem validates in against c and returns the item to write, the events
// announcing it (its audit record last) and the validated change.
func (u *Content) newItem(ctx context.Context, c Collection, siteID string, in NewItem) (Item, []outbox.Event, change, error) {
	if c.IsSystem && !in.Admin {
		return Item{}, nil, change{}, systemCollection(c)
	}
	if in.Data == nil {
		return Item{}, nil, change{}, apperr.Invalid("data is required: a JSON object of the collection's fields (%s)", fieldList(c))
	}
	ch, err := checkData(c, in.Data, true)
	if err != nil {
		return Item{}, nil, change{}, err
	}
	now := u.clock.Now()
	it := Item{ID: store.NewID(), SiteID: siteID, CollectionID: c.ID, Values: ch.set, Version: 1, CreatedAt: now, UpdatedAt: now}
	if in.IsPublished != nil {
		it.IsPublished = *in.IsPublished
	}
	sch, err := readSchedule(ScheduleInput{PublishAt: optionalTime(in.PublishAt), UnpublishAt: optionalTime(in.UnpublishAt)}, now)
	if err != nil {
		return Item{}, nil, change{}, err
	}
	it.PublishAt, it.UnpublishAt = sch.publishAt, sch.unpublishAt
	if err := checkOrder(it); err != nil {
		return Item{}, nil, change{}, err
	}
	announce, err := createdEvents(c, it)
	if err != nil {
		return Item{}, nil, change{}, err
	}
	fields := slices.Collect(maps.Keys(ch.set))
	if in.IsPublished != nil {
		fields = append(fields, "is_published")
	}
	fields = append(fields, scheduleFields(ScheduleInput{PublishAt: optionalTime(in.PublishAt), UnpublishAt: optionalTime(in.UnpublishAt)})...)
	rec, err := auditOf(ctx, audit.Change{Action: "item.created", ResourceType: "item", ResourceID: it.ID, Fields: fields}, c.SiteID, "", now)
	return it, append(announce, rec), ch, err
}

// scheduleFields are the schedule fields a write gives, by name.
func scheduleFields(in ScheduleInput) []string {
	var out []string
	if in.PublishAt.Given {
		out = append(out, "publish_at")
	}
	if in.UnpublishAt.Given {
		out = append(out, "unpublish_at")
	}
	return out
}

// createdEvents are the events announcing a new item: item.created, and
// item.published when it is created published, so that whoever rebuilds on
// publish hears of it however the item got there (a create, a PATCH, a
// scheduled change).
func createdEvents(c Collection, it Item) ([]outbox.Event, error) {
	created, err := itemEvent(c, it, events.ItemCreated)
	if err != nil || !it.IsPublished {
		return []outbox.Event{created}, err
	}
	published, err := itemEvent(c, it, events.ItemPublished)
	return []outbox.Event{created, published}, err
}

// createWithReferences writes an item of c that refers to others: the
// referenced items must exist when it is written, in one transaction.
func (u *Content) createWithReferences(ctx context.Context, c Collection, it Item, announce []outbox.Event, refs []reference) (Collection, Item, error) {
	err := u.store.InTx(ctx, func(tx ContentTx) error {
		if err := u.checkReferences(ctx, tx, c, refs); err != nil {
			return err
		}
		return tx.InsertItem(ctx, it, editOf(ctx, ChangeCreated), announce...)
	})
	return c, it, err
}

func (u *Content) checkReferences(ctx context.Context, tx ContentTx, c Collection, refs []reference) error {
	for _, r := range refs {
		if r.asset {
			ok, err := tx.AssetExists(ctx, c.SiteID, r.id)
			if err != nil {
				return err
			}
			if !ok {
				return apperr.Invalid("data.%s must be the id of an asset of this site; there is no asset %q", r.field, r.id)
			}
			continue
		}
		target, err := tx.Collection(ctx, c.SiteID, r.target)
		if errors.Is(err, ErrNotFound) {
			return apperr.Invalid("data.%s refers to collection %q, which does not exist in this site", r.field, r.target)
		} else if err != nil {
			return err
		}
		ok, err := tx.ItemExists(ctx, target.ID, r.id)
		if err != nil {
			return err
		}
		if !ok {
			return apperr.Invalid("data.%s must be the id of an item of collection %q; there is no item %q", r.field, r.target, r.id)
		}
	}
	return nil
}

// ItemUpdate is the input of UpdateItem.
type ItemUpdate struct {
	Data        map[string]any
	IsPublished *bool
	// Schedule is the publish_at and unpublish_at given, if any.
	Schedule ScheduleInput
	// IfMatch is the caller's If-Match header, if any.
	IfMatch string
	// Locale, when another locale of the site than its default, writes
	// that locale's values of localized fields only (itemlocales.go).
	Locale string
}

// ifVersion reads an If-Match header: "*" or a list of entity tags. It
// returns the version to require, or nil for none (no header, or "*").
func ifVersion(header string) (*int64, error) {
	header = strings.TrimSpace(header)
	if header == "" || header == "*" {
		return nil, nil
	}
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if v, err := strconv.ParseInt(strings.Trim(tag, `"`), 10, 64); err == nil && strings.HasPrefix(tag, `"`) && strings.HasSuffix(tag, `"`) {
			return &v, nil
		}
	}
	// No strong tag of ours: it can match no version (a weak tag never
	// matches in If-Match).
	never := int64(-1)
	return &never, nil
}

func mismatch(id, ifMatch string) error {
	return apperr.PreconditionFailed("item %q has changed: its ETag no longer matches If-Match %s; read it again and reapply your change", id, ifMatch)
}

// UpdateItem merges the given fields into an item, atomically in the store.
func (u *Content) UpdateItem(ctx context.Context, siteID, slug, id string, in ItemUpdate) (Collection, Item, error) {
	id, err := itemID(id, slug)
	if err != nil {
		return Collection{}, Item{}, err
	}
	c, err := u.collection(ctx, siteID, slug)
	if err != nil {
		return Collection{}, Item{}, err
	}
	if c.IsSystem {
		return Collection{}, Item{}, systemCollection(c)
	}
	if in.Data == nil {
		return Collection{}, Item{}, apperr.Invalid("data is required: a JSON object of the fields to change ({} to change only is_published)")
	}
	locale, err := u.writeLocale(ctx, c, in.Locale, in.Data)
	if err != nil {
		return Collection{}, Item{}, err
	}
	checked := c
	if locale != "" {
		checked = inLocale(c)
	}
	ch, err := checkData(checked, in.Data, false)
	if err != nil {
		return Collection{}, Item{}, err
	}
	v, _ := ifVersion(in.IfMatch)
	now := u.clock.Now()
	sch, err := readSchedule(in.Schedule, now)
	if err != nil {
		return Collection{}, Item{}, err
	}
	patch := ItemPatch{Locale: locale, Set: ch.set, Unset: ch.unset, IsPublished: in.IsPublished, IfVersion: v, At: now, Edit: editOf(ctx, ChangeUpdated)}
	fields := slices.Collect(maps.Keys(in.Data))
	if in.IsPublished != nil {
		fields = append(fields, "is_published")
	}
	fields = append(fields, scheduleFields(in.Schedule)...)
	sch.apply(&patch)
	var before, after Item
	err = u.store.InTx(ctx, func(tx ContentTx) error {
		if err := u.checkReferences(ctx, tx, c, ch.refs); err != nil {
			return err
		}
		before, after, err = tx.PatchItem(ctx, c.ID, id, patch)
		switch {
		case errors.Is(err, ErrNotFound):
			return itemNotFound(id, slug)
		case errors.Is(err, ErrVersionMismatch):
			return mismatch(id, in.IfMatch)
		case err != nil:
			return err
		}
		if err := checkOrder(after); err != nil {
			return err
		}
		// The events name the locale written (itemEvent reads ReadIn);
		// the answer is then read in it below.
		after.ReadIn = locale
		if err := enqueuePatched(ctx, tx, c, before, after); err != nil {
			return err
		}
		return recordItem(ctx, tx, c, "item.updated", id, fields, now)
	})
	if err == nil && locale != "" {
		// The answer shows the item as a read in the locale written.
		rl, rerr := u.readLocale(ctx, c.SiteID, locale, "")
		if rerr != nil {
			return Collection{}, Item{}, rerr
		}
		items := []Item{after}
		rl.Localize(c.Fields, items)
		after = items[0]
	}
	return c, after, err
}

// enqueuePatched enqueues the events of a patch: item.updated, then
// item.published or item.unpublished when it moved is_published. A PATCH
// and a scheduled change both announce themselves so.
func enqueuePatched(ctx context.Context, tx outbox.Enqueuer, c Collection, before, after Item) error {
	if err := enqueueItem(ctx, tx, c, after, events.ItemUpdated); err != nil {
		return err
	}
	if before.IsPublished != after.IsPublished {
		what := events.ItemUnpublished
		if after.IsPublished {
			what = events.ItemPublished
		}
		return enqueueItem(ctx, tx, c, after, what)
	}
	return nil
}

// DeleteItem deletes an item.
func (u *Content) DeleteItem(ctx context.Context, siteID, slug, id, ifMatch string) error {
	id, err := itemID(id, slug)
	if err != nil {
		return err
	}
	c, err := u.collection(ctx, siteID, slug)
	if err != nil {
		return err
	}
	if c.IsSystem {
		return systemCollection(c)
	}
	v, _ := ifVersion(ifMatch)
	now := u.clock.Now()
	return u.store.InTx(ctx, func(tx ContentTx) error {
		it, err := tx.DeleteItem(ctx, c.ID, id, v, editOf(ctx, ChangeDeleted), now)
		switch {
		case errors.Is(err, ErrNotFound):
			return itemNotFound(id, slug)
		case errors.Is(err, ErrVersionMismatch):
			return mismatch(id, ifMatch)
		case err != nil:
			return err
		}
		it.UpdatedAt = now
		if err := enqueueItem(ctx, tx, c, it, events.ItemDeleted); err != nil {
			return err
		}
		return recordItem(ctx, tx, c, "item.deleted", id, nil, now)
	})
}

// itemEvent is the event saying that it was created, updated, published,
// unpublished or deleted (what: events.ItemCreated, ...).
func itemEvent(c Collection, it Item, what *events.Def[events.ItemEvent]) (outbox.Event, error) {
	return outbox.Of(what, events.ItemEvent{
		ID: it.ID, SiteID: c.SiteID, Collection: c.Slug, CollectionID: c.ID, IsPublished: it.IsPublished, Version: it.Version, At: it.UpdatedAt,
		Locale: it.ReadIn,
	}, it.UpdatedAt)
}

func enqueueItem(ctx context.Context, tx outbox.Enqueuer, c Collection, it Item, what *events.Def[events.ItemEvent]) error {
	e, err := itemEvent(c, it, what)
	if err != nil {
		return err
	}
	return tx.Enqueue(ctx, e)
}
