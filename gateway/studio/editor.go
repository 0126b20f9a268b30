package studio

import (
	"cmp"
	"context"
	"encoding/json"
	"html"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// The editor's pages: the sites an editor may edit, a site's collections,
// a collection's items (search, filters, order, paging that never counts
// the whole collection) and the item editor (a control per field type,
// draft, publish, unpublish, schedule, preview link, delete, and the
// conflict shown when someone else saved first).

const (
	mListSites       = collectionsv1.SchemaService_ListAgencySites_FullMethodName
	mListCollections = collectionsv1.CollectionsService_ListCollections_FullMethodName
	mListItems       = collectionsv1.CollectionsService_ListItems_FullMethodName
	mGetItem         = collectionsv1.CollectionsService_GetItem_FullMethodName
	mCreateItem      = collectionsv1.CollectionsService_CreateItem_FullMethodName
	mUpdateItem      = collectionsv1.CollectionsService_UpdateItem_FullMethodName
	mDeleteItem      = collectionsv1.CollectionsService_DeleteItem_FullMethodName
	mListAssets      = collectionsv1.AssetsService_ListAssets_FullMethodName
	mCreatePreview   = collectionsv1.PreviewLinksService_CreatePreviewLink_FullMethodName
)

// itemsPerPage is the items list's page; the list asks for one more to
// know whether a next page exists, rather than counting the collection.
const itemsPerPage = 50

// referenceChoices is how many items a reference's select lists; a search
// box finds the others.
const referenceChoices = 200

func (s *Studio) editorRoutes() {
	col := "/studio/a/{agency}/sites/{site}/collections/{slug}/"
	item := col + "items/{item}"
	s.handle("GET /studio/a/{agency}/sites", s.sitesPage)
	s.handle("GET /studio/a/{agency}/sites/{site}/{$}", s.collectionsPage)
	s.handle("GET /studio/a/{agency}/sites/{site}", func(v *visit) error { return v.moved(v.path("sites", v.site) + "/") })
	s.handle("GET "+col+"{$}", s.itemsPage)
	s.handle("GET /studio/a/{agency}/sites/{site}/collections/{slug}", func(v *visit) error {
		return v.moved(v.path("sites", v.site, "collections", v.r.PathValue("slug")) + "/")
	})
	s.handle("GET "+col+"choices", s.referenceChoicesPage)
	s.handle("GET "+col+"new", s.newItemPage)
	s.handle("POST "+col+"new", s.createItem)
	s.handle("GET "+item, s.itemPage)
	s.handle("POST "+item, func(v *visit) error { return s.saveItem(v, "") })
	s.handle("POST "+item+"/publish", func(v *visit) error { return s.saveItem(v, "publish") })
	s.handle("POST "+item+"/unpublish", func(v *visit) error { return s.saveItem(v, "unpublish") })
	s.handle("POST "+item+"/delete", s.deleteItem)
	s.handle("POST "+item+"/preview-link", s.createPreviewLink)
}

// moved sends a page's address without its slash to the page.
func (v *visit) moved(to string) error {
	http.Redirect(v.w, v.r, to, http.StatusMovedPermanently) //nolint:gosec // to is built by visit.path: a path of the Studio, each part escaped

	return nil
}

// judge is the judge's answer to the visit's person calling fullMethod:
// a write refused before any form is read, as the service would refuse it.
func (v *visit) judge(fullMethod string) error {
	a, ok := principal.AccessOf(fullMethod)
	if !ok {
		return status.Errorf(codes.Internal, "no access rule for %s", fullMethod)
	}
	p, err := v.s.cfg.Gate.Principal(v.r.Context(), v.sess, v.agency(), v.site, fullMethod)
	if err != nil {
		return err
	}
	if err := principal.Authorize(p, a); err != nil {
		// The judge's refusal, as the service would send it (403).
		return apperr.ToStatus(err).Err()
	}
	return nil
}

// ---- sites and collections

type sitesData struct {
	Sites []*collectionsv1.Site
	// Limited: the person's membership names the sites they edit.
	Limited bool
}

func (s *Studio) sitesPage(v *visit) error {
	resp, err := call(v, mListSites, s.schema.ListAgencySites, &collectionsv1.ListAgencySitesRequest{})
	if err != nil {
		return err
	}
	d := sitesData{Sites: resp.GetSites()}
	// An editor whose membership names sites edits only those: the others
	// would answer 403 on every page.
	if ids := v.m.GetSiteIds(); len(ids) > 0 {
		d.Limited = true
		d.Sites = slices.DeleteFunc(d.Sites, func(site *collectionsv1.Site) bool { return !slices.Contains(ids, site.GetId()) })
	}
	s.render(v, http.StatusOK, "editor/sites", View{Title: "Content", Crumbs: []Link{{Label: "Home", Href: v.path("")}}}, d)
	return nil
}

type collectionsData struct {
	Site, Name  string
	Collections []*collectionsv1.Collection
}

func (s *Studio) collectionsPage(v *visit) error {
	resp, err := call(v, mListCollections, s.collections.ListCollections, &collectionsv1.ListCollectionsRequest{})
	if err != nil {
		return err
	}
	d := collectionsData{Site: v.site, Name: v.site, Collections: resp.GetCollections()}
	if sites, err := call(v, mListSites, s.schema.ListAgencySites, &collectionsv1.ListAgencySitesRequest{}); err == nil {
		for _, site := range sites.GetSites() {
			if site.GetId() == v.site && site.GetName() != "" {
				d.Name = site.GetName()
			}
		}
	}
	s.render(v, http.StatusOK, "editor/collections", View{Title: "Collections of " + d.Name, Crumbs: v.siteCrumbs(false)}, d)
	return nil
}

// siteCrumbs are the crumbs of a site's pages; with the collections page.
func (v *visit) siteCrumbs(withSite bool) []Link {
	out := []Link{{Label: "Home", Href: v.path("")}, {Label: "Content", Href: v.path("sites")}}
	if withSite {
		out = append(out, Link{Label: "Site " + v.site, Href: v.path("sites", v.site) + "/"})
	}
	return out
}

// pathCollection is the path's collection of the visit's site.
func (s *Studio) pathCollection(v *visit) (*collectionsv1.Collection, error) {
	resp, err := call(v, mListCollections, s.collections.ListCollections, &collectionsv1.ListCollectionsRequest{})
	if err != nil {
		return nil, err
	}
	slug := v.r.PathValue("slug")
	for _, c := range resp.GetCollections() {
		if c.GetSlug() == slug {
			// The references' targets are read from the same answer.
			v.r = v.r.WithContext(context.WithValue(v.r.Context(), siteCollectionsKey{}, resp.GetCollections()))
			return c, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "the site has no collection %q", slug)
}

// siteCollectionsKey holds, in a request's context, the site's collections
// pathCollection read, so that a page reads them once.
type siteCollectionsKey struct{}

// ---- the items list

type itemsData struct {
	Site       string
	Collection *collectionsv1.Collection
	Rows       []itemRow
	// RowsHTML is Rows as the table's rows (itemRowsHTML).
	RowsHTML template.HTML
	// The list's query, as the form shows it.
	Q, Published, Order, Dir, FilterField, FilterValue string
	// Orders are the orders the collection offers; SelectFields the fields
	// the list filters by.
	Orders       []choice
	SelectFields []choice
	Page         int
	Prev, Next   string
	CanCreate    bool
	TitleLabel   string
	Error        string
}

type itemRow struct {
	ID, Title, State, Updated, Href string
}

func (s *Studio) itemsPage(v *visit) error {
	c, err := s.pathCollection(v)
	if err != nil {
		return err
	}
	q := v.r.URL.Query()
	d := itemsData{Site: v.site, Collection: c, Q: strings.TrimSpace(q.Get("q")), Published: q.Get("published"),
		Order: q.Get("order"), Dir: q.Get("dir"), FilterField: q.Get("filter_field"), FilterValue: q.Get("filter_value"),
		CanCreate: !c.GetIsSystem() && v.may(mCreateItem)}
	d.Page, _ = strconv.Atoi(q.Get("page"))
	// The offset is an int32: a page beyond it is the last one it reaches.
	d.Page = min(max(d.Page, 1), math.MaxInt32/itemsPerPage)
	tf := titleField(c.GetFields())
	d.TitleLabel = "Item"
	if tf != "" {
		d.TitleLabel = keyLabel(tf)
	}
	d.Orders = []choice{{Value: "created_at", Label: "Created"}, {Value: "updated_at", Label: "Last changed"}}
	for _, f := range c.GetFields() {
		if slices.Contains(sortableTypes, f.GetType()) {
			d.Orders = append(d.Orders, choice{Value: f.GetKey(), Label: keyLabel(f.GetKey())})
		}
		if f.GetType() == "select" || f.GetType() == "boolean" {
			d.SelectFields = append(d.SelectFields, choice{Value: f.GetKey(), Label: keyLabel(f.GetKey()), Selected: f.GetKey() == d.FilterField})
		}
	}
	if d.Q != "" && q.Get("order") == "" {
		d.Order = "relevance"
	}
	for i := range d.Orders {
		d.Orders[i].Selected = d.Orders[i].Value == d.Order
	}
	req := &collectionsv1.ListItemsRequest{CollectionSlug: c.GetSlug(), Limit: new(int32(itemsPerPage + 1)),
		Offset: new(int32((d.Page - 1) * itemsPerPage)), //nolint:gosec // d.Page is at most MaxInt32/itemsPerPage (above)
		Q:      d.Q, Order: d.Order, Direction: d.Dir,
		// The table shows the title field and the item's own properties:
		// the service reads and renders only those (a post's body is most
		// of its bytes). "id" names no field: the properties alone.
		Fields: cmp.Or(tf, "id")}
	if d.FilterField != "" && d.FilterValue != "" {
		req.FilterField, req.FilterValue = d.FilterField, d.FilterValue
	}
	switch d.Published {
	case "true":
		req.IsPublished = new(true)
	case "false":
		req.IsPublished = new(false)
	}
	// Only the row's values are read from the rendered page: the rest of
	// each item (its bodies) is skipped (itemRows).
	var resp struct {
		Items []map[string]any
	}
	err = callJSONWith(v, mListItems, s.collections.ListItems, req, func(b []byte) (err error) {
		resp.Items, err = itemRows(b, tf)
		return err
	})
	code := http.StatusOK
	if err != nil {
		msg, ok := errForm(err)
		if !ok {
			return err
		}
		// A query the service refuses (an order or filter it does not
		// take) is shown beside the form, which keeps it to correct.
		d.Error, code = msg, http.StatusBadRequest
	}
	items := resp.Items
	if len(items) > itemsPerPage {
		items = items[:itemsPerPage]
		d.Next = pageLink(v, q, d.Page+1)
	}
	if d.Page > 1 {
		d.Prev = pageLink(v, q, d.Page-1)
	}
	for _, m := range items {
		id, _ := m["id"].(string)
		d.Rows = append(d.Rows, itemRow{ID: id, Title: itemTitle(m, tf), State: itemState(m), Updated: fmtTime(m["updated_at"]),
			Href: v.path("sites", v.site, "collections", c.GetSlug(), "items", id)})
	}
	d.RowsHTML = itemRowsHTML(d.Rows)
	s.render(v, code, "editor/items", View{Title: c.GetName(), Crumbs: v.siteCrumbs(true)}, d)
	return nil
}

// itemRows reads, from a ListItems page rendered as the JSON API answers
// it, each item's values a list's row shows (its id, publication times and
// title). Decoding whole items into maps took a third of the page's time
// (docs/performance.md, bench studio): the usual title fields are read
// into a struct, which skips the rest of each item; a collection whose
// title is another field is read whole.
func itemRows(page []byte, titleField string) ([]map[string]any, error) {
	type row struct {
		ID          string  `json:"id"`
		IsPublished bool    `json:"is_published"`
		PublishAt   *string `json:"publish_at"`
		UnpublishAt *string `json:"unpublish_at"`
		UpdatedAt   string  `json:"updated_at"`
		Title       *string `json:"title"`
		Name        *string `json:"name"`
		Headline    *string `json:"headline"`
		Label       *string `json:"label"`
	}
	switch titleField {
	case "", "title", "name", "headline", "label":
	default:
		var whole struct {
			Items []map[string]any `json:"items"`
		}
		err := json.Unmarshal(page, &whole)
		return whole.Items, err
	}
	var fast struct {
		Items []row `json:"items"`
	}
	if err := json.Unmarshal(page, &fast); err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(fast.Items))
	for _, r := range fast.Items {
		m := map[string]any{"id": r.ID, "is_published": r.IsPublished, "updated_at": r.UpdatedAt}
		if r.PublishAt != nil {
			m["publish_at"] = *r.PublishAt
		}
		if r.UnpublishAt != nil {
			m["unpublish_at"] = *r.UnpublishAt
		}
		if t := map[string]*string{"title": r.Title, "name": r.Name, "headline": r.Headline, "label": r.Label}[titleField]; t != nil {
			m[titleField] = *t
		}
		out = append(out, m)
	}
	return out, nil
}

// itemRowsHTML is the items table's rows. They are the page's bulk, and
// html/template's escapers, called by reflection for every value, cost
// more than the rest of the page together (docs/performance.md, bench
// studio); so the rows are written here, each value escaped for where it
// goes: text content and a double-quoted attribute (html.EscapeString
// escapes <, >, &, ' and "), the link being a path the console built
// (visit.path escapes each part).
func itemRowsHTML(rows []itemRow) template.HTML {
	size := 0
	for _, r := range rows {
		// The markup around the values, and room for a few escapes.
		size += 160 + len(r.Href) + len(r.Title) + len(r.State) + len(r.Updated)
	}
	var b strings.Builder
	b.Grow(size)
	for _, r := range rows {
		b.WriteString(`<tr><th scope="row"><a href="`)
		b.WriteString(html.EscapeString(r.Href))
		b.WriteString(`">`)
		b.WriteString(html.EscapeString(r.Title))
		b.WriteString(`</a></th><td><span class="badge">`)
		b.WriteString(html.EscapeString(r.State))
		b.WriteString(`</span></td><td>`)
		b.WriteString(html.EscapeString(r.Updated))
		b.WriteString("</td></tr>\n")
	}
	return template.HTML(b.String()) //nolint:gosec // G203: every value above is escaped for its context
}

// sortableTypes are the field types a list may be ordered by (the
// collections service's SortableTypes).
var sortableTypes = []string{"text", "number", "integer", "date", "datetime", "email", "url", "select", "boolean"}

func pageLink(v *visit, q url.Values, page int) string {
	q2 := url.Values{}
	for k, vs := range q {
		q2[k] = vs
	}
	q2.Set("page", strconv.Itoa(page))
	return v.r.URL.Path + "?" + q2.Encode()
}

// itemState is an item's publication as a word: published, scheduled or
// draft.
func itemState(m map[string]any) string {
	if p, _ := m["is_published"].(bool); p {
		if u, _ := m["unpublish_at"].(string); u != "" {
			return "published, until " + fmtTime(u)
		}
		return "published"
	}
	if p, _ := m["publish_at"].(string); p != "" {
		return "scheduled for " + fmtTime(p)
	}
	return "draft"
}

// fmtTime is an RFC 3339 time as pages show it.
func fmtTime(x any) string {
	s, _ := x.(string)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2 Jan 2006 15:04:05 UTC")
}

// ---- the item editor

type itemData struct {
	Site       string
	Collection *collectionsv1.Collection
	// ItemID is "" on the new item page.
	ItemID string
	Title  string
	Fields []fieldControl
	// FieldsHTML is Fields as the form's controls (fieldControlsHTML).
	FieldsHTML template.HTML
	ETag       string
	State      string
	Created    string
	Updated    string
	// The schedule's inputs (datetime-local, UTC).
	PublishAt, UnpublishAt string
	Published              bool
	// What the person may do here (the judge's answers).
	CanSave, CanDelete, CanPreview bool
	// Action is the form's address; Base the item's.
	Action, Base string
	// Error is the service's or the form's refusal; Conflict the time
	// someone else saved the item at.
	Error    string
	Conflict string
	// PreviewURL is a preview link just made.
	PreviewURL, PreviewExpires string
	// ReadOnly explains why there are no controls.
	ReadOnly string
}

// getItem reads the path's item with its ETag.
func (s *Studio) getItem(v *visit, slug string) (map[string]any, string, error) {
	ctx, err := v.ctx(mGetItem)
	if err != nil {
		return nil, "", err
	}
	return s.getItemIn(ctx, slug, v.r.PathValue("item"))
}

// getItemIn reads item id of collection slug with its ETag, in ctx
// (visit.ctx). The item is read as the JSON API's body, rendered by the
// service from the stored values: the typed answer's Structs, built by
// the service and taken apart here, cost twice as much (docs/performance.md,
// bench studio).
func (s *Studio) getItemIn(ctx context.Context, slug, id string) (map[string]any, string, error) {
	var md metadata.MD
	var resp struct {
		Item map[string]any `json:"item"`
	}
	err := callJSONIn(ctx, mGetItem, s.collections.GetItem, &collectionsv1.GetItemRequest{CollectionSlug: slug, ItemId: id},
		func(b []byte) error { return json.Unmarshal(b, &resp) }, grpc.Header(&md))
	if err != nil {
		return nil, "", err
	}
	if resp.Item == nil {
		return nil, "", status.Errorf(codes.Internal, "%s answered no item", mGetItem)
	}
	return resp.Item, first(md.Get("etag")), nil
}

// collectionAndItem reads the path's collection and item side by side:
// neither needs the other (the item is named by the path's slug), and a
// page waiting for both one after the other waits twice.
func (s *Studio) collectionAndItem(v *visit) (*collectionsv1.Collection, map[string]any, string, error) {
	ctx, err := v.ctx(mGetItem)
	if err != nil {
		return nil, nil, "", err
	}
	type got struct {
		item map[string]any
		etag string
		err  error
	}
	done := make(chan got, 1)
	slug, id := v.r.PathValue("slug"), v.r.PathValue("item")
	go func() {
		var g got
		g.item, g.etag, g.err = s.getItemIn(ctx, slug, id)
		done <- g
	}()
	c, err := s.pathCollection(v)
	g := <-done
	if err != nil {
		return nil, nil, "", err
	}
	return c, g.item, g.etag, g.err
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func (s *Studio) itemPage(v *visit) error {
	c, item, etag, err := s.collectionAndItem(v)
	if err != nil {
		return err
	}
	d, err := s.itemForm(v, c, item, etag, formValues(c.GetFields(), item), nil)
	if err != nil {
		return err
	}
	s.render(v, http.StatusOK, "editor/item", s.itemView(v, c, d), d)
	return nil
}

func (s *Studio) itemView(v *visit, c *collectionsv1.Collection, d *itemData) View {
	crumbs := append(v.siteCrumbs(true), Link{Label: c.GetName(), Href: v.path("sites", v.site, "collections", c.GetSlug()) + "/"})
	return View{Title: d.Title, Crumbs: crumbs}
}

// itemForm is the editor's data for item (nil for a new one) with the
// form's values and the fields' errors.
func (s *Studio) itemForm(v *visit, c *collectionsv1.Collection, item map[string]any, etag string, form url.Values, errs map[string]string) (*itemData, error) {
	d := &itemData{Site: v.site, Collection: c, ETag: etag, Fields: controls(c.GetFields(), form, errs),
		PublishAt: form.Get("publish_at"), UnpublishAt: form.Get("unpublish_at")}
	colPath := v.path("sites", v.site, "collections", c.GetSlug())
	if item == nil {
		d.Title, d.Action = "New item in "+c.GetName(), colPath+"/new"
		d.CanSave = !c.GetIsSystem() && v.may(mCreateItem)
	} else {
		d.ItemID, _ = item["id"].(string)
		d.Title = itemTitle(item, titleField(c.GetFields()))
		d.Base = colPath + "/items/" + url.PathEscape(d.ItemID)
		d.Action = d.Base
		d.State, d.Created, d.Updated = itemState(item), fmtTime(item["created_at"]), fmtTime(item["updated_at"])
		d.Published, _ = item["is_published"].(bool)
		if _, posted := form["publish_at"]; !posted {
			p, _ := item["publish_at"].(string)
			u, _ := item["unpublish_at"].(string)
			d.PublishAt, d.UnpublishAt = localTime(p), localTime(u)
		}
		d.CanSave = !c.GetIsSystem() && v.may(mUpdateItem)
		d.CanDelete = !c.GetIsSystem() && v.may(mDeleteItem)
		d.CanPreview = v.may(mCreatePreview)
	}
	if !d.CanSave {
		d.ReadOnly = "You can read this item but not change it."
		if item == nil {
			d.ReadOnly = "You may not add items to this collection."
		}
		if c.GetIsSystem() {
			d.ReadOnly = "This is a system collection: its items are read-only here."
		}
	}
	for i := range d.Fields {
		f := &d.Fields[i]
		f.Writable = d.CanSave
		f.AssetsURL = v.path("sites", v.site, "assets")
		f.ChoicesURL = colPath + "/choices?" + url.Values{"field": {f.Key}, "current": {f.Value}}.Encode()
	}
	if err := s.fillChoices(v, c, d); err != nil {
		return nil, err
	}
	d.FieldsHTML = fieldControlsHTML(d.Fields)
	return d, nil
}

// fillChoices lists the items a reference may name and the assets an
// asset field may hold.
func (s *Studio) fillChoices(v *visit, c *collectionsv1.Collection, d *itemData) error {
	var assets []*collectionsv1.Asset
	assetsRead := false
	for i := range d.Fields {
		f := &d.Fields[i]
		switch f.Type {
		case "reference":
			opts, more, err := s.referenceOptions(v, f.Target, "", f.Value)
			if err != nil {
				return err
			}
			f.Options, f.More = opts, more
		case "asset":
			if !assetsRead {
				resp, err := call(v, mListAssets, s.assets.ListAssets, &collectionsv1.ListAssetsRequest{Limit: new(int32(100))})
				if err != nil {
					return err
				}
				assets, assetsRead = resp.GetAssets(), true
			}
			found := f.Value == ""
			for _, a := range assets {
				ac := assetChoice{ID: a.GetId(), Label: a.GetFilename(), Selected: a.GetId() == f.Value}
				if a.GetAlt() != "" {
					ac.Label += " — " + a.GetAlt()
				}
				if strings.HasPrefix(a.GetContentType(), "image/") {
					ac.Thumb = a.GetUrl()
				}
				found = found || ac.Selected
				f.Assets = append(f.Assets, ac)
			}
			if !found {
				// The item's asset is beyond the first page: keep it.
				f.Assets = append(f.Assets, assetChoice{ID: f.Value, Label: "Asset " + f.Value, Selected: true})
			}
		}
	}
	return nil
}

// referenceOptions are the first items of collection target matching q,
// by their title field, and current (the field's value) among them.
func (s *Studio) referenceOptions(v *visit, target, q, current string) ([]choice, bool, error) {
	cols, _ := v.r.Context().Value(siteCollectionsKey{}).([]*collectionsv1.Collection)
	if cols == nil {
		resp, err := call(v, mListCollections, s.collections.ListCollections, &collectionsv1.ListCollectionsRequest{})
		if err != nil {
			return nil, false, err
		}
		cols = resp.GetCollections()
	}
	tf := ""
	for _, c := range cols {
		if c.GetSlug() == target {
			tf = titleField(c.GetFields())
		}
	}
	req := &collectionsv1.ListItemsRequest{CollectionSlug: target, Limit: new(int32(referenceChoices + 1)), Q: q}
	if tf != "" && q == "" {
		req.Order, req.Direction = tf, "asc"
	}
	resp, err := call(v, mListItems, s.collections.ListItems, req)
	if err != nil {
		return nil, false, err
	}
	items := resp.GetItems()
	more := len(items) > referenceChoices
	if more {
		items = items[:referenceChoices]
	}
	var out []choice
	found := current == ""
	for _, it := range items {
		m := it.AsMap()
		id, _ := m["id"].(string)
		out = append(out, choice{Value: id, Label: itemTitle(m, tf), Selected: id == current})
		found = found || id == current
	}
	if !found {
		label := "Item " + current
		if got, err := call(v, mGetItem, s.collections.GetItem, &collectionsv1.GetItemRequest{CollectionSlug: target, ItemId: current}); err == nil {
			label = itemTitle(got.GetItem().AsMap(), tf)
		}
		out = append([]choice{{Value: current, Label: label, Selected: true}}, out...)
	}
	return out, more, nil
}

type choicesData struct {
	Field fieldControl
	// Select is the field's select (referenceSelectHTML).
	Select template.HTML
	Q      string
}

// referenceChoicesPage is a reference field's select for the items
// matching ?q=: the editor's search box swaps it in (hx-select).
func (s *Studio) referenceChoicesPage(v *visit) error {
	c, err := s.pathCollection(v)
	if err != nil {
		return err
	}
	key := v.r.URL.Query().Get("field")
	i := slices.IndexFunc(c.GetFields(), func(f *collectionsv1.FieldDefinition) bool {
		return f.GetKey() == key && f.GetType() == "reference"
	})
	if i < 0 {
		return status.Errorf(codes.InvalidArgument, "the collection %s has no reference field %q", c.GetSlug(), key)
	}
	f := controls(c.GetFields()[i:i+1], url.Values{fieldPrefix + key: {v.r.URL.Query().Get("current")}}, nil)[0]
	q := v.r.URL.Query().Get("q")
	f.Options, f.More, err = s.referenceOptions(v, f.Target, strings.TrimSpace(q), f.Value)
	if err != nil {
		return err
	}
	s.render(v, http.StatusOK, "editor/choices", View{Title: keyLabel(key) + " choices", Crumbs: v.siteCrumbs(true)}, choicesData{Field: f, Select: referenceSelectHTML(&f), Q: q})
	return nil
}

func (s *Studio) newItemPage(v *visit) error {
	c, err := s.pathCollection(v)
	if err != nil {
		return err
	}
	d, err := s.itemForm(v, c, nil, "", url.Values{}, nil)
	if err != nil {
		return err
	}
	s.render(v, http.StatusOK, "editor/item", s.itemView(v, c, d), d)
	return nil
}

func (s *Studio) createItem(v *visit) error {
	if err := v.judge(mCreateItem); err != nil {
		return err
	}
	c, err := s.pathCollection(v)
	if err != nil {
		return err
	}
	form := v.r.PostForm
	data, errs := parseFields(c.GetFields(), form, true)
	req := &collectionsv1.CreateItemRequest{CollectionSlug: c.GetSlug()}
	if form.Get("op") == "publish" {
		req.IsPublished = new(true)
	}
	for _, sc := range []struct {
		name string
		to   **string
	}{{"publish_at", &req.PublishAt}, {"unpublish_at", &req.UnpublishAt}} {
		if raw := strings.TrimSpace(form.Get(sc.name)); raw != "" {
			t, err := parseLocalTime(raw)
			if err != nil {
				errs[sc.name] = err.Error()
				continue
			}
			*sc.to = new(t.Format(time.RFC3339))
		}
	}
	if len(errs) == 0 {
		st, err := structpb.NewStruct(data)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "the item's data cannot be sent: %v", err)
		}
		req.Data = st
		resp, err := call(v, mCreateItem, s.collections.CreateItem, req)
		if err == nil {
			id, _ := resp.GetItem().AsMap()["id"].(string)
			v.setFlash("Created.")
			return v.redirect(v.path("sites", v.site, "collections", c.GetSlug(), "items", id), "")
		}
		msg, ok := errForm(err)
		if !ok {
			return err
		}
		return s.renderItemError(v, c, nil, "", form, errs, msg, http.StatusBadRequest)
	}
	return s.renderItemError(v, c, nil, "", form, errs, "Some fields need correcting: see below.", http.StatusBadRequest)
}

