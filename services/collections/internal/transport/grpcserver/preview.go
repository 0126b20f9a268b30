package grpcserver

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// PreviewPath is where a preview link's token is served, under the
// public API's base URL.
const PreviewPath = "/api/public/v1/preview/"

// PreviewServer implements the preview links service.
type PreviewServer struct {
	collectionsv1.UnimplementedPreviewLinksServiceServer
	previews *app.Previews
	// publicURL is the public API's base URL, which preview URLs start
	// with (as asset URLs do).
	publicURL func() string
}

// NewPreviewServer returns a server over the preview links' use cases.
func NewPreviewServer(previews *app.Previews, publicURL func() string) *PreviewServer {
	return &PreviewServer{previews: previews, publicURL: publicURL}
}

// Register registers the preview links service on r.
func (s *PreviewServer) Register(r grpc.ServiceRegistrar) {
	collectionsv1.RegisterPreviewLinksServiceServer(r, s)
}

func previewPB(l app.PreviewLink) *collectionsv1.PreviewLink {
	return &collectionsv1.PreviewLink{Id: l.ID, Collection: l.Collection, ItemId: l.ItemID,
		CreatedAt: timestamppb.New(l.CreatedAt), ExpiresAt: timestamppb.New(l.ExpiresAt)}
}

// CreatePreviewLink implements collectionsv1.PreviewLinksServiceServer.
func (s *PreviewServer) CreatePreviewLink(ctx context.Context, req *collectionsv1.CreatePreviewLinkRequest) (*collectionsv1.CreatePreviewLinkResponse, error) {
	l, token, err := s.previews.Create(ctx, principal.SiteID(ctx), req.CollectionSlug, req.ItemId, req.ExpiresInSeconds)
	if err != nil {
		return nil, err
	}
	out := previewPB(l)
	u := s.publicURL() + PreviewPath + token
	out.Url = &u
	return &collectionsv1.CreatePreviewLinkResponse{PreviewLink: out}, nil
}

// ListPreviewLinks implements collectionsv1.PreviewLinksServiceServer.
func (s *PreviewServer) ListPreviewLinks(ctx context.Context, req *collectionsv1.ListPreviewLinksRequest) (*collectionsv1.ListPreviewLinksResponse, error) {
	ls, err := s.previews.List(ctx, principal.SiteID(ctx), req.Collection, req.ItemId)
	if err != nil {
		return nil, err
	}
	out := &collectionsv1.ListPreviewLinksResponse{PreviewLinks: make([]*collectionsv1.PreviewLink, len(ls))}
	for i, l := range ls {
		out.PreviewLinks[i] = previewPB(l)
	}
	return out, nil
}

// DeletePreviewLink implements collectionsv1.PreviewLinksServiceServer.
func (s *PreviewServer) DeletePreviewLink(ctx context.Context, req *collectionsv1.DeletePreviewLinkRequest) (*collectionsv1.DeletePreviewLinkResponse, error) {
	if err := s.previews.Revoke(ctx, principal.SiteID(ctx), req.PreviewLinkId); err != nil {
		return nil, err
	}
	return &collectionsv1.DeletePreviewLinkResponse{Ok: true}, nil
}

// GetPreview implements collectionsv1.PreviewLinksServiceServer. It is
// open to anyone: the token is the capability, and the item's site is the
// link's, never the caller's.
func (s *PreviewServer) GetPreview(ctx context.Context, req *collectionsv1.GetPreviewRequest) (*collectionsv1.GetPreviewResponse, error) {
	// A draft must not outlive its link in a shared cache, nor a 404 hide
	// a link made later: nothing of this route is stored (the gateway
	// sends the header on errors too).
	_ = grpc.SetHeader(ctx, metadata.Pairs("cache-control", "no-store"))
	c, it, l, err := s.previews.Show(ctx, req.Token)
	if err != nil {
		return nil, err
	}
	item, err := itemPB(c, it)
	if err != nil {
		return nil, err
	}
	return &collectionsv1.GetPreviewResponse{Item: item, Collection: c.Slug, ExpiresAt: timestamppb.New(l.ExpiresAt)}, nil
}
