package grpcserver

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/render"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// Server implements the collections gRPC services.
type Server struct {
	collectionsv1.UnimplementedCollectionsAdminServiceServer
	collectionsv1.UnimplementedCollectionsServiceServer
	collectionsv1.UnimplementedSiteOwnerServiceServer
	sites   *app.Sites
	content *app.Content
	// assets writes the assets an expanded asset field refers to.
	assets *AssetServer
}

// NewServer returns a server over the use cases; assets writes expanded
// asset fields.
func NewServer(sites *app.Sites, content *app.Content, assets *AssetServer) *Server {
	return &Server{sites: sites, content: content, assets: assets}
}

// Register registers the collections services on r.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	collectionsv1.RegisterCollectionsAdminServiceServer(r, s)
	collectionsv1.RegisterCollectionsServiceServer(r, s)
	collectionsv1.RegisterSiteOwnerServiceServer(r, s)
	collectionsv1.RegisterSchemaServiceServer(r, &schemaServer{Server: s})
}

// ETag and If-Match travel as metadata; the gateway maps them to and from
// the HTTP headers.
const (
	etagHeader  = "etag"
	ifMatchHead = "if-match"
)

func setETag(ctx context.Context, it app.Item) {
	_ = grpc.SetHeader(ctx, metadata.Pairs(etagHeader, it.ETag()))
}

func ifMatch(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(ifMatchHead); len(v) > 0 {
		return v[0]
	}
	return ""
}

// CreateSite implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) CreateSite(ctx context.Context, req *collectionsv1.CreateSiteRequest) (*collectionsv1.CreateSiteResponse, error) {
	site, err := s.sites.Create(ctx, app.NewSite{Name: req.Name, AgencyID: req.AgencyId, ClientID: req.ClientId})
	if err != nil {
		return nil, err
	}
	return &collectionsv1.CreateSiteResponse{Site: sitePB(site)}, nil
}

// ListSites implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) ListSites(ctx context.Context, req *collectionsv1.ListSitesRequest) (*collectionsv1.ListSitesResponse, error) {
	sites, err := s.sites.List(ctx, app.SiteFilter{AgencyID: req.AgencyId}, req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	out := &collectionsv1.ListSitesResponse{Sites: make([]*collectionsv1.Site, len(sites))}
	for i, site := range sites {
		out.Sites[i] = sitePB(site)
	}
	return out, nil
}

// GetSite implements collectionsv1.CollectionsAdminServiceServer. Other
// services call it (as KindService principals) to check a site exists.
func (s *Server) GetSite(ctx context.Context, req *collectionsv1.GetSiteRequest) (*collectionsv1.GetSiteResponse, error) {
	site, err := s.sites.Get(ctx, req.SiteId)
	if err != nil {
		return nil, err
	}
	return &collectionsv1.GetSiteResponse{Site: sitePB(site)}, nil
}

// UpdateSite implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) UpdateSite(ctx context.Context, req *collectionsv1.UpdateSiteRequest) (*collectionsv1.UpdateSiteResponse, error) {
	site, err := s.sites.Update(ctx, req.SiteId, app.SiteChange{Name: req.Name, AgencyID: req.AgencyId, ClientID: req.ClientId})
	if err != nil {
		return nil, err
	}
	return &collectionsv1.UpdateSiteResponse{Site: sitePB(site)}, nil
}

// GetSiteOwner implements collectionsv1.SiteOwnerServiceServer.
func (s *Server) GetSiteOwner(ctx context.Context, req *collectionsv1.GetSiteOwnerRequest) (*collectionsv1.GetSiteOwnerResponse, error) {
	site, err := s.sites.Get(ctx, req.SiteId)
	if err != nil {
		return nil, err
	}
	return &collectionsv1.GetSiteOwnerResponse{AgencyId: site.AgencyID, ClientId: site.ClientID}, nil
}