// renderItemError draws the editor again with what was posted and what
// is wrong with it.
func (s *Studio) renderItemError(v *visit, c *collectionsv1.Collection, item map[string]any, etag string, form url.Values, errs map[string]string, msg string, code int) error {
	d, err := s.itemForm(v, c, item, etag, form, fieldErrors(c, errs, msg))
	if err != nil {
		return err
	}
	d.Error = msg
	if e := errs["publish_at"]; e != "" {
		d.Error += " Publish at: " + e
	}
	if e := errs["unpublish_at"]; e != "" {
		d.Error += " Unpublish at: " + e
	}
	s.render(v, code, "editor/item", s.itemView(v, c, d), d)
	return nil
}

// fieldErrors adds the service's message to the field it names, so that
// the person finds it next to the control.
func fieldErrors(c *collectionsv1.Collection, errs map[string]string, msg string) map[string]string {
	if errs == nil {
		errs = map[string]string{}
	}
	for _, f := range c.GetFields() {
		k := f.GetKey()
		// The service names a field as data.<key> ("data.rating must be a
		// number").
		i := strings.Index(msg, "data."+k)
		if errs[k] == "" && i >= 0 && !isWordByte(msg, i+len("data."+k)) {
			errs[k] = msg
		}
	}
	return errs
}

