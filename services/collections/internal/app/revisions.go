package app

// Revisions: every write of an item (a create, a PATCH, a scheduled change,
// a restore, a delete) keeps a revision, written by the store in the
// write's own transaction: the item's whole data and is_published after the
// write, its version, who made it and when. An item can be put back as it
// was at any of them (RestoreRevision), as a new version; a deleted item's
// revisions are kept for a retention period (Scheduler.PurgeRevisions), and
// it can be restored from them.

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/principal"
)

// Actor is who made a change, as the revision records it: the caller's
// principal kind (key, user, admin, service), its subject (the key id,
// the user id, "admin", the service's name) and, for a person, the
// membership they acted through.
type Actor struct {
	Kind, ID, MemberID string
}

// What a revision's write did (Revision.Change). A PATCH that publishes or
// unpublishes is an update: the revision's is_published shows it.
const (
	ChangeCreated   = "created"
	ChangeUpdated   = "updated"
	ChangeScheduled = "scheduled"
	ChangeRestored  = "restored"
	ChangeDeleted   = "deleted"
)

// Edit is what the store records of a write beside the item: the kind of
// change and who made it.
type Edit struct {
	Change string
	Actor  Actor
}

// Revision is an item as one write left it.
type Revision struct {
	ItemID, CollectionID string
	// Version is the item's version after the write (a delete's is the
	// version the item had, plus one: the delete is a write too).
	Version int64
	// Values are the item's whole data after the write (before it, for a
	// delete).
	Values      Values
	IsPublished bool
	Change      string
	Actor       Actor
	CreatedAt   time.Time
}

// actorOf is the caller of ctx as a revision records it.
func actorOf(ctx context.Context) Actor {
	p, _ := principal.FromContext(ctx)
	kind := string(p.Kind)
	if kind == "" {
		kind = string(principal.KindAnonymous)
	}
	return Actor{Kind: kind, ID: p.Subject, MemberID: p.MemberID}
}

func editOf(ctx context.Context, change string) Edit {
	return Edit{Change: change, Actor: actorOf(ctx)}
}

// SchedulerPrincipal is who the scheduler's writes are made by, in their
// revisions and the audit trail.
var SchedulerPrincipal = principal.Principal{Kind: principal.KindService, Subject: "collections-scheduler"}

// DefaultRevisionRetention is how long a deleted item's revisions are kept
// (--revision-retention): it can be restored until then.
const DefaultRevisionRetention = 90 * 24 * time.Hour

// revisionPolicy is the revision list's limit rule.
var revisionPolicy = pagination.Policy{DefaultLimit: 20, MaxLimit: 100}

// RevisionPage is a page of an item's revisions, newest first.
type RevisionPage struct {
	Revisions []Revision
	// NextCursor continues after this page; "" on the last.
	NextCursor string
}

func revisionNotFound(id, slug, version string) error {
	return apperr.NotFound("revision %q of item %q not found in collection %q: versions are whole numbers from 1, listed by GET …/%s/revisions", version, id, slug, id)
}

// revisionVersion reads a version from a path: one that is not a whole
// number from 1 names no revision (404, as an id that is not a UUID names
// no item).
func revisionVersion(v, id, slug string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, revisionNotFound(id, slug, v)
	}
	return n, nil
}

func revisionCursorParams(c Collection, id string) []string { return []string{c.SiteID, c.ID, id} }

// Revisions lists an item's revisions, newest first, a page at a time: a
// deleted item's too, while they are kept.
func (u *Content) Revisions(ctx context.Context, siteID, slug, id string, limit *int32, cursor string) (Collection, RevisionPage, error) {
	page, err := revisionPolicy.Parse(limit, nil)
	if err != nil {
		return Collection{}, RevisionPage{}, err
	}
	id, err = itemID(id, slug)
	if err != nil {
		return Collection{}, RevisionPage{}, err
	}
	c, err := u.collection(ctx, siteID, slug)
	if err != nil {
		return Collection{}, RevisionPage{}, err
	}
	var before int64
	if cursor != "" {
		pos, err := pagination.ReadCursor(cursor, "the item", revisionCursorParams(c, id)...)
		if err != nil {
			return Collection{}, RevisionPage{}, err
		}
		if before, err = strconv.ParseInt(pos, 10, 64); err != nil || before < 1 {
			return Collection{}, RevisionPage{}, apperr.Invalid("cursor is malformed: send back next_cursor exactly as received, or no cursor for the first page")
		}
	}
	revs, err := u.store.Revisions(ctx, c.ID, id, before, int(page.Limit)+1)
	if err != nil {
		return Collection{}, RevisionPage{}, err
	}
	out := RevisionPage{Revisions: revs}
	if len(revs) > int(page.Limit) {
		out.Revisions = revs[:page.Limit]
		out.NextCursor = pagination.Cursor(strconv.FormatInt(out.Revisions[page.Limit-1].Version, 10), revisionCursorParams(c, id)...)
	}
	if len(revs) == 0 && cursor == "" {
		// No revision: an item written before revisions were kept, or
		// none at all.
		if _, _, err := u.Item(ctx, siteID, slug, id); err != nil {
			return Collection{}, RevisionPage{}, err
		}
	}
	return c, out, nil
}

