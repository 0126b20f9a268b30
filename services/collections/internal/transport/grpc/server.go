// Package grpc is the collections service's gRPC transport: principal
// checks, protobuf conversion and calls into the use cases.
package grpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// Server implements the collections gRPC services.
type Server struct {
	collectionsv1.UnimplementedCollectionsAdminServiceServer
	sites *app.Sites
}

// NewServer returns a server over the use cases.
func NewServer(sites *app.Sites) *Server { return &Server{sites: sites} }

// Register registers the collections services on r.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	collectionsv1.RegisterCollectionsAdminServiceServer(r, s)
}

// CreateSite implements collectionsv1.CollectionsAdminServiceServer.
func (s *Server) CreateSite(ctx context.Context, req *collectionsv1.CreateSiteRequest) (*collectionsv1.CreateSiteResponse, error) {
	site, err := s.sites.Create(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	return &collectionsv1.CreateSiteResponse{Site: sitePB(site)}, nil
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

func sitePB(s app.Site) *collectionsv1.Site {
	return &collectionsv1.Site{Id: s.ID, Name: s.Name, CreatedAt: timestamppb.New(s.CreatedAt), UpdatedAt: timestamppb.New(s.UpdatedAt)}
}