// GetAgencyAssetFile implements collectionsv1.SiteOwnerServiceServer: an
// asset of one of the agency's sites, whole (the report's logo).
func (s *Server) GetAgencyAssetFile(ctx context.Context, req *collectionsv1.GetAgencyAssetFileRequest) (*collectionsv1.GetAgencyAssetFileResponse, error) {
	if s.assets == nil {
		return nil, apperr.NotFound("asset %s", req.AssetId)
	}
	sites, err := s.sites.OfAgency(ctx, req.AgencyId)
	if err != nil {
		return nil, err
	}
	b, a, err := s.assets.assets.AgencyFile(ctx, sites, req.AssetId, req.MaxBytes)
	if err != nil {
		return nil, err
	}
	return &collectionsv1.GetAgencyAssetFileResponse{ContentType: a.ContentType, Content: b}, nil
}

func sitePB(s app.Site) *collectionsv1.Site {
	origins := s.AllowedOrigins
	if origins == nil {
		origins = []string{}
	}
	def, locales := s.Localization()
	return &collectionsv1.Site{Id: s.ID, Name: s.Name, CreatedAt: timestamppb.New(s.CreatedAt), UpdatedAt: timestamppb.New(s.UpdatedAt), AllowedOrigins: origins,
		AgencyId: nullable(s.AgencyID), ClientId: nullable(s.ClientID), DefaultLocale: def, Locales: locales}
}

// nullable is an optional id as the API shows it: null when absent.
func nullable(id string) *wrapperspb.StringValue {
	if id == "" {
		return nil
	}
	return wrapperspb.String(id)
}

// SetSiteLocales implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) SetSiteLocales(ctx context.Context, req *collectionsv1.SetSiteLocalesRequest) (*collectionsv1.SetSiteLocalesResponse, error) {
	site, err := s.sites.SetLocales(ctx, req.SiteId, req.DefaultLocale, req.Locales)
	if err != nil {
		return nil, err
	}
	return &collectionsv1.SetSiteLocalesResponse{Site: sitePB(site)}, nil
}

// SetSiteOrigins implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) SetSiteOrigins(ctx context.Context, req *collectionsv1.SetSiteOriginsRequest) (*collectionsv1.SetSiteOriginsResponse, error) {
	site, err := s.sites.SetOrigins(ctx, req.SiteId, req.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	return &collectionsv1.SetSiteOriginsResponse{Site: sitePB(site)}, nil
}

func fieldsFromPB(fs []*collectionsv1.FieldDefinition) []app.Field {
	out := make([]app.Field, len(fs))
	for i, f := range fs {
		out[i] = app.Field{Key: f.Key, Type: f.Type, Required: f.Required, Options: f.Options, Target: f.GetTarget(), MaxLength: int(f.GetMaxLength()), Localized: f.GetLocalized()}
	}
	return out
}

// CreateCollection implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) CreateCollection(ctx context.Context, req *collectionsv1.CreateCollectionRequest) (*collectionsv1.CreateCollectionResponse, error) {
	c, err := s.content.CreateCollection(ctx, req.SiteId, app.NewCollection{
		Name: req.Name, Slug: req.Slug, IsSystem: req.IsSystem, Fields: fieldsFromPB(req.Fields), SearchLanguage: req.SearchLanguage,
	})
	if err != nil {
		return nil, err
	}
	return &collectionsv1.CreateCollectionResponse{Collection: adminCollectionPB(c)}, nil
}

// ListSiteCollections implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) ListSiteCollections(ctx context.Context, req *collectionsv1.ListSiteCollectionsRequest) (*collectionsv1.ListSiteCollectionsResponse, error) {
	cs, err := s.content.SiteCollections(ctx, req.SiteId)
	if err != nil {
		return nil, err
	}
	out := &collectionsv1.ListSiteCollectionsResponse{Collections: make([]*collectionsv1.Collection, len(cs))}
	for i, c := range cs {
		out.Collections[i] = adminCollectionPB(c)
	}
	return out, nil
}