// isWordByte reports whether s has a key's letter, digit or underscore at
// i (data.tag is not data.tags).
func isWordByte(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9')
}

// saveItem saves the editor's form; op publish or unpublish also changes
// the item's publication.
func (s *Studio) saveItem(v *visit, op string) error {
	if err := v.judge(mUpdateItem); err != nil {
		return err
	}
	c, err := s.pathCollection(v)
	if err != nil {
		return err
	}
	current, _, err := s.getItem(v, c.GetSlug())
	if err != nil {
		return err
	}
	form := v.r.PostForm
	etag := form.Get("etag")
	data, errs := parseFields(c.GetFields(), form, false)
	req := &collectionsv1.UpdateItemRequest{CollectionSlug: c.GetSlug(), ItemId: v.r.PathValue("item")}
	switch op {
	case "publish":
		req.IsPublished = new(true)
	case "unpublish":
		req.IsPublished = new(false)
	}
	for _, sc := range []struct {
		name string
		to   **structpb.Value
	}{{"publish_at", &req.PublishAt}, {"unpublish_at", &req.UnpublishAt}} {
		cur, _ := current[sc.name].(string)
		val, changed, err := schedule(form.Get(sc.name), cur)
		switch {
		case err != nil:
			errs[sc.name] = err.Error()
		case changed && val == nil:
			*sc.to = structpb.NewNullValue()
		case changed:
			*sc.to = structpb.NewStringValue(val.(string))
		case op != "" && cur != "":
			// Publishing or unpublishing cancels the schedule this
			// request does not give anew: give it, to keep it.
			*sc.to = structpb.NewStringValue(cur)
		}
	}
	if len(errs) > 0 {
		return s.renderItemError(v, c, current, etag, form, errs, "Some fields need correcting: see below.", http.StatusBadRequest)
	}
	st, err := structpb.NewStruct(data)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "the item's data cannot be sent: %v", err)
	}
	req.Data = st
	_, err = callIfMatch(v, mUpdateItem, etag, s.collections.UpdateItem, req)
	if err == nil {
		flash := map[string]string{"": "Saved.", "publish": "Saved and published.", "unpublish": "Saved and unpublished."}[op]
		if req.PublishAt != nil && req.PublishAt.GetStringValue() != "" && op == "" {
			flash = "Saved; it will be published at " + fmtTime(req.PublishAt.GetStringValue()) + "."
		}
		v.setFlash(flash)
		return v.redirect(v.path("sites", v.site, "collections", c.GetSlug(), "items", v.r.PathValue("item")), "")
	}
	if isConflict(err) {
		// Someone saved first: the form keeps this person's version, with
		// the item's new ETag, so that saving again replaces theirs.
		latest, newTag, gerr := s.getItem(v, c.GetSlug())
		if gerr != nil {
			return gerr
		}
		d, ferr := s.itemForm(v, c, latest, newTag, form, nil)
		if ferr != nil {
			return ferr
		}
		d.Conflict = fmtTime(latest["updated_at"])
		s.render(v, http.StatusPreconditionFailed, "editor/item", s.itemView(v, c, d), d)
		return nil
	}
	msg, ok := errForm(err)
	if !ok {
		return err
	}
	return s.renderItemError(v, c, current, etag, form, errs, msg, http.StatusBadRequest)
}

