package studio

import (
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/gateway/studio/internal/diff"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// revisionsPerPage is how many revisions the list shows at once.
const revisionsPerPage = 20

// itemKeys are the item's own properties beside its fields: a revision
// holds only the fields, so they are left out of a comparison.
var itemKeys = []string{"id", "is_published", "publish_at", "unpublish_at", "created_at", "updated_at"}

type revisionRow struct {
	Version int32
	Change  string
	When    any
	Who     string
	Public  bool
	Current bool
}

type revisionsData struct {
	Slug, Item, Label string
	Rows              []revisionRow
	// Next is the address of the next (older) page; "" on the last.
	Next, Base string
	ItemHref   string
}

// revisionsPage lists an item's revisions, newest first.
func (s *Studio) revisionsPage(v *visit) error {
	slug, id := v.r.PathValue("slug"), v.r.PathValue("item")
	req := &collectionsv1.ListItemRevisionsRequest{CollectionSlug: slug, ItemId: id, Limit: new(int32(revisionsPerPage)),
		Cursor: v.r.URL.Query().Get("cursor")}
	resp, err := call(v, collectionsv1.CollectionsService_ListItemRevisions_FullMethodName, s.collections.ListItemRevisions, req)
	if err != nil {
		return err
	}
	coll, _, err := s.collection(v, slug)
	if err != nil {
		return err
	}
	names := s.memberNames(v)
	d := revisionsData{Slug: slug, Item: id, Base: v.path("sites", v.site, "collections", slug, "items", id, "revisions"),
		ItemHref: v.path("sites", v.site, "collections", slug, "items", id)}
	for i, r := range resp.GetRevisions() {
		d.Rows = append(d.Rows, revisionRow{Version: r.GetVersion(), Change: r.GetChange(), When: r.GetCreatedAt().AsTime(),
			Who: actorLabel(r.GetActor(), names), Public: r.GetIsPublished(), Current: i == 0 && req.Cursor == "" && r.GetChange() != "deleted"})
		if d.Label == "" {
			d.Label = itemLabel(coll, r.GetData(), id)
		}
	}
	if c := resp.GetNextCursor(); c != "" {
		d.Next = d.Base + "?cursor=" + urlQuery(c)
	}
	if d.Label == "" {
		d.Label = id
	}
	crumbs := append(s.siteCrumbs(v),
		Link{Label: coll.GetName(), Href: v.path("sites", v.site, "collections", slug) + "/"},
		Link{Label: d.Label, Href: v.path("sites", v.site, "collections", slug, "items", id)})
	s.render(v, http.StatusOK, "contenttools/revisions", View{Title: "Revisions of " + d.Label, Crumbs: crumbs}, d)
	return nil
}

type revisionData struct {
	Slug, Item, Label string
	Version           int32
	Change, Who       string
	When              any
	// Current is the item's version now ("" when the item was deleted);
	// ETag its ETag, which the restore form sends back as If-Match.
	Current, ETag string
	Changed       []diff.FieldDiff
	Unchanged     []string
	Labels        map[string]string
	MayRestore    bool
	Base          string
	ItemHref      string
}

// revisionPage compares a revision with the item as it is now, field by
// field, in the collection's order of fields.
func (s *Studio) revisionPage(v *visit) error {
	slug, id, version := v.r.PathValue("slug"), v.r.PathValue("item"), v.r.PathValue("version")
	rev, err := call(v, collectionsv1.CollectionsService_GetItemRevision_FullMethodName, s.collections.GetItemRevision,
		&collectionsv1.GetItemRevisionRequest{CollectionSlug: slug, ItemId: id, Version: version})
	if err != nil {
		return err
	}
	coll, _, err := s.collection(v, slug)
	if err != nil {
		return err
	}
	d := revisionData{Slug: slug, Item: id, Version: rev.GetRevision().GetVersion(), Change: rev.GetRevision().GetChange(),
		Who: actorLabel(rev.GetRevision().GetActor(), s.memberNames(v)), When: rev.GetRevision().GetCreatedAt().AsTime(), Labels: map[string]string{},
		Base:       v.path("sites", v.site, "collections", slug, "items", id, "revisions"),
		ItemHref:   v.path("sites", v.site, "collections", slug, "items", id),
		MayRestore: v.may(collectionsv1.CollectionsService_RestoreItemRevision_FullMethodName)}
	var header metadata.MD
	now := map[string]any{}
	cur, err := call(v, collectionsv1.CollectionsService_GetItem_FullMethodName, s.collections.GetItem,
		&collectionsv1.GetItemRequest{CollectionSlug: slug, ItemId: id}, grpc.Header(&header))
	switch {
	case err == nil:
		now = withValues(cur.GetItem().AsMap())
		for _, k := range itemKeys {
			delete(now, k)
		}
		if e := header.Get("etag"); len(e) > 0 {
			d.ETag = e[0]
			d.Current = strings.Trim(strings.TrimPrefix(e[0], "W/"), `"`)
		}
	case errNotFoundCode(err):
		// A deleted item: the revision is compared with nothing, and a
		// restore creates the item again.
	default:
		return err
	}
	var order []string
	for _, f := range coll.GetFields() {
		order = append(order, f.GetKey())
		d.Labels[f.GetKey()] = fieldLabel(f.GetKey())
	}
	for _, f := range diff.Fields(withValues(rev.GetRevision().GetData().AsMap()), now, order) {
		if f.Changed {
			d.Changed = append(d.Changed, f)
		} else {
			d.Unchanged = append(d.Unchanged, f.Key)
		}
	}
	d.Label = itemLabel(coll, rev.GetRevision().GetData(), id)
	crumbs := append(s.siteCrumbs(v),
		Link{Label: coll.GetName(), Href: v.path("sites", v.site, "collections", slug) + "/"},
		Link{Label: d.Label, Href: v.path("sites", v.site, "collections", slug, "items", id)},
		Link{Label: "Revisions", Href: d.Base})
	s.render(v, http.StatusOK, "contenttools/revision", View{Title: "Version " + strconv.Itoa(int(d.Version)) + " of " + d.Label, Crumbs: crumbs}, d)
	return nil
}

// restoreRevision writes a revision's data back as the item's new
// version, if the item is still the version the person compared with.
func (s *Studio) restoreRevision(v *visit) error {
	slug, id, version := v.r.PathValue("slug"), v.r.PathValue("item"), v.r.PathValue("version")
	_, err := callIfMatch(v, collectionsv1.CollectionsService_RestoreItemRevision_FullMethodName, v.r.PostFormValue("etag"),
		s.collections.RestoreItemRevision, &collectionsv1.RestoreItemRevisionRequest{CollectionSlug: slug, ItemId: id, Version: version})
	if err != nil {
		return err
	}
	v.setFlash("Version " + version + " restored: it is the item's current version now (the versions after it stay in its revisions).")
	return v.redirect(v.path("sites", v.site, "collections", slug, "items", id), "")
}

// memberNames names the agency's members for the revisions' "who": the signed-in
// person is "you"; the others by name when the person may list the
// members (an owner), else by their member id.
func (s *Studio) memberNames(v *visit) map[string]string {
	names := map[string]string{v.m.GetMemberId(): "you"}
	if !v.may(crmv1.PeopleService_ListMembers_FullMethodName) {
		return names
	}
	resp, err := call(v, crmv1.PeopleService_ListMembers_FullMethodName, s.people.ListMembers, &crmv1.ListMembersRequest{Limit: new(int32(200))})
	if err != nil {
		return names // the names are a courtesy: the page stands without them
	}
	for _, m := range resp.GetMembers() {
		if _, ok := names[m.GetId()]; !ok && m.GetName() != "" {
			names[m.GetId()] = m.GetName()
		}
	}
	return names
}

// actorLabel says who made a revision's write; names are the members
// (memberNames).
func actorLabel(a *collectionsv1.RevisionActor, names map[string]string) string {
	switch a.GetKind() {
	case "user":
		if m := a.GetMemberId(); m != nil {
			if n := names[m.GetValue()]; n != "" {
				return n
			}
			return "A person (member " + m.GetValue() + ")"
		}
		return "A person (" + a.GetId() + ")"
	case "key":
		return "API key " + a.GetId()
	case "admin":
		return "Atrium's operator"
	case "service":
		return "The scheduler (" + a.GetId() + ")"
	case "":
		return "Unknown"
	}
	return a.GetKind() + " " + a.GetId()
}

// withValues drops the fields that are null: an item lists every field,
// a revision only those with a value, and "not set" is the same as null.
func withValues(m map[string]any) map[string]any {
	for k, val := range m {
		if val == nil {
			delete(m, k)
		}
	}
	return m
}

// itemLabel names an item by its first text field with a value, else its id.
func itemLabel(c *collectionsv1.Collection, data *structpb.Struct, id string) string {
	for _, f := range c.GetFields() {
		if f.GetType() != "text" {
			continue
		}
		if s := strings.TrimSpace(data.GetFields()[f.GetKey()].GetStringValue()); s != "" {
			if r := []rune(s); len(r) > 80 {
				s = string(r[:80]) + "…"
			}
			return s
		}
	}
	return id
}

// fieldLabel is a field's key as words: body_text is "Body text".
func fieldLabel(key string) string {
	s := strings.ReplaceAll(key, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