// UpdateCollection implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) UpdateCollection(ctx context.Context, req *collectionsv1.UpdateCollectionRequest) (*collectionsv1.UpdateCollectionResponse, error) {
	c, err := s.content.UpdateCollection(ctx, req.SiteId, req.Slug, app.CollectionChange{
		Name: req.Name, Add: fieldsFromPB(req.AddFields), Remove: req.RemoveFields, Update: fieldsFromPB(req.UpdateFields),
		SearchLanguage: req.SearchLanguage,
	})
	if err != nil {
		return nil, err
	}
	return &collectionsv1.UpdateCollectionResponse{Collection: adminCollectionPB(c)}, nil
}

// CreateSiteItem implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) CreateSiteItem(ctx context.Context, req *collectionsv1.CreateSiteItemRequest) (*collectionsv1.CreateSiteItemResponse, error) {
	c, it, err := s.content.CreateSiteItem(ctx, req.SiteId, req.Slug, app.NewItem{Data: structData(req.Data), IsPublished: req.IsPublished})
	if err != nil {
		return nil, err
	}
	setETag(ctx, it)
	item, err := itemPB(c, it)
	return &collectionsv1.CreateSiteItemResponse{Item: item}, err
}

// ListCollections implements collectionsv1.CollectionsServiceServer.
func (s *Server) ListCollections(ctx context.Context, _ *collectionsv1.ListCollectionsRequest) (*collectionsv1.ListCollectionsResponse, error) {
	cs, err := s.content.Collections(ctx, principal.SiteID(ctx))
	if err != nil {
		return nil, err
	}
	if render.Requested(ctx) {
		return &collectionsv1.ListCollectionsResponse{RenderedJson: renderCollections(cs)}, nil
	}
	out := &collectionsv1.ListCollectionsResponse{Collections: make([]*collectionsv1.Collection, len(cs))}
	for i, c := range cs {
		out.Collections[i] = collectionPB(c)
	}
	return out, nil
}