// isConflict reports whether err is the service's refusal of a stale
// If-Match.
func isConflict(err error) bool {
	st, ok := status.FromError(err)
	if !ok || (st.Code() != codes.FailedPrecondition && st.Code() != codes.Aborted) {
		return false
	}
	low := strings.ToLower(st.Message())
	return strings.Contains(low, "if-match") || strings.Contains(low, "etag")
}

func (s *Studio) deleteItem(v *visit) error {
	slug := v.r.PathValue("slug")
	_, err := call(v, mDeleteItem, s.collections.DeleteItem, &collectionsv1.DeleteItemRequest{CollectionSlug: slug, ItemId: v.r.PathValue("item")})
	if err != nil {
		return err
	}
	v.setFlash("Deleted.")
	return v.redirect(v.path("sites", v.site, "collections", slug)+"/", "")
}

func (s *Studio) createPreviewLink(v *visit) error {
	if err := v.judge(mCreatePreview); err != nil {
		return err
	}
	c, err := s.pathCollection(v)
	if err != nil {
		return err
	}
	resp, err := call(v, mCreatePreview, s.previews.CreatePreviewLink, &collectionsv1.CreatePreviewLinkRequest{
		CollectionSlug: c.GetSlug(), ItemId: v.r.PathValue("item")})
	if err != nil {
		return err
	}
	item, etag, err := s.getItem(v, c.GetSlug())
	if err != nil {
		return err
	}
	d, err := s.itemForm(v, c, item, etag, formValues(c.GetFields(), item), nil)
	if err != nil {
		return err
	}
	l := resp.GetPreviewLink()
	d.PreviewURL = l.GetUrl()
	if strings.HasPrefix(d.PreviewURL, "/") {
		d.PreviewURL = "http://" + v.r.Host + d.PreviewURL
		if v.r.TLS != nil {
			d.PreviewURL = "https://" + strings.TrimPrefix(d.PreviewURL, "http://")
		}
	}
	if l.GetExpiresAt() != nil {
		d.PreviewExpires = l.GetExpiresAt().AsTime().UTC().Format("2 Jan 2006 15:04 UTC")
	}
	s.render(v, http.StatusOK, "editor/item", View{Title: d.Title, Crumbs: s.itemView(v, c, d).Crumbs, Flash: "Preview link made."}, d)
	return nil
}
