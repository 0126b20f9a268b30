package grpcserver

import (
	"context"

	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// schemaServer implements collectionsv1.SchemaServiceServer: the admin
// API's site and collection use cases, with the tenant taken from the
// principal, never from the request: a type of its own (as the CRM's
// peopleServer is) so that no method of it can reach the admin API's
// site_id. A tenant cannot make a system collection (no is_system).
type schemaServer struct {
	collectionsv1.UnimplementedSchemaServiceServer
	*Server
}

var _ collectionsv1.SchemaServiceServer = (*schemaServer)(nil)

// ListAgencySites implements collectionsv1.SchemaServiceServer.
func (s *schemaServer) ListAgencySites(ctx context.Context, _ *collectionsv1.ListAgencySitesRequest) (*collectionsv1.ListAgencySitesResponse, error) {
	sites, err := s.sites.OfAgency(ctx, principal.AgencyID(ctx))
	if err != nil {
		return nil, err
	}
	out := &collectionsv1.ListAgencySitesResponse{Sites: make([]*collectionsv1.Site, len(sites))}
	for i, site := range sites {
		out.Sites[i] = sitePB(site)
	}
	return out, nil
}

// ListSchemaCollections implements collectionsv1.SchemaServiceServer.
func (s *schemaServer) ListSchemaCollections(ctx context.Context, _ *collectionsv1.ListSchemaCollectionsRequest) (*collectionsv1.ListSchemaCollectionsResponse, error) {
	cs, err := s.content.SiteCollections(ctx, principal.SiteID(ctx))
	if err != nil {
		return nil, err
	}
	out := &collectionsv1.ListSchemaCollectionsResponse{Collections: make([]*collectionsv1.Collection, len(cs))}
	for i, c := range cs {
		out.Collections[i] = adminCollectionPB(c)
	}
	return out, nil
}

// CreateSchemaCollection implements collectionsv1.SchemaServiceServer.
func (s *schemaServer) CreateSchemaCollection(ctx context.Context, req *collectionsv1.CreateSchemaCollectionRequest) (*collectionsv1.CreateSchemaCollectionResponse, error) {
	c, err := s.content.CreateCollection(ctx, principal.SiteID(ctx), app.NewCollection{
		Name: req.Name, Slug: req.Slug, Fields: fieldsFromPB(req.Fields), SearchLanguage: req.SearchLanguage,
	})
	if err != nil {
		return nil, err
	}
	return &collectionsv1.CreateSchemaCollectionResponse{Collection: adminCollectionPB(c)}, nil
}

// UpdateSchemaCollection implements collectionsv1.SchemaServiceServer.
func (s *schemaServer) UpdateSchemaCollection(ctx context.Context, req *collectionsv1.UpdateSchemaCollectionRequest) (*collectionsv1.UpdateSchemaCollectionResponse, error) {
	c, err := s.content.UpdateCollection(ctx, principal.SiteID(ctx), req.Slug, app.CollectionChange{
		Name: req.Name, Add: fieldsFromPB(req.AddFields), Remove: req.RemoveFields, Update: fieldsFromPB(req.UpdateFields),
		SearchLanguage: req.SearchLanguage,
	})
	if err != nil {
		return nil, err
	}
	return &collectionsv1.UpdateSchemaCollectionResponse{Collection: adminCollectionPB(c)}, nil
}