// ListItems implements collectionsv1.CollectionsServiceServer.
func (s *Server) ListItems(ctx context.Context, req *collectionsv1.ListItemsRequest) (*collectionsv1.ListItemsResponse, error) {
	c, items, page, err := s.content.Items(ctx, principal.SiteID(ctx), req.CollectionSlug, app.ListParams{
		Limit: req.Limit, Offset: req.Offset, Published: req.IsPublished, PublishedOnly: principal.PublishedOnly(ctx),
		FilterField: req.FilterField, FilterValue: req.FilterValue, Order: req.Order, Direction: req.Direction, Q: req.Q,
		Fields: req.Fields, Expand: req.Expand, Locale: req.Locale, Fallback: req.Fallback,
	})
	if err != nil {
		return nil, err
	}
	// Items has read fields already: it cannot be refused here.
	shown, err := app.ParseProjection(c, req.Fields, req.Expand)
	if err != nil {
		return nil, err
	}
	x, err := s.content.Expand(ctx, principal.SiteID(ctx), c, items, req.Expand, principal.PublishedOnly(ctx))
	if err != nil {
		return nil, err
	}
	e := s.newExpander(x)
	if render.Requested(ctx) {
		return &collectionsv1.ListItemsResponse{RenderedJson: renderItemsExpanded(c, shown, items, page.Limit, page.Offset, e)}, nil
	}
	out := &collectionsv1.ListItemsResponse{Collection: collectionPB(c), Items: make([]*structpb.Struct, len(items)), Limit: page.Limit, Offset: page.Offset}
	ic := projected(c, shown)
	for i, it := range items {
		if out.Items[i], err = itemPBExpanded(ic, it, e, expansion(x)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetItem implements collectionsv1.CollectionsServiceServer.
func (s *Server) GetItem(ctx context.Context, req *collectionsv1.GetItemRequest) (*collectionsv1.GetItemResponse, error) {
	c, it, err := s.content.ItemIn(ctx, principal.SiteID(ctx), req.CollectionSlug, req.ItemId, req.Locale, req.Fallback)
	if err != nil {
		return nil, err
	}
	if principal.PublishedOnly(ctx) && !it.IsPublished {
		return nil, app.ItemNotFound(it.ID, c.Slug)
	}
	x, err := s.content.Expand(ctx, principal.SiteID(ctx), c, []app.Item{it}, req.Expand, principal.PublishedOnly(ctx))
	if err != nil {
		return nil, err
	}
	e := s.newExpander(x)
	setETag(ctx, it)
	if render.Requested(ctx) {
		return &collectionsv1.GetItemResponse{RenderedJson: renderItemExpanded(c, it, e)}, nil
	}
	item, err := itemPBExpanded(c, it, e, expansion(x))
	return &collectionsv1.GetItemResponse{Item: item}, err
}

// CreateItem implements collectionsv1.CollectionsServiceServer.
func (s *Server) CreateItem(ctx context.Context, req *collectionsv1.CreateItemRequest) (*collectionsv1.CreateItemResponse, error) {
	c, it, err := s.content.CreateItem(ctx, principal.SiteID(ctx), req.CollectionSlug, app.NewItem{
		Data: structData(req.Data), IsPublished: req.IsPublished, PublishAt: req.PublishAt, UnpublishAt: req.UnpublishAt,
	})
	if err != nil {
		return nil, err
	}
	setETag(ctx, it)
	if render.Requested(ctx) {
		return &collectionsv1.CreateItemResponse{RenderedJson: renderItem(c, it)}, nil
	}
	item, err := itemPB(c, it)
	return &collectionsv1.CreateItemResponse{Item: item}, err
}

// UpdateItem implements collectionsv1.CollectionsServiceServer.
func (s *Server) UpdateItem(ctx context.Context, req *collectionsv1.UpdateItemRequest) (*collectionsv1.UpdateItemResponse, error) {
	c, it, err := s.content.UpdateItem(ctx, principal.SiteID(ctx), req.CollectionSlug, req.ItemId, app.ItemUpdate{
		Data: structData(req.Data), IsPublished: req.IsPublished, IfMatch: ifMatch(ctx), Locale: req.Locale,
		Schedule: app.ScheduleInput{PublishAt: scheduleField(req.PublishAt), UnpublishAt: scheduleField(req.UnpublishAt)},
	})
	if err != nil {
		return nil, err
	}
	setETag(ctx, it)
	if render.Requested(ctx) {
		return &collectionsv1.UpdateItemResponse{RenderedJson: renderItem(c, it)}, nil
	}
	item, err := itemPB(c, it)
	return &collectionsv1.UpdateItemResponse{Item: item}, err
}

// DeleteItem implements collectionsv1.CollectionsServiceServer.
func (s *Server) DeleteItem(ctx context.Context, req *collectionsv1.DeleteItemRequest) (*collectionsv1.DeleteItemResponse, error) {
	if err := s.content.DeleteItem(ctx, principal.SiteID(ctx), req.CollectionSlug, req.ItemId, ifMatch(ctx)); err != nil {
		return nil, err
	}
	return &collectionsv1.DeleteItemResponse{Ok: true}, nil
}

// scheduleField reads publish_at or unpublish_at of a PATCH: absent, null,
// or a string (anything else is kept as its JSON, which the use case
// refuses as not a date-time).
func scheduleField(v *structpb.Value) app.OptionalTime {
	switch k := v.GetKind().(type) {
	case nil:
		return app.OptionalTime{}
	case *structpb.Value_NullValue:
		return app.GivenTime(nil)
	case *structpb.Value_StringValue:
		return app.GivenTime(&k.StringValue)
	}
	b, _ := v.MarshalJSON()
	text := string(b)
	return app.GivenTime(&text)
}

// structData is the request's data as decoded JSON, nil when absent.
func structData(s *structpb.Struct) map[string]any {
	if s == nil {
		return nil
	}
	return s.AsMap()
}

func collectionPB(c app.Collection) *collectionsv1.Collection {
	out := &collectionsv1.Collection{Name: c.Name, Slug: c.Slug, IsSystem: c.IsSystem, Fields: make([]*collectionsv1.FieldDefinition, len(c.Fields))}
	for i, f := range c.Fields {
		fd := &collectionsv1.FieldDefinition{Key: f.Key, Type: f.Type, Required: f.Required, Options: f.Options}
		if fd.Options == nil {
			fd.Options = []string{}
		}
		if f.Target != "" {
			fd.Target = &f.Target
		}
		if f.MaxLength > 0 {
			n := int32(f.MaxLength) //nolint:gosec // G115: at most 500,000 (the collection rules)
			fd.MaxLength = &n
		}
		if f.Localized {
			// Shown only when set: a site with one locale sees its
			// collections as before.
			fd.Localized = &f.Localized
		}
		out.Fields[i] = fd
	}
	return out
}

// adminCollectionPB is a collection as the admin API shows it: with its
// search language, which the public routes (the spec's Collection) omit.
func adminCollectionPB(c app.Collection) *collectionsv1.Collection {
	out := collectionPB(c)
	lang := c.SearchLanguage
	if lang == "" {
		lang = app.DefaultSearchLanguage
	}
	out.SearchLanguage = &lang
	return out
}

// timestamp formats t as protojson formats a Timestamp, which is how the
// rendered JSON writes it.
func timestamp(t time.Time) string {
	b := render.AppendTime(nil, t)
	return string(b[1 : len(b)-1])
}

// itemPB is an item as a Struct: its system properties and every field
// the collection defines, null when unset.
func itemPB(c app.Collection, it app.Item) (*structpb.Struct, error) {
	return itemPBExpanded(c, it, nil, nil)
}

// expansion is the fields x expands, nil for none.
func expansion(x *app.Expanded) app.Expansion {
	if x == nil {
		return nil
	}
	return x.Fields
}

// itemPBExpanded is itemPB with the fields of tree expanded by e.
func itemPBExpanded(c app.Collection, it app.Item, e *expander, tree app.Expansion) (*structpb.Struct, error) {
	fields := make(map[string]*structpb.Value, 4+len(c.Fields))
	fields["id"] = structpb.NewStringValue(it.ID)
	fields["is_published"] = structpb.NewBoolValue(it.IsPublished)
	fields["publish_at"] = timeOrNull(it.PublishAt)
	fields["unpublish_at"] = timeOrNull(it.UnpublishAt)
	fields["created_at"] = structpb.NewStringValue(timestamp(it.CreatedAt))
	fields["updated_at"] = structpb.NewStringValue(timestamp(it.UpdatedAt))
	if it.ReadIn != "" {
		// Written first: a field of the same name (a collection made
		// before locales) replaces them below.
		fields["locale"] = structpb.NewStringValue(it.ReadIn)
		fb := make(map[string]*structpb.Value, len(it.Fallbacks))
		for k, l := range it.Fallbacks {
			fb[k] = structpb.NewStringValue(l)
		}
		fields["locale_fallbacks"] = structpb.NewStructValue(&structpb.Struct{Fields: fb})
	}
	for _, f := range c.Fields {
		raw, ok := it.Values[f.Key]
		if sub, expand := tree[f.Key]; expand && e != nil {
			v, err := e.value(f, raw, sub)
			if err != nil {
				return nil, err
			}
			fields[f.Key] = v
			continue
		}
		if !ok {
			fields[f.Key] = structpb.NewNullValue()
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, apperr.Unavailable(err, "item %s has unreadable data", it.ID)
		}
		pv, err := structpb.NewValue(v)
		if err != nil {
			return nil, err
		}
		fields[f.Key] = pv
	}
	return &structpb.Struct{Fields: fields}, nil
}

func timeOrNull(t *time.Time) *structpb.Value {
	if t == nil {
		return structpb.NewNullValue()
	}
	return structpb.NewStringValue(timestamp(*t))
}
