// Package collectionsgrpc is the CRM's client of the collections service: it
// answers the app.SiteDirectory port over gRPC.
package collectionsgrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// Sites asks the collections service about sites.
type Sites struct {
	client collectionsv1.SiteOwnerServiceClient
}

// New returns a site directory over conn, which must sign a service
// principal into every call.
func New(conn grpc.ClientConnInterface) *Sites {
	return &Sites{client: collectionsv1.NewSiteOwnerServiceClient(conn)}
}

// SiteOwner implements app.SiteDirectory.
func (s *Sites) SiteOwner(ctx context.Context, id string) (string, bool, error) {
	resp, err := s.client.GetSiteOwner(ctx, &collectionsv1.GetSiteOwnerRequest{SiteId: id})
	switch status.Code(err) {
	case codes.OK:
		return resp.GetAgencyId(), true, nil
	case codes.NotFound:
		return "", false, nil
	}
	return "", false, err
}