// Revision returns one revision of an item.
func (u *Content) Revision(ctx context.Context, siteID, slug, id, version string) (Collection, Revision, error) {
	id, err := itemID(id, slug)
	if err != nil {
		return Collection{}, Revision{}, err
	}
	c, err := u.collection(ctx, siteID, slug)
	if err != nil {
		return Collection{}, Revision{}, err
	}
	v, err := revisionVersion(version, id, slug)
	if err != nil {
		return Collection{}, Revision{}, err
	}
	r, err := u.store.Revision(ctx, c.ID, id, v)
	if errors.Is(err, ErrNotFound) {
		return Collection{}, Revision{}, revisionNotFound(id, slug, version)
	}
	return c, r, err
}

// RestoreRevision writes a revision's data back as a new version of the
// item, as a PATCH of every field would (If-Match honoured, the same
// events): the fields the revision has are set, the others cleared. The
// data is checked against the collection as it is now: fields it no
// longer defines are left out, and a value its rules no longer accept
// (a removed option, a reference to a deleted item) refuses the restore
// (422). A deleted item is created again, with its id, as a draft.
func (u *Content) RestoreRevision(ctx context.Context, siteID, slug, id, version, ifMatch string) (Collection, Item, error) {
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
	v, err := revisionVersion(version, id, slug)
	if err != nil {
		return Collection{}, Item{}, err
	}
	rev, err := u.store.Revision(ctx, c.ID, id, v)
	if errors.Is(err, ErrNotFound) {
		return Collection{}, Item{}, revisionNotFound(id, slug, version)
	} else if err != nil {
		return Collection{}, Item{}, err
	}
	data := map[string]any{}
	for k, raw := range rev.Values {
		if _, ok := c.Field(k); !ok {
			continue
		}
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			return Collection{}, Item{}, err
		}
		data[k] = x
	}
	ch, err := checkData(c, data, true)
	if err != nil {
		return Collection{}, Item{}, unrestorable(v, id, err)
	}
	var unset []string
	for _, f := range c.Fields {
		if _, ok := ch.set[f.Key]; !ok {
			unset = append(unset, f.Key)
		}
	}
	fields := append(slices.Collect(maps.Keys(ch.set)), unset...)
	ifv, _ := ifVersion(ifMatch)
	now := u.clock.Now()
	var after Item
	err = u.store.InTx(ctx, func(tx ContentTx) error {
		if err := u.checkReferences(ctx, tx, c, ch.refs); err != nil {
			return unrestorable(v, id, err)
		}
		var before Item
		before, after, err = tx.PatchItem(ctx, c.ID, id, ItemPatch{Set: ch.set, Unset: unset, IfVersion: ifv, At: now, Edit: editOf(ctx, ChangeRestored)})
		switch {
		case errors.Is(err, ErrVersionMismatch):
			return mismatch(id, ifMatch)
		case errors.Is(err, ErrNotFound):
			after, err = u.recreate(ctx, tx, c, id, ch.set, ifMatch, now)
			if err != nil {
				return err
			}
			return recordItem(ctx, tx, c, "item.restored", id, fields, now)
		case err != nil:
			return err
		}
		if err := enqueuePatched(ctx, tx, c, before, after); err != nil {
			return err
		}
		return recordItem(ctx, tx, c, "item.restored", id, fields, now)
	})
	return c, after, err
}

func unrestorable(v int64, id string, err error) error {
	if apperr.KindOf(err) != apperr.KindInvalid {
		return err
	}
	return apperr.Unprocessable("revision %d of item %q cannot be restored as the collection is now: %s; restore another revision, or PATCH the item", v, id, err.Error())
}

// recreate makes a deleted item again from a revision's values: its id,
// the version after its last revision, a draft, announced as a create.
// The latest revision is locked (FOR UPDATE on PostgreSQL) so that the
// retention purge cannot take the revisions away meanwhile.
func (u *Content) recreate(ctx context.Context, tx ContentTx, c Collection, id string, vals Values, ifMatch string, now time.Time) (Item, error) {
	if strings.TrimSpace(ifMatch) != "" {
		return Item{}, apperr.PreconditionFailed("item %q was deleted, so nothing matches If-Match %s; restore it without If-Match to create it again", id, ifMatch)
	}
	latest, err := tx.LatestRevision(ctx, c.ID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && latest.Change != ChangeDeleted) {
		return Item{}, itemNotFound(id, c.Slug)
	} else if err != nil {
		return Item{}, err
	}
	it := Item{ID: id, SiteID: c.SiteID, CollectionID: c.ID, Values: vals, Version: latest.Version + 1, CreatedAt: now, UpdatedAt: now}
	announce, err := createdEvents(c, it)
	if err != nil {
		return Item{}, err
	}
	err = tx.InsertItem(ctx, it, editOf(ctx, ChangeRestored), announce...)
	if errors.Is(err, ErrDuplicate) {
		return Item{}, apperr.Conflict("item %q was restored by another request meanwhile; read it, and restore again if you still need to", id)
	}
	return it, err
}
