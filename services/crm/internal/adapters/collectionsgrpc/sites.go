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
	client collectionsv1.CollectionsAdminServiceClient
}

// New returns a site directory over conn, which must sign a service
// principal into every call.
func New(conn grpc.ClientConnInterface) *Sites {
	return &Sites{client: collectionsv1.NewCollectionsAdminServiceClient(conn)}
}

// SiteExists implements app.SiteDirectory.
func (s *Sites) SiteExists(ctx context.Context, id string) (bool, error) {
	_, err := s.client.GetSite(ctx, &collectionsv1.GetSiteRequest{SiteId: id})
	switch status.Code(err) {
	case codes.OK:
		return true, nil
	case codes.NotFound:
		return false, nil
	}
	return false, err
}
