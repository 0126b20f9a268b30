package grpcserver

import (
	"context"
	"encoding/json"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// ListItemRevisions implements collectionsv1.CollectionsServiceServer.
func (s *Server) ListItemRevisions(ctx context.Context, req *collectionsv1.ListItemRevisionsRequest) (*collectionsv1.ListItemRevisionsResponse, error) {
	_, page, err := s.content.Revisions(ctx, principal.SiteID(ctx), req.CollectionSlug, req.ItemId, req.Limit, req.Cursor)
	if err != nil {
		return nil, err
	}
	out := &collectionsv1.ListItemRevisionsResponse{Revisions: make([]*collectionsv1.ItemRevision, len(page.Revisions))}
	for i, r := range page.Revisions {
		if out.Revisions[i], err = revisionPB(r); err != nil {
			return nil, err
		}
	}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	return out, nil
}

// GetItemRevision implements collectionsv1.CollectionsServiceServer.
func (s *Server) GetItemRevision(ctx context.Context, req *collectionsv1.GetItemRevisionRequest) (*collectionsv1.GetItemRevisionResponse, error) {
	_, r, err := s.content.Revision(ctx, principal.SiteID(ctx), req.CollectionSlug, req.ItemId, req.Version)
	if err != nil {
		return nil, err
	}
	pb, err := revisionPB(r)
	return &collectionsv1.GetItemRevisionResponse{Revision: pb}, err
}

// RestoreItemRevision implements collectionsv1.CollectionsServiceServer:
// the item answered as an update answers it, with its ETag.
func (s *Server) RestoreItemRevision(ctx context.Context, req *collectionsv1.RestoreItemRevisionRequest) (*collectionsv1.RestoreItemRevisionResponse, error) {
	c, it, err := s.content.RestoreRevision(ctx, principal.SiteID(ctx), req.CollectionSlug, req.ItemId, req.Version, ifMatch(ctx))
	if err != nil {
		return nil, err
	}
	setETag(ctx, it)
	item, err := itemPB(c, it)
	return &collectionsv1.RestoreItemRevisionResponse{Item: item}, err
}

func revisionPB(r app.Revision) (*collectionsv1.ItemRevision, error) {
	data := make(map[string]*structpb.Value, len(r.Values))
	for k, raw := range r.Values {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, apperr.Unavailable(err, "revision %d of item %s has unreadable data", r.Version, r.ItemID)
		}
		pv, err := structpb.NewValue(v)
		if err != nil {
			return nil, err
		}
		data[k] = pv
	}
	return &collectionsv1.ItemRevision{
		Version: int32(min(r.Version, 1<<31-1)), //nolint:gosec // G115: clamped to int32 just above
		Data:    &structpb.Struct{Fields: data}, IsPublished: r.IsPublished, Change: r.Change,
		Actor:     &collectionsv1.RevisionActor{Kind: r.Actor.Kind, Id: r.Actor.ID, MemberId: nullable(r.Actor.MemberID)},
		CreatedAt: timestamppb.New(r.CreatedAt),
	}, nil
}
