package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/store"
)

// The admin use cases: defining a site's collections and writing items of
// any collection, system ones included.

func (u *Content) siteID(ctx context.Context, id string) (string, error) {
	s, err := getSite(ctx, u.store.Site, id)
	return s.ID, err
}

// NewCollection is the input of CreateCollection.
type NewCollection struct {
	Name, Slug string
	IsSystem   bool
	Fields     []Field
	// SearchLanguage is one of SearchLanguages; "" is DefaultSearchLanguage.
	SearchLanguage string
}

// CreateCollection defines a collection of a site.
func (u *Content) CreateCollection(ctx context.Context, siteID string, in NewCollection) (Collection, error) {
	siteID, err := u.siteID(ctx, siteID)
	if err != nil {
		return Collection{}, err
	}
	name, err := checkName("name", in.Name)
	if err != nil {
		return Collection{}, err
	}
	if err := checkSlug(in.Slug); err != nil {
		return Collection{}, err
	}
	if err := checkDefinitions(in.Fields); err != nil {
		return Collection{}, err
	}
	lang, err := checkSearchLanguage(in.SearchLanguage)
	if err != nil {
		return Collection{}, err
	}
	now := u.clock.Now()
	c := Collection{ID: store.NewID(), SiteID: siteID, Name: name, Slug: in.Slug, IsSystem: in.IsSystem,
		Fields: append([]Field{}, in.Fields...), SearchLanguage: lang, CreatedAt: now, UpdatedAt: now}
	err = u.store.InTx(ctx, func(tx ContentTx) error {
		if err := checkTargets(ctx, tx, c, c.Fields); err != nil {
			return err
		}
		if err := tx.InsertCollection(ctx, c); err != nil {
			if errors.Is(err, ErrDuplicate) {
				return apperr.Conflict("site %q already has a collection with slug %q", siteID, c.Slug)
			}
			return err
		}
		if err := outbox.Add(ctx, tx, events.CollectionCreated, events.CollectionEvent{ID: c.ID, SiteID: siteID, Slug: c.Slug, At: now}, now); err != nil {
			return err
		}
		return record(ctx, tx, audit.Change{Action: "collection.created", ResourceType: "collection", ResourceID: c.ID,
			Fields: []string{"name", "slug", "is_system", "fields", "search_language"}}, siteID, "", now)
	})
	return c, err
}

// checkTargets checks that every reference field points into a collection
// of the site (the collection itself included).
func checkTargets(ctx context.Context, tx ContentTx, c Collection, fields []Field) error {
	for _, f := range fields {
		if f.Type != TypeReference || f.Target == c.Slug {
			continue
		}
		if _, err := tx.Collection(ctx, c.SiteID, f.Target); errors.Is(err, ErrNotFound) {
			return apperr.Invalid("field %s targets collection %q, which this site does not have", f.Key, f.Target)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// SiteCollections lists a site's collections for the admin API.
func (u *Content) SiteCollections(ctx context.Context, siteID string) ([]Collection, error) {
	siteID, err := u.siteID(ctx, siteID)
	if err != nil {
		return nil, err
	}
	return u.store.Collections(ctx, siteID)
}

// CollectionChange is the input of UpdateCollection.
type CollectionChange struct {
	Name   *string
	Add    []Field
	Remove []string
	Update []Field
	// SearchLanguage, when set, changes the search language.
	SearchLanguage *string
}

// UpdateCollection renames a collection and adds, removes or changes
// fields. Added fields must be optional (existing items lack them); a
// changed field keeps its type; the values of removed fields are deleted
// from every item. Existing values are not re-validated against changed
// settings: they stay until an item is next written.
func (u *Content) UpdateCollection(ctx context.Context, siteID, slug string, ch CollectionChange) (Collection, error) {
	siteID, err := u.siteID(ctx, siteID)
	if err != nil {
		return Collection{}, err
	}
	if !isSlug(slug) {
		return Collection{}, collectionNotFound(slug)
	}
	var c Collection
	err = u.store.InTx(ctx, func(tx ContentTx) error {
		c, err = tx.Collection(ctx, siteID, slug)
		if errors.Is(err, ErrNotFound) {
			return collectionNotFound(slug)
		} else if err != nil {
			return err
		}
		if ch.Name != nil {
			if c.Name, err = checkName("name", *ch.Name); err != nil {
				return err
			}
		}
		if ch.SearchLanguage != nil {
			if c.SearchLanguage, err = checkSearchLanguage(*ch.SearchLanguage); err != nil {
				return err
			}
		}
		for i, k := range ch.Remove {
			j := slices.IndexFunc(c.Fields, func(f Field) bool { return f.Key == k })
			if j < 0 {
				return apperr.Invalid("remove_fields[%d]: collection %q has no field %q; its fields are: %s", i, slug, k, fieldList(c))
			}
			c.Fields = slices.Delete(slices.Clone(c.Fields), j, j+1)
		}
		for i, f := range ch.Update {
			j := slices.IndexFunc(c.Fields, func(g Field) bool { return g.Key == f.Key })
			if j < 0 {
				return apperr.Invalid("update_fields[%d]: collection %q has no field %q; add it with add_fields", i, slug, f.Key)
			}
			if c.Fields[j].Type != f.Type {
				return apperr.Invalid("update_fields[%d]: field %s is %s and cannot become %s; remove it and add a new field", i, f.Key, c.Fields[j].Type, f.Type)
			}
			if f.Required && !c.Fields[j].Required {
				return apperr.Invalid("update_fields[%d]: field %s cannot become required, since existing items may lack it", i, f.Key)
			}
			if err := checkDefinition(fmt.Sprintf("update_fields[%d]", i), &f); err != nil {
				return err
			}
			c.Fields = slices.Clone(c.Fields)
			c.Fields[j] = f
		}
		for i, f := range ch.Add {
			if f.Required {
				return apperr.Invalid("add_fields[%d]: field %s cannot be required, since existing items lack it; add it optional", i, f.Key)
			}
			c.Fields = append(slices.Clone(c.Fields), f)
		}
		if err := checkDefinitions(c.Fields); err != nil {
			return err
		}
		if err := checkTargets(ctx, tx, c, c.Fields); err != nil {
			return err
		}
		c.UpdatedAt = u.clock.Now()
		if err := tx.UpdateCollection(ctx, c, ch.Remove); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.CollectionUpdated, events.CollectionEvent{ID: c.ID, SiteID: siteID, Slug: c.Slug, At: c.UpdatedAt}, c.UpdatedAt); err != nil {
			return err
		}
		var fields []string
		if ch.Name != nil {
			fields = append(fields, "name")
		}
		if ch.SearchLanguage != nil {
			fields = append(fields, "search_language")
		}
		if len(ch.Add)+len(ch.Remove)+len(ch.Update) > 0 {
			fields = append(fields, "fields")
		}
		return record(ctx, tx, audit.Change{Action: "collection.updated", ResourceType: "collection", ResourceID: c.ID, Fields: fields}, siteID, "", c.UpdatedAt)
	})
	return c, err
}

// CreateSiteItem adds an item to any collection of a site, system ones
// included.
func (u *Content) CreateSiteItem(ctx context.Context, siteID, slug string, in NewItem) (Collection, Item, error) {
	siteID, err := u.siteID(ctx, siteID)
	if err != nil {
		return Collection{}, Item{}, err
	}
	in.Admin = true
	return u.CreateItem(ctx, siteID, slug, in)
}
